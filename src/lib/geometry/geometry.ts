// Geometric verification: RANSAC over homographies from the normalised DLT (Hartley & Zisserman, alg. 4.2),
// with a local optimisation step (LO-RANSAC: re-fit on all inliers, re-count) and degeneracy checks.
// Hand-written: opencv-wasm is a 10 MB dependency for one function, and we need the checks inside the loop.
import { mulberry32 } from '../../util/random.js';

export type Mat3 = Float64Array; // row-major 3x3

/** Solves A x = b (n x n, row-major, destroyed) by Gaussian elimination with partial pivoting. */
function solve(A: Float64Array, b: Float64Array, n: number): Float64Array | null {
  for (let c = 0; c < n; c++) {
    let piv = c;
    let best = Math.abs(A[c * n + c]!);
    for (let r = c + 1; r < n; r++) {
      const v = Math.abs(A[r * n + c]!);
      if (v > best) {
        best = v;
        piv = r;
      }
    }
    if (best < 1e-12) return null;
    if (piv !== c) {
      for (let k = 0; k < n; k++) {
        const t = A[c * n + k]!;
        A[c * n + k] = A[piv * n + k]!;
        A[piv * n + k] = t;
      }
      const t = b[c]!;
      b[c] = b[piv]!;
      b[piv] = t;
    }
    for (let r = c + 1; r < n; r++) {
      const f = A[r * n + c]! / A[c * n + c]!;
      if (f === 0) continue;
      for (let k = c; k < n; k++) A[r * n + k]! -= f * A[c * n + k]!;
      b[r]! -= f * b[c]!;
    }
  }
  const x = new Float64Array(n);
  for (let r = n - 1; r >= 0; r--) {
    let s = b[r]!;
    for (let k = r + 1; k < n; k++) s -= A[r * n + k]! * x[k]!;
    x[r] = s / A[r * n + r]!;
  }
  return x;
}

/** Similarity that moves the centroid to 0 and the mean distance to sqrt(2). */
function normaliser(pts: Float64Array, idx: ArrayLike<number>, off: number): Mat3 {
  let cx = 0;
  let cy = 0;
  const n = idx.length;
  for (let i = 0; i < n; i++) {
    cx += pts[idx[i]! * 4 + off]!;
    cy += pts[idx[i]! * 4 + off + 1]!;
  }
  cx /= n;
  cy /= n;
  let d = 0;
  for (let i = 0; i < n; i++) d += Math.hypot(pts[idx[i]! * 4 + off]! - cx, pts[idx[i]! * 4 + off + 1]! - cy);
  const s = d > 0 ? (Math.SQRT2 * n) / d : 1;
  return Float64Array.of(s, 0, -s * cx, 0, s, -s * cy, 0, 0, 1);
}

function mul(a: Mat3, b: Mat3): Mat3 {
  const r = new Float64Array(9);
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) r[i * 3 + j] = a[i * 3]! * b[j]! + a[i * 3 + 1]! * b[3 + j]! + a[i * 3 + 2]! * b[6 + j]!;
  return r;
}

function invSimilarity(t: Mat3): Mat3 {
  const s = t[0]!;
  return Float64Array.of(1 / s, 0, -t[2]! / s, 0, 1 / s, -t[5]! / s, 0, 0, 1);
}

/**
 * Homography (h33 = 1) mapping points (x1,y1) to (x2,y2) through the normalised DLT, least squares over
 * all given correspondences (4 = exact). pts: n*4 (x1, y1, x2, y2).
 */
