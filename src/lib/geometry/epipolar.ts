// Epipolar geometry for verifying two photos of one 3D scene (Hartley & Zisserman, ch. 9-11): the fundamental
// matrix F of a pair (x2ᵀ F x1 = 0 for every correspondence x1 <-> x2 of a rigid scene), estimated by
// LO-RANSAC (Chum, Matas & Kittler 2003) over 7-point minimal samples with Hartley's normalisation, the
// oriented epipolar constraint (Chum, Werner & Matas 2004) and the DEGENSAC degeneracy test (Chum, Werner &
// Matas 2005): a sample with five or more points on one plane gives an F that fits the plane and little else,
// so such a sample is completed by plane-and-parallax (F = [e']x H, the epipole from two points off the plane).
//
// The least-squares fits (8-point and more) use ml-matrix's eigen and singular value decompositions; the
// minimal 7-point solver is written here (a 7x9 null space by Gauss-Jordan elimination and a cubic): it runs
// thousands of times per candidate image, where a general SVD costs an order of magnitude more.
import { EigenvalueDecomposition, Matrix, SingularValueDecomposition } from 'ml-matrix';
import { mulberry32 } from '../../util/random.js';
import { fitHomography, transferError2, type Mat3 } from './geometry.js';

/** Similarity that moves the centroid of points idx (column off of pts: 0 = image 1, 2 = image 2) to 0 and
 *  their mean distance from it to sqrt(2): scale s, translation (tx, ty). */
function normaliser(pts: Float64Array, idx: ArrayLike<number> | null, n: number, off: number): { s: number; tx: number; ty: number } {
  let cx = 0;
  let cy = 0;
  for (let k = 0; k < n; k++) {
    const i = idx ? idx[k]! : k;
    cx += pts[i * 4 + off]!;
    cy += pts[i * 4 + off + 1]!;
  }
  cx /= n;
  cy /= n;
  let d = 0;
  for (let k = 0; k < n; k++) {
    const i = idx ? idx[k]! : k;
    d += Math.hypot(pts[i * 4 + off]! - cx, pts[i * 4 + off + 1]! - cy);
  }
  const s = d > 0 ? (Math.SQRT2 * n) / d : 1;
  return { s, tx: -s * cx, ty: -s * cy };
}

/** F in pixels from F in normalised coordinates: T2ᵀ Fn T1 (T = [s 0 tx; 0 s ty; 0 0 1]). Writes into out. */
function denormalise(Fn: ArrayLike<number>, a: { s: number; tx: number; ty: number }, b: { s: number; tx: number; ty: number }, out: Float64Array): void {
  // Fn T1
  const m = new Float64Array(9);
  for (let r = 0; r < 3; r++) {
    const f0 = Fn[r * 3]!, f1 = Fn[r * 3 + 1]!, f2 = Fn[r * 3 + 2]!;
    m[r * 3] = f0 * a.s;
    m[r * 3 + 1] = f1 * a.s;
    m[r * 3 + 2] = f0 * a.tx + f1 * a.ty + f2;
  }
  // T2ᵀ m: rows 0,1 scaled by s2; row 2 = tx*row0 + ty*row1 + row2
  for (let c = 0; c < 3; c++) {
    out[c] = b.s * m[c]!;
    out[3 + c] = b.s * m[3 + c]!;
    out[6 + c] = b.tx * m[c]! + b.ty * m[3 + c]! + m[6 + c]!;
  }
  let nrm = 0;
  for (let k = 0; k < 9; k++) nrm += out[k]! * out[k]!;
  nrm = Math.sqrt(nrm) || 1;
  for (let k = 0; k < 9; k++) out[k]! /= nrm;
}

/** Squared Sampson distance of correspondence i to F (pixels²): the first-order geometric error. */
export function sampson2(F: Mat3, pts: Float64Array, i: number): number {
  const x = pts[i * 4]!, y = pts[i * 4 + 1]!, u = pts[i * 4 + 2]!, v = pts[i * 4 + 3]!;
  const a0 = F[0]! * x + F[1]! * y + F[2]!;
  const a1 = F[3]! * x + F[4]! * y + F[5]!;
  const a2 = F[6]! * x + F[7]! * y + F[8]!;
  const b0 = F[0]! * u + F[3]! * v + F[6]!;
  const b1 = F[1]! * u + F[4]! * v + F[7]!;
  const e = u * a0 + v * a1 + a2;
  const den = a0 * a0 + a1 * a1 + b0 * b0 + b1 * b1;
  return den > 0 ? (e * e) / den : Infinity;
}

