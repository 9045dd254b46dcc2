// REFERENCE (issue 35): the index as it was before the one-table codes (main at b0cf5ac), kept so that bench:index
// measures today's query CPU and memory beside the new index in the same run. Not used by the product.
// A query against the index: keypoint votes through the LSH (the query and its mirror image), a shortlist
// of the most-voted images, then verification of each (ratio test on the pairs the index brought together,
// RANSAC, image score). The mirror pass finds left-right flipped copies, which SIFT alone does not match.
import type { Features } from '../../src/lib/image-index/index.js';
import { concatFeatures, mirrorFeatures, rootSift } from '../../src/lib/image-index/index.js';
import { LshIndex, MAX_KP_PER_IMAGE, popcount } from './lsh.js';
import { sketchCollisions as todaysSketchCollisions } from '../../src/lib/image-index/index.js';
import { unverified, verifyCandidate, type Prepared, type Verification, type VerifyParams } from '../../src/lib/image-index/index.js';

export interface SearchParams extends VerifyParams {
  shortlist: number;
  /** Also search the mirror image of the query (only when the direct pass found no confident hit). */
  mirror: boolean;
  /** Images verified in the mirror pass: a flipped copy is a copy, which the votes put at the top (mirrored
   *  scenes are not a case), so the mirror pass verifies only its best-voted few. */
  mirrorShortlist: number;
  /** A hit at or above this image score is confident: no mirror pass is needed. */
  confidentScore: number;
  /** Largest Hamming distance of the 64-bit sketches for a colliding keypoint to vote for its image. */
  voteHamming: number;
  /** Largest sketch Hamming distance for a colliding keypoint pair to go to the ratio test. */
  matchHamming: number;
  /** The best-voted shortlisted images whose index collisions do not verify are matched again against
   *  every one of their keypoints' sketches (collisions lost in over-full, skipped buckets). */
  recollide: number;
  /** Sketch Hamming bound of that re-matching: looser than matchHamming, so the ratio test sees the true
   *  second neighbour (exhaustive matching in effect). */
  recollideHamming: number;
  /** lsh.window: only images whose time (`at`, per slot, epoch ms) is within [lo, hi] are shortlisted; the rest
   *  take no place in the shortlist (they could not be candidates). Absent: every image. */
  window?: SlotWindow;
}

export interface SlotWindow {
  at: ArrayLike<number>;
  lo: number;
  hi: number;
}

export interface Hit extends Verification {
  slot: number;
  votes: number;
  mirrored: boolean;
}

export interface SearchResult {
  hits: Hit[]; // verified shortlist, best first
  shortlist: number[]; // slots in vote order (the mirror pass's additions after the direct pass's)
  /** Whether the mirror pass ran. */
  mirrorPass: boolean;
  timings: { probeMs: number; voteMs: number; verifyMs: number };
}

export function prepare(f: Features): Prepared {
  return { f, vecs: rootSift(f.descriptors, f.count) };
}

/** Loads the prepared features of an indexed image (slot) for verification. */
/** A shortlisted image's features; async because they come from the bank (fetched together per pass). */
export type SlotLoader = (slot: number) => Prepared | undefined | Promise<Prepared | undefined>;

interface Votes {
  /** Votes per slot: each query keypoint's vote (weighted by how rare its bucket is) shared among the
   *  images where it has a close colliding keypoint. */
  votes: Float32Array;
  /** Collisions close enough for the ratio test, as (slot, query kp, target kp) triples. */
  found: Int32Array;
}

/** Scan counters of the last query (for benchmarks): entries scanned, entries whose sketch half passed,
 *  entries whose full sketch passed, probed buckets, buckets skipped as over-full. */
export const scanStats = { scanned: 0, halfPassed: 0, fullPassed: 0, buckets: 0, skippedBuckets: 0 };

/**
 * Scans every probed bucket of every query keypoint once. Sequential over each bucket's entries and their
 * sketch halves; the full sketch (and the entry's image) is only looked at when the half is close. The
 * half's test is loose (at most half the full threshold plus 2): a pair whose distance sits unevenly in
 * one half still passes in the tables that keep the other half, where it collides too.
 */
