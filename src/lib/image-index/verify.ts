// Verification of one candidate image: Lowe's ratio test on the keypoint pairs the index brought together,
// one-to-one matches, then two models: a RANSAC homography (copies of one photo, a flat cover, a plane) and,
// when that is not already conclusive, the fundamental matrix of a 3D scene (src/lib/geometry/epipolar.ts: two
// photos of one scene from different places). The image score in [0, 1] is 0 for unrelated images and says
// which model verified.
import { DESC_SIZE, KP_STRIDE, type Features } from './features.js';
import { frameAgrees, hullArea, ransacHomography, transferError2, type Mat3 } from '../geometry/index.js';
import { localPlanes, ransacFundamental, sampson2 } from '../geometry/index.js';
import { mulberry32 } from '../../util/random.js';
import { wasmNearestTwo } from './wasm.js';

/** The epipolar (fundamental-matrix) verification (config match.epipolar). */
export interface EpipolarParams {
  enabled: boolean;
  /** Inlier threshold on the Sampson distance, detection pixels. */
  threshold: number;
  iterations: number;
  /** A scene verifies when log10 of its number of false alarms is at most this (a-contrario test). */
  maxLogNfa: number;
  /** Degrees either side of the matches' dominant rotation within which a match counts. */
  rotationTolerance: number;
  /** Lowe's ratio for the matches this model sees (the a-contrario test weighs their number). */
  ratio: number;
  /** Pixels: the second nearest neighbour of the ratio test is taken beyond this distance from the nearest (0: anywhere). */
  regionRadius: number;
  /** Mutual nearest neighbours only: a match counts when the query keypoint is also its target keypoint's nearest. */
  mutual?: boolean;
  /** Guided matching: once a scene verifies, every query keypoint is matched again among the target keypoints
   *  near its epipolar line (Lowe's test against the nearest rival in that band), and the F re-scored. */
  guided?: boolean;
}

export interface VerifyParams {
  ratio: number;
  ransacThreshold: number;
  ransacIterations: number;
  minInliers: number;
  /** Distance assumed for the second neighbour when the index brought only one keypoint of the image:
   *  the RootSIFT distance beyond which keypoints rarely share a bucket. */
  farDistance: number;
  /** The fundamental-matrix model; absent: homography only. */
  epipolar?: EpipolarParams;
  /** Pixels: both images pool keypoints of several synthesised views (mapped back to one frame), so one place
   *  appears several times on each side. Lowe's second neighbour is taken beyond this distance from the nearest
   *  (its copies in other views are no rival), and a place counts once on each side. 0/absent: single images. */
  pooled?: number;
  /** With pooled: Lowe's second neighbour may be a copy of the nearest's own place, as in plain 2-NN matching
   *  (OpenCV's ASIFT matcher). An alternative measured by `bench:two-sided --rival anywhere`, not a product
   *  setting: on retrieval-wxbs's extreme-viewpoint pairs it verified one pair more and one unrelated image. */
  rivalAnywhere?: boolean;
  /** Homography inliers must agree in keypoint frame too (src/lib/geometry/geometry.ts frameAgrees): orientation within
   *  angleTolerance degrees, size within a factor 2^scaleTolerance of what the homography does there; RANSAC
   *  then also draws local samples (ransacHomography's frames). For archive matching: among tens of thousands of
   *  keypoints a side, wrong models gather chance inliers by position alone, and the true plane's inliers are a
   *  few percent of the matches. */
  frames?: { angleTolerance: number; scaleTolerance: number; maxLogNfa: number };
  /** Before RANSAC: refused unless minInliers matches agree in keypoint frame, rotation within `rotation` degrees and
   *  scale ratio within a factor 2^octaves of one match's (poseSupport). For the images re-matched by full sketch
   *  (searcher.ts Recollision), most of them unrelated, whose RANSAC and epipolar model were most of a re-match's CPU. */
  poseCheck?: { rotation: number; octaves: number };
}

/** The model a candidate verified under: one homography (a copy, a plane) or the epipolar geometry of a 3D scene. */
export type Model = 'homography' | 'fundamental';

export interface Verification {
  matches: number;
  inliers: number;
  score: number;
  /** The model the score comes from (null: nothing verified). */
  model: Model | null;
  /** The homography (query px -> target px) of the dominant plane, when one was fitted. */
  H: Mat3 | null;
  /** The fundamental matrix (x_targetᵀ F x_query = 0) when the model is 'fundamental'. */
  F: Mat3 | null;
  /** Inlier pairs in detection pixels: qx, qy, tx, ty. */
  pairs: Float32Array;
  meanError: number;
  spread: number;
  reason?: string;
  /** Frame-checked homographies (archive matching): log10 of the model's number of false alarms and the chance of
   *  one match agreeing with it (homographyLogNfa). */
  logNfa?: number;
  chance?: number;
  /** Development diagnostics (DIAG_EPIPOLAR_DEV=1). */
  diag?: Record<string, number>;
}

const DIAG = !!process.env.DIAG_EPIPOLAR_DEV;

export interface Prepared {
  f: Features;
  vecs: Float32Array; // RootSIFT
}

/** Squared Euclidean distance of two unit vectors = 2 - 2 dot. */
function dist(a: Float32Array, ao: number, b: Float32Array, bo: number): number {
  let s = 0;
  for (let j = 0; j < DESC_SIZE; j++) s += a[ao + j]! * b[bo + j]!;
  return Math.sqrt(Math.max(0, 2 - 2 * s));
}

