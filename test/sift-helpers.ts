// Shared helpers for the sift tests: a seeded textured scene rendered by sharp, warps with known transforms,
// and brute-force ratio-test matching on our descriptors.
import sharp from 'sharp';
import type { Features } from '../src/lib/sift/types.js';

export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An SVG scene of random rectangles, ellipses, polygons and lines (distinctive corners and blobs). */
export function sceneSvg(w: number, h: number, seed = 1, shapes = 320): string {
  const r = rng(seed);
  const grey = () => {
    const v = Math.floor(r() * 256);
    return `rgb(${v},${Math.floor(r() * 256)},${Math.floor(r() * 256)})`;
  };
  const parts: string[] = [`<rect width="${w}" height="${h}" fill="rgb(128,128,128)"/>`];
  for (let i = 0; i < shapes; i++) {
    const x = r() * w;
    const y = r() * h;
    const s = 3 + r() * 26;
    const kind = Math.floor(r() * 4);
    if (kind === 0) parts.push(`<rect x="${x}" y="${y}" width="${s}" height="${s * (0.3 + r())}" fill="${grey()}" transform="rotate(${r() * 90} ${x} ${y})"/>`);
    else if (kind === 1) parts.push(`<ellipse cx="${x}" cy="${y}" rx="${s / 2}" ry="${(s / 2) * (0.4 + r())}" fill="${grey()}"/>`);
    else if (kind === 2) {
      const pts = [0, 1, 2].map(() => `${x + (r() - 0.5) * 2 * s},${y + (r() - 0.5) * 2 * s}`).join(' ');
      parts.push(`<polygon points="${pts}" fill="${grey()}"/>`);
    } else parts.push(`<line x1="${x}" y1="${y}" x2="${x + (r() - 0.5) * 4 * s}" y2="${y + (r() - 0.5) * 4 * s}" stroke="${grey()}" stroke-width="${1 + r() * 4}"/>`);
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${parts.join('')}</svg>`;
}

export async function sceneGrey(w: number, h: number, seed = 1): Promise<Uint8Array> {
  const { data } = await sharp(Buffer.from(sceneSvg(w, h, seed))).flatten().toColourspace('b-w').raw().toBuffer({ resolveWithObject: true });
  return new Uint8Array(data.buffer, data.byteOffset, w * h);
}

export async function scenePng(w: number, h: number, seed = 1): Promise<Buffer> {
  return sharp(Buffer.from(sceneSvg(w, h, seed))).png().toBuffer();
}

/** 2x3 affine [a, b, c, d, e, f]: x' = a x + b y + c, y' = d x + e y + f. */
export type Affine = [number, number, number, number, number, number];

export function invert(m: Affine): Affine {
  const [a, b, c, d, e, f] = m;
  const det = a * e - b * d;
  return [e / det, -b / det, (b * f - c * e) / det, -d / det, a / det, (c * d - a * f) / det];
}

export function apply(m: Affine, x: number, y: number): [number, number] {
  return [m[0] * x + m[1] * y + m[2], m[3] * x + m[4] * y + m[5]];
}

/** Warps src (w x h) by m (src -> dst) into a dw x dh image, bilinear; outside is mid-grey. */
export function warp(src: Uint8Array, w: number, h: number, m: Affine, dw: number, dh: number): Uint8Array {
  const inv = invert(m);
  const out = new Uint8Array(dw * dh);
  for (let y = 0; y < dh; y++) {
    for (let x = 0; x < dw; x++) {
      const [sx, sy] = apply(inv, x, y);
      const x0 = Math.floor(sx);
      const y0 = Math.floor(sy);
      if (x0 < 0 || y0 < 0 || x0 >= w - 1 || y0 >= h - 1) {
        out[y * dw + x] = 128;
        continue;
      }
      const fx = sx - x0;
      const fy = sy - y0;
      const i = y0 * w + x0;
      const v = (src[i]! * (1 - fx) + src[i + 1]! * fx) * (1 - fy) + (src[i + w]! * (1 - fx) + src[i + w + 1]! * fx) * fy;
      out[y * dw + x] = Math.round(v);
    }
  }
  return out;
}

export function rotationAbout(deg: number, cx: number, cy: number, scale = 1, tx = 0, ty = 0): Affine {
  const t = (deg * Math.PI) / 180;
  const a = Math.cos(t) * scale;
  const b = -Math.sin(t) * scale;
  const d = Math.sin(t) * scale;
  const e = Math.cos(t) * scale;
  return [a, b, cx + tx - a * cx - b * cy, d, e, cy + ty - d * cx - e * cy];
}

/** Brute-force 2-NN with Lowe's ratio test: pairs [i in a, j in b]. */
export function ratioMatches(a: Features, b: Features, ratio = 0.8): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const da = a.descriptors;
  const db = b.descriptors;
  for (let i = 0; i < a.count; i++) {
    let best = Infinity;
    let second = Infinity;
    let bj = -1;
    const oi = i * 128;
    for (let j = 0; j < b.count; j++) {
      const oj = j * 128;
      let d = 0;
      for (let k = 0; k < 128; k++) {
        const t = da[oi + k]! - db[oj + k]!;
        d += t * t;
      }
      if (d < best) {
        second = best;
        best = d;
        bj = j;
      } else if (d < second) second = d;
    }
    if (bj >= 0 && Math.sqrt(best) < ratio * Math.sqrt(second)) out.push([i, bj]);
  }
  return out;
}

/** Share of matches whose keypoint in a, mapped by m, lands within tol px of its match in b. */
export function agreeing(a: Features, b: Features, matches: Array<[number, number]>, m: Affine, tol = 3): number {
  let ok = 0;
  for (const [i, j] of matches) {
    const [x, y] = apply(m, a.keypoints[i * 6]!, a.keypoints[i * 6 + 1]!);
    if (Math.hypot(x - b.keypoints[j * 6]!, y - b.keypoints[j * 6 + 1]!) <= tol) ok++;
  }
  return ok;
}