/** The epipole in image 2 (e'ᵀ F = 0), homogeneous, unit norm: the largest cross product of two columns. */
export function epipole2(F: Mat3): [number, number, number] {
  const c = [0, 1, 2].map((j) => [F[j]!, F[3 + j]!, F[6 + j]!] as const);
  let best: [number, number, number] = [0, 0, 0];
  let bn = 0;
  for (const [a, b] of [[0, 1], [0, 2], [1, 2]] as const) {
    const x = c[a]!, y = c[b]!;
    const e: [number, number, number] = [x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]];
    const n = Math.hypot(e[0], e[1], e[2]);
    if (n > bn) (bn = n), (best = e);
  }
  return bn > 0 ? [best[0] / bn, best[1] / bn, best[2] / bn] : best;
}

/**
 * Oriented epipolar constraint: for a real pair of cameras, (e' x x2) and F x1 point the same way (up to one
 * global sign) for every correspondence. Returns the sign of correspondence i (0 when undefined).
 */
function orientation(F: Mat3, e: readonly number[], pts: Float64Array, i: number): number {
  const x = pts[i * 4]!, y = pts[i * 4 + 1]!, u = pts[i * 4 + 2]!, v = pts[i * 4 + 3]!;
  // e' x x2 (first two components suffice with the third of F x1 below: full dot product)
  const c0 = e[1]! * 1 - e[2]! * v;
  const c1 = e[2]! * u - e[0]! * 1;
  const c2 = e[0]! * v - e[1]! * u;
  const l0 = F[0]! * x + F[1]! * y + F[2]!;
  const l1 = F[3]! * x + F[4]! * y + F[5]!;
  const l2 = F[6]! * x + F[7]! * y + F[8]!;
  return Math.sign(c0 * l0 + c1 * l1 + c2 * l2);
}

/** Whether all of the sample's correspondences satisfy the oriented constraint with one sign. */
function orientedSample(F: Mat3, pts: Float64Array, s: ArrayLike<number>): boolean {
  const e = epipole2(F);
  let sg = 0;
  for (let k = 0; k < s.length; k++) {
    const o = orientation(F, e, pts, s[k]!);
    if (o === 0) continue;
    if (sg === 0) sg = o;
    else if (o !== sg) return false;
  }
  return true;
}

/** Real roots of c3 a³ + c2 a² + c1 a + c0. */
function cubicRoots(c3: number, c2: number, c1: number, c0: number): number[] {
  const scale = Math.max(Math.abs(c3), Math.abs(c2), Math.abs(c1), Math.abs(c0));
  if (scale === 0) return [];
  if (Math.abs(c3) < 1e-12 * scale) {
    if (Math.abs(c2) < 1e-12 * scale) return Math.abs(c1) < 1e-12 * scale ? [] : [-c0 / c1];
    const disc = c1 * c1 - 4 * c2 * c0;
    if (disc < 0) return [];
    const q = -0.5 * (c1 + Math.sign(c1 || 1) * Math.sqrt(disc));
    return q === 0 ? [0] : [q / c2, c0 / q];
  }
  const a = c2 / c3, b = c1 / c3, c = c0 / c3;
  const Q = (a * a - 3 * b) / 9;
  const R = (2 * a * a * a - 9 * a * b + 27 * c) / 54;
  const Q3 = Q * Q * Q;
  if (R * R < Q3) {
    const th = Math.acos(Math.max(-1, Math.min(1, R / Math.sqrt(Q3))));
    const sq = -2 * Math.sqrt(Q);
    return [sq * Math.cos(th / 3) - a / 3, sq * Math.cos((th + 2 * Math.PI) / 3) - a / 3, sq * Math.cos((th - 2 * Math.PI) / 3) - a / 3];
  }
  const A = -Math.sign(R) * Math.cbrt(Math.abs(R) + Math.sqrt(R * R - Q3));
  const B = A === 0 ? 0 : Q / A;
  return [A + B - a / 3];
}