/**
 * dist(a, b) when it is below `bound`, else Infinity, without taking every product for most pairs: the squared
 * differences summed over the first 32, 64, 96 dimensions only grow, and once they pass bound^2 the distance cannot
 * come back under it (for unit vectors |a - b|^2 = 2 - 2 dot; shorter vectors, as an all-zero descriptor's, only make
 * the sum smaller than 2 - 2 dot; the margin covers float rounding), so a pair dist() would put at or above the bound
 * is never measured in full. Below it, the value is dist()'s own: the ratio test sees the same numbers.
 */
function distBelow(a: Float32Array, ao: number, b: Float32Array, bo: number, bound: number): number {
  const lim = bound * bound + 1e-4;
  let s = 0;
  for (let j = 0; j < DESC_SIZE; ) {
    for (const end = j + 32; j < end; j++) {
      const d = a[ao + j]! - b[bo + j]!;
      s += d * d;
    }
    if (s > lim) return Infinity;
  }
  return dist(a, ao, b, bo);
}

/** The verification of an image that could not be verified (score 0), with the reason. */
export function unverified(reason: string, matches = 0): Verification {
  return { matches, inliers: 0, score: 0, model: null, H: null, F: null, pairs: new Float32Array(0), meanError: 0, spread: 0, reason };
}

/**
 * cand: flat list of (queryKp, targetKp) pairs, the index's collisions grouped by query keypoint in
 * non-decreasing order (the scan walks query keypoints in order); duplicates allowed (several tables).
 */
export function verifyCandidate(q: Prepared, t: Prepared, cand: Int32Array | number[], p: VerifyParams): Verification {
  const ep = p.epipolar?.enabled ? p.epipolar : undefined;
  const pooled = p.pooled ?? 0;
  let all = ratioMatches(q, t, cand, p.farDistance, Math.max(p.ratio, ep?.ratio ?? 0), Math.max(ep?.regionRadius ?? 0, p.rivalAnywhere ? 0 : pooled));
  if (ep?.mutual) all = mutualOnly(q, t, cand, all);
  const unique = (m: Match[]) => (pooled > 0 ? onePerPlace(m, q, t, pooled) : m);
  const mH = unique(oneToOne(all.filter((g) => g.r < p.ratio)));
  // The epipolar model's matches in order of their ratio (the PROSAC order: the most distinctive first).
  const mF = ep ? (ep.ratio > p.ratio ? unique(oneToOne(all)) : [...mH]).sort((a, b) => a.r - b.r) : mH;
  const minMatches = Math.max(4, p.minInliers);
  if (mH.length < minMatches && mF.length < minMatches) return unverified('too few matches', mH.length);
  const gH = matchGeometry(mH, q, t);
  let gFHeld: Geometry | undefined;
  const geometryF = (): Geometry => (gFHeld ??= matchGeometry(mF, q, t));
  if (p.poseCheck && !framesCouldAgree(gH, mF.length, geometryF, p, ep, p.poseCheck)) return unverified('too few matches agree in rotation and scale', mH.length);
  const hv = mH.length >= minMatches ? verifyHomography(gH, mH.length, q, t, p) : unverified('too few matches', mH.length);
  // A homography that already explains most matches is a copy or a plane: a fundamental matrix would add nothing.
  if (!ep || (hv.score > 0 && hv.inliers >= 0.6 * mH.length)) return hv;
  const gF = geometryF();
  let fv = verifyFundamental(gF.pts, gF.sim, gF.ang, mF.length, q, t, p, ep, hv);
  if (DIAG && fv) hv.diag = { ...fv.diag, fScore: fv.score };
  if (ep.guided && fv?.F && fv.score > 0) {
    const g = guidedFundamental(q, t, cand, fv.F, p, ep);
    if (g && g.score > fv.score) fv = { ...g, H: fv.H };
  }
  // The better model: the higher score, then (a score saturates) the one that explains more matches.
  return fv && (fv.score > hv.score || (fv.score > 0 && fv.score === hv.score && fv.inliers > hv.inliers)) ? fv : hv;
}

/**
 * The most matches whose keypoint frames agree with one match's: rotation within tolDeg of it and scale ratio within a
 * factor 2^octaves (Lowe 2004's pose clustering, coarse). A model's inliers keep their keypoints' frames within
 * about that (a homography a real view change gives keeps orientation and bounds the area change; a scene's depth
 * changes the scale ratio by less than 4x between two views that match), while an unrelated image's matches have any.
 */
export function poseSupport(sim: Float64Array, n: number, tolDeg: number, octaves: number): number {
  const rot = new Float64Array(n);
  const sc = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    rot[i] = (sim[2 * i + 1]! * 180) / Math.PI;
    sc[i] = Math.log2(Math.max(1e-6, sim[2 * i]!));
  }
  let best = 0;
  for (let i = 0; i < n; i++) {
    let c = 0;
    for (let j = 0; j < n; j++) if (Math.abs(sc[j]! - sc[i]!) <= octaves && angleGap(rot[j]!, rot[i]!) <= tolDeg) c++;
    if (c > best) best = c;
  }
  return best;
}

/** Before RANSAC (lsh.poseCheck, for the images re-matched by full sketch): whether either model could reach
 *  minInliers inliers among matches whose frames agree (poseSupport); an unrelated image's seldom can. */
function framesCouldAgree(gH: Geometry, nF: number, gF: () => Geometry, p: VerifyParams, ep: EpipolarParams | undefined, pc: { rotation: number; octaves: number }): boolean {
  if (poseSupport(gH.sim, gH.pts.length / 4, pc.rotation, pc.octaves) >= p.minInliers) return true;
  const need = Math.max(8, p.minInliers);
  return !!ep && nF >= need && poseSupport(gF().sim, nF, pc.rotation, pc.octaves) >= need;
}