export function fitHomography(pts: Float64Array, idx: ArrayLike<number>): Mat3 | null {
  const n = idx.length;
  if (n < 4) return null;
  const T1 = normaliser(pts, idx, 0);
  const T2 = normaliser(pts, idx, 2);
  // Normal equations of the 2n x 8 system.
  const AtA = new Float64Array(64);
  const Atb = new Float64Array(8);
  const row = new Float64Array(8);
  for (let i = 0; i < n; i++) {
    const k = idx[i]! * 4;
    const x = T1[0]! * pts[k]! + T1[2]!;
    const y = T1[4]! * pts[k + 1]! + T1[5]!;
    const u = T2[0]! * pts[k + 2]! + T2[2]!;
    const v = T2[4]! * pts[k + 3]! + T2[5]!;
    for (let e = 0; e < 2; e++) {
      let rhs: number;
      if (e === 0) {
        row.set([x, y, 1, 0, 0, 0, -u * x, -u * y]);
        rhs = u;
      } else {
        row.set([0, 0, 0, x, y, 1, -v * x, -v * y]);
        rhs = v;
      }
      for (let a = 0; a < 8; a++) {
        const ra = row[a]!;
        if (ra === 0) continue;
        Atb[a]! += ra * rhs;
        for (let b = 0; b < 8; b++) AtA[a * 8 + b]! += ra * row[b]!;
      }
    }
  }
  const h = solve(AtA, Atb, 8);
  if (!h) return null;
  const Hn = Float64Array.of(h[0]!, h[1]!, h[2]!, h[3]!, h[4]!, h[5]!, h[6]!, h[7]!, 1);
  const H = mul(mul(invSimilarity(T2), Hn), T1);
  const s = H[8]!;
  if (!Number.isFinite(s) || Math.abs(s) < 1e-12) return null;
  for (let i = 0; i < 9; i++) H[i]! /= s;
  return H;
}

/** Unit square -> quadrilateral (Heckbert 1989, "Fundamentals of texture mapping", projective mapping);
 *  corners (0,0) (1,0) (1,1) (0,1) go to the 4 points of `s` at column `off` of pts. Writes into m. */
function squareToQuad(pts: Float64Array, s: number[], off: number, m: Float64Array): boolean {
  const x0 = pts[s[0]! * 4 + off]!, y0 = pts[s[0]! * 4 + off + 1]!;
  const x1 = pts[s[1]! * 4 + off]!, y1 = pts[s[1]! * 4 + off + 1]!;
  const x2 = pts[s[2]! * 4 + off]!, y2 = pts[s[2]! * 4 + off + 1]!;
  const x3 = pts[s[3]! * 4 + off]!, y3 = pts[s[3]! * 4 + off + 1]!;
  const sx = x0 - x1 + x2 - x3;
  const sy = y0 - y1 + y2 - y3;
  const dx1 = x1 - x2, dx2 = x3 - x2, dy1 = y1 - y2, dy2 = y3 - y2;
  const den = dx1 * dy2 - dx2 * dy1;
  if (Math.abs(den) < 1e-9) return false;
  const g = (sx * dy2 - dx2 * sy) / den;
  const h = (dx1 * sy - sx * dy1) / den;
  m[0] = x1 - x0 + g * x1; m[1] = x3 - x0 + h * x3; m[2] = x0;
  m[3] = y1 - y0 + g * y1; m[4] = y3 - y0 + h * y3; m[5] = y0;
  m[6] = g; m[7] = h; m[8] = 1;
  return true;
}

const scratchA = new Float64Array(9);
const scratchB = new Float64Array(9);

/** The inverse of a 3x3 matrix (row-major), scaled so that its last entry is 1 where it can be; null when singular. */
export function invert3(m: ArrayLike<number>): Mat3 | null {
  const [a, b, c, d, e, f, g, h, i] = Array.from(m) as [number, number, number, number, number, number, number, number, number];
  const A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g;
  const det = a * A + b * B + c * C;
  if (!Number.isFinite(det) || Math.abs(det) < 1e-12) return null;
  const inv = [A, -(b * i - c * h), b * f - c * e, B, a * i - c * g, -(a * f - c * d), C, -(a * h - b * g), a * e - b * d].map((v) => v / det);
  const s = Math.abs(inv[8]!) > 1e-12 ? inv[8]! : 1;
  return Float64Array.from(inv, (v) => v / s);
}

/**
 * The exact homography through 4 correspondences (the RANSAC minimal sample): square->quad of the second
 * image composed with the inverse (adjugate) of square->quad of the first. The same H as the DLT on the 4
 * points, without building and solving an 8x8 system or allocating: the sampling loop runs it hundreds of
 * times per candidate image.
 */