function det3(m: ArrayLike<number>): number {
  return m[0]! * (m[4]! * m[8]! - m[5]! * m[7]!) - m[1]! * (m[3]! * m[8]! - m[5]! * m[6]!) + m[2]! * (m[3]! * m[7]! - m[4]! * m[6]!);
}

/** Normalisation of all correspondences, shared by every minimal sample of one RANSAC run. */
export interface Normalised {
  /** The correspondences in normalised coordinates (n*4). */
  q: Float64Array;
  a: { s: number; tx: number; ty: number };
  b: { s: number; tx: number; ty: number };
}

export function normalise(pts: Float64Array, n: number): Normalised {
  const a = normaliser(pts, null, n, 0);
  const b = normaliser(pts, null, n, 2);
  const q = new Float64Array(n * 4);
  for (let i = 0; i < n; i++) {
    q[i * 4] = a.s * pts[i * 4]! + a.tx;
    q[i * 4 + 1] = a.s * pts[i * 4 + 1]! + a.ty;
    q[i * 4 + 2] = b.s * pts[i * 4 + 2]! + b.tx;
    q[i * 4 + 3] = b.s * pts[i * 4 + 3]! + b.ty;
  }
  return { q, a, b };
}

const A7 = new Float64Array(63);
const perm = new Int32Array(9);
const F1s = new Float64Array(9);
const F2s = new Float64Array(9);
const Gs = new Float64Array(9);

/** det(F2 + a (F1 - F2)). */
function detMix(F1: Float64Array, F2: Float64Array, a: number): number {
  const g = (k: number) => F2[k]! + a * (F1[k]! - F2[k]!);
  const g0 = g(0), g1 = g(1), g2 = g(2), g3 = g(3), g4 = g(4), g5 = g(5), g6 = g(6), g7 = g(7), g8 = g(8);
  return g0 * (g4 * g8 - g5 * g7) - g1 * (g3 * g8 - g5 * g6) + g2 * (g3 * g7 - g4 * g6);
}

/**
 * The 7-point algorithm: the fundamental matrices (1 or 3, rank 2, in pixels) through 7 correspondences
 * (indexes s into the normalised set N). Returns them in a new array (empty when the sample is degenerate).
 */
export function fundamental7(N: Normalised, s: ArrayLike<number>): Mat3[] {
  const q = N.q;
  for (let r = 0; r < 7; r++) {
    const i = s[r]! * 4;
    const x = q[i]!, y = q[i + 1]!, u = q[i + 2]!, v = q[i + 3]!;
    const o = r * 9;
    A7[o] = u * x; A7[o + 1] = u * y; A7[o + 2] = u;
    A7[o + 3] = v * x; A7[o + 4] = v * y; A7[o + 5] = v;
    A7[o + 6] = x; A7[o + 7] = y; A7[o + 8] = 1;
  }
  for (let j = 0; j < 9; j++) perm[j] = j;
  // Gauss-Jordan with full pivoting: 7 pivot columns, the last 2 (after permutation) are free.
  for (let r = 0; r < 7; r++) {
    let br = r, bc = r, bv = 0;
    for (let i = r; i < 7; i++)
      for (let j = r; j < 9; j++) {
        const v = Math.abs(A7[i * 9 + perm[j]!]!);
        if (v > bv) (bv = v), (br = i), (bc = j);
      }
    if (bv < 1e-10) return [];
    if (br !== r) for (let j = 0; j < 9; j++) {
      const t = A7[r * 9 + j]!;
      A7[r * 9 + j] = A7[br * 9 + j]!;
      A7[br * 9 + j] = t;
    }
    const t = perm[r]!;
    perm[r] = perm[bc]!;
    perm[bc] = t;
    const pc = perm[r]!;
    const piv = A7[r * 9 + pc]!;
    for (let j = 0; j < 9; j++) A7[r * 9 + j]! /= piv;
    for (let i = 0; i < 7; i++) {
      if (i === r) continue;
      const f = A7[i * 9 + pc]!;
      if (f === 0) continue;
      for (let j = 0; j < 9; j++) A7[i * 9 + j]! -= f * A7[r * 9 + j]!;
    }
  }
  const F1 = F1s.fill(0);
  const F2 = F2s.fill(0);
  const f1 = perm[7]!, f2 = perm[8]!;
  F1[f1] = 1;
  F2[f2] = 1;
  for (let r = 0; r < 7; r++) {
    F1[perm[r]!] = -A7[r * 9 + f1]!;
    F2[perm[r]!] = -A7[r * 9 + f2]!;
  }
  // det(F2 + a (F1 - F2)) = c3 a³ + c2 a² + c1 a + c0, from its values at a = 0, 1, -1, 2.
  const d0 = detMix(F1, F2, 0), d1 = detMix(F1, F2, 1), dm = detMix(F1, F2, -1), d2 = detMix(F1, F2, 2);
  const c0 = d0;
  const c2 = (d1 + dm) / 2 - c0;
  const sOdd = (d1 - dm) / 2;
  const c3 = (d2 - 4 * c2 - c0 - 2 * sOdd) / 6;
  const c1 = sOdd - c3;
  const G = Gs;
  const out: Mat3[] = [];
  for (const a of cubicRoots(c3, c2, c1, c0)) {
    if (!Number.isFinite(a)) continue;
    for (let k = 0; k < 9; k++) G[k] = F2[k]! + a * (F1[k]! - F2[k]!);
    const F = new Float64Array(9);
    denormalise(G, N.a, N.b, F);
    out.push(F);
  }
  return out;
}