interface Match {
  qi: number;
  ti: number;
  /** Descriptor distance to the nearest target keypoint, and its ratio to the second nearest. */
  d: number;
  r: number;
}

/**
 * Per query keypoint, the nearest target keypoint among the pairs in cand and the ratio of its distance to the
 * second nearest's; those below maxRatio. regionRadius > 0: the second nearest is taken among keypoints more
 * than that many pixels from the nearest (the same corner detected at two scales or with two orientations is
 * not a rival; Lowe's test is meant against a different place).
 */
export function ratioMatches(q: Prepared, t: Prepared, cand: Int32Array | number[], farDistance: number, maxRatio: number, regionRadius: number): Match[] {
  const n = cand.length / 2;
  // many pairs (a re-match's: lsh.recollide) without a rival region: the WebAssembly kernel, same matches (wasm.ts)
  const near = regionRadius <= 0 && n >= WASM_RATIO_PAIRS ? wasmNearestTwo(q.vecs, q.f.count, t.vecs, t.f.count, cand, farDistance) : null;
  if (near) {
    const out: Match[] = [];
    for (let i = 0; i < near.qi.length; i++) {
      const r = near.d1[i]! / near.d2[i]!;
      if (r < maxRatio) out.push({ qi: near.qi[i]!, ti: near.ti[i]!, d: near.d1[i]!, r });
    }
    return out;
  }
  return ratioMatchesJs(q, t, cand, farDistance, maxRatio, regionRadius);
}

/** Below this many pairs the JavaScript loop is as fast as copying a target's vectors for the kernel. */
const WASM_RATIO_PAIRS = 1024;

/** ratioMatches in JavaScript: with a rival region, few pairs, no WebAssembly; the reference the kernel is tested to. */
export function ratioMatchesJs(q: Prepared, t: Prepared, cand: Int32Array | number[], farDistance: number, maxRatio: number, regionRadius: number): Match[] {
  const n = cand.length / 2;
  const seen = new Int32Array(t.f.count).fill(-1); // target kp -> last query kp that measured it
  const tk = t.f.keypoints;
  const r2 = regionRadius * regionRadius;
  const good: Match[] = [];
  let ids = new Int32Array(64);
  let ds = new Float64Array(64);
  let k = 0;
  while (k < n) {
    const qi = cand[2 * k]!;
    let d1 = Infinity;
    let d2 = farDistance;
    let t1 = -1;
    let c = 0;
    for (; k < n && cand[2 * k]! === qi; k++) {
      const ti = cand[2 * k + 1]!;
      if (seen[ti] === qi) continue;
      seen[ti] = qi;
      // Without a region the pair matters only below the second nearest so far (d2): measured in full only then.
      const d = r2 > 0 ? dist(q.vecs, qi * DESC_SIZE, t.vecs, ti * DESC_SIZE) : distBelow(q.vecs, qi * DESC_SIZE, t.vecs, ti * DESC_SIZE, d2);
      if (r2 > 0) {
        if (c === ids.length) {
          const a = new Int32Array(c * 2);
          a.set(ids);
          ids = a;
          const b = new Float64Array(c * 2);
          b.set(ds);
          ds = b;
        }
        ids[c] = ti;
        ds[c++] = d;
      }
      if (d < d1) {
        d2 = Math.min(d2, d1);
        d1 = d;
        t1 = ti;
      } else if (d < d2) d2 = d;
    }
    if (t1 < 0) continue;
    if (r2 > 0) {
      d2 = farDistance;
      const x = tk[t1 * KP_STRIDE]!, y = tk[t1 * KP_STRIDE + 1]!;
      for (let j = 0; j < c; j++) {
        const tj = ids[j]!;
        if (tj === t1 || ds[j]! >= d2) continue;
        const dx = tk[tj * KP_STRIDE]! - x, dy = tk[tj * KP_STRIDE + 1]! - y;
        if (dx * dx + dy * dy > r2) d2 = ds[j]!;
      }
    }
    const r = d1 / d2;
    if (r < maxRatio) good.push({ qi, ti: t1, d: d1, r });
  }
  return good;
}

/**
 * Mutual nearest neighbours: of the ratio-test matches, those whose target keypoint has no closer query keypoint
 * among the pairs in cand (the nearest neighbour both ways).
 */
function mutualOnly(q: Prepared, t: Prepared, cand: Int32Array | number[], good: Match[]): Match[] {
  const best = new Float64Array(t.f.count).fill(Infinity);
  for (let k = 0; k < cand.length; k += 2) {
    const qi = cand[k]!, ti = cand[k + 1]!;
    if (best[ti]! > 0) best[ti] = Math.min(best[ti]!, dist(q.vecs, qi * DESC_SIZE, t.vecs, ti * DESC_SIZE));
  }
  return good.filter((g) => g.d <= best[g.ti]!);
}

/**
 * Guided matching under a verified fundamental matrix: each query keypoint of cand is matched among the target
 * keypoints within 2x the threshold of its epipolar line (Sampson distance), Lowe's ratio against the nearest
 * rival in that band (a viewpoint change leaves the true match second to a look-alike elsewhere in the image;
 * inside the band the look-alike is gone). The matches, one-to-one and within the rotation window, are scored
 * under the same F: its inliers, their spread and error, the share among the guided matches. Null: too few.
 */