export function homographyFrom4(pts: Float64Array, s: number[]): Mat3 | null {
  const A = scratchA;
  const B = scratchB;
  if (!squareToQuad(pts, s, 0, A) || !squareToQuad(pts, s, 2, B)) return null;
  // adj(A)
  const a0 = A[4]! * A[8]! - A[5]! * A[7]!, a1 = A[2]! * A[7]! - A[1]! * A[8]!, a2 = A[1]! * A[5]! - A[2]! * A[4]!;
  const a3 = A[5]! * A[6]! - A[3]! * A[8]!, a4 = A[0]! * A[8]! - A[2]! * A[6]!, a5 = A[2]! * A[3]! - A[0]! * A[5]!;
  const a6 = A[3]! * A[7]! - A[4]! * A[6]!, a7 = A[1]! * A[6]! - A[0]! * A[7]!, a8 = A[0]! * A[4]! - A[1]! * A[3]!;
  const H = new Float64Array(9);
  for (let i = 0; i < 3; i++) {
    const b0 = B[i * 3]!, b1 = B[i * 3 + 1]!, b2 = B[i * 3 + 2]!;
    H[i * 3] = b0 * a0 + b1 * a3 + b2 * a6;
    H[i * 3 + 1] = b0 * a1 + b1 * a4 + b2 * a7;
    H[i * 3 + 2] = b0 * a2 + b1 * a5 + b2 * a8;
  }
  const w = H[8]!;
  if (!Number.isFinite(w) || Math.abs(w) < 1e-12) return null;
  for (let i = 0; i < 9; i++) H[i]! /= w;
  return H;
}

/** Squared transfer error of correspondence i under H (Infinity when it maps to infinity). */
export function transferError2(H: Mat3, pts: Float64Array, i: number): number {
  const x = pts[i * 4]!;
  const y = pts[i * 4 + 1]!;
  const w = H[6]! * x + H[7]! * y + H[8]!;
  if (w <= 1e-9) return Infinity;
  const u = (H[0]! * x + H[1]! * y + H[2]!) / w;
  const v = (H[3]! * x + H[4]! * y + H[5]!) / w;
  const du = u - pts[i * 4 + 2]!;
  const dv = v - pts[i * 4 + 3]!;
  return du * du + dv * dv;
}