/**
 * Least-squares fundamental matrix through the correspondences idx (at least 8): the normalised 8-point
 * algorithm (Hartley 1997), optionally weighted, rank 2 enforced by zeroing the smallest singular value.
 */
export function fitFundamental(pts: Float64Array, idx: ArrayLike<number>, weights?: ArrayLike<number>): Mat3 | null {
  const n = idx.length;
  if (n < 8) return null;
  const a = normaliser(pts, idx, n, 0);
  const b = normaliser(pts, idx, n, 2);
  const M = new Float64Array(81);
  const row = new Float64Array(9);
  for (let k = 0; k < n; k++) {
    const i = idx[k]! * 4;
    const x = a.s * pts[i]! + a.tx, y = a.s * pts[i + 1]! + a.ty;
    const u = b.s * pts[i + 2]! + b.tx, v = b.s * pts[i + 3]! + b.ty;
    row[0] = u * x; row[1] = u * y; row[2] = u; row[3] = v * x; row[4] = v * y; row[5] = v; row[6] = x; row[7] = y; row[8] = 1;
    const w = weights ? weights[k]! : 1;
    for (let r = 0; r < 9; r++) {
      const wr = w * row[r]!;
      for (let c = r; c < 9; c++) M[r * 9 + c]! += wr * row[c]!;
    }
  }
  for (let r = 0; r < 9; r++) for (let c = 0; c < r; c++) M[r * 9 + c] = M[c * 9 + r]!;
  const evd = new EigenvalueDecomposition(new Matrix(Array.from({ length: 9 }, (_, r) => Array.from(M.subarray(r * 9, r * 9 + 9)))), { assumeSymmetric: true });
  const ev = evd.realEigenvalues;
  let k0 = 0;
  for (let k = 1; k < 9; k++) if (ev[k]! < ev[k0]!) k0 = k;
  const V = evd.eigenvectorMatrix;
  const f = Array.from({ length: 9 }, (_, r) => V.get(r, k0));
  // Rank 2: F = U diag(s1, s2, 0) Vᵀ.
  const svd = new SingularValueDecomposition(new Matrix([f.slice(0, 3), f.slice(3, 6), f.slice(6, 9)]));
  const U = svd.leftSingularVectors;
  const W = svd.rightSingularVectors;
  const sv = svd.diagonal;
  const Fn = new Float64Array(9);
  for (let r = 0; r < 3; r++)
    for (let c = 0; c < 3; c++) Fn[r * 3 + c] = U.get(r, 0) * sv[0]! * W.get(c, 0) + U.get(r, 1) * sv[1]! * W.get(c, 1);
  const F = new Float64Array(9);
  denormalise(Fn, a, b, F);
  return F.every(Number.isFinite) ? F : null;
}

/** F = [e']x H with the epipole e' where the parallax lines (H x1) x x2 of correspondences i and j meet:
 *  the fundamental matrix of a scene with plane H and two points off it (H&Z 13.3). */