function guidedFundamental(q: Prepared, t: Prepared, cand: Int32Array | number[], F: Mat3, p: VerifyParams, ep: EpipolarParams): Verification | null {
  const n = cand.length / 2;
  const qk = q.f.keypoints, tk = t.f.keypoints;
  const band2 = (2 * ep.threshold) ** 2;
  const xy = new Float64Array(4);
  const good: Match[] = [];
  const seen = new Int32Array(t.f.count).fill(-1);
  const r2 = (p.pooled ?? 0) ** 2;
  const band: number[] = [];
  let k = 0;
  while (k < n) {
    const qi = cand[2 * k]!;
    let d1 = Infinity, d2 = p.farDistance, t1 = -1;
    band.length = 0;
    xy[0] = qk[qi * KP_STRIDE]!;
    xy[1] = qk[qi * KP_STRIDE + 1]!;
    for (; k < n && cand[2 * k]! === qi; k++) {
      const ti = cand[2 * k + 1]!;
      if (seen[ti] === qi) continue;
      seen[ti] = qi;
      xy[2] = tk[ti * KP_STRIDE]!;
      xy[3] = tk[ti * KP_STRIDE + 1]!;
      if (sampson2(F, xy, 0) > band2) continue;
      const d = dist(q.vecs, qi * DESC_SIZE, t.vecs, ti * DESC_SIZE);
      if (r2 > 0) band.push(ti, d);
      if (d < d1) (d2 = Math.min(d2, d1), (d1 = d), (t1 = ti));
      else if (d < d2) d2 = d;
    }
    if (r2 > 0 && t1 >= 0) {
      // pooled views: the rival is the nearest band keypoint away from the match's place (not its copies)
      d2 = p.farDistance;
      for (let j = 0; j < band.length; j += 2) {
        const tj = band[j]!, dj = band[j + 1]!;
        const dx = tk[tj * KP_STRIDE]! - tk[t1 * KP_STRIDE]!, dy = tk[tj * KP_STRIDE + 1]! - tk[t1 * KP_STRIDE + 1]!;
        if (tj !== t1 && dj < d2 && dx * dx + dy * dy > r2) d2 = dj;
      }
      band.length = 0;
    }
    if (t1 >= 0 && d1 / d2 < p.ratio) good.push({ qi, ti: t1, d: d1, r: d1 / d2 });
  }
  const m = p.pooled ? onePerPlace(oneToOne(good), q, t, p.pooled) : oneToOne(good);
  if (m.length < Math.max(8, p.minInliers)) return null;
  const g = matchGeometry(m, q, t);
  const { keep } = rotationConsistent(g.sim, m.length, ep.rotationTolerance);
  const inliers: number[] = [];
  let se = 0;
  for (const i of keep) {
    const e2 = sampson2(F, g.pts, i);
    if (e2 < ep.threshold * ep.threshold) (inliers.push(i), (se += e2));
  }
  if (inliers.length < p.minInliers) return null;
  const rms = Math.sqrt(se / inliers.length);
  const { spread, pairs } = inlierSpread(g.pts, inliers, q, t);
  const score = imageScore(inliers.length, keep.length, spread, (rms / ep.threshold) * p.ransacThreshold, p);
  return { matches: m.length, inliers: inliers.length, score, model: score > 0 ? 'fundamental' : null, H: null, F, pairs, meanError: rms, spread };
}

/** One-to-one: a target keypoint keeps its closest query keypoint; the result is sorted by distance. */
function oneToOne(good: Match[]): Match[] {
  const s = [...good].sort((a, b) => a.d - b.d);
  const used = new Set<number>();
  const m: Match[] = [];
  for (const g of s) if (!used.has(g.ti)) (used.add(g.ti), m.push(g));
  return m;
}

/**
 * Of one-to-one matches (closest first), those with no kept match within `radius` pixels of their query place or
 * of their target place: between pooled views one physical point is detected once per view, a few pixels apart
 * once mapped back, and its copies would count as several inliers, on unrelated images too (a copy satisfies any
 * model its original does).
 */
function onePerPlace(m: Match[], q: Prepared, t: Prepared, radius: number): Match[] {
  const qk = q.f.keypoints, tk = t.f.keypoints;
  const gq = new CellGrid(radius), gt = new CellGrid(radius);
  const taken = () => true;
  const out: Match[] = [];
  for (const g of m) {
    const qx = qk[g.qi * KP_STRIDE]!, qy = qk[g.qi * KP_STRIDE + 1]!, tx = tk[g.ti * KP_STRIDE]!, ty = tk[g.ti * KP_STRIDE + 1]!;
    if (gq.near(qx, qy, taken) || gt.near(tx, ty, taken)) continue;
    gq.add(qx, qy, out.length);
    gt.add(tx, ty, out.length);
    out.push(g);
  }
  return out;
}

/**
 * Points in square cells of `cell` pixels (at least the radius), so that the points within `radius` of a place are
 * found in its 3 x 3 cells: onePerPlace's places taken, homographyLogNfa's pairings that land near a target keypoint.
 */
class CellGrid {
  private readonly cells = new Map<number, number[]>();
  constructor(
    private readonly radius: number,
    private readonly cell = radius,
  ) {}

  private key(cx: number, cy: number): number {
    return cy * 65536 + cx;
  }

  add(x: number, y: number, id: number): void {
    const key = this.key(Math.floor(x / this.cell), Math.floor(y / this.cell));
    const list = this.cells.get(key);
    if (list) list.push(x, y, id);
    else this.cells.set(key, [x, y, id]);
  }

  /** Calls visit(id) for each point closer than the radius to (x, y), until it returns true; whether one did. */
  near(x: number, y: number, visit: (id: number) => boolean | void): boolean {
    const cx = Math.floor(x / this.cell), cy = Math.floor(y / this.cell);
    const r2 = this.radius * this.radius;
    for (let dy = -1; dy <= 1; dy++)
      for (let dx = -1; dx <= 1; dx++) {
        const list = this.cells.get(this.key(cx + dx, cy + dy));
        if (list) for (let i = 0; i < list.length; i += 3) if ((list[i]! - x) ** 2 + (list[i + 1]! - y) ** 2 < r2 && visit(list[i + 2]!)) return true;
      }
    return false;
  }
}

