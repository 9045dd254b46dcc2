// Work once per picture: a wire photo is republished by many pages at other sizes and JPEG qualities. Before an
// image gets SIFT, its perceptual hash is compared with the pictures already in the same bank; a near-identical
// one lends its features (and, in the match stage, its candidates), so the copy costs a small decode instead of
// a SIFT run.
//
// The hash is the classic DCT pHash (Zauner 2010): the image as 32x32 grey, its 2-D DCT, and one bit per
// low-frequency coefficient (the 8x8 block after the DC row and column) above their median. Resizing and
// recompression move few bits; a crop, a rotation or another photo move about half of them. A hash match is
// then checked on the pictures themselves (the same aspect ratio, and 16x16 thumbnails that agree after
// normalising brightness and contrast), so two different photos never share features through a hash collision,
// and last on where the picture sits (misalignment: a crop of 1-2 % passes the other checks, and the features it
// reused would sit several pixels off).
//
// Written here rather than with sharp-phash: the check needs the thumbnail the hash is made from (the package
// returns only the bits), and a separable DCT is 64 times less work than the package's direct 4-loop one.
import sharp from 'sharp';
import { DecodeError } from './decode.js';

export interface PictureHash {
  /** 64 bits as two 32-bit halves. */
  hi: number;
  lo: number;
  /** Original size (EXIF orientation applied). */
  width: number;
  height: number;
  /** 16x16 grey thumbnail, row-major. */
  thumb: Uint8Array;
}

export interface TwinParams {
  /** Largest Hamming distance between the hashes of two near-identical pictures (at most 7: see TwinIndex). */
  maxDistance: number;
  /** Smallest correlation of their normalised 16x16 thumbnails. */
  minCorrelation: number;
  /** Largest relative difference of their aspect ratios. */
  maxAspectDiff: number;
  /** Largest displacement of the copy's picture against the other's, as a share of the frame side (misalignment). */
  maxShift: number;
}

const N = 32;
const COS = (() => {
  const c = new Float64Array(N * N); // c[u * N + x] = cos((2x + 1) u pi / 2N)
  for (let u = 0; u < N; u++) for (let x = 0; x < N; x++) c[u * N + x] = Math.cos(((2 * x + 1) * u * Math.PI) / (2 * N));
  return c;
})();

/** The hash bits and thumbnail of a 32x32 grey image. */
export function hashGrey32(g: Uint8Array, width: number, height: number): PictureHash {
  // Rows then columns, only the 9 lowest frequencies each way (the hash uses u, v in 1..8).
  const rows = new Float64Array(N * 9);
  for (let y = 0; y < N; y++) {
    for (let v = 0; v < 9; v++) {
      let s = 0;
      for (let x = 0; x < N; x++) s += COS[v * N + x]! * g[y * N + x]!;
      rows[y * 9 + v] = s;
    }
  }
  const coef: number[] = [];
  for (let u = 1; u < 9; u++) {
    for (let v = 1; v < 9; v++) {
      let s = 0;
      for (let y = 0; y < N; y++) s += COS[u * N + y]! * rows[y * 9 + v]!;
      coef.push(s);
    }
  }
  const median = [...coef].sort((a, b) => a - b)[32]!;
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < 64; i++) {
    if (coef[i]! <= median) continue;
    if (i < 32) hi |= 1 << i;
    else lo |= 1 << (i - 32);
  }
  const thumb = new Uint8Array(256);
  for (let y = 0; y < 16; y++) {
    for (let x = 0; x < 16; x++) {
      const o = 2 * y * N + 2 * x;
      thumb[y * 16 + x] = (g[o]! + g[o + 1]! + g[o + N]! + g[o + N + 1]! + 2) >> 2;
    }
  }
  return { hi: hi >>> 0, lo: lo >>> 0, width, height, thumb };
}

