// Verification of one candidate image: Lowe's ratio test on the keypoint pairs the index brought together,
// one-to-one matches, RANSAC homography, and an image score in [0, 1] that is 0 for unrelated images.
import { DESC_SIZE, KP_STRIDE, type Features } from './features.js';
import { hullArea, ransacHomography, type Mat3 } from './geometry.js';

export interface VerifyParams {
  ratio: number;
  ransacThreshold: number;
  ransacIterations: number;
  minInliers: number;
  /** Distance assumed for the second neighbour when the index brought only one keypoint of the image:
   *  the RootSIFT distance beyond which keypoints rarely share a bucket. */
  farDistance: number;
}

export interface Verification {
  matches: number;
  inliers: number;
  score: number;
  H: Mat3 | null;
  /** Inlier pairs in detection pixels: qx, qy, tx, ty. */
  pairs: Float32Array;
  meanError: number;
  spread: number;
  reason?: string;
}

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

/** The verification of an image that could not be verified (score 0), with the reason. */
export function unverified(reason: string, matches = 0): Verification {
  return { matches, inliers: 0, score: 0, H: null, pairs: new Float32Array(0), meanError: 0, spread: 0, reason };
}

/**
 * cand: flat list of (queryKp, targetKp) pairs, the index's collisions grouped by query keypoint in
 * non-decreasing order (the scan walks query keypoints in order); duplicates allowed (several tables).
 */
export function verifyCandidate(q: Prepared, t: Prepared, cand: Int32Array | number[], p: VerifyParams): Verification {
  // Per query keypoint: nearest and second nearest among the target keypoints that collided with it.
  const n = cand.length / 2;
  const seen = new Int32Array(t.f.count).fill(-1); // target kp -> last query kp that measured it
  const good: { qi: number; ti: number; d: number }[] = [];
  let k = 0;
  while (k < n) {
    const qi = cand[2 * k]!;
    let d1 = Infinity;
    let d2 = p.farDistance;
    let t1 = -1;
    for (; k < n && cand[2 * k]! === qi; k++) {
      const ti = cand[2 * k + 1]!;
      if (seen[ti] === qi) continue;
      seen[ti] = qi;
      const d = dist(q.vecs, qi * DESC_SIZE, t.vecs, ti * DESC_SIZE);
      if (d < d1) {
        d2 = Math.min(d2, d1);
        d1 = d;
        t1 = ti;
      } else if (d < d2) d2 = d;
    }
    if (t1 >= 0 && d1 < p.ratio * d2) good.push({ qi, ti: t1, d: d1 });
  }
  // One-to-one: a target keypoint keeps its closest query keypoint.
  good.sort((a, b) => a.d - b.d);
  const used = new Set<number>();
  const m: typeof good = [];
  for (const g of good) if (!used.has(g.ti)) (used.add(g.ti), m.push(g));
  if (m.length < Math.max(4, p.minInliers)) return unverified('too few matches', m.length);
  const pts = new Float64Array(m.length * 4);
  const qk = q.f.keypoints;
  const tk = t.f.keypoints;
  m.forEach((g, i) => {
    pts[i * 4] = qk[g.qi * KP_STRIDE]!;
    pts[i * 4 + 1] = qk[g.qi * KP_STRIDE + 1]!;
    pts[i * 4 + 2] = tk[g.ti * KP_STRIDE]!;
    pts[i * 4 + 3] = tk[g.ti * KP_STRIDE + 1]!;
  });
  // One-correspondence similarity of each match (scale ratio, rotation) from the keypoints' size and angle.
  const sim = new Float64Array(m.length * 2);
  m.forEach((g, i) => {
    sim[2 * i] = tk[g.ti * KP_STRIDE + 2]! / Math.max(1e-6, qk[g.qi * KP_STRIDE + 2]!);
    // Rotation = angle_t - angle_q (measured on rotated copies: the other sign loses most consensus sets).
    sim[2 * i + 1] = ((tk[g.ti * KP_STRIDE + 3]! - qk[g.qi * KP_STRIDE + 3]!) * Math.PI) / 180;
  });
  const diag = Math.hypot(t.f.width, t.f.height);
  const r = ransacHomography(pts, m.length, {
    threshold: p.ransacThreshold,
    maxIterations: p.ransacIterations,
    sim,
    simThreshold: Math.max(p.ransacThreshold * 2, 0.04 * diag),
  });
  if (!r) return unverified('no homography', m.length);
  const inl = r.inliers.length;
  const pairs = new Float32Array(inl * 4);
  const qxy: number[] = [];
  const txy: number[] = [];
  r.inliers.forEach((i, j) => {
    for (let c = 0; c < 4; c++) pairs[j * 4 + c] = pts[i * 4 + c]!;
    qxy.push(pts[i * 4]!, pts[i * 4 + 1]!);
    txy.push(pts[i * 4 + 2]!, pts[i * 4 + 3]!);
  });
  const spread = Math.sqrt(
    Math.min(hullArea(qxy) / (q.f.width * q.f.height), hullArea(txy) / (t.f.width * t.f.height)),
  );
  const base = { matches: m.length, inliers: inl, H: r.H, pairs, meanError: r.meanError, spread };
  // The perspective is judged where the inliers are: an oblique photo's frame reaches far beyond the
  // matched plane (a cover on a table), where w may legitimately approach the plane's horizon.
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (let i = 0; i < qxy.length; i += 2) {
    x0 = Math.min(x0, qxy[i]!);
    x1 = Math.max(x1, qxy[i]!);
    y0 = Math.min(y0, qxy[i + 1]!);
    y1 = Math.max(y1, qxy[i + 1]!);
  }
  const sane = homographySane(r.H, { x0, y0, x1, y1 });
  if (!sane.ok) return { ...base, score: 0, reason: sane.reason };
  return { ...base, score: imageScore(inl, m.length, spread, r.meanError, p) };
}

/**
 * A homography a real view change can produce: orientation kept, bounded area change, mild perspective over
 * the region it was fitted on (the query's inliers' bounding box).
 */
export function homographySane(H: Mat3, box: { x0: number; y0: number; x1: number; y1: number }): { ok: boolean; reason?: string } {
  const det = H[0]! * H[4]! - H[1]! * H[3]!;
  if (!(det > 1 / 50 && det < 50)) return { ok: false, reason: `area scale ${det.toFixed(3)}` };
  const ws = [
    [box.x0, box.y0],
    [box.x1, box.y0],
    [box.x0, box.y1],
    [box.x1, box.y1],
  ].map(([x, y]) => H[6]! * x! + H[7]! * y! + H[8]!);
  const lo = Math.min(...ws);
  const hi = Math.max(...ws);
  if (lo <= 0 || hi / lo > 4) return { ok: false, reason: 'extreme perspective' };
  return { ok: true };
}

/**
 * The image score: 0 below minInliers, then grows with the inlier count, the share of matches that are
 * inliers and the area the inliers span, and falls with the mean reprojection error.
 */
export function imageScore(inliers: number, matches: number, spread: number, meanError: number, p: VerifyParams): number {
  if (inliers < p.minInliers) return 0;
  const count = 1 - Math.exp(-(inliers - p.minInliers + 1) / 20);
  const ratio = Math.min(1, inliers / matches / 0.5);
  const area = Math.min(1, spread / 0.3);
  const err = Math.max(0, 1 - meanError / (p.ransacThreshold * 1.2));
  return count * Math.sqrt(ratio * area) * (0.5 + 0.5 * err);
}