/** Positions (pts: qx, qy, tx, ty), one-match similarities (sim: scale ratio, rotation in radians) and keypoint
 *  angles (ang: query, target, degrees) of matches. */
function matchGeometry(m: Match[], q: Prepared, t: Prepared): { pts: Float64Array; sim: Float64Array; ang: Float64Array; size: Float64Array } {
  const pts = new Float64Array(m.length * 4);
  const sim = new Float64Array(m.length * 2);
  const ang = new Float64Array(m.length * 2);
  const size = new Float64Array(m.length);
  const qk = q.f.keypoints;
  const tk = t.f.keypoints;
  m.forEach((g, i) => {
    const a = g.qi * KP_STRIDE;
    const b = g.ti * KP_STRIDE;
    pts[i * 4] = qk[a]!;
    pts[i * 4 + 1] = qk[a + 1]!;
    pts[i * 4 + 2] = tk[b]!;
    pts[i * 4 + 3] = tk[b + 1]!;
    sim[2 * i] = tk[b + 2]! / Math.max(1e-6, qk[a + 2]!);
    // Rotation = angle_t - angle_q (measured on rotated copies: the other sign loses most consensus sets).
    sim[2 * i + 1] = ((tk[b + 3]! - qk[a + 3]!) * Math.PI) / 180;
    ang[2 * i] = qk[a + 3]!;
    ang[2 * i + 1] = tk[b + 3]!;
    size[i] = qk[a + 2]!;
  });
  return { pts, sim, ang, size };
}

/** Convex-hull area of the inliers in each image, as the square root of the smaller image share. */
function inlierSpread(pts: Float64Array, inliers: number[], q: Prepared, t: Prepared): { spread: number; pairs: Float32Array; qxy: number[] } {
  const pairs = new Float32Array(inliers.length * 4);
  const qxy: number[] = [];
  const txy: number[] = [];
  inliers.forEach((i, j) => {
    for (let c = 0; c < 4; c++) pairs[j * 4 + c] = pts[i * 4 + c]!;
    qxy.push(pts[i * 4]!, pts[i * 4 + 1]!);
    txy.push(pts[i * 4 + 2]!, pts[i * 4 + 3]!);
  });
  const spread = Math.sqrt(Math.min(hullArea(qxy) / (q.f.width * q.f.height), hullArea(txy) / (t.f.width * t.f.height)));
  return { spread, pairs, qxy };
}

/** The homography model: RANSAC seeded by one-match similarities, the sanity checks, the score. */
type Geometry = ReturnType<typeof matchGeometry>;

/**
 * log10 of the number of false alarms of a homography whose inliers must agree in keypoint frame (archive matching's
 * dense, pooled matches): how many models this good chance would give among `n` matches (the a-contrario test of
 * Moisan & Stival, as epipolarLogNfa, with 4-match samples). The chance of one match agreeing is measured on the
 * candidate's own matches: a query keypoint and the target keypoint of another match, paired, agree with H in position
 * (within `threshold`) and in frame (frameAgrees) this often. Pairing matched keypoints keeps their structure (a
 * facade's rows of windows, lettering), which agrees with a wrong plane far more often than uniform points would.
 * Every one of the n (n - 1) pairings is counted (target keypoints in a grid of the threshold's size), one agreeing
 * added: issue 33 round 8; before, 4,096 random pairings floored the chance at 1/4,096, about 16x what it is among a
 * few hundred matches, and 8-10 true inliers could never be significant.
 */
export function homographyLogNfa(H: Mat3, g: Geometry, n: number, k: number, threshold: number, frames: { angleTolerance: number; scaleTolerance: number }): { logNfa: number; chance: number } {
  const agree = chanceAgreements(H, g, n, threshold, frames);
  const chance = (agree + 1) / Math.max(1, n * (n - 1));
  const sample = 4;
  if (k <= sample) return { logNfa: 0, chance };
  const logNfa = Math.log10(Math.max(1, n - sample)) + logChoose(n, k) + logChoose(k, sample) + (k - sample) * Math.log10(chance);
  return { logNfa, chance };
}

/** Of the n (n - 1) pairings of one match's query keypoint with another match's target keypoint, those H maps within
 *  `threshold` pixels with frames that agree (homographyLogNfa's chance). */
function chanceAgreements(H: Mat3, g: Geometry, n: number, threshold: number, frames: { angleTolerance: number; scaleTolerance: number }): number {
  const grid = new CellGrid(threshold, Math.max(1, threshold));
  for (let j = 0; j < n; j++) grid.add(g.pts[j * 4 + 2]!, g.pts[j * 4 + 3]!, j);
  const pts = new Float64Array(4), sim = new Float64Array(2), ang = new Float64Array(2);
  const f = { sim, ang, ...frames };
  let agree = 0;
  for (let i = 0; i < n; i++) {
    const x = g.pts[i * 4]!, y = g.pts[i * 4 + 1]!;
    const w = H[6]! * x + H[7]! * y + H[8]!;
    if (w <= 1e-9) continue;
    const u = (H[0]! * x + H[1]! * y + H[2]!) / w, v = (H[3]! * x + H[4]! * y + H[5]!) / w;
    pts[0] = x;
    pts[1] = y;
    ang[0] = g.ang[2 * i]!;
    grid.near(u, v, (j) => {
      if (j === i) return;
      pts[2] = g.pts[j * 4 + 2]!;
      pts[3] = g.pts[j * 4 + 3]!;
      ang[1] = g.ang[2 * j + 1]!;
      sim[0] = (g.sim[2 * j]! * g.size[j]!) / Math.max(1e-6, g.size[i]!);
      if (frameAgrees(H, pts, 0, f)) agree++;
    });
  }
  return agree;
}

