// A query against the index: keypoint votes through the LSH (the query and its mirror image), a shortlist
// of the most-voted images, then verification of each (ratio test on the pairs the index brought together,
// RANSAC, image score). The mirror pass finds left-right flipped copies, which SIFT alone does not match.
import { DESC_SIZE, type Features } from './features.js';
import { MIRROR, mirrorFeatures, rootSift } from './descriptors.js';
import { LshIndex, MAX_KP_PER_IMAGE, popcount } from './lsh.js';
import { verifyCandidate, type Prepared, type Verification, type VerifyParams } from './verify.js';

export interface SearchParams extends VerifyParams {
  shortlist: number;
  /** Also search the mirror image of the query. */
  mirror: boolean;
  /** Largest sketch Hamming distance (of 64 bits) for a colliding keypoint to vote for its image. */
  voteHamming: number;
  /** Largest sketch Hamming distance for a colliding keypoint pair to go to the ratio test. */
  matchHamming: number;
}

export interface Hit extends Verification {
  slot: number;
  votes: number;
  mirrored: boolean;
}

export interface SearchResult {
  hits: Hit[]; // verified shortlist, best first
  shortlist: number[]; // slots in vote order
  timings: { probeMs: number; voteMs: number; verifyMs: number };
}

export function prepare(f: Features): Prepared {
  return { f, vecs: rootSift(f.descriptors, f.count) };
}

/** Loads the prepared features of an indexed image (slot) for verification. */
export type SlotLoader = (slot: number) => Prepared | undefined;

/**
 * extra: more keypoints of the query in its own frame (synthesised views, src/lsh-index/views.ts). They vote
 * with the plain query, and their collisions join the plain query's before one ratio test + RANSAC per image.
 */
