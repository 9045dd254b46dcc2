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

/** The homography (8 numbers, h33 = 1) taking (x, y) to (u, v) through 4 correspondences [x, y, u, v]: the 8x8 direct solve. */
export function solveHomography(pts: [number, number, number, number][]): number[] {
  const A: number[][] = [];
  const b: number[] = [];
  for (const [x, y, u, v] of pts.slice(0, 4)) {
    A.push([x, y, 1, 0, 0, 0, -u * x, -u * y], [0, 0, 0, x, y, 1, -v * x, -v * y]);
    b.push(u, v);
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
  return b.map((v, i) => v / A[i]![i]!);
}

/** Perspective warp (destination corners of the source rectangle), bilinear on RGB, grey outside. */
export async function perspective(png: Buffer, corners: [number, number][]): Promise<Buffer> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const w = info.width;
  const h = info.height;
  // Homography from destination to source: solve the 8x8 system for the 4 corner correspondences.
  const src: [number, number][] = [[0, 0], [w, 0], [w, h], [0, h]];
  const hm = solveHomography(corners.map(([x, y], i) => [x, y, src[i]![0], src[i]![1]]));
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

/** A camera for render3d: centre in world units, yaw (degrees, about the vertical axis), focal length in pixels. */
export interface Camera {
  centre: [number, number, number];
  yaw: number;
  focal: number;
}

/** A textured rectangle in the world: corner p0, unit axes u and v, extents su and sv, texture seed. */
interface Face {
  p0: number[];
  u: number[];
  v: number[];
  su: number;
  sv: number;
  seed: number;
}

/**
 * A 3D scene rendered by ray casting: a back wall and a box standing in front of it (front face and a receding
 * side face), each textured with its own generated picture, seen by a pinhole camera. Two cameras at
 * different places see the faces with different parallax, so no one homography relates their pictures.
 */
export async function render3d(cam: Camera, w = 400, h = 300): Promise<Buffer> {
  const faces: Face[] = [
    { p0: [-4.5, -3, 10], u: [1, 0, 0], v: [0, 1, 0], su: 9, sv: 6, seed: 501 },
    { p0: [-1.8, -1.2, 6], u: [1, 0, 0], v: [0, 1, 0], su: 3, sv: 2.6, seed: 502 },
    { p0: [1.2, -1.2, 6], u: [0.5, 0, 0.866], v: [0, 1, 0], su: 2.6, sv: 2.6, seed: 503 },
  ];
  const tex = await Promise.all(
    faces.map(async (f) => {
      const { data, info } = await sharp(Buffer.from(sceneSvg(480, 360, f.seed, 520))).flatten().removeAlpha().raw().toBuffer({ resolveWithObject: true });
      return { data, w: info.width, h: info.height };
    }),
  );
  const out = Buffer.alloc(w * h * 3, 128);
  const c = Math.cos((cam.yaw * Math.PI) / 180);
  const s = Math.sin((cam.yaw * Math.PI) / 180);
  const dot = (a: number[], b: number[]) => a[0]! * b[0]! + a[1]! * b[1]! + a[2]! * b[2]!;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const dc = [(x - w / 2) / cam.focal, (y - h / 2) / cam.focal, 1];
      // camera -> world: rotation by yaw about y
      const d = [c * dc[0]! + s * dc[2]!, dc[1]!, -s * dc[0]! + c * dc[2]!];
      let best = Infinity;
      let col: number[] | null = null;
      faces.forEach((f, k) => {
        const n = [f.u[1]! * f.v[2]! - f.u[2]! * f.v[1]!, f.u[2]! * f.v[0]! - f.u[0]! * f.v[2]!, f.u[0]! * f.v[1]! - f.u[1]! * f.v[0]!];
        const den = dot(d, n);
        if (Math.abs(den) < 1e-9) return;
        const t = dot([f.p0[0]! - cam.centre[0], f.p0[1]! - cam.centre[1], f.p0[2]! - cam.centre[2]], n) / den;
        if (!(t > 0) || t >= best) return;
        const X = [cam.centre[0] + t * d[0]! - f.p0[0]!, cam.centre[1] + t * d[1]! - f.p0[1]!, cam.centre[2] + t * d[2]! - f.p0[2]!];
        const a = dot(X, f.u) / f.su;
        const b = dot(X, f.v) / f.sv;
        if (a < 0 || a >= 1 || b < 0 || b >= 1) return;
        const tx = tex[k]!;
        const px = Math.min(tx.w - 2, a * (tx.w - 1));
        const py = Math.min(tx.h - 2, b * (tx.h - 1));
        const x0 = Math.floor(px), y0 = Math.floor(py), fx = px - x0, fy = py - y0;
        const at = (xx: number, yy: number, ch: number) => tx.data[(yy * tx.w + xx) * 3 + ch]!;
        col = [0, 1, 2].map((ch) => (at(x0, y0, ch) * (1 - fx) + at(x0 + 1, y0, ch) * fx) * (1 - fy) + (at(x0, y0 + 1, ch) * (1 - fx) + at(x0 + 1, y0 + 1, ch) * fx) * fy);
        best = t;
      });
      if (col) for (let ch = 0; ch < 3; ch++) out[(y * w + x) * 3 + ch] = Math.round((col as number[])[ch]!);
    }
  return sharp(out, { raw: { width: w, height: h, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
}