function verifyHomography(g: Geometry, n: number, q: Prepared, t: Prepared, p: VerifyParams): Verification {
  const { pts, sim, ang } = g;
  const diag = Math.hypot(t.f.width, t.f.height);
  const r = ransacHomography(pts, n, {
    threshold: p.ransacThreshold,
    maxIterations: p.ransacIterations,
    sim,
    simThreshold: Math.max(p.ransacThreshold * 2, 0.04 * diag),
    ...(p.frames ? { frames: { sim, ang, ...p.frames } } : {}),
  });
  if (!r) return unverified('no homography', n);
  const inl = r.inliers.length;
  const { spread, pairs, qxy } = inlierSpread(pts, r.inliers, q, t);
  const base = { matches: n, inliers: inl, H: r.H, F: null, pairs, meanError: r.meanError, spread };
  // The perspective is judged where the inliers are: an oblique photo's frame reaches far beyond the
  // matched plane (a cover on a table), where w may legitimately approach the plane's horizon.
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (let i = 0; i < qxy.length; i += 2) {
    x0 = Math.min(x0, qxy[i]!);
    x1 = Math.max(x1, qxy[i]!);
    y0 = Math.min(y0, qxy[i + 1]!);
    y1 = Math.max(y1, qxy[i + 1]!);
  }
  const sane = homographySane(r.H, { x0, y0, x1, y1 }, (p.pooled ?? 0) > 0);
  if (!sane.ok) return { ...base, score: 0, model: null, reason: sane.reason };
  if (p.frames) {
    // Dense, pooled matches (archive matching): most of them are chance, so the inliers' share of the matches says
    // little; what a hit is worth is how far its consensus is beyond chance (homographyLogNfa).
    const nfa = homographyLogNfa(r.H, g, n, inl, p.ransacThreshold, p.frames);
    const d = { logNfa: nfa.logNfa, chance: nfa.chance };
    if (nfa.logNfa > p.frames.maxLogNfa) return { ...base, ...d, score: 0, model: null, reason: `homography NFA 10^${nfa.logNfa.toFixed(1)}` };
    const score = significantScore(inl, nfa.logNfa, spread, r.meanError, p);
    return { ...base, ...d, score, model: score > 0 ? 'homography' : null };
  }
  const score = imageScore(inl, n, spread, r.meanError, p);
  return { ...base, score, model: score > 0 ? 'homography' : null };
}

/**
 * The dominant rotation of the matches (each SIFT match carries one: target angle - query angle) and the
 * matches within `tol` degrees of it. The rotation of a rigid scene between two photos changes little across
 * the frame (the camera's roll plus what perspective adds); an unrelated image's matches have any rotation.
 * The window is the best of 12 positions (30 degrees apart), counted in the number of tests.
 */
export function rotationConsistent(sim: Float64Array, n: number, tolDeg: number): { keep: number[]; centre: number } {
  const bins = 12;
  const hist = new Float64Array(bins);
  const ang = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let a = (sim[2 * i + 1]! * 180) / Math.PI;
    a = ((a % 360) + 360) % 360;
    ang[i] = a;
    hist[Math.floor(a / (360 / bins)) % bins]!++;
  }
  const w = Math.max(0, Math.round(tolDeg / (360 / bins)) - 1);
  let best = 0;
  let bestC = -1;
  for (let b = 0; b < bins; b++) {
    let c = 0;
    for (let d = -w; d <= w; d++) c += hist[(b + d + bins) % bins]!;
    if (c > bestC) (bestC = c), (best = b);
  }
  // Circular mean of the matches in the window, then every match within tol of it.
  const centre = (best + 0.5) * (360 / bins);
  let cs = 0, sn = 0;
  for (let i = 0; i < n; i++) {
    const d = Math.abs(((ang[i]! - centre + 540) % 360) - 180);
    if (d <= (w + 0.5) * (360 / bins)) {
      cs += Math.cos((ang[i]! * Math.PI) / 180);
      sn += Math.sin((ang[i]! * Math.PI) / 180);
    }
  }
  const mean = (Math.atan2(sn, cs) * 180) / Math.PI;
  const keep: number[] = [];
  for (let i = 0; i < n; i++) if (angleGap(ang[i]!, mean) <= tolDeg) keep.push(i);
  return { keep, centre: mean };
}

/** |a - b| on the circle, degrees in [0, 180]. */
function angleGap(a: number, b: number): number {
  return Math.abs(((((a - b) % 360) + 540) % 360) - 180);
}

const LOG_FACT: number[] = [0];
/** log10(n!) */
function logFact(n: number): number {
  while (LOG_FACT.length <= n) LOG_FACT.push(LOG_FACT[LOG_FACT.length - 1]! + Math.log10(LOG_FACT.length));
  return LOG_FACT[n]!;
}
function logChoose(n: number, k: number): number {
  return logFact(n) - logFact(k) - logFact(n - k);
}

/**
 * log10 of the number of false alarms of an epipolar geometry (the a-contrario test of Moisan & Stival 2004 and
 * Moisan, Moulon & Monasse 2016): how many models this good would arise by chance among `n` matches of two
 * unrelated images. residuals: Sampson distances of the matches that could take part; the threshold is the one
 * (at most maxE) that gives the smallest NFA. alpha(e): the probability that a chance match lies within e of
 * its epipolar line and in the rotation window. sample: matches that fix a model (7 for F; 2 for the epipole
 * of a known plane), solutions: models per sample (3 and 1).
 */