/** Decodes an image to its hash (the header is checked against maxPixels first, as decodeGrey does). */
export async function pictureHash(buf: Uint8Array, opts: { maxPixels: number }): Promise<PictureHash> {
  let meta;
  try {
    meta = await sharp(buf, { limitInputPixels: false, failOn: 'none' }).metadata();
  } catch (err) {
    throw new DecodeError('not-image', `not a readable image: ${(err as Error).message}`);
  }
  if (!meta.width || !meta.height) throw new DecodeError('not-image', 'not a readable image: no size in its header');
  if (meta.width * meta.height > opts.maxPixels) {
    throw new DecodeError('too-large', `image too large: ${meta.width}x${meta.height} exceeds sift.maxPixels ${opts.maxPixels}`);
  }
  const swap = (meta.orientation ?? 1) >= 5;
  try {
    return hashGrey32(await squeezedGrey(buf, N, opts.maxPixels), swap ? meta.height : meta.width, swap ? meta.width : meta.height);
  } catch (err) {
    throw new DecodeError('decode', `cannot decode: ${(err as Error).message}`);
  }
}

/** The whole frame squeezed to side x side grey (EXIF orientation applied, transparency on white). */
async function squeezedGrey(buf: Uint8Array, side: number, maxPixels: number): Promise<Uint8Array> {
  const g = await sharp(buf, { limitInputPixels: maxPixels, failOn: 'truncated', pages: 1, page: 0 })
    .rotate()
    .flatten({ background: '#ffffff' })
    .resize(side, side, { fit: 'fill', kernel: 'cubic' })
    .toColourspace('b-w')
    .raw({ depth: 'uchar' })
    .toBuffer();
  return new Uint8Array(g.buffer, g.byteOffset, side * side);
}

