// Procedural "news photos" for the demo and the daemon tests, made with sharp — nothing downloaded.
// A scene is a textured picture (gradient sky and ground, buildings with windows, shapes, stripes, speckle
// noise), rich in corners and blobs as real photos are. The Chinese outlet's copy of a scene is the same
// picture "taken differently": cropped, rescaled, rotated, warped in perspective, recompressed.
import sharp from 'sharp';
import { mulberry32 } from '../util/random.js';

const rng = mulberry32;

const hsl = (h: number, s: number, l: number) => `hsl(${Math.round(h)},${Math.round(s)}%,${Math.round(l)}%)`;

/** The SVG of a scene (deterministic per seed). */
export function sceneSvg(seed: number, w = 640, h = 480): string {
  const r = rng(seed);
  const hue = r() * 360;
  const parts: string[] = [];
  parts.push(
    `<defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${hsl(hue, 50, 75)}"/><stop offset="1" stop-color="${hsl(hue + 30, 40, 55)}"/></linearGradient>` +
      `<linearGradient id="ground" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${hsl(hue + 120, 35, 35)}"/><stop offset="1" stop-color="${hsl(hue + 160, 30, 20)}"/></linearGradient></defs>`,
  );
  parts.push(`<rect width="${w}" height="${h}" fill="url(#sky)"/>`);
  const horizon = h * (0.45 + r() * 0.2);
  // Buildings with windows. Each building draws its own window size and its own irregular column and row
  // spacing: identical windows on one fixed grid in every scene (as this generator once drew them) are a periodic
  // texture that any two scenes share, and a window lattice of one scene verifies against another's (66-76 RANSAC
  // inliers between different demo photos, issue 34). Real facades differ from street to street; so do these.
  let x = -10;
  while (x < w) {
    const bw = 40 + r() * 90;
    const bh = 60 + r() * horizon * 0.8;
    const top = horizon - bh;
    parts.push(`<rect x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${bw.toFixed(1)}" height="${bh.toFixed(1)}" fill="${hsl(hue + r() * 60, 20 + r() * 30, 25 + r() * 40)}"/>`);
    parts.push(...buildingWindows(r, x, top, bw, bh));
    x += bw + 2 + r() * 12;
  }
  parts.push(`<rect x="0" y="${horizon.toFixed(1)}" width="${w}" height="${(h - horizon).toFixed(1)}" fill="url(#ground)"/>`);
  // foreground objects: people-like blobs, vehicles, signs, stripes
  for (let i = 0; i < 45; i++) {
    const cx = r() * w;
    const cy = horizon + r() * (h - horizon);
    const s = 6 + r() * 38;
    const fill = hsl(r() * 360, 40 + r() * 60, 20 + r() * 60);
    const k = r();
    if (k < 0.3) parts.push(`<circle cx="${cx.toFixed(1)}" cy="${cy.toFixed(1)}" r="${(s / 2).toFixed(1)}" fill="${fill}" stroke="${hsl(r() * 360, 30, 15)}" stroke-width="2"/>`);
    else if (k < 0.6) parts.push(`<rect x="${cx.toFixed(1)}" y="${cy.toFixed(1)}" width="${(s * 1.8).toFixed(1)}" height="${s.toFixed(1)}" rx="3" fill="${fill}" transform="rotate(${(r() * 40 - 20).toFixed(1)} ${cx.toFixed(1)} ${cy.toFixed(1)})"/>`);
    else if (k < 0.8) {
      const pts = Array.from({ length: 3 + Math.floor(r() * 4) }, () => `${(cx + (r() - 0.5) * s * 2).toFixed(1)},${(cy + (r() - 0.5) * s * 2).toFixed(1)}`).join(' ');
      parts.push(`<polygon points="${pts}" fill="${fill}"/>`);
    } else {
      // a striped sign: its own number of stripes, widths and colours (not one pattern repeated in every scene)
      const n = 3 + Math.floor(r() * 5);
      const dark = hsl(r() * 360, 30, 10 + r() * 20);
      const light = hsl(r() * 360, 20, 75 + r() * 20);
      for (let j = 0, sx = cx; j < n; j++) {
        const sw = 2 + r() * 6;
        parts.push(`<rect x="${sx.toFixed(1)}" y="${cy.toFixed(1)}" width="${sw.toFixed(1)}" height="${(s * (0.8 + r() * 1.2)).toFixed(1)}" fill="${j % 2 ? light : dark}"/>`);
        sx += sw + 1 + r() * 5;
      }
    }
  }
  // clouds / birds in the sky
  for (let i = 0; i < 12; i++) {
    parts.push(`<ellipse cx="${(r() * w).toFixed(1)}" cy="${(r() * horizon * 0.6).toFixed(1)}" rx="${(10 + r() * 40).toFixed(1)}" ry="${(4 + r() * 12).toFixed(1)}" fill="rgba(255,255,255,${(0.4 + r() * 0.5).toFixed(2)})"/>`);
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${parts.join('')}</svg>`;
}

/** A building's windows: a size of its own, columns and rows at irregular gaps, a few windows dark. */
function buildingWindows(r: () => number, x: number, top: number, bw: number, bh: number): string[] {
  const ww = 4 + r() * 7;
  const wh = 6 + r() * 8;
  const out: string[] = [];
  for (let cx = x + 3 + r() * 4; cx + ww < x + bw - 2; cx += ww + 3 + r() * 9) {
    for (let cy = top + 4 + r() * 5; cy + wh < top + bh - 2; cy += wh + 4 + r() * 10) {
      if (r() < 0.35) continue;
      out.push(`<rect x="${cx.toFixed(1)}" y="${cy.toFixed(1)}" width="${ww.toFixed(1)}" height="${wh.toFixed(1)}" fill="${hsl(40 + r() * 40, 50 + r() * 50, 45 + r() * 45)}"/>`);
    }
  }
  return out;
}

/** The scene as raw RGB with film-grain noise, so flat areas still carry a little texture. */
export async function renderScene(seed: number, w = 640, h = 480): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(Buffer.from(sceneSvg(seed, w, h))).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const r = rng(seed ^ 0x5bd1e995);
  for (let i = 0; i < data.length; i++) data[i] = Math.max(0, Math.min(255, data[i]! + Math.round((r() - 0.5) * 18)));
  return { data, width: info.width, height: info.height };
}

export async function sceneJpeg(seed: number, quality = 90): Promise<Buffer> {
  const img = await renderScene(seed);
  return sharp(img.data, { raw: { width: img.width, height: img.height, channels: 3 } }).jpeg({ quality }).toBuffer();
}

/** Warps an RGB image by the homography mapping output pixels to input pixels (bilinear; outside → grey). */
function warpPerspective(src: { data: Buffer; width: number; height: number }, hInv: number[], outW: number, outH: number): Buffer {
  const out = Buffer.alloc(outW * outH * 3);
  const { data, width, height } = src;
  for (let y = 0; y < outH; y++) {
    for (let x = 0; x < outW; x++) {
      const d = hInv[6]! * x + hInv[7]! * y + hInv[8]!;
      const u = (hInv[0]! * x + hInv[1]! * y + hInv[2]!) / d;
      const v = (hInv[3]! * x + hInv[4]! * y + hInv[5]!) / d;
      const o = (y * outW + x) * 3;
      if (u < 0 || v < 0 || u >= width - 1 || v >= height - 1) {
        out[o] = out[o + 1] = out[o + 2] = 128;
        continue;
      }
      const x0 = Math.floor(u);
      const y0 = Math.floor(v);
      const fx = u - x0;
      const fy = v - y0;
      for (let c = 0; c < 3; c++) {
        const a = data[(y0 * width + x0) * 3 + c]!;
        const b = data[(y0 * width + x0 + 1) * 3 + c]!;
        const e = data[((y0 + 1) * width + x0) * 3 + c]!;
        const f = data[((y0 + 1) * width + x0 + 1) * 3 + c]!;
        out[o + c] = Math.round(a * (1 - fx) * (1 - fy) + b * fx * (1 - fy) + e * (1 - fx) * fy + f * fx * fy);
      }
    }
  }
  return out;
}

/** Homography (3x3, row-major) mapping 4 points to 4 points (direct solve of the 8x8 system). */
function homography(from: [number, number][], to: [number, number][]): number[] {
  const A: number[][] = [];
  const b: number[] = [];
  for (let i = 0; i < 4; i++) {
    const [x, y] = from[i]!;
    const [u, v] = to[i]!;
    A.push([x, y, 1, 0, 0, 0, -u * x, -u * y]);
    b.push(u);
    A.push([0, 0, 0, x, y, 1, -v * x, -v * y]);
    b.push(v);
  }
  // Gaussian elimination with partial pivoting
  const n = 8;
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(A[r]![c]!) > Math.abs(A[p]![c]!)) p = r;
    [A[c], A[p]] = [A[p]!, A[c]!];
    [b[c], b[p]] = [b[p]!, b[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = A[r]![c]! / A[c]![c]!;
      for (let k = c; k < n; k++) A[r]![k]! -= f * A[c]![k]!;
      b[r]! -= f * b[c]!;
    }
  }
  const hv = b.map((v, i) => v / A[i]![i]!);
  return [...hv, 1];
}

export type Retake = 'crop' | 'scale' | 'rotate' | 'perspective' | 'recompress';

/** The same scene "taken differently" by another outlet. */
export async function retakeJpeg(seed: number, how: Retake): Promise<Buffer> {
  const img = await renderScene(seed);
  const raw = { raw: { width: img.width, height: img.height, channels: 3 as const } };
  switch (how) {
    case 'crop':
      return sharp(img.data, raw).extract({ left: 70, top: 40, width: 480, height: 380 }).jpeg({ quality: 85 }).toBuffer();
    case 'scale':
      return sharp(img.data, raw).extract({ left: 20, top: 20, width: 600, height: 440 }).resize(420).jpeg({ quality: 80 }).toBuffer();
    case 'rotate': {
      const rot = await sharp(img.data, raw).rotate(11, { background: { r: 120, g: 120, b: 120 } }).toBuffer({ resolveWithObject: true });
      const { width, height } = rot.info;
      return sharp(rot.data, { raw: { width, height, channels: rot.info.channels as 3 } })
        .extract({ left: Math.round((width - 560) / 2), top: Math.round((height - 420) / 2), width: 560, height: 420 })
        .jpeg({ quality: 85 })
        .toBuffer();
    }
    case 'perspective': {
      const W = img.width;
      const H = img.height;
      // output corners come from a trapezoid of the input: the photographer stood a little to the left
      const hInv = homography(
        [[0, 0], [W, 0], [W, H], [0, H]],
        [[30, 50], [W - 10, 0], [W - 25, H], [15, H - 40]],
      );
      const out = warpPerspective(img, hInv, W, H);
      return sharp(out, raw).jpeg({ quality: 85 }).toBuffer();
    }
    case 'recompress':
      return sharp(img.data, raw).resize(512).jpeg({ quality: 35 }).toBuffer();
  }
}