export function fundamentalFromPlane(H: Mat3, pts: Float64Array, i: number, j: number): Mat3 | null {
  const line = (k: number): [number, number, number] => {
    const x = pts[k * 4]!, y = pts[k * 4 + 1]!;
    const w = H[6]! * x + H[7]! * y + H[8]!;
    const hx = (H[0]! * x + H[1]! * y + H[2]!) / w;
    const hy = (H[3]! * x + H[4]! * y + H[5]!) / w;
    const u = pts[k * 4 + 2]!, v = pts[k * 4 + 3]!;
    return [hy - v, u - hx, hx * v - hy * u];
  };
  const l1 = line(i);
  const l2 = line(j);
  const e = [l1[1] * l2[2] - l1[2] * l2[1], l1[2] * l2[0] - l1[0] * l2[2], l1[0] * l2[1] - l1[1] * l2[0]];
  const n = Math.hypot(e[0]!, e[1]!, e[2]!);
  if (!(n > 0)) return null;
  const [e0, e1, e2] = [e[0]! / n, e[1]! / n, e[2]! / n];
  // [e]x H
  const F = new Float64Array(9);
  for (let c = 0; c < 3; c++) {
    const h0 = H[c]!, h1 = H[3 + c]!, h2 = H[6 + c]!;
    F[c] = -e2 * h1 + e1 * h2;
    F[3 + c] = e2 * h0 - e0 * h2;
    F[6 + c] = -e1 * h0 + e0 * h1;
  }
  let nrm = 0;
  for (let k = 0; k < 9; k++) nrm += F[k]! * F[k]!;
  nrm = Math.sqrt(nrm);
  if (!(nrm > 0)) return null;
  for (let k = 0; k < 9; k++) F[k]! /= nrm;
  return F;
}

/** Squared transfer error of correspondence i under H. */
function transfer2(H: ArrayLike<number>, pts: Float64Array, i: number): number {
  const x = pts[i * 4]!, y = pts[i * 4 + 1]!;
  const w = H[6]! * x + H[7]! * y + H[8]!;
  if (Math.abs(w) < 1e-12) return Infinity;
  const du = (H[0]! * x + H[1]! * y + H[2]!) / w - pts[i * 4 + 2]!;
  const dv = (H[3]! * x + H[4]! * y + H[5]!) / w - pts[i * 4 + 3]!;
  return du * du + dv * dv;
}

/** The triplets of a 7-point sample DEGENSAC tests (with the remaining four, 5 of 7 on a plane hold one). */
const TRIPLETS = [[0, 1, 2], [3, 4, 5], [0, 1, 6], [3, 4, 6], [2, 5, 6]] as const;

/**
 * DEGENSAC's test: the homography compatible with F through each triplet of the sample (H = A - e'(M⁻¹b)ᵀ,
 * A = [e']x F); when one of them carries at least 5 of the 7 points, the sample is H-degenerate and that
 * homography is returned.
 */
export function degenerateHomography(F: Mat3, pts: Float64Array, s: ArrayLike<number>, thr2: number): Mat3 | null {
  const e = epipole2(F);
  const [e0, e1, e2] = e;
  // A = [e]x F
  const A = new Float64Array(9);
  for (let c = 0; c < 3; c++) {
    const f0 = F[c]!, f1 = F[3 + c]!, f2 = F[6 + c]!;
    A[c] = -e2 * f1 + e1 * f2;
    A[3 + c] = e2 * f0 - e0 * f2;
    A[6 + c] = -e1 * f0 + e0 * f1;
  }
  const bOf = (k: number): number => {
    const x = pts[k * 4]!, y = pts[k * 4 + 1]!, u = pts[k * 4 + 2]!, v = pts[k * 4 + 3]!;
    const ax0 = A[0]! * x + A[1]! * y + A[2]!, ax1 = A[3]! * x + A[4]! * y + A[5]!, ax2 = A[6]! * x + A[7]! * y + A[8]!;
    // x2 x (A x1) and x2 x e'
    const p0 = v * ax2 - ax1, p1 = ax0 - u * ax2, p2 = u * ax1 - v * ax0;
    const q0 = v * e2 - e1, q1 = e0 - u * e2, q2 = u * e1 - v * e0;
    const qq = q0 * q0 + q1 * q1 + q2 * q2;
    return qq > 0 ? (p0 * q0 + p1 * q1 + p2 * q2) / qq : 0;
  };
  const H = new Float64Array(9);
  for (const t of TRIPLETS) {
    const ks = t.map((k) => s[k]!);
    // M rows = x_kᵀ (homogeneous); solve M z = b.
    const M = ks.map((k) => [pts[k * 4]!, pts[k * 4 + 1]!, 1]);
    const b = ks.map(bOf);
    const d = det3(M.flat());
    if (Math.abs(d) < 1e-9) continue;
    const z = [0, 1, 2].map((c) => {
      const Mc = M.map((r, i) => r.map((v, j) => (j === c ? b[i]! : v)));
      return det3(Mc.flat()) / d;
    });
    for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) H[r * 3 + c] = A[r * 3 + c]! - e[r]! * z[c]!;
    let on = 0;
    for (let k = 0; k < 7; k++) if (transfer2(H, pts, s[k]!) < thr2) on++;
    if (on >= 5) return H.slice();
  }
  return null;
}