function scanVotes(index: LshIndex, probes: Uint32Array, sketches: Uint32Array, n: number, p: SearchParams): Votes {
  const L = index.params.tables;
  const per = 1 + index.params.probes;
  const maxBucket = index.params.maxBucket;
  const alive = index.aliveFlags;
  const tabs = Array.from({ length: L }, (_, t) => index.table(t));
  const offs = tabs.map((t) => t.offsets);
  const ents = tabs.map((t) => t.entries);
  const tgs = tabs.map((t) => t.tags);
  const deltas = tabs.map((t) => (t.delta.size ? t.delta : null));
  const { pool, offsets: skOff } = index.sketchPool;
  const voteH = p.voteHamming;
  const matchH = p.matchHamming;
  const maxH = Math.max(voteH, matchH);
  const halfH = Math.min(32, (maxH >> 1) + 2);
  const votes = new Float32Array(index.slots);
  const lastSeen = new Int32Array(index.slots).fill(-1);
  const found = new Collisions();
  let scanned = 0;
  let halfPassed = 0;
  let fullPassed = 0;
  let buckets = 0;
  let skipped = 0;
  // Entries whose sketch half passed, per bucket (entry ids): the full test runs after the sequential pass.
  let cand = new Uint32Array(1024);
  // The images one query keypoint votes for, and the weight of its rarest bucket: the vote is shared among
  // them (see below).
  let voted = new Int32Array(256);
  for (let q = 0; q < n; q++) {
    const q0 = sketches[2 * q]!;
    const q1 = sketches[2 * q + 1]!;
    let nv = 0;
    let wq = 0;
    for (let t = 0; t < L; t++) {
      const offsets = offs[t]!;
      const entries = ents[t]!;
      const tags = tgs[t]!;
      const delta = deltas[t];
      const qh = t & 1 ? q1 : q0;
      for (let k = 0; k < per; k++) {
        const code = probes[(q * L + t) * per + k]!;
        const a = offsets[code]!;
        const b = offsets[code + 1]!;
        const d = delta ? delta.get(code) : undefined;
        const size = b - a + (d ? d.length / 2 : 0);
        buckets++;
        if (size > maxBucket) {
          skipped++;
          continue;
        }
        scanned += b - a;
        if (size > cand.length) cand = new Uint32Array(Math.max(size, cand.length * 2));
        let nc = 0;
        for (let j = a; j < b; j++) {
          const x = qh ^ tags[j]!;
          if (POP16[x & 0xffff]! + POP16[x >>> 16]! <= halfH) cand[nc++] = entries[j]!;
        }
        if (d) for (let j = 0; j < d.length; j += 2) if (popcount(qh ^ d[j + 1]!) <= halfH) cand[nc++] = d[j]!;
        halfPassed += nc;
        if (!nc) continue;
        // A collision in a crowded bucket says less (the idf of text retrieval): weight ln(1 + maxBucket/size).
        const w = Math.log1p(maxBucket / size);
        for (let c = 0; c < nc; c++) {
          const e = cand[c]!;
          const s = e >>> 11; // e / MAX_KP_PER_IMAGE
          if (!alive[s]) continue;
          const o = skOff[s]! + 2 * (e & (MAX_KP_PER_IMAGE - 1));
          const h = popcount(q0 ^ pool[o]!) + popcount(q1 ^ pool[o + 1]!);
          if (h > maxH) continue;
          fullPassed++;
          if (h <= voteH) {
            if (w > wq) wq = w;
            if (lastSeen[s] !== q) {
              lastSeen[s] = q;
              if (nv === voted.length) {
                const nb = new Int32Array(nv * 2);
                nb.set(voted);
                voted = nb;
              }
              voted[nv++] = s;
            }
          }
          if (h <= matchH) found.push(s, q, e & (MAX_KP_PER_IMAGE - 1));
        }
      }
    }
    // One vote per query keypoint, shared among the images it reaches: a keypoint close to one image only
    // (a distinctive detail) counts fully; one close to many (lettering, logos, texture) says little about
    // any of them. Like the ratio test, it favours unambiguous matches: it moved the right image of every
    // smvs query into the shortlist (two glare-covered photos ranked 44th and 80th by whole votes).
    const share = wq / nv;
    for (let i = 0; i < nv; i++) votes[voted[i]!]! += share;
  }
  Object.assign(scanStats, { scanned, halfPassed, fullPassed, buckets, skippedBuckets: skipped });
  return { votes, found: found.view() };
}