export function epipolarLogNfa(residuals: number[], n: number, alpha: (e: number) => number, maxE: number, sample = 7, solutions = 3): { logNfa: number; k: number; e: number } {
  const r = [...residuals].sort((a, b) => a - b);
  // Tests: the solutions per sample, n - sample inlier counts, 12 rotation windows.
  const tests = Math.log10(solutions * Math.max(1, n - sample) * 12);
  let best = { logNfa: Infinity, k: 0, e: 0 };
  for (let k = sample + 1; k <= r.length; k++) {
    const e = r[k - 1]!;
    if (e > maxE) break;
    const l = tests + logChoose(n, k) + logChoose(k, sample) + (k - sample) * Math.log10(Math.min(1, alpha(e)));
    if (l < best.logNfa) best = { logNfa: l, k, e };
  }
  return best;
}

/**
 * The chance-match probability alpha(e) of a fundamental matrix, from the candidate's own matches: query and
 * target keypoints paired at random (every other pair, or 4,096 drawn ones), the share within e of F's
 * epipolar lines and within the rotation window. Matched keypoints are not spread uniformly (lines of text,
 * rows of windows, upright gradients): pairing them at random keeps that structure, so a lattice or a page of
 * text that fits many epipolar geometries by chance gets a high alpha. Never below the uniform model's
 * (2 e D / A: a band along an epipolar line of the target image, times the window's share of the circle).
 */
function chanceAlpha(F: Mat3, pts: Float64Array, ang: Float64Array, n: number, centre: number, tol: number, t: { width: number; height: number }): (e: number) => number {
  const sh = new Float64Array(8);
  const res: number[] = [];
  let total = 0;
  const pair = (i: number, j: number) => {
    total++;
    if (angleGap(ang[2 * j + 1]! - ang[2 * i]!, centre) > tol) return;
    sh[0] = pts[i * 4]!;
    sh[1] = pts[i * 4 + 1]!;
    sh[2] = pts[j * 4 + 2]!;
    sh[3] = pts[j * 4 + 3]!;
    res.push(Math.sqrt(sampson2(F, sh, 0)));
  };
  if (n * (n - 1) <= 4096) {
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (i !== j) pair(i, j);
  } else {
    const rnd = mulberry32(n);
    for (let k = 0; k < 4096; k++) {
      const i = Math.floor(rnd() * n);
      const j = (i + 1 + Math.floor(rnd() * (n - 1))) % n;
      pair(i, j);
    }
  }
  res.sort((a, b) => a - b);
  const D = Math.hypot(t.width, t.height);
  const A = t.width * t.height;
  const share = (2 * tol) / 360;
  return (e: number) => {
    let lo = 0;
    let hi = res.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (res[mid]! < e) lo = mid + 1;
      else hi = mid;
    }
    return Math.max(lo / Math.max(1, total), ((2 * Math.max(e, 0.25) * D) / A) * share);
  };
}

/**
 * The fundamental-matrix model (a 3D scene seen from two places): matches within the dominant rotation, LO-
 * RANSAC with DEGENSAC (the homography's plane seeds plane-and-parallax hypotheses), the a-contrario test, and
 * the score of its inliers. Null when too few matches can take part.
 */
function verifyFundamental(pts: Float64Array, sim: Float64Array, ang: Float64Array, n: number, q: Prepared, t: Prepared, p: VerifyParams, ep: EpipolarParams, hv: Verification): Verification | null {
  const { keep, centre } = rotationConsistent(sim, n, ep.rotationTolerance);
  if (keep.length < Math.max(8, p.minInliers)) return null;
  // The kept matches, in the same (descriptor distance) order.
  const sub = new Float64Array(keep.length * 4);
  keep.forEach((i, j) => sub.set(pts.subarray(i * 4, i * 4 + 4), j * 4));
  const subSim = new Float64Array(keep.length * 2);
  keep.forEach((i, j) => subSim.set(sim.subarray(2 * i, 2 * i + 2), 2 * j));
  const planes = localPlanes(sub, keep.length, subSim, Math.max(p.ransacThreshold * 2, 0.04 * Math.hypot(t.f.width, t.f.height)), p.ransacThreshold, 4);
  if (hv.H && hv.inliers >= 8) planes.unshift(hv.H);
  const r = ransacFundamental(sub, keep.length, { threshold: ep.threshold, maxIterations: ep.iterations, planes, planeThreshold: p.ransacThreshold });
  if (!r) return null;
  const res: number[] = [];
  for (let j = 0; j < keep.length; j++) res.push(Math.sqrt(sampson2(r.F, sub, j)));
  const alpha = chanceAlpha(r.F, pts, ang, n, centre, ep.rotationTolerance, t.f);
  const nfa = epipolarLogNfa(res, n, alpha, ep.threshold);
  const inliers = r.inliers.map((j) => keep[j]!);
  const { spread, pairs } = inlierSpread(pts, inliers, q, t);
  const base = { matches: n, inliers: inliers.length, H: hv.score > 0 ? hv.H : null, F: r.F, pairs, meanError: r.rmsError, spread, diag: DIAG ? ({ logNfa: nfa.logNfa, kept: keep.length, fK: inliers.length } as Record<string, number>) : undefined };
  const fail = (reason: string): Verification => ({ ...base, score: 0, model: null, reason });
  if (nfa.logNfa > ep.maxLogNfa) return fail(`epipolar NFA 10^${nfa.logNfa.toFixed(1)}`);
  // DEGENSAC's question for the final model: are its inliers more than one plane? Inliers on a plane leave the
  // epipole free (any epipole fits them), so what the F adds is its inliers off the plane. The planes: the
  // homography model's, and the dominant plane among the F's own inliers (mirror images included: a flipped
  // copy is a plane the homography model never samples).
  const judged: Mat3[] = [];
  if (hv.H && hv.inliers >= 8) judged.push(hv.H);
  const own = ransacHomography(Float64Array.from(inliers.flatMap((i) => [...pts.subarray(i * 4, i * 4 + 4)])), inliers.length, {
    threshold: p.ransacThreshold,
    maxIterations: 300,
    allowFlips: true,
  });
  if (own && own.inliers.length >= 8) judged.push(own.H);
  const t2 = p.ransacThreshold * p.ransacThreshold;
  for (const H of judged) {
    // The F is the better model only when its inliers off the plane are themselves more than chance (the
    // epipole of the plane's parallax, a 2-match sample, tested among the matches off the plane). Otherwise the
    // scene is that plane, which the homography model judges (a plane it refused, a mirror image or an
    // impossible perspective, is not made a scene by matches that fit some epipole).
    const offRes: number[] = [];
    keep.forEach((i, j) => {
      if (transferError2(H, pts, i) >= t2) offRes.push(res[j]!);
    });
    const off = epipolarLogNfa(offRes, offRes.length, alpha, ep.threshold, 2, 1);
    if (base.diag) base.diag.offNfa = Math.max(base.diag.offNfa ?? -Infinity, off.logNfa);
    if (off.logNfa > ep.maxLogNfa) return fail(`epipolar inliers beyond the plane: NFA 10^${off.logNfa.toFixed(1)}`);
  }
  // The inlier share is taken among the matches in the rotation window (the only ones the model could explain);
  // the error term on the Sampson distance relative to its threshold.
  const score = imageScore(inliers.length, keep.length, spread, (r.rmsError / ep.threshold) * p.ransacThreshold, p);
  return { ...base, score, model: score > 0 ? 'fundamental' : null };
}