export interface FundamentalResult {
  F: Mat3;
  inliers: number[];
  /** Root mean square Sampson distance of the inliers, pixels. */
  rmsError: number;
  /** Samples found H-degenerate (DEGENSAC) and completed by plane-and-parallax. */
  degenerateSamples: number;
}

export interface FundamentalOptions {
  /** Inlier threshold on the Sampson distance, pixels. */
  threshold: number;
  maxIterations: number;
  confidence?: number;
  seed?: number;
  /** Homographies of planes among the matches (the dominant plane, local planes): plane-and-parallax
   *  hypotheses from each compete with the 7-point samples. */
  planes?: Mat3[];
  /** Threshold of the plane's transfer error (pixels) for DEGENSAC's test. */
  planeThreshold?: number;
}

/**
 * LO-RANSAC for F. Samples are drawn progressively from the best-ranked correspondences (PROSAC: matches come
 * sorted by descriptor distance, so early samples are more often all inliers); every hypothesis is scored by
 * MSAC (truncated squared Sampson distance); a new best is refined by least squares on its inliers at
 * shrinking thresholds (the LO step). Samples that fail the oriented constraint are skipped; samples that are
 * H-degenerate are completed by plane-and-parallax from their plane (DEGENSAC).
 */
export function ransacFundamental(pts: Float64Array, n: number, opts: FundamentalOptions): FundamentalResult | null {
  if (n < 8) return null;
  const thr2 = opts.threshold * opts.threshold;
  const hthr2 = (opts.planeThreshold ?? opts.threshold * 2) ** 2;
  const conf = opts.confidence ?? 0.99;
  const rnd = mulberry32(opts.seed ?? 4242);
  const N = normalise(pts, n);
  let bestF: Mat3 | null = null;
  let bestCost = Infinity;
  let bestInl: number[] = [];
  let maxIt = opts.maxIterations;
  let degenerateSamples = 0;
  const cost = (F: Mat3): number => {
    let c = 0;
    for (let i = 0; i < n; i++) {
      const d = sampson2(F, pts, i);
      c += d < thr2 ? d : thr2;
      if (c >= bestCost) return Infinity;
    }
    return c;
  };
  const inliersOf = (F: Mat3, t2: number): number[] => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) if (sampson2(F, pts, i) < t2) out.push(i);
    return out;
  };
  const consider = (F: Mat3): boolean => {
    const c = cost(F);
    if (c >= bestCost) return false;
    bestCost = c;
    bestF = F;
    bestInl = inliersOf(F, thr2);
    return true;
  };
  /** LO: least squares on the inliers at thresholds 2, 1.5, 1.25, 1 x thr, each fit scored by MSAC. */
  const localOptimise = (): void => {
    for (const k of [2, 1.5, 1.25, 1]) {
      const inl = inliersOf(bestF!, thr2 * k * k);
      const F = fitFundamental(pts, inl);
      if (F) consider(F);
    }
  };
  const updateIterations = (): void => {
    const w = bestInl.length / n;
    const denom = Math.log(1 - Math.pow(w, 7));
    if (denom < 0) maxIt = Math.min(opts.maxIterations, Math.ceil(Math.log(1 - conf) / denom));
  };
  /** Plane-and-parallax from plane H: pairs of correspondences off the plane give the epipole. */
  const parallax = (H: Mat3, iterations: number): void => {
    const off: number[] = [];
    for (let i = 0; i < n; i++) if (transfer2(H, pts, i) >= hthr2) off.push(i);
    if (off.length < 2) return;
    for (let it = 0; it < iterations; it++) {
      const i = off[Math.floor(rnd() * off.length)]!;
      let j = off[Math.floor(rnd() * off.length)]!;
      if (i === j) j = off[(off.indexOf(i) + 1) % off.length]!;
      const F = fundamentalFromPlane(H, pts, i, j);
      if (F && consider(F)) {
        localOptimise();
        updateIterations();
      }
    }
  };
  for (const H of opts.planes ?? []) parallax(H, 60);
  const s = new Int32Array(7);
  for (let it = 0; it < maxIt; it++) {
    // PROSAC-like: the pool grows from the 10 best-ranked matches to all of them.
    const pool = Math.min(n, 10 + Math.floor(2 * Math.sqrt(it)));
    for (let k = 0; k < 7; k++) {
      let r: number;
      let again: boolean;
      do {
        r = Math.floor(rnd() * pool);
        again = false;
        for (let j = 0; j < k; j++) if (s[j] === r) again = true;
      } while (again);
      s[k] = r;
    }
    for (const F of fundamental7(N, s)) {
      if (!orientedSample(F, pts, s)) continue;
      if (!consider(F)) continue;
      const H = degenerateHomography(F, pts, s, hthr2);
      if (H) {
        degenerateSamples++;
        parallax(H, 30);
      }
      localOptimise();
      updateIterations();
    }
  }
  if (!bestF) return null;
  const F: Mat3 = bestF;
  let e2 = 0;
  for (const i of bestInl) e2 += sampson2(F, pts, i);
  return { F, inliers: bestInl, rmsError: bestInl.length ? Math.sqrt(e2 / bestInl.length) : 0, degenerateSamples };
}

