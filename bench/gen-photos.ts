// Generated distractor photos for bench:pipeline: procedurally drawn scenes, JPEG-encoded like a web photo, so
// that a bank of 10,000+ images can be built without photos we do not have. They are images, not descriptor
// mosaics: our SIFT and OpenCV's describe their pixels, and the search votes for them and verifies them like any
// other image. Each is drawn from its own seed (a gradient, large masses, textured patches, many smaller shapes
// and lines at random scales, angles and colours, a slight blur); they share no content with each other or with
// the real photos. They are not photographs of the world: their descriptors are cleaner than a photo's.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { mulberry32 } from '../src/util/random.js';

/**
 * The pixels (RGB, w x h) of generated scene `seed`, drawn directly (an SVG renderer took 0.1-2 s an image on
 * this machine; this takes a few ms): a two-colour gradient, then shapes back to front, each an ellipse, a
 * rotated box or a thick line, filled with a flat colour, a shaded colour, stripes or checks; then some noise.
 */
export function photoPixels(seed: number, w: number, h: number): Buffer {
  const r = mulberry32(seed * 7919 + 17);
  const px = Buffer.alloc(w * h * 3);
  const c0 = [r() * 255, r() * 255, r() * 255];
  const c1 = [r() * 140, r() * 140, r() * 140];
  const gx = r() - 0.5;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const t = Math.min(1, Math.max(0, y / h + gx * (x / w - 0.5)));
      const o = (y * w + x) * 3;
      for (let k = 0; k < 3; k++) px[o + k] = c0[k]! + (c1[k]! - c0[k]!) * t;
    }
  }
  const big = Math.max(w, h);
  const shapes = 110;
  for (let n = 0; n < shapes; n++) {
    // Sizes from large masses (first) down to small details.
    const size = n < 6 ? big * (0.1 + 0.2 * r()) : n < 20 ? big * (0.04 + 0.08 * r()) : big * (0.006 + 0.04 * r() * r());
    const cx = r() * w, cy = r() * h;
    const th = r() * Math.PI;
    const cs = Math.cos(th), sn = Math.sin(th);
    const kind = Math.floor(r() * 3); // ellipse, box, line
    const a = size, b = kind === 2 ? 1 + r() * size * 0.12 : size * (0.25 + 0.75 * r());
    const f = r();
    const fill = f < 0.4 ? 0 : f < 0.7 ? 1 : f < 0.85 ? 2 : 3; // flat, shaded, stripes, checks
    const ca = [r() * 255, r() * 255, r() * 255];
    const cb = [r() * 255, r() * 255, r() * 255];
    const period = 3 + r() * 14;
    const ext = Math.ceil(Math.max(a, b)) + 1;
    const x0 = Math.max(0, Math.floor(cx - ext)), x1 = Math.min(w - 1, Math.ceil(cx + ext));
    const y0 = Math.max(0, Math.floor(cy - ext)), y1 = Math.min(h - 1, Math.ceil(cy + ext));
    for (let y = y0; y <= y1; y++) {
      for (let x = x0; x <= x1; x++) {
        const u = (x - cx) * cs + (y - cy) * sn;
        const v = -(x - cx) * sn + (y - cy) * cs;
        const inside = kind === 0 ? (u * u) / (a * a) + (v * v) / (b * b) <= 1 : Math.abs(u) <= a && Math.abs(v) <= b;
        if (!inside) continue;
        let t = 0;
        if (fill === 1) t = (u / a + 1) / 2;
        else if (fill === 2) t = Math.floor(u / period) & 1;
        else if (fill === 3) t = (Math.floor(u / period) + Math.floor(v / period)) & 1;
        const o = (y * w + x) * 3;
        for (let k = 0; k < 3; k++) px[o + k] = ca[k]! + (cb[k]! - ca[k]!) * t;
      }
    }
  }
  // Sensor-like noise, so that flat areas are not perfectly flat.
  for (let i = 0; i < px.length; i++) px[i] = Math.max(0, Math.min(255, px[i]! + (r() + r() + r() - 1.5) * 6));
  return px;
}

const SIZES: Array<[number, number]> = [[640, 427], [640, 480], [600, 400], [480, 640], [800, 533], [500, 500], [427, 640], [720, 405]];

/** Writes generated photos seed0 .. seed0+count-1 into dir (kept between runs); returns their files. */
export async function ensurePhotos(dir: string, seed0: number, count: number, onProgress?: (done: number) => void): Promise<string[]> {
  fs.mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const seed = seed0 + i;
    const f = path.join(dir, `g${seed}.jpg`);
    files.push(f);
    if (fs.existsSync(f)) continue;
    const r = mulberry32(seed);
    const [w, h] = SIZES[Math.floor(r() * SIZES.length)]!;
    const buf = await sharp(photoPixels(seed, w, h), { raw: { width: w, height: h, channels: 3 } })
      .blur(0.3 + r() * 0.5)
      .jpeg({ quality: 60 + Math.floor(r() * 31) })
      .toBuffer();
    fs.writeFileSync(f + '.tmp', buf);
    fs.renameSync(f + '.tmp', f);
    if (onProgress && i % 250 === 0) onProgress(i);
  }
  return files;
}