function cross(ax: number, ay: number, bx: number, by: number, cx: number, cy: number): number {
  return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

/** A 4-point sample is degenerate when three points are (nearly) collinear in either image, or when the
 *  quadrilateral's orientation flips between the images (no orientation-preserving homography exists). */
function degenerate(pts: Float64Array, s: number[], allowFlips = false): boolean {
  for (const off of [0, 2]) {
    for (let a = 0; a < 4; a++)
      for (let b = a + 1; b < 4; b++)
        for (let c = b + 1; c < 4; c++) {
          const A = s[a]! * 4 + off;
          const B = s[b]! * 4 + off;
          const C = s[c]! * 4 + off;
          if (Math.abs(cross(pts[A]!, pts[A + 1]!, pts[B]!, pts[B + 1]!, pts[C]!, pts[C + 1]!)) < 4) return true;
        }
  }
  // Orientation consistency of each triple.
  for (let a = 0; a < (allowFlips ? 0 : 4); a++) {
    const [i, j, k] = [s[a]!, s[(a + 1) % 4]!, s[(a + 2) % 4]!];
    const c1 = cross(pts[i * 4]!, pts[i * 4 + 1]!, pts[j * 4]!, pts[j * 4 + 1]!, pts[k * 4]!, pts[k * 4 + 1]!);
    const c2 = cross(pts[i * 4 + 2]!, pts[i * 4 + 3]!, pts[j * 4 + 2]!, pts[j * 4 + 3]!, pts[k * 4 + 2]!, pts[k * 4 + 3]!);
    if (c1 * c2 < 0) return true;
  }
  return false;
}

/**
 * Whether match i's keypoint frames agree with H where it maps: the query keypoint's direction carried by H's local
 * linear map (its Jacobian at the query point) must point within angleTolerance degrees of the target keypoint's,
 * and the size ratio must be H's local scale (sqrt of the Jacobian's determinant) within a factor 2^scaleTolerance.
 * sim: per match (target size / query size, rotation); ang: per match (query angle, target angle), degrees.
 */
export function frameAgrees(H: Mat3, pts: Float64Array, i: number, f: FrameCheck): boolean {
  const x = pts[i * 4]!, y = pts[i * 4 + 1]!;
  const w = H[6]! * x + H[7]! * y + H[8]!;
  if (w <= 1e-9) return false;
  const u = (H[0]! * x + H[1]! * y + H[2]!) / w, v = (H[3]! * x + H[4]! * y + H[5]!) / w;
  const j0 = (H[0]! - u * H[6]!) / w, j1 = (H[1]! - u * H[7]!) / w, j2 = (H[3]! - v * H[6]!) / w, j3 = (H[4]! - v * H[7]!) / w;
  const det = j0 * j3 - j1 * j2;
  if (det <= 0) return false;
  const th = (f.ang[2 * i]! * Math.PI) / 180;
  const c = Math.cos(th), sn = Math.sin(th);
  const pred = (Math.atan2(j2 * c + j3 * sn, j0 * c + j1 * sn) * 180) / Math.PI;
  const d = Math.abs(((((f.ang[2 * i + 1]! - pred) % 360) + 540) % 360) - 180);
  if (d > f.angleTolerance) return false;
  return Math.abs(Math.log2(f.sim[2 * i]! / Math.sqrt(det))) <= f.scaleTolerance;
}

/** The keypoint frames of the matches and the tolerances (VerifyParams.frames), for frameAgrees. */
export interface FrameCheck {
  sim: Float64Array;
  ang: Float64Array;
  angleTolerance: number;
  scaleTolerance: number;
}

export interface RansacResult {
  H: Mat3;
  inliers: number[];
  /** Mean transfer error of the inliers, pixels. */
  meanError: number;
}

/** The options of ransacHomography. */
export interface RansacOptions {
  threshold: number;
  maxIterations: number;
  confidence?: number;
  seed?: number;
  sim?: Float64Array | null;
  simThreshold?: number;
  /** Also sample orientation-reversing homographies (a mirror image): to find a plane, not to verify one. */
  allowFlips?: boolean;
  /** Inliers must also agree in keypoint frame (frameAgrees): a chance match lands within the threshold of a
   *  wrong model now and then, its orientation and size rarely agree as well. Adds local samples (localSamples). */
  frames?: FrameCheck;
}

/**
 * RANSAC homography with LO re-fits. Seeded first by one-correspondence hypotheses (each SIFT match carries
 * scale and orientation, so one match gives a similarity; Philbin et al. 2007): the best few similarity
 * consensus sets are refined into homographies, which makes low inlier ratios cheap; then classic 4-point
 * sampling, adaptive, runs for at most maxIterations. sim: per match (scale ratio, rotation in radians) or null.
 */
export function ransacHomography(pts: Float64Array, n: number, opts: RansacOptions): RansacResult | null {
  if (n < 4) return null;
  const r = new HomographyRansac(pts, n, opts);
  if (opts.sim) r.similaritySeeds(opts.sim);
  if (opts.frames && n > 8) r.localSamples(opts.frames);
  r.fourPointSamples();
  return r.result();
}

/** The number of 4-point samples that find an all-inlier sample with probability `conf` at inlier share `w`;
 *  null when the share is too small for the logarithm to say anything (the budget then stays as it was). */
function adaptiveIterations(w: number, conf: number): number | null {
  const denom = Math.log(1 - Math.pow(w, 4));
  return denom < 0 ? Math.ceil(Math.log(1 - conf) / denom) : null;
}

/** One RANSAC run: the correspondences, the best consensus so far and the sampling budget; each way of making
 *  hypotheses is a method that offers them to `consider`. */
class HomographyRansac {
  private readonly thr2: number;
  private readonly conf: number;
  private readonly rnd: () => number;
  private best: number[] = [];
  private bestH: Mat3 | null = null;
  /** 4-point samples still allowed (adaptive: shrinks as the consensus grows). */
  private maxIt: number;

  constructor(
    private readonly pts: Float64Array,
    private readonly n: number,
    private readonly opts: RansacOptions,
  ) {
    this.thr2 = opts.threshold * opts.threshold;
    this.conf = opts.confidence ?? 0.999;
    this.rnd = mulberry32(opts.seed ?? 12345);
    this.maxIt = opts.maxIterations;
  }

  private countInliers(H: Mat3): number[] {
    const { pts, n, thr2 } = this;
    const f = this.opts.frames;
    const inl: number[] = [];
    for (let i = 0; i < n; i++) if (transferError2(H, pts, i) < thr2 && (!f || frameAgrees(H, pts, i, f))) inl.push(i);
    return inl;
  }

  /** Local optimisation: re-fit on the inliers until the set stops growing (at most `rounds` re-fits). */
  private localOptimise(H: Mat3, inl: number[], rounds: number): { H: Mat3; inl: number[] } {
    for (let lo = 0; lo < rounds && inl.length >= 4; lo++) {
      const H2 = fitHomography(this.pts, inl);
      if (!H2) break;
      const inl2 = this.countInliers(H2);
      if (inl2.length <= inl.length) break;
      inl = inl2;
      H = H2;
    }
    return { H, inl };
  }

  /** A sampled hypothesis: when it beats the best consensus, optimised locally and kept. True when kept. */
  private consider(H: Mat3, rounds: number): boolean {
    const inl0 = this.countInliers(H);
    if (inl0.length <= this.best.length || inl0.length < 4) return false;
    const lo = this.localOptimise(H, inl0, rounds);
    this.best = lo.inl;
    this.bestH = lo.H;
    return true;
  }

  /** A homography fitted to a similarity's consensus set, optimised, kept when it beats the best. */
  private refine(seed: number[]): void {
    if (seed.length < 4) return;
    const H0 = fitHomography(this.pts, seed);
    if (!H0) return;
    const { H, inl } = this.localOptimise(H0, this.countInliers(H0), 4);
    if (inl.length > this.best.length) {
      this.best = inl;
      this.bestH = H;
    }
  }

  /** One-correspondence hypotheses: each match's similarity, its consensus set; the best five refined. The
   *  4-point sampling after them is the fallback for strong perspective, so it gets a smaller budget. */
  similaritySeeds(sim: Float64Array): void {
    const { pts, n, opts } = this;
    const st2 = (opts.simThreshold ?? opts.threshold * 3) ** 2;
    const seeds: { i: number; set: number[] }[] = [];
    for (let i = 0; i < n; i++) {
      const sc = sim[2 * i]!;
      const th = sim[2 * i + 1]!;
      const c = Math.cos(th) * sc;
      const sn = Math.sin(th) * sc;
      const qx = pts[i * 4]!;
      const qy = pts[i * 4 + 1]!;
      const set: number[] = [];
      for (let j = 0; j < n; j++) {
        const dx = pts[j * 4]! - qx;
        const dy = pts[j * 4 + 1]! - qy;
        const u = pts[i * 4 + 2]! + c * dx - sn * dy - pts[j * 4 + 2]!;
        const v = pts[i * 4 + 3]! + sn * dx + c * dy - pts[j * 4 + 3]!;
        if (u * u + v * v < st2) set.push(j);
      }
      seeds.push({ i, set });
    }
    seeds.sort((a, b) => b.set.length - a.set.length);
    for (const sd of seeds.slice(0, 5)) this.refine(sd.set);
    this.maxIt = Math.min(this.maxIt, Math.max(100, opts.maxIterations >> 3));
    const adaptive = this.best.length >= 4 ? adaptiveIterations(this.best.length / n, this.conf) : null;
    if (adaptive !== null) this.maxIt = Math.min(this.maxIt, adaptive);
  }

  /** The 16 nearest matches of each match in the query image (NAPSAC's neighbourhoods). */
  private neighbours(K: number): Int32Array {
    const { pts, n } = this;
    const nb = new Int32Array(n * K);
    const d = new Float64Array(n);
    const order = Array.from({ length: n }, (_, i) => i);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) d[j] = (pts[j * 4]! - pts[i * 4]!) ** 2 + (pts[j * 4 + 1]! - pts[i * 4 + 1]!) ** 2;
      d[i] = Infinity;
      order.sort((a, b) => d[a]! - d[b]!);
      for (let k = 0; k < K; k++) nb[i * K + k] = order[k]!;
    }
    return nb;
  }

  /**
   * With keypoint frames: NAPSAC-style samples (a random match and three of its nearest neighbours in the query
   * image: a plane's inliers sit together, so a sample of neighbours is all inliers far more often than four
   * drawn anywhere when inliers are a few percent of the matches), each kept only when its four matches agree
   * in frame with the homography they give, which rejects nearly all wrong samples before counting.
   */
  localSamples(f: FrameCheck): void {
    const { pts, n, rnd } = this;
    const K = Math.min(n - 1, 16);
    const nb = this.neighbours(K);
    const its = Math.min(50000, 100 * n);
    const smp = [0, 0, 0, 0];
    for (let it = 0; it < its; it++) {
      const i0 = Math.floor(rnd() * n);
      smp[0] = i0;
      for (let k = 1; k < 4; k++) {
        let r: number;
        do r = nb[i0 * K + Math.floor(rnd() * K)]!;
        while (smp.slice(0, k).includes(r));
        smp[k] = r;
      }
      if (degenerate(pts, smp, this.opts.allowFlips)) continue;
      const H = homographyFrom4(pts, smp);
      if (!H || !smp.every((i) => frameAgrees(H, pts, i, f))) continue;
      this.consider(H, 4);
    }
  }

  /** Classic 4-point sampling, adaptive: each better consensus shortens the run. */
  fourPointSamples(): void {
    const { pts, n, rnd } = this;
    const sample = [0, 0, 0, 0];
    for (let it = 0; it < this.maxIt; it++) {
      for (let k = 0; k < 4; k++) {
        let r: number;
        do r = Math.floor(rnd() * n);
        while (sample.slice(0, k).includes(r));
        sample[k] = r;
      }
      if (degenerate(pts, sample, this.opts.allowFlips)) continue;
      const H = homographyFrom4(pts, sample);
      if (!H || !this.consider(H, 3)) continue;
      const adaptive = adaptiveIterations(this.best.length / n, this.conf);
      if (adaptive !== null) this.maxIt = Math.min(this.opts.maxIterations, adaptive);
    }
  }

  result(): RansacResult | null {
    const { bestH, best } = this;
    if (!bestH) return null;
    let err = 0;
    for (const i of best) err += Math.sqrt(transferError2(bestH, this.pts, i));
    return { H: bestH, inliers: best, meanError: best.length ? err / best.length : 0 };
  }
}