/**
 * Local planes among the matches: each SIFT match carries a similarity (scale ratio and rotation), which
 * predicts where its neighbours on the same surface land; the largest such consensus sets with distinct
 * members, refined into homographies (least squares, then re-counted at `threshold`). A 3D scene seen from two
 * places is locally planar (a wall, a face of a trunk), and each plane with two points off it gives the
 * epipolar geometry (plane and parallax), a 2-point sample instead of 7.
 */
export function localPlanes(pts: Float64Array, n: number, sim: Float64Array, simThreshold: number, threshold: number, maxPlanes: number): Mat3[] {
  const st2 = simThreshold * simThreshold;
  const t2 = threshold * threshold;
  const seeds: number[][] = [];
  for (let i = 0; i < n; i++) {
    const sc = sim[2 * i]!;
    const th = sim[2 * i + 1]!;
    const c = Math.cos(th) * sc;
    const sn = Math.sin(th) * sc;
    const qx = pts[i * 4]!, qy = pts[i * 4 + 1]!, tx = pts[i * 4 + 2]!, ty = pts[i * 4 + 3]!;
    const set: number[] = [];
    for (let j = 0; j < n; j++) {
      const dx = pts[j * 4]! - qx;
      const dy = pts[j * 4 + 1]! - qy;
      const u = tx + c * dx - sn * dy - pts[j * 4 + 2]!;
      const v = ty + sn * dx + c * dy - pts[j * 4 + 3]!;
      if (u * u + v * v < st2) set.push(j);
    }
    if (set.length >= 5) seeds.push(set);
  }
  seeds.sort((a, b) => b.length - a.length);
  const planes: Mat3[] = [];
  const claimed = new Uint8Array(n);
  for (const set of seeds) {
    if (planes.length >= maxPlanes) break;
    // Distinct planes: a seed mostly inside an earlier plane's inliers adds nothing.
    let fresh = 0;
    for (const j of set) if (!claimed[j]) fresh++;
    if (fresh < set.length / 2) continue;
    let H = fitHomography(pts, set);
    if (!H) continue;
    let inl: number[] = [];
    for (let round = 0; round < 3; round++) {
      const next: number[] = [];
      for (let j = 0; j < n; j++) if (transferError2(H, pts, j) < t2) next.push(j);
      if (next.length <= inl.length || next.length < 4) break;
      inl = next;
      const H2 = fitHomography(pts, inl);
      if (!H2) break;
      H = H2;
    }
    if (inl.length < 5) continue;
    for (const j of inl) claimed[j] = 1;
    planes.push(H);
  }
  return planes;
}
