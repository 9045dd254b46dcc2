// Helpers for the lsh-index tests: synthetic textured scenes (sharp) and transformed copies of them.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { sceneSvg } from './sift-helpers.js';

export const W = 360;
export const H = 270;

export async function scene(seed: number): Promise<Buffer> {
  return sharp(Buffer.from(sceneSvg(W, H, seed, 420))).flatten().png().toBuffer();
}

/** Perspective warp (destination corners of the source rectangle), bilinear on RGB, grey outside. */
export async function perspective(png: Buffer, corners: [number, number][]): Promise<Buffer> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const w = info.width;
  const h = info.height;
  // Homography from destination to source: solve the 8x8 system for the 4 corner correspondences.
  const src: [number, number][] = [[0, 0], [w, 0], [w, h], [0, h]];
  const A: number[][] = [];
  const b: number[] = [];
  for (let i = 0; i < 4; i++) {
    const [x, y] = corners[i]!;
    const [u, v] = src[i]!;
    A.push([x, y, 1, 0, 0, 0, -u * x, -u * y]);
    b.push(u);
    A.push([0, 0, 0, x, y, 1, -v * x, -v * y]);
    b.push(v);
  }
  for (let c = 0; c < 8; c++) {
    let p = c;
    for (let r = c + 1; r < 8; r++) if (Math.abs(A[r]![c]!) > Math.abs(A[p]![c]!)) p = r;
    [A[c], A[p]] = [A[p]!, A[c]!];
    [b[c], b[p]] = [b[p]!, b[c]!];
    for (let r = 0; r < 8; r++) {
      if (r === c) continue;
      const f = A[r]![c]! / A[c]![c]!;
      for (let k = c; k < 8; k++) A[r]![k]! -= f * A[c]![k]!;
      b[r]! -= f * b[c]!;
    }
  }
  const hm = b.map((v, i) => v / A[i]![i]!);
  const out = Buffer.alloc(w * h * 3, 128);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const d = hm[6]! * x + hm[7]! * y + 1;
      const sx = (hm[0]! * x + hm[1]! * y + hm[2]!) / d;
      const sy = (hm[3]! * x + hm[4]! * y + hm[5]!) / d;
      const x0 = Math.floor(sx);
      const y0 = Math.floor(sy);
      if (x0 < 0 || y0 < 0 || x0 >= w - 1 || y0 >= h - 1) continue;
      const fx = sx - x0;
      const fy = sy - y0;
      for (let ch = 0; ch < 3; ch++) {
        const at = (xx: number, yy: number) => data[(yy * w + xx) * 3 + ch]!;
        out[(y * w + x) * 3 + ch] = Math.round(
          (at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx) * (1 - fy) + (at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx) * fy,
        );
      }
    }
  return sharp(out, { raw: { width: w, height: h, channels: 3 } }).png().toBuffer();
}

/** The transformed copies the tests look for. */
export const TRANSFORMS: Record<string, (png: Buffer) => Promise<Buffer>> = {
  crop: (p) => sharp(p).extract({ left: 50, top: 30, width: 260, height: 200 }).resize(390, 300).jpeg({ quality: 85 }).toBuffer(),
  scale: (p) => sharp(p).resize(220, 165).jpeg({ quality: 80 }).toBuffer(),
  rotation: (p) => sharp(p).rotate(25, { background: '#808080' }).jpeg({ quality: 85 }).toBuffer(),
  perspective: (p) => perspective(p, [[30, 10], [W - 5, 35], [W - 25, H - 20], [10, H - 5]]),
  recompression: (p) => sharp(p).jpeg({ quality: 35 }).toBuffer(),
  mirror: (p) => sharp(p).flop().jpeg({ quality: 85 }).toBuffer(),
};

export function write(dir: string, name: string, buf: Buffer): string {
  fs.mkdirSync(dir, { recursive: true });
  const f = path.join(dir, name);
  fs.writeFileSync(f, buf);
  return f;
}