function popcount32(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

export function hashDistance(a: { hi: number; lo: number }, b: { hi: number; lo: number }): number {
  return popcount32((a.hi ^ b.hi) >>> 0) + popcount32((a.lo ^ b.lo) >>> 0);
}

/** Pearson correlation of two thumbnails (1 for the same picture up to brightness and contrast). */
export function thumbCorrelation(a: Uint8Array, b: Uint8Array): number {
  const n = a.length;
  let sa = 0, sb = 0;
  for (let i = 0; i < n; i++) {
    sa += a[i]!;
    sb += b[i]!;
  }
  const ma = sa / n, mb = sb / n;
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < n; i++) {
    const x = a[i]! - ma, y = b[i]! - mb;
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  // Flat thumbnails (a blank frame) say nothing about identity: never near-identical.
  if (aa < n || bb < n) return 0;
  return ab / Math.sqrt(aa * bb);
}

/** Whether b is a near-identical copy of a (same picture at another size or quality); its hash distance. */
export function nearIdentical(a: PictureHash, b: PictureHash, p: TwinParams): number | null {
  const d = hashDistance(a, b);
  if (d > p.maxDistance) return null;
  const ra = a.width / a.height, rb = b.width / b.height;
  if (Math.abs(ra - rb) / Math.max(ra, rb) > p.maxAspectDiff) return null;
  if (thumbCorrelation(a.thumb, b.thumb) < p.minCorrelation) return null;
  return d;
}

/**
 * The hashes of one bank's pictures, searchable by Hamming distance: each hash is filed under its eight bytes,
 * and two hashes within distance 7 share at least one byte (pigeonhole), so a query looks in eight lists.
 */
export class TwinIndex<K> {
  private lists = Array.from({ length: 8 }, () => new Map<number, Array<{ key: K; h: PictureHash }>>());

  private static byte(h: { hi: number; lo: number }, i: number): number {
    return ((i < 4 ? h.hi : h.lo) >>> ((i & 3) * 8)) & 0xff;
  }

  add(key: K, h: PictureHash): void {
    const e = { key, h };
    for (let i = 0; i < 8; i++) {
      const m = this.lists[i]!;
      const b = TwinIndex.byte(h, i);
      const l = m.get(b);
      if (l) l.push(e);
      else m.set(b, [e]);
    }
  }

  /** The nearest near-identical picture (smallest hash distance, then first added), or null. */
  find(h: PictureHash, p: TwinParams, accept: (key: K) => boolean = () => true): { key: K; distance: number } | null {
    if (p.maxDistance > 7) throw new RangeError('TwinIndex: maxDistance above 7 would miss pairs');
    let best: { key: K; distance: number } | null = null;
    const seen = new Set<{ key: K; h: PictureHash }>();
    for (let i = 0; i < 8; i++) {
      for (const e of this.lists[i]!.get(TwinIndex.byte(h, i)) ?? []) {
        if (seen.has(e)) continue;
        seen.add(e);
        if (best && hashDistance(e.h, h) >= best.distance) continue;
        if (!accept(e.key)) continue;
        const d = nearIdentical(e.h, h, p);
        if (d !== null && (!best || d < best.distance)) best = { key: e.key, distance: d };
      }
    }
    return best;
  }
}

const A = 128; // side of the alignment check's grey image (64 was too coarse: resized, recompressed real photos
// read up to 1 % of the frame off there, as far as a 1 % crop)
export const ALIGN_SIDE = A;
const BLOCK = 40; // quadrant blocks, away from the border by MARGIN (room for the shifts tried)
const MARGIN = 8;

/** An image as A x A grey, for misalignment(). */
export function alignmentGrey(buf: Uint8Array, opts: { maxPixels: number }): Promise<Uint8Array> {
  return squeezedGrey(buf, A, opts.maxPixels);
}

/** Normalised correlation of a's block at (x0, y0) with b's block shifted by (dx, dy); NaN on a flat block. */
function blockCorrelation(a: Uint8Array, b: Uint8Array, x0: number, y0: number, dx: number, dy: number): number {
  let sa = 0, sb = 0, ab = 0, aa = 0, bb = 0;
  const n = BLOCK * BLOCK;
  for (let y = 0; y < BLOCK; y++) {
    for (let x = 0; x < BLOCK; x++) {
      const u = a[(y0 + y) * A + x0 + x]!, v = b[(y0 + y + dy) * A + x0 + x + dx]!;
      sa += u;
      sb += v;
      ab += u * v;
      aa += u * u;
      bb += v * v;
    }
  }
  const va = aa - (sa * sa) / n, vb = bb - (sb * sb) / n;
  if (va < 4 * n || vb < 4 * n) return NaN; // flat (sky, a wall): says nothing about where it is
  return (ab - (sa * sb) / n) / Math.sqrt(va * vb);
}

/**
 * How far b's picture sits from a's, in pixels of the A x A frame: the largest displacement among the four quadrant
 * blocks (each found among integer shifts up to MARGIN, refined to a fraction of a pixel by a parabola through its
 * neighbours). A copy at another size or quality sits at ~0; a crop moves the blocks (a shift, or a scale that
 * moves opposite quadrants apart), so its features, reused, would sit in the wrong places. 0 when every block is flat.
 */
export function misalignment(a: Uint8Array, b: Uint8Array): number {
  let worst = 0;
  for (const [x0, y0] of [[MARGIN, MARGIN], [A - MARGIN - BLOCK, MARGIN], [MARGIN, A - MARGIN - BLOCK], [A - MARGIN - BLOCK, A - MARGIN - BLOCK]] as const) {
    const c = (dx: number, dy: number) => blockCorrelation(a, b, x0, y0, dx, dy);
    if (Number.isNaN(c(0, 0))) continue;
    let bx = 0, by = 0, best = -Infinity;
    for (let dy = -MARGIN; dy <= MARGIN; dy++)
      for (let dx = -MARGIN; dx <= MARGIN; dx++) {
        const v = c(dx, dy);
        if (v > best) (best = v, (bx = dx), (by = dy));
      }
    const sub = (l: number, m: number, r: number) => {
      const den = l - 2 * m + r;
      return den < 0 ? Math.max(-0.5, Math.min(0.5, (0.5 * (l - r)) / den)) : 0;
    };
    const fx = Math.abs(bx) < MARGIN ? sub(c(bx - 1, by), best, c(bx + 1, by)) : 0;
    const fy = Math.abs(by) < MARGIN ? sub(c(bx, by - 1), best, c(bx, by + 1)) : 0;
    worst = Math.max(worst, Math.hypot(bx + fx, by + fy));
  }
  return worst;
}