/** Area of the convex hull of points (x, y pairs), by the monotone chain. */
export function hullArea(xy: number[]): number {
  const n = xy.length / 2;
  if (n < 3) return 0;
  const idx = Array.from({ length: n }, (_, i) => i).sort((a, b) => xy[2 * a]! - xy[2 * b]! || xy[2 * a + 1]! - xy[2 * b + 1]!);
  const cr = (o: number, a: number, b: number) =>
    (xy[2 * a]! - xy[2 * o]!) * (xy[2 * b + 1]! - xy[2 * o + 1]!) - (xy[2 * a + 1]! - xy[2 * o + 1]!) * (xy[2 * b]! - xy[2 * o]!);
  const lower: number[] = [];
  for (const i of idx) {
    while (lower.length >= 2 && cr(lower[lower.length - 2]!, lower[lower.length - 1]!, i) <= 0) lower.pop();
    lower.push(i);
  }
  const upper: number[] = [];
  for (let k = idx.length - 1; k >= 0; k--) {
    const i = idx[k]!;
    while (upper.length >= 2 && cr(upper[upper.length - 2]!, upper[upper.length - 1]!, i) <= 0) upper.pop();
    upper.push(i);
  }
  const hull = lower.slice(0, -1).concat(upper.slice(0, -1));
  let a = 0;
  for (let k = 0; k < hull.length; k++) {
    const i = hull[k]!;
    const j = hull[(k + 1) % hull.length]!;
    a += xy[2 * i]! * xy[2 * j + 1]! - xy[2 * j]! * xy[2 * i + 1]!;
  }
  return Math.abs(a) / 2;
}