/**
 * A homography a real view change can produce: orientation kept, bounded area change, mild perspective over
 * the region it was fitted on (the query's inliers' bounding box).
 */
export function homographySane(H: Mat3, box: { x0: number; y0: number; x1: number; y1: number }, pooled = false): { ok: boolean; reason?: string } {
  const corners = [
    [box.x0, box.y0],
    [box.x1, box.y0],
    [box.x0, box.y1],
    [box.x1, box.y1],
  ];
  const ws = corners.map(([x, y]) => H[6]! * x! + H[7]! * y! + H[8]!);
  const lo = Math.min(...ws);
  const hi = Math.max(...ws);
  if (!pooled) {
    const det = H[0]! * H[4]! - H[1]! * H[3]!;
    if (!(det > 1 / 50 && det < 50)) return { ok: false, reason: `area scale ${det.toFixed(3)}` };
    if (lo <= 0 || hi / lo > 4) return { ok: false, reason: 'extreme perspective' };
    return { ok: true };
  }
  // Both photos' views pooled: the plane may be seen steeply from two sides, so the map between the two frames is
  // legitimately far from a similarity. It must still keep orientation and stay finite over the inliers: the local
  // area scale (det H / w^3) at each corner of their box within [1/100, 100], w within 10x.
  if (lo <= 0 || hi / lo > 10) return { ok: false, reason: 'extreme perspective' };
  const d3 = H[0]! * (H[4]! * H[8]! - H[5]! * H[7]!) - H[1]! * (H[3]! * H[8]! - H[5]! * H[6]!) + H[2]! * (H[3]! * H[7]! - H[4]! * H[6]!);
  for (const w of ws) {
    const a = d3 / (w * w * w);
    if (!(a > 1 / 100 && a < 100)) return { ok: false, reason: `area scale ${a.toFixed(3)}` };
  }
  return { ok: true };
}

/** Smallest inlier spread (square root of the hull's share of the image) that can score. */
export const MIN_SPREAD = 0.05;

/** -log10 NFA at which a frame-checked homography's significance term is full (significantScore). */
export const FULL_SIGNIFICANCE = 20;

/**
 * The image score of a frame-checked homography among dense, pooled matches (archive matching): 0 below minInliers
 * or when the inliers cover one small blob, then the significance of its consensus (-log10 NFA, full at
 * FULL_SIGNIFICANCE) in place of imageScore's inlier count and share, with the same area and error terms: a plane of
 * 16 inliers among 300 dense matches, far beyond chance, scores as a verified scene does, and chance consensus,
 * which the a-contrario test refuses before this, scores nothing.
 */
export function significantScore(inliers: number, logNfa: number, spread: number, meanError: number, p: VerifyParams): number {
  if (inliers < p.minInliers || spread < MIN_SPREAD || !(logNfa < 0)) return 0;
  const sig = Math.min(1, -logNfa / FULL_SIGNIFICANCE);
  const area = Math.min(1, spread / 0.3);
  const err = Math.max(0, 1 - meanError / (p.ransacThreshold * 1.2));
  return Math.sqrt(sig * area) * (0.5 + 0.5 * err);
}

/**
 * The image score: 0 below minInliers, then grows with the inlier count, the share of matches that are
 * inliers and the area the inliers span, and falls with the mean reprojection error.
 */
export function imageScore(inliers: number, matches: number, spread: number, meanError: number, p: VerifyParams): number {
  // Inliers in one small blob (a logo, a patch of texture) are not the same scene, however many.
  if (inliers < p.minInliers || spread < MIN_SPREAD) return 0;
  const count = 1 - Math.exp(-(inliers - p.minInliers + 1) / 20);
  const ratio = Math.min(1, inliers / matches / 0.5);
  const area = Math.min(1, spread / 0.3);
  const err = Math.max(0, 1 - meanError / (p.ransacThreshold * 1.2));
  return count * Math.sqrt(ratio * area) * (0.5 + 0.5 * err);
}