export function search(index: LshIndex, load: SlotLoader, query: Features, p: SearchParams, extra?: Features): SearchResult {
  const t0 = performance.now();
  const variants: Prepared[] = [prepare(query)];
  if (p.mirror) variants.push(prepare(mirrorFeatures(query)));
  // --- views hook (1/3): the extra keypoints are one more variant
  const xi = extra?.count ? variants.push(prepare(extra)) - 1 : -1;
  const L = index.params.tables;
  const per = 1 + index.params.probes;
  const probes = variants.map((v) => index.probe(v.vecs, Math.min(v.f.count, MAX_KP_PER_IMAGE)));
  const sketches: Uint32Array[] = [];
  for (let s = 0; s < index.slots; s++) sketches.push(index.sketch(s));
  const t1 = performance.now();
  const slots = index.slots;
  const alive = index.aliveFlags;
  const maxBucket = index.params.maxBucket;
  const tabs = Array.from({ length: L }, (_, t) => index.table(t));
  /** Scans every probed bucket of every query keypoint; visit(q, slot, kp, hamming). */
  const scan = (vi: number, maxH: number, visit: (q: number, s: number, kp: number, h: number) => void) => {
    const pc = probes[vi]!.probes;
    const qs = probes[vi]!.sketches;
    const n = Math.min(variants[vi]!.f.count, MAX_KP_PER_IMAGE);
    for (let q = 0; q < n; q++) {
      const q0 = qs[2 * q]!;
      const q1 = qs[2 * q + 1]!;
      for (let t = 0; t < L; t++) {
        const { offsets, entries, delta } = tabs[t]!;
        for (let k = 0; k < per; k++) {
          const code = pc[(q * L + t) * per + k]!;
          const a = offsets[code]!;
          const b = offsets[code + 1]!;
          const d = delta.size ? delta.get(code) : undefined;
          if (b - a + (d ? d.length : 0) > maxBucket) continue;
          for (let j = a; j < b; j++) {
            const e = entries[j]!;
            const s = (e / MAX_KP_PER_IMAGE) | 0;
            if (!alive[s]) continue;
            const kp = e - s * MAX_KP_PER_IMAGE;
            const sk = sketches[s]!;
            const h = popcount(q0 ^ sk[2 * kp]!) + popcount(q1 ^ sk[2 * kp + 1]!);
            if (h <= maxH) visit(q, s, kp, h);
          }
          if (d)
            for (const e of d) {
              const s = (e / MAX_KP_PER_IMAGE) | 0;
              if (!alive[s]) continue;
              const kp = e - s * MAX_KP_PER_IMAGE;
              const sk = sketches[s]!;
              const h = popcount(q0 ^ sk[2 * kp]!) + popcount(q1 ^ sk[2 * kp + 1]!);
              if (h <= maxH) visit(q, s, kp, h);
            }
        }
      }
    }
  };
  // One scan: votes (close sketches, one per query keypoint and image) and the closer-than-matchHamming
  // collisions, kept as (slot, q, kp) triples for the shortlisted images' ratio tests.
  const votes = variants.map(() => new Uint32Array(slots));
  const lastSeen = new Int32Array(slots);
  const found: Int32Array[] = [];
  const voteH = p.voteHamming;
  variants.forEach((_, vi) => {
    lastSeen.fill(-1);
    const vv = votes[vi]!;
    let buf = new Int32Array(3 * 65536);
    let len = 0;
    scan(vi, Math.max(p.matchHamming, voteH), (q, s, kp, h) => {
      if (h <= voteH && lastSeen[s] !== q) {
        lastSeen[s] = q;
        vv[s]!++;
      }
      if (h <= p.matchHamming) {
        if (len + 3 > buf.length) {
          const nb = new Int32Array(buf.length * 2);
          nb.set(buf);
          buf = nb;
        }
        buf[len++] = s;
        buf[len++] = q;
        buf[len++] = kp;
      }
    });
    found.push(buf.subarray(0, len));
  });
  const best = new Uint32Array(slots);
  for (let s = 0; s < slots; s++) best[s] = Math.max(...votes.map((v) => v[s]!));
  // --- views hook (2/3): the plain query and its views vote together
  if (xi > 0) for (let s = 0; s < slots; s++) best[s] = Math.max(best[s]!, votes[0]![s]! + votes[xi]![s]!);
  const shortlist = topK(best, p.shortlist);
  const t2 = performance.now();
  const pos = new Int32Array(slots).fill(-1);
  shortlist.forEach((s, i) => (pos[s] = i));
  const coll: number[][][] = variants.map(() => shortlist.map(() => []));
  variants.forEach((_, vi) => {
    const cv = coll[vi]!;
    const f = found[vi]!;
    for (let k = 0; k < f.length; k += 3) {
      const i = pos[f[k]!]!;
      if (i >= 0) cv[i]!.push(f[k + 1]!, f[k + 2]!);
    }
  });
  // --- views hook (3/3): verify the plain query and its views as one query (view keypoints after the plain ones)
  let verifyVariants = variants;
  if (xi > 0) {
    verifyVariants = variants.slice(0, xi);
    verifyVariants[0] = concatPrepared(variants[0]!, variants[xi]!);
    const off = variants[0]!.f.count;
    coll[xi]!.forEach((c, i) => {
      const dst = coll[0]![i]!;
      for (let k = 0; k < c.length; k += 2) dst.push(c[k]! + off, c[k + 1]!);
    });
  }
  const hits: Hit[] = [];
  shortlist.forEach((slot, i) => {
    const target = load(slot);
    if (!target) return;
    let bestHit: Hit | null = null;
    verifyVariants.forEach((v, vi) => {
      const c = coll[vi]![i]!;
      if (c.length / 2 < Math.max(4, p.minInliers)) return;
      const r = verifyCandidate(v, target, c, p);
      const h: Hit = { ...r, slot, votes: votes[vi]![slot]!, mirrored: vi === 1 };
      if (!bestHit || h.score > bestHit.score || (h.score === bestHit.score && h.inliers > bestHit.inliers)) bestHit = h;
    });
    hits.push(
      bestHit ?? { matches: 0, inliers: 0, score: 0, H: null, pairs: new Float32Array(0), meanError: 0, spread: 0, slot, votes: best[slot]!, mirrored: false },
    );
  });
  hits.sort((a, b) => b.score - a.score || b.inliers - a.inliers || b.votes - a.votes);
  const t3 = performance.now();
  void DESC_SIZE;
  void MIRROR;
  return { hits, shortlist, timings: { probeMs: t1 - t0, voteMs: t2 - t1, verifyMs: t3 - t2 } };
}

/** One query from two keypoint sets in the same frame (b's keypoints after a's). */
function concatPrepared(a: Prepared, b: Prepared): Prepared {
  const kp = new Float32Array(a.f.keypoints.length + b.f.keypoints.length);
  kp.set(a.f.keypoints);
  kp.set(b.f.keypoints, a.f.keypoints.length);
  const d = new Uint8Array(a.f.descriptors.length + b.f.descriptors.length);
  d.set(a.f.descriptors);
  d.set(b.f.descriptors, a.f.descriptors.length);
  const vecs = new Float32Array(a.vecs.length + b.vecs.length);
  vecs.set(a.vecs);
  vecs.set(b.vecs, a.vecs.length);
  return { f: { ...a.f, count: a.f.count + b.f.count, keypoints: kp, descriptors: d }, vecs };
}

/** Indexes of the k largest values with a positive count, largest first. */
export function topK(v: Uint32Array, k: number): number[] {
  const idx: number[] = [];
  for (let i = 0; i < v.length; i++) if (v[i]! > 0) idx.push(i);
  idx.sort((a, b) => v[b]! - v[a]! || a - b);
  return idx.slice(0, k);
}