/** Popcount of 16-bit values: two lookups per 32-bit word in the scan's hot loop. */
const POP16 = (() => {
  const t = new Uint8Array(65536);
  for (let i = 1; i < 65536; i++) t[i] = (i & 1) + t[i >>> 1]!;
  return t;
})();

/** A growable list of (slot, query kp, target kp) triples. */
class Collisions {
  private a = new Int32Array(3 * 16384);
  private len = 0;
  push(s: number, q: number, kp: number): void {
    if (this.len + 3 > this.a.length) {
      const nb = new Int32Array(this.a.length * 2);
      nb.set(this.a);
      this.a = nb;
    }
    this.a[this.len++] = s;
    this.a[this.len++] = q;
    this.a[this.len++] = kp;
  }
  view(): Int32Array {
    return this.a.subarray(0, this.len);
  }
}

/** One pass (the query or its mirror image): votes, shortlist, verification of each shortlisted image. */
async function pass(index: LshIndex, load: SlotLoader, v: Prepared, p: SearchParams, mirrored: boolean, t: { probeMs: number; voteMs: number; verifyMs: number }, maxQuery = MAX_KP_PER_IMAGE) {
  const t0 = performance.now();
  const n = Math.min(v.f.count, maxQuery);
  const pr = index.probe(v.vecs, n);
  const t1 = performance.now();
  const { votes, found } = scanVotes(index, pr.probes, pr.sketches, n, p);
  const shortlist = topK(votes, mirrored ? Math.min(p.shortlist, p.mirrorShortlist) : p.shortlist, index.tieKeys, p.window);
  const t2 = performance.now();
  const pos = new Int32Array(index.slots).fill(-1);
  shortlist.forEach((s, i) => (pos[s] = i));
  const coll: number[][] = shortlist.map(() => []);
  for (let k = 0; k < found.length; k += 3) {
    const i = pos[found[k]!]!;
    if (i >= 0) coll[i]!.push(found[k + 1]!, found[k + 2]!);
  }
  const hits: Hit[] = [];
  // A shortlisted image's features are read (from the bank) only when it is verified: most of a shortlist has too
  // few collisions to verify (an unmatched source's whole shortlist, often), and the reads were a fifth of a
  // search's CPU on PostgreSQL. An image whose features are gone gets no hit, as when they were all read up front.
  const few = (i: number) => coll[i]!.length / 2 < Math.max(4, p.minInliers);
  const targets = await Promise.all(shortlist.map((slot, i) => (few(i) ? undefined : load(slot))));
  shortlist.forEach((slot, i) => {
    const target = targets[i];
    const base = { slot, votes: Math.round(votes[slot]! * 10) / 10, mirrored };
    if (few(i)) {
      if (index.isAlive(slot)) hits.push({ ...unverified('too few collisions'), ...base });
      return;
    }
    if (!target) return;
    hits.push({ ...verifyCandidate(v, target, coll[i]!, p), ...base });
  });
  // Crowded buckets are skipped at query time, and with them the collisions of common-looking keypoints;
  // for the best-voted images that did not verify, pair keypoints by their full sketches instead (every
  // query keypoint against every keypoint of that image: ~0.5M popcounts, 2-3 ms with its verification).
  // Only when nothing verified confidently, as for the mirror pass: run after every query, the re-matches of
  // four unrelated images were half the time of a median query and changed no ranking on the three sets.
  const confident = hits.some((h) => h.score >= p.confidentScore);
  // Not in the mirror pass: it looks for a flipped copy, whose collisions are plenty without the crowded buckets.
  for (let i = 0; i < (confident || mirrored ? 0 : Math.min(p.recollide, hits.length)); i++) {
    const h = hits[i]!;
    if (h.score >= p.confidentScore) continue;
    const c = sketchCollisions(pr.sketches, n, index.sketch(h.slot), p.recollideHamming);
    if (c.length / 2 < Math.max(4, p.minInliers)) continue;
    const target = targets[shortlist.indexOf(h.slot)] ?? (await load(h.slot));
    if (!target) continue;
    const r = verifyCandidate(v, target, c, p);
    if (r.score > h.score || (r.score === h.score && r.inliers > h.inliers)) hits[i] = { ...r, slot: h.slot, votes: h.votes, mirrored };
  }
  const t3 = performance.now();
  t.probeMs += t1 - t0;
  t.voteMs += t2 - t1;
  t.verifyMs += t3 - t2;
  return { hits, shortlist };
}

/** (query kp, target kp) pairs whose 64-bit sketches are within maxH, grouped by query keypoint: today's kernel
 *  (src/lib/image-index/wasm.ts, issue 35 round 14; the same pairs as the reference's own loop of 16-bit table
 *  look-ups), as its verification is today's verifyCandidate: bench:index compares the two indexes, not two
 *  versions of the kernels they share. */
export const sketchCollisions = todaysSketchCollisions;

const better = (a: Hit, b: Hit) => a.score - b.score || a.inliers - b.inliers || a.votes - b.votes;

/**
 * Two passes' hits as one list, one hit per image, best first. keepFirstOnTie: a hit of `second` replaces
 * the image's hit of `first` only with a higher score, and at equal scores `first`'s hits rank ahead (the
 * views count only through verified evidence); otherwise the better hit wins (score, inliers, votes).
 */
export function mergeHits(first: Hit[], second: Hit[], keepFirstOnTie: boolean): Hit[] {
  const bySlot = new Map<number, { h: Hit; first: boolean }>(first.map((h) => [h.slot, { h, first: true }]));
  for (const h of second) {
    const o = bySlot.get(h.slot);
    if (!o || (keepFirstOnTie ? h.score > o.h.score : better(h, o.h) > 0)) bySlot.set(h.slot, { h, first: false });
  }
  return [...bySlot.values()]
    .sort((a, b) => b.h.score - a.h.score || (keepFirstOnTie ? Number(b.first) - Number(a.first) : 0) || better(b.h, a.h))
    .map((x) => x.h);
}

/**
 * extra: more keypoints of the query in its own frame (synthesised views, src/lib/image-index/views.ts): the direct
 * pass then takes the plain keypoints and these together (one vote, one ratio test + RANSAC per image).
 */
export async function search(index: LshIndex, load: SlotLoader, query: Features, p: SearchParams, extra?: Features): Promise<SearchResult> {
  const timings = { probeMs: 0, voteMs: 0, verifyMs: 0 };
  // --- views hook: the view keypoints follow the plain ones (indexes after query.count), no count cap
  const q = prepare(extra?.count ? concatFeatures(query, [query, extra]) : query);
  const direct = await pass(index, load, q, p, false, timings, extra?.count ? Infinity : MAX_KP_PER_IMAGE);
  const confident = direct.hits.some((h) => h.score >= p.confidentScore);
  // The mirror pass finds left-right flipped copies (SIFT descriptors are not mirror-invariant); run only
  // when the direct pass found nothing confident, since a flipped copy matches nothing directly.
  const mirrorPass = p.mirror && !confident;
  if (!mirrorPass) return { hits: mergeHits(direct.hits, [], false), shortlist: direct.shortlist, mirrorPass, timings };
  const m = await pass(index, load, prepare(mirrorFeatures(query)), p, true, timings);
  const shortlist = [...new Set([...direct.shortlist, ...m.shortlist])];
  return { hits: mergeHits(direct.hits, m.hits, false), shortlist, mirrorPass, timings };
}


/** Indexes of the k largest values with a positive count, largest first. */
export function topK(v: Float32Array | Uint32Array, k: number, key?: ArrayLike<number>, window?: SlotWindow): number[] {
  // One pass keeping the k best in a short sorted list: at 100k images most slots get a vote, and sorting
  // them all cost more than the rest of the ranking. Equal votes rank by `key` (the index's tie keys: the
  // target item id, so that the shortlist does not depend on the order the images were loaded in), else by slot.
  const before = (a: number, b: number) => v[a]! > v[b]! || (v[a] === v[b] && (key ? key[a]! < key[b]! : a < b));
  const best: number[] = [];
  for (let i = 0; i < v.length; i++) {
    const x = v[i]!;
    if (!(x > 0) || k <= 0) continue;
    if (window && !(window.at[i]! >= window.lo && window.at[i]! <= window.hi)) continue;
    if (best.length === k && !before(i, best[k - 1]!)) continue;
    let j = best.length < k ? best.length : k - 1;
    best[j] = i;
    while (j > 0 && before(i, best[j - 1]!)) {
      best[j] = best[j - 1]!;
      best[j - 1] = i;
      j--;
    }
  }
  return best;
}
