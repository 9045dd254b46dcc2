// A query against the index: keypoint votes through the LSH (the query and its mirror image), a shortlist
// of the most-voted images, then verification of each (ratio test on the pairs the index brought together,
// RANSAC, image score). The mirror pass finds left-right flipped copies, which SIFT alone does not match.
import { partScan, wasmSketchCollisions } from './wasm.js';
import type { Features } from './features.js';
import { concatFeatures, mirrorFeatures, rootSift } from './descriptors.js';
import { LshIndex, MAX_KP_PER_IMAGE, entriesAt } from './lsh.js';
import { unverified, verifyCandidate, type Prepared, type Verification, type VerifyParams } from './verify.js';

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
  /** Hamming weighting of a vote (0: none): an image's part of a query keypoint's vote is proportional to
   *  exp(-h^2 / sigma^2) of its closest colliding keypoint's sketch distance h. */
  voteSigma?: number;
  /** The best-voted shortlisted images whose index collisions do not verify are matched again against
   *  every one of their keypoints' sketches (collisions lost in over-full, skipped buckets). */
  recollide: number;
  /** Sketch Hamming bound of that re-matching: looser than matchHamming, so the ratio test sees the true
   *  second neighbour (exhaustive matching in effect). */
  recollideHamming: number;
  /** When the best-voted do not verify either: this many more shortlisted images, those that the most query keypoints
   *  voted for (at least two), are re-matched the same way until one is confident (lsh.recollideVoters; 0: none). Among
   *  many targets a lost true match's few voting keypoints are outvoted by images one lucky keypoint reached in a rare
   *  bucket (issue 35 round 7). */
  recollideVoters?: number;
  /** The frame check before RANSAC for those re-matches (VerifyParams.poseCheck; absent: none). They are mostly
   *  unrelated images, which the check refuses before RANSAC and the epipolar model; chosen by dev/pose-check.ts
   *  (no true pair's verdict changed), the default is RECOLLIDE_POSE_CHECK. */
  recollidePoseCheck?: VerifyParams['poseCheck'];
  /** lsh.reprobe: when neither the direct nor the mirror pass found anything confident, the query votes again with
   *  this many probed buckets a keypoint (more than the index's lsh.multiprobe; absent or not more: no such pass), and
   *  the images of that shortlist not in the direct pass's are verified, re-matched by voters only (dropSeen). */
  reprobe?: number;
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
  /** What this search's scans did, its passes summed (for benchmarks). */
  scan: ScanStats;
  /** The direct pass's votes (the wide-baseline stages' promise and archive candidates read them). */
  votes: DirectVotes;
}

/** A direct pass's votes: its shortlist (slots, most-voted first) and their votes, the query keypoints searched, and
 *  the votes an exact copy of the query would get, in the same units. */
export interface DirectVotes {
  slots: number[];
  votes: number[];
  keypoints: number;
  /** Each query keypoint's weight in its own bucket with the copy's keypoint added (0 past lsh.maxBucket): the
   *  votes an exact copy would get, in the same weights as every other image's. */
  copy: number;
  /** The shortlist's votes with each query keypoint's part divided by its burst (burstCounts), in shortlist order;
   *  absent where the votes came from shards' partials of before (the promise then reads `votes`). */
  burst?: number[];
}

/** Scan counters of a search: entries scanned, entries whose sketch passed, probed buckets, buckets skipped as
 *  over-full. */
export interface ScanStats {
  scanned: number;
  passed: number;
  buckets: number;
  skippedBuckets: number;
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
  /** The same with each keypoint's part divided by its burst (burstCounts). */
  burst: Float32Array;
  /** The votes an exact copy of the query would get (DirectVotes.copy). */
  copy: number;
  /** Per slot: how many query keypoints voted for it. */
  voting: Uint16Array;
  /** Collisions close enough for the ratio test, as (slot, query kp, target kp) triples. */
  found: Int32Array;
  stats: ScanStats;
  /** With `exact` (a shard's scan): each query keypoint's vote weight and the images it voted for on this index, and
   *  every (slot, query kp) vote. */
  exact?: KeypointVotes & { voters: Int32Array };
}

/** What a shard's query keypoints did (issue 35): each one's weight (its rarest voting bucket's, by the whole index's
 *  bucket sizes: 0 when it voted for nothing) and how many of the shard's images it voted for at each closest sketch
 *  distance (`hist`: `bins` = voteHamming + 1 counts a keypoint). Added over every shard, a keypoint's share of its
 *  vote (weight over its images, or with lsh.voteSigma over their Hamming weights) is the whole index's, so the votes
 *  of one index come back exactly (exactVotes). */
export interface KeypointVotes {
  weight: Float64Array;
  hist: Uint16Array;
  bins: number;
  /** Each keypoint's burst (burstCounts: the same on every shard); absent in a shard's record of before. */
  burst?: Uint16Array;
}

/** A shard's voter code: query keypoint * VOTER_H + its closest sketch distance to the image (at most 64). */
export const VOTER_H = 128;

/** exp(-h^2/sigma^2) by sketch distance h (lsh.voteSigma; null at 0: every vote the same). */
function hammingWeights(sigma = 0): Float64Array | null {
  return sigma > 0 ? Float64Array.from({ length: 65 }, (_, h) => Math.exp(-(h * h) / (sigma * sigma))) : null;
}

/** The Hamming weights of a keypoint's images, counted by distance (`byH`), summed h ascending. */
function weightedSum(byH: ArrayLike<number>, g: Float64Array): number {
  let sum = 0;
  for (let h = 0; h < byH.length; h++) if (byH[h]) sum += byH[h]! * g[h]!;
  return sum;
}

/** A vote scan's per-image sums for `n` slots (VoteScratch.sums). */
const sumsOf = (n: number) => ({ votes: new Float32Array(n), voting: new Uint16Array(n), burst: new Float32Array(n) });

/**
 * Per-slot arrays a vote scan needs, kept between queries (one per process, grown with the index): a query touches a
 * few thousand of a million images, and allocating, zeroing and ranking arrays of every slot was a large part of a
 * query's CPU at 1M targets (issue 35 round 7). `touched` lists the slots a scan voted for (a sparse vote map over
 * the dense arrays); `clear` zeroes only those. `lastSeen` holds stamps (`gen` + keypoint): a slot is new to a scan
 * when its stamp is below the scan's `gen`, so nothing is refilled between scans.
 */
class VoteScratch {
  /** The per-image sums of a scan (votes, voting keypoints, burst-discounted votes), all made by `sumsOf` and all zeroed
   *  again for the slots a scan touched (`clear`): a new per-image sum goes into sumsOf and is cleared with the rest. */
  sums = sumsOf(0);
  lastSeen = new Int32Array(0);
  posOf = new Int32Array(0);
  touched = new Int32Array(1024);
  nTouched = 0;
  gen = 0;
  private busy = false;

  get votes(): Float32Array {
    return this.sums.votes;
  }
  get voting(): Uint16Array {
    return this.sums.voting;
  }
  get burst(): Float32Array {
    return this.sums.burst;
  }

  /** The scratch for a scan of `slots` images and `keypoints` query keypoints (released by `clear`). */
  take(slots: number, keypoints: number): this {
    if (this.busy) throw new Error('VoteScratch: a vote scan is already running');
    this.busy = true;
    if (slots > this.votes.length) {
      const n = Math.max(slots, Math.ceil(this.votes.length * 1.5));
      this.sums = sumsOf(n);
      this.lastSeen = new Int32Array(n).fill(-1);
      this.posOf = new Int32Array(n);
      this.gen = 0;
    }
    if (this.gen + keypoints + 1 >= 0x7fffffff) {
      this.lastSeen.fill(-1);
      this.gen = 0;
    }
    this.nTouched = 0;
    return this;
  }

  touch(slot: number): void {
    if (this.nTouched === this.touched.length) {
      const nb = new Int32Array(this.nTouched * 2);
      nb.set(this.touched);
      this.touched = nb;
    }
    this.touched[this.nTouched++] = slot;
  }

  /** Zeroes the votes of the slots touched and moves the stamps past this scan's (`keypoints` searched). */
  clear(keypoints: number): void {
    for (const a of Object.values(this.sums)) for (let i = 0; i < this.nTouched; i++) a[this.touched[i]!] = 0;
    this.nTouched = 0;
    this.gen += keypoints + 1;
    this.busy = false;
  }
}
const scratch = new VoteScratch();

/** The votes of one query as its keypoints' collisions come in (scanVotes). */
class VoteScan {
  readonly votes: Float32Array;
  /** Per slot: the query keypoints that voted for it. */
  readonly voting: Uint16Array;
  readonly burst: Float32Array;
  readonly found = new Collisions();
  readonly stats: ScanStats = { scanned: 0, passed: 0, buckets: 0, skippedBuckets: 0 };
  private readonly lastSeen: Int32Array;
  /** The images the current query keypoint votes for, and the weight of its rarest bucket among those votes. */
  private voted = new Int32Array(256);
  /** Per voted image (in voted order) its closest sketch distance for the current keypoint. */
  private bestH = new Int32Array(256);
  private nv = 0;
  private wq = 0;
  private q = 0;
  /** exp(-h^2/sigma^2) by h (null: every vote the same). */
  private readonly g: Float64Array | null;
  private readonly posOf: Int32Array;

  /** A shard's scan (exact): per keypoint its weight and the sketch distances of the images it voted for, and the
   *  (slot, keypoint and distance) votes. */
  readonly kp: KeypointVotes | null;
  readonly voters: Collisions | null;
  /** Images of the current keypoint by closest sketch distance (the weighted parts' sum, and a shard's record). */
  private readonly byH: Int32Array;

  /** The scan's first stamp (VoteScratch.gen) and the current keypoint's. */
  private readonly gen: number;
  private stamp = 0;

  constructor(readonly scratch: VoteScratch, private readonly alive: Uint8Array, private readonly voteH: number, private readonly matchH: number, private readonly bursts: Uint16Array, sigma = 0, keypoints = 0, exact = false) {
    this.votes = scratch.votes;
    this.voting = scratch.voting;
    this.burst = scratch.burst;
    this.lastSeen = scratch.lastSeen;
    this.posOf = scratch.posOf;
    this.gen = scratch.gen;
    this.g = hammingWeights(sigma);
    this.byH = new Int32Array(voteH + 1);
    this.kp = exact ? { weight: new Float64Array(keypoints), hist: new Uint16Array(keypoints * (voteH + 1)), bins: voteH + 1 } : null;
    this.voters = exact ? new Collisions(2) : null;
  }

  startKeypoint(q: number): void {
    this.q = q;
    this.stamp = this.gen + q;
    this.nv = 0;
    this.wq = 0;
  }

  /** Entry e (slot * MAX_KP_PER_IMAGE + keypoint) at sketch distance h from the keypoint, in a bucket of weight w. */
  collide(h: number, e: number, w: number): void {
    const sl = e >>> 11; // e / MAX_KP_PER_IMAGE
    if (!this.alive[sl]) return;
    this.stats.passed++;
    if (h <= this.voteH) {
      if (w > this.wq) this.wq = w;
      const seen = this.lastSeen[sl]!;
      if (seen !== this.stamp) {
        if (seen < this.gen) this.scratch.touch(sl);
        this.lastSeen[sl] = this.stamp;
        if (this.voting[sl]! < 0xffff) this.voting[sl]!++;
        if (this.nv === this.voted.length) {
          const nb = new Int32Array(this.nv * 2);
          nb.set(this.voted);
          this.voted = nb;
          const nh = new Int32Array(this.nv * 2);
          nh.set(this.bestH);
          this.bestH = nh;
        }
        this.posOf[sl] = this.nv;
        this.bestH[this.nv] = h;
        this.voted[this.nv++] = sl;
      } else if (h < this.bestH[this.posOf[sl]!]!) this.bestH[this.posOf[sl]!] = h;
    }
    if (h <= this.matchH) this.found.push(sl, this.q, e & (MAX_KP_PER_IMAGE - 1));
  }

  /**
   * One vote per query keypoint, shared among the images it reaches: a keypoint close to one image only (a
   * distinctive detail) counts fully; one close to many (lettering, logos, texture) says little about any of them.
   * Like the ratio test, it favours unambiguous matches: it moved the right image of every smvs query into the
   * shortlist (two glare-covered photos ranked 44th and 80th by whole votes).
   * With lsh.voteSigma, the images' parts follow how close their sketches are (Hamming embedding's weighting, Jégou
   * et al. 2008: exp(-h^2/sigma^2)): among 100,000 targets a true match's keypoint also reaches chance neighbours
   * near the Hamming bound (2 to 21 images on average for the verified matches of a query, issue 35 round 6);
   * counted alike they took most of its vote, weighted the true neighbour keeps most of it.
   */
  endKeypoint(): void {
    const g = this.g;
    const byH = this.byH;
    if (g || this.kp) {
      byH.fill(0);
      for (let i = 0; i < this.nv; i++) byH[this.bestH[i]!]!++;
    }
    const b = 1 / this.bursts[this.q]!;
    if (!g) {
      const share = this.wq / this.nv;
      for (let i = 0; i < this.nv; i++) {
        this.votes[this.voted[i]!]! += share;
        this.burst[this.voted[i]!]! += share * b;
      }
    } else {
      // the parts' sum counted by sketch distance, h ascending: the same whatever order the images came in, so that
      // the shards' counts added give one index's sum exactly (exactVotes)
      const unit = this.wq / weightedSum(byH, g);
      for (let i = 0; i < this.nv; i++) {
        const part = unit * g[this.bestH[i]!]!;
        this.votes[this.voted[i]!]! += part;
        this.burst[this.voted[i]!]! += part * b;
      }
    }
    if (!this.kp || !this.nv) return;
    this.kp.weight[this.q] = this.wq;
    this.kp.hist.set(byH, this.q * this.kp.bins);
    for (let i = 0; i < this.nv; i++) this.voters!.push(this.voted[i]!, this.q * VOTER_H + this.bestH[i]!);
  }
}

/**
 * What a vote scan met, keypoint by keypoint: each collision it passed to the vote (sketch distance, entry, bucket
 * weight), in scan order. A scan of the same query over more buckets a keypoint (the reprobe pass, lsh.reprobe) starts
 * from it: probeCodes lists a keypoint's buckets likeliest first, so its first `per` buckets are the recorded scan's,
 * and replaying their collisions leaves the vote exactly where scanning them again would (issue 35 round 14: the
 * reprobe pass of an unconfident query scans only its new buckets). Valid for the index generation, query keypoints,
 * bucket cap and Hamming bound it was made with (else the scan starts over).
 */
export interface ScanRecord {
  generation: number;
  n: number;
  per: number;
  maxBucket: number;
  maxH: number;
  /** Keypoint q's collisions are [at[q], at[q + 1]). */
  at: Int32Array;
  h: Uint8Array;
  e: Int32Array;
  w: Float64Array;
  copy: number;
}

class ScanRecorder {
  private h = new Uint8Array(16384);
  private e = new Int32Array(16384);
  private w = new Float64Array(16384);
  private len = 0;
  readonly at: Int32Array;
  constructor(n: number) {
    this.at = new Int32Array(n + 1);
  }
  push(h: number, e: number, w: number): void {
    if (this.len === this.h.length) {
      const grow = <T extends Uint8Array | Int32Array | Float64Array>(a: T, b: T): T => (b.set(a), b);
      this.h = grow(this.h, new Uint8Array(this.len * 2));
      this.e = grow(this.e, new Int32Array(this.len * 2));
      this.w = grow(this.w, new Float64Array(this.len * 2));
    }
    this.h[this.len] = h;
    this.e[this.len] = e;
    this.w[this.len++] = w;
  }
  end(q: number): void {
    this.at[q + 1] = this.len;
  }
  done(base: Omit<ScanRecord, 'at' | 'h' | 'e' | 'w'>): ScanRecord {
    return { ...base, at: this.at, h: this.h.subarray(0, this.len), e: this.e.subarray(0, this.len), w: this.w.subarray(0, this.len) };
  }
}

/**
 * Scans every probed bucket of every query keypoint once, in every segment and the delta: sequential over each
 * bucket's sketches (an entry read only when its sketch passes); an entry whose sketch is within voteHamming votes
 * for its image, within matchHamming it goes to the ratio test.
 */
function scanVotes(index: LshIndex, probes: Uint32Array, sketches: Uint32Array, n: number, p: SearchParams, exact = false, o: { record?: boolean; resume?: ScanRecord } = {}): Votes & { record?: ScanRecord } {
  const per = probes.length / Math.max(1, n);
  const maxBucket = index.params.maxBucket;
  const { segments, delta } = index.buckets;
  const offs = segments.map((s) => s.offsets);
  const parts = segments.map((s) => s.parts);
  const kernels = parts.map((ps) => ps.map(partScan));
  const shifts = segments.map((s) => s.shift);
  const bases = segments.map((s) => s.base);
  const S = segments.length;
  const maxH = Math.max(p.voteHamming, p.matchHamming);
  // a shard of a larger index skips and weighs buckets by the whole index's sizes (LshIndex.useBucketSizes)
  const whole = index.bucketSizes;
  const bursts = burstCounts(probes, per, sketches, n, p.voteHamming);
  const scan = new VoteScan(scratch.take(index.slots, n), index.aliveFlags, p.voteHamming, p.matchHamming, bursts, p.voteSigma, n, exact);
  const st = scan.stats;
  let copy = 0;
  const gen = index.generation;
  const r = o.resume;
  const resume = r && r.generation === gen && r.n === n && r.per <= per && r.maxBucket === maxBucket && r.maxH === maxH ? r : undefined;
  const rec = o.record ? new ScanRecorder(n) : null;
  for (let q = 0; q < n; q++) {
    const q0 = sketches[2 * q]!;
    const q1 = sketches[2 * q + 1]!;
    scan.startKeypoint(q);
    if (resume) for (let i = resume.at[q]!; i < resume.at[q + 1]!; i++) scan.collide(resume.h[i]!, resume.e[i]!, resume.w[i]!);
    for (let k = resume ? resume.per : 0; k < per; k++) {
      const code = probes[q * per + k]!;
      if (k && code === probes[q * per + k - 1]) continue; // a repeated probe (fewer buckets than probes)
      let own = 0;
      for (let s = 0; s < S; s++) own += offs[s]![code + 1]! - offs[s]![code]!;
      const d = delta ? delta.get(code) : undefined;
      if (d) own += d.length / 3;
      const size = whole ? whole[code]! : own;
      if (k === 0 && size + 1 <= maxBucket) copy += Math.log1p(maxBucket / (size + 1)); // its own bucket, the copy in it
      st.buckets++;
      if (!own) continue;
      if (size > maxBucket) {
        st.skippedBuckets++;
        continue;
      }
      st.scanned += own;
      // A collision in a crowded bucket says less (the idf of text retrieval): weight ln(1 + maxBucket/size).
      const w = Math.log1p(maxBucket / size);
      for (let s = 0; s < S; s++) {
        const from = offs[s]![code]!;
        const to = offs[s]![code + 1]!;
        if (from === to) continue;
        const part = code >>> shifts[s]!;
        const data = parts[s]![part]!;
        const o0 = bases[s]![part]!;
        const ids = entriesAt(data);
        const k = kernels[s]![part];
        if (k)
          // the same loop in WebAssembly over the part's own memory (wasm.ts scan: i64.popcnt), the same hits in order
          for (let a = (from - o0) * 8; a < (to - o0) * 8; a += k.cap * 8) {
            const nh = k.scan(a, Math.min((to - o0) * 8, a + k.cap * 8), q0, q1, maxH, k.out);
            const hits = k.hits;
            for (let i = 0; i < nh; i++) {
              const e = data[ids + (hits[2 * i]! >>> 3)]!;
              const h = hits[2 * i + 1]!;
              scan.collide(h, e, w);
              rec?.push(h, e, w);
            }
          }
        else
          for (let j = from - o0; j < to - o0; j++) {
            const h = popcount2(q0 ^ data[2 * j]!, q1 ^ data[2 * j + 1]!);
            if (h <= maxH) {
              scan.collide(h, data[ids + j]!, w);
              rec?.push(h, data[ids + j]!, w);
            }
          }
      }
      if (d)
        for (let j = 0; j < d.length; j += 3) {
          const h = popcount2(q0 ^ d[j + 1]!, q1 ^ d[j + 2]!);
          if (h <= maxH) {
            scan.collide(h, d[j]!, w);
            rec?.push(h, d[j]!, w);
          }
        }
    }
    rec?.end(q);
    scan.endKeypoint();
  }
  if (resume) copy = resume.copy;
  const exactOut = scan.kp ? { ...scan.kp, burst: bursts, voters: scan.voters!.view() } : undefined;
  const record = rec?.done({ generation: gen, n, per, maxBucket, maxH, copy });
  return { votes: scan.votes, burst: scan.burst, copy, voting: scan.voting, found: scan.found.view(), stats: st, exact: exactOut, ...(record ? { record } : {}) };
}

/**
 * Each query keypoint's burst m (Jegou, Douze and Schmid, "On the burstiness of visual elements", CVPR 2009): the
 * number of the query's own keypoints (itself included) in its first probed bucket whose sketches are within
 * voteHamming of its own; its part of every vote counts 1/m in the burst-discounted votes (VotedPass.burst). A photo of
 * repetitive structure (slats, a grid of windows, a vault's ribs) has many near-identical keypoints; each votes for any
 * image with the same texture, and together they made such photos without counterpart the most promising of the
 * gate's null (issue 33 round 6). Counted 1/m, a burst votes as one keypoint. It depends on the query alone (its
 * probes and sketches): the same on every shard of an index. `probes`: n * per codes, a keypoint's own bucket first.
 */
export function burstCounts(probes: ArrayLike<number>, per: number, sketches: ArrayLike<number>, n: number, voteHamming: number): Uint16Array {
  const m = new Uint16Array(n).fill(1);
  // the keypoints by their own bucket; the pairs within one bucket compared by sketch
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => probes[a * per]! - probes[b * per]! || a - b);
  for (let lo = 0; lo < n; ) {
    let hi = lo + 1;
    while (hi < n && probes[order[hi]! * per] === probes[order[lo]! * per]) hi++;
    for (let x = lo; x < hi; x++)
      for (let y = x + 1; y < hi; y++) {
        const i = order[x]!;
        const j = order[y]!;
        if (popcount2(sketches[2 * i]! ^ sketches[2 * j]!, sketches[2 * i + 1]! ^ sketches[2 * j + 1]!) <= voteHamming) {
          m[i]!++;
          m[j]!++;
        }
      }
    lo = hi;
  }
  return m;
}

/** The scan counters of several searches summed (a progressive search's passes). */
export function sumScans(results: { scan: ScanStats }[]): ScanStats {
  const out: ScanStats = { scanned: 0, passed: 0, buckets: 0, skippedBuckets: 0 };
  for (const r of results) for (const k of Object.keys(out) as (keyof ScanStats)[]) out[k] += r.scan[k];
  return out;
}

/** The bits set in two 32-bit words together, for a 64-bit sketch distance: SWAR byte counts of both words summed (a
 *  byte holds at most 16), then one multiply adds the bytes. Same value as four lookups in a 16-bit popcount table,
 *  ~0.8x the CPU of sketchCollisions and ~0.96x of a vote pass at 100,000 targets (issue 35 round 7, same run). */
function popcount2(x: number, y: number): number {
  x -= (x >>> 1) & 0x55555555;
  y -= (y >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  y = (y & 0x33333333) + ((y >>> 2) & 0x33333333);
  return Math.imul(((x + (x >>> 4)) & 0x0f0f0f0f) + ((y + (y >>> 4)) & 0x0f0f0f0f), 0x01010101) >>> 24;
}

/** A growable list of (slot, query kp, target kp) triples (or of `width`-tuples: (slot, query kp) pairs). */
class Collisions {
  private a: Int32Array;
  private len = 0;
  constructor(private readonly width: 2 | 3 = 3) {
    this.a = new Int32Array(width * 16384);
  }
  push(s: number, q: number, kp = 0): void {
    if (this.len + this.width > this.a.length) {
      const nb = new Int32Array(this.a.length * 2);
      nb.set(this.a);
      this.a = nb;
    }
    this.a[this.len++] = s;
    this.a[this.len++] = q;
    if (this.width === 3) this.a[this.len++] = kp;
  }
  view(): Int32Array {
    return this.a.subarray(0, this.len);
  }
}

/**
 * A pass's first step: the votes of the query's keypoints and its shortlist, with each shortlisted image's collisions
 * (the keypoint pairs the index brought together, for the ratio test). Needs the index; its second step
 * (verifyShortlist) needs only the shortlisted images' features. A sharded index (issue 35) votes on each shard and
 * verifies one shortlist of all shards' together.
 */
export interface VotedPass {
  /** Shortlisted slots, most-voted first. */
  shortlist: number[];
  /** Their votes (the index's weights), in shortlist order. */
  votes: number[];
  /** How many query keypoints voted for each, in shortlist order. */
  voting: number[];
  /** The same with each keypoint's part divided by its burst (DirectVotes.burst). */
  burst: number[];
  /** Per shortlisted image: its collisions as (query kp, target kp) pairs. */
  coll: number[][];
  /** The query's sketches and keypoints searched (the re-collision of unverified images reads them). */
  sketches: Uint32Array;
  keypoints: number;
  /** The votes an exact copy would get (DirectVotes.copy). */
  copy: number;
  stats: ScanStats;
  probeMs: number;
  voteMs: number;
  /** What the scan met (VoteOptions.record). */
  record?: ScanRecord;
}

/** A vote pass's options: at most `maxQuery` query keypoints; `exact`: a shard's record of every keypoint's votes
 *  (ShardVotedPass); `probes`: buckets probed a keypoint, when not the index's lsh.multiprobe (the reprobe pass);
 *  `record`: keep what the scan met (VotedPass.record), so that `resume` (a pass of the same query over more buckets)
 *  scans only the buckets it adds. */
export interface VoteOptions {
  maxQuery?: number;
  exact?: boolean;
  probes?: number;
  record?: boolean;
  resume?: ScanRecord;
}

export function votePass(index: LshIndex, v: Prepared, p: SearchParams, mirrored: boolean, o: VoteOptions = {}): VotedPass | ShardVotedPass {
  const { maxQuery = MAX_KP_PER_IMAGE, exact = false } = o;
  const t0 = performance.now();
  const n = Math.min(v.f.count, maxQuery);
  const pr = index.probe(v.vecs, n, o.probes);
  const t1 = performance.now();
  let scanned: Omit<Votes, 'votes' | 'voting' | 'burst'> & { record?: ScanRecord };
  let shortlist: number[];
  let shortVotes: number[];
  let shortVoting: number[];
  let shortBurst: number[];
  try {
    const { votes, voting, burst, ...rest } = scanVotes(index, pr.probes, pr.sketches, n, p, exact, o);
    scanned = rest;
    // ranked among the images voted for only (VoteScratch.touched), not every slot
    shortlist = topK(votes, mirrored ? Math.min(p.shortlist, p.mirrorShortlist) : p.shortlist, index.tieKeys, p.window, scratch.touched.subarray(0, scratch.nTouched));
    shortVotes = shortlist.map((s) => votes[s]!);
    shortVoting = shortlist.map((s) => voting[s]!);
    shortBurst = shortlist.map((s) => burst[s]!);
  } finally {
    scratch.clear(n);
  }
  const { copy, found, stats, exact: kv, record } = scanned;
  const pos = new Map(shortlist.map((s, i) => [s, i]));
  const coll: number[][] = shortlist.map(() => []);
  for (let k = 0; k < found.length; k += 3) {
    const i = pos.get(found[k]!);
    if (i !== undefined) coll[i]!.push(found[k + 1]!, found[k + 2]!);
  }
  const out: VotedPass = { shortlist, votes: shortVotes, voting: shortVoting, burst: shortBurst, coll, sketches: pr.sketches, keypoints: n, copy, stats, probeMs: t1 - t0, voteMs: performance.now() - t1, ...(record ? { record } : {}) };
  if (!kv) return out;
  // each shortlisted image's voting keypoints, ascending (the scan records them keypoint after keypoint)
  const voters: number[][] = shortlist.map(() => []);
  for (let k = 0; k < kv.voters.length; k += 2) {
    const i = pos.get(kv.voters[k]!);
    if (i !== undefined) voters[i]!.push(kv.voters[k + 1]!);
  }
  return { ...out, voters, keypointVotes: { weight: kv.weight, hist: kv.hist, bins: kv.bins, burst: kv.burst } };
}

/** How many times lsh.shortlist a shard reports of its most-voted images (shardVotePass): a shard's own ranking is the
 *  whole index's up to each keypoint's share, which the other shards' images change; the merge ranks the reported
 *  images by their exact votes (exactVotes) and takes lsh.shortlist of all shards'. */
export const SHARD_REPORT = 3;

/** A shard's vote pass (issue 35): its most-voted images (SHARD_REPORT x the shortlist), each with the query keypoints
 *  that voted for it, and what every query keypoint did on the shard (KeypointVotes). The index must have the whole
 *  index's bucket sizes (LshIndex.useBucketSizes) for the votes to add up to one index's. */
export interface ShardVotedPass extends VotedPass {
  /** Per shortlisted image: the query keypoints that voted for it, ascending. */
  voters: number[][];
  keypointVotes: KeypointVotes;
}

export function shardVotePass(index: LshIndex, v: Prepared, p: SearchParams, mirrored: boolean, o: Omit<VoteOptions, 'exact'> = {}): ShardVotedPass {
  const k = (mirrored ? Math.min(p.shortlist, p.mirrorShortlist) : p.shortlist) * SHARD_REPORT;
  const voted = votePass(index, v, { ...p, shortlist: k, mirrorShortlist: k }, mirrored, { ...o, exact: true });
  return voted as ShardVotedPass;
}

/**
 * The exact votes of images voted for on several shards of one index (issue 35): a query keypoint's vote is its largest
 * weight on any shard, shared among the images it voted for on all of them (alike, or with lsh.voteSigma by their
 * Hamming weights: VoteScan.endKeypoint over the whole index), and an image's votes are its voting keypoints' parts,
 * added in keypoint order in float32 as one index adds them. `shards`: every shard's KeypointVotes of one pass;
 * `voters`: each image's voter codes (keypoint * VOTER_H + distance), ascending; `discountBursts`: each part divided by
 * its keypoint's burst (the shards' KeypointVotes.burst), as VotedPass.burst gives them.
 */
export function exactVotes(shards: KeypointVotes[], voters: ArrayLike<number>[], sigma = 0, discountBursts = false): number[] {
  const burst = discountBursts ? shards[0]?.burst : undefined;
  if (discountBursts && !burst) throw new Error('exactVotes: the shards recorded no keypoint bursts');
  const g = hammingWeights(sigma);
  const bins = shards[0]?.bins ?? 1;
  const n = Math.max(0, ...shards.map((s) => s.weight.length));
  const unit = new Float64Array(n);
  const byH = new Int32Array(bins);
  for (let q = 0; q < n; q++) {
    let w = 0;
    byH.fill(0);
    for (const s of shards) {
      if (q >= s.weight.length) continue;
      if (s.weight[q]! > w) w = s.weight[q]!;
      for (let h = 0; h < bins; h++) byH[h] += s.hist[q * bins + h]!;
    }
    let images = 0;
    for (let h = 0; h < bins; h++) images += byH[h]!;
    unit[q] = !images ? 0 : g ? w / weightedSum(byH, g) : w / images;
  }
  return voters.map((list) => {
    let v = 0;
    for (let i = 0; i < list.length; i++) {
      const q = Math.floor(list[i]! / VOTER_H);
      const part = g ? unit[q]! * g[list[i]! % VOTER_H]! : unit[q]!;
      v = Math.fround(v + (burst ? part * (1 / burst[q]!) : part));
    }
    return v;
  });
}

/** The frame check of lsh.recollideVoters' re-matches: minInliers matches whose rotation is within 30 degrees and
 *  scale ratio within a factor 2^0.25 of one match's. Chosen on the development half of dev/pose-check.ts (issue 35
 *  round 8: no true pair's verdict changed at 45/0.5 down to 15/0.25; at 30/0.25, 591 of the 688 pairs that do not
 *  verify are refused before RANSAC), confirmed on the held half (159 true pairs, no verdict changed; 503 of 566 refused). */
export const RECOLLIDE_POSE_CHECK = { rotation: 30, octaves: 0.25 };

/** Too few collisions (keypoint pairs, two numbers each) for an image to be verified: not worth reading its features. */
export const tooFewCollisions = (pairs: ArrayLike<number>, p: Pick<SearchParams, 'minInliers'>): boolean => pairs.length / 2 < Math.max(4, p.minInliers);

/** What a pass's verification reads besides the shortlist: its images' features, whether an image is still indexed,
 *  and a target's sketches (re-collision). */
export interface ShortlistSource {
  load: SlotLoader;
  isAlive(slot: number): boolean;
  sketchesOf(t: Prepared): Uint32Array;
}

/** The sketches of an index's targets, and its images' liveness: an index as a ShortlistSource. */
export function indexSource(index: LshIndex, load: SlotLoader): ShortlistSource {
  return { load, isAlive: (s) => index.isAlive(s), sketchesOf: (t) => targetSketches(index, t) };
}

/** A pass's second step: each shortlisted image verified (ratio test on its collisions, RANSAC, image score); when
 *  nothing is confident, the best-voted that did not verify are matched again against all their keypoints. */
export async function verifyShortlist(src: ShortlistSource, v: Prepared, voted: Pick<VotedPass, 'shortlist' | 'votes' | 'coll' | 'sketches' | 'keypoints'> & { voting?: number[] }, p: SearchParams, mirrored: boolean): Promise<Hit[]> {
  const { shortlist, coll } = voted;
  const hits: Hit[] = [];
  // A shortlisted image's features are read (from the bank) only when it is verified: most of a shortlist has too
  // few collisions to verify (an unmatched source's whole shortlist, often), and the reads were a fifth of a
  // search's CPU on PostgreSQL. An image whose features are gone gets no hit, as when they were all read up front.
  const few = (i: number) => tooFewCollisions(coll[i]!, p);
  const targets = await Promise.all(shortlist.map((slot, i) => (few(i) ? undefined : src.load(slot))));
  shortlist.forEach((slot, i) => {
    const target = targets[i];
    const base = { slot, votes: Math.round(voted.votes[i]! * 10) / 10, mirrored };
    if (few(i)) {
      if (src.isAlive(slot)) hits.push({ ...unverified('too few collisions'), ...base });
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
  // Not in the mirror pass: it looks for a flipped copy, whose collisions are plenty without the crowded buckets.
  if (mirrored || hits.some((h) => h.score >= p.confidentScore)) return hits;
  const again = new Recollision(src, v, voted, targets, p);
  const first = Math.min(p.recollide, hits.length);
  for (let i = 0; i < first; i++) await again.hit(hits, i);
  // Still nothing confident: the images the most query keypoints voted for (lsh.recollideVoters), until one is. Among
  // many targets a lost true match's few voting keypoints (2-4) are outvoted by images that one keypoint reached in a
  // rare, far-probed bucket, whose whole vote it then gives them (issue 35 round 7, dev/recall-at-scale.ts).
  if (!p.recollideVoters || !voted.voting || hits.some((h) => h.score >= p.confidentScore)) return hits;
  const voting = new Map(shortlist.map((slot, i) => [slot, voted.voting![i]!]));
  // (at least two: one keypoint's vote is a lone collision, the lottery ticket that outvoted the true match)
  const rest = [...hits.keys()].slice(first).filter((i) => voting.get(hits[i]!.slot)! >= 2).sort((a, b) => voting.get(hits[b]!.slot)! - voting.get(hits[a]!.slot)! || a - b);
  const checked = new Recollision(src, v, voted, targets, { ...p, poseCheck: p.recollidePoseCheck });
  for (const i of rest.slice(0, p.recollideVoters)) if ((await checked.hit(hits, i)) >= p.confidentScore) break;
  return hits;
}

/** Re-matching a shortlisted image by full sketch (lsh.recollide): every query keypoint against every keypoint of the
 *  image within recollideHamming, then verified; the better of the two verifications is kept. */
class Recollision {
  constructor(
    private readonly src: ShortlistSource,
    private readonly v: Prepared,
    private readonly voted: Pick<VotedPass, 'shortlist' | 'sketches' | 'keypoints'>,
    private readonly targets: (Prepared | undefined)[],
    private readonly p: SearchParams,
  ) {}

  /** Re-matches hits[i] (unless already confident); returns its score after. */
  async hit(hits: Hit[], i: number): Promise<number> {
    const h = hits[i]!;
    const p = this.p;
    if (h.score >= p.confidentScore) return h.score;
    const target = this.targets[this.voted.shortlist.indexOf(h.slot)] ?? (await this.src.load(h.slot));
    if (!target) return h.score;
    const c = sketchCollisions(this.voted.sketches, this.voted.keypoints, this.src.sketchesOf(target), p.recollideHamming);
    if (tooFewCollisions(c, p)) return h.score;
    const r = verifyCandidate(this.v, target, c, p);
    if (r.score > h.score || (r.score === h.score && r.inliers > h.inliers)) hits[i] = { ...r, slot: h.slot, votes: h.votes, mirrored: h.mirrored };
    return hits[i]!.score;
  }
}

/** One pass (the query or its mirror image): votes, shortlist, verification of each shortlisted image. */
async function pass(index: LshIndex, load: SlotLoader, v: Prepared, p: SearchParams, mirrored: boolean, t: { probeMs: number; voteMs: number; verifyMs: number }, scanned: ScanStats, o: VoteOptions = {}) {
  const voted = votePass(index, v, p, mirrored, o);
  Object.assign(scanned, sumScans([{ scan: scanned }, { scan: voted.stats }]));
  const t2 = performance.now();
  const hits = await verifyShortlist(indexSource(index, load), v, voted, p, mirrored);
  t.probeMs += voted.probeMs;
  t.voteMs += voted.voteMs;
  t.verifyMs += performance.now() - t2;
  return { hits, shortlist: voted.shortlist, record: voted.record, votes: { slots: voted.shortlist, votes: voted.votes, burst: voted.burst, keypoints: voted.keypoints, copy: voted.copy } satisfies DirectVotes };
}

/** The sketches of a target's keypoints, computed from its features once per features object and index: kept beside
 *  the features as long as they are held (the handle's prepared features of the images verified last, and its cache
 *  of stored features, lsh.featureCacheMB, which counts them in: featureBytes), since the index holds them only in
 *  bucket order. A re-match (lsh.recollide, recollideVoters) of a target met before then costs no projection (~2.6 ms
 *  for 770 keypoints). */
const sketchesHeld = new WeakMap<Features, { index: LshIndex; sketches: Uint32Array }>();
export function targetSketches(index: LshIndex, t: Prepared): Uint32Array {
  const held = sketchesHeld.get(t.f);
  if (held?.index === index) return held.sketches;
  const sketches = index.sketches(t.vecs, t.f.count);
  sketchesHeld.set(t.f, { index, sketches });
  return sketches;
}

/** (query kp, target kp) pairs whose 64-bit sketches are within maxH, grouped by query keypoint. */
export function sketchCollisions(qs: Uint32Array, nq: number, ts: Uint32Array, maxH: number): Int32Array {
  return wasmSketchCollisions(qs, nq, ts, maxH) ?? sketchCollisionsJs(qs, nq, ts, maxH);
}

/** sketchCollisions in JavaScript: where WebAssembly is missing, and the reference its kernel is tested against. */
export function sketchCollisionsJs(qs: Uint32Array, nq: number, ts: Uint32Array, maxH: number): Int32Array {
  const nt = ts.length / 2;
  let out = new Int32Array(4096);
  let len = 0;
  for (let q = 0; q < nq; q++) {
    const q0 = qs[2 * q]!;
    const q1 = qs[2 * q + 1]!;
    for (let t = 0; t < nt; t++) {
      if (popcount2(q0 ^ ts[2 * t]!, q1 ^ ts[2 * t + 1]!) > maxH) continue;
      if (len + 2 > out.length) {
        const nb = new Int32Array(out.length * 2);
        nb.set(out);
        out = nb;
      }
      out[len++] = q;
      out[len++] = t;
    }
  }
  return out.subarray(0, len);
}

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

/** Whether a plain search (no views' keypoints) of this index has a reprobe pass (lsh.reprobe above lsh.multiprobe). */
export const reprobes = (index: LshIndex, p: Pick<SearchParams, 'reprobe'>, extra?: Features): boolean => !extra?.count && !!p.reprobe && p.reprobe > index.params.probes;

/** The reprobe pass's verification: its shortlist's images re-matched by voters only (lsh.recollideVoters; the
 *  best-voted ones' re-match, lsh.recollide, is the direct pass's: the images it would reach were mostly verified
 *  there already). */
export const reprobeParams = (p: SearchParams): SearchParams => ({ ...p, recollide: 0 });

/**
 * A reprobe pass's shortlist without the images the direct pass verified: the rows of its parallel arrays (`keys`)
 * whose image (ids[i]) is not in `seen`, the other fields as they are. One index's search (its slots) and the shards'
 * merge (global.ts, its item ids) drop them the same way.
 */
export function dropSeen<T extends object>(o: T, ids: readonly number[], seen: Iterable<number>, keys: readonly (keyof T)[]): T {
  const had = new Set(seen);
  const keep = ids.flatMap((s, i) => (had.has(s) ? [] : [i]));
  const out = { ...o };
  for (const k of keys) {
    const a = o[k];
    if (Array.isArray(a)) out[k] = keep.map((i) => a[i]) as T[typeof k];
  }
  return out;
}

/**
 * extra: more keypoints of the query in its own frame (synthesised views, src/stages/match/views.ts): the direct
 * pass then takes the plain keypoints and these together (one vote, one ratio test + RANSAC per image).
 */
export async function search(index: LshIndex, load: SlotLoader, query: Features, p: SearchParams, extra?: Features): Promise<SearchResult> {
  const timings = { probeMs: 0, voteMs: 0, verifyMs: 0 };
  const scan: ScanStats = { scanned: 0, passed: 0, buckets: 0, skippedBuckets: 0 };
  // --- views hook: the view keypoints follow the plain ones (indexes after query.count), no count cap
  const q = prepare(extra?.count ? concatFeatures(query, [query, extra]) : query);
  const direct = await pass(index, load, q, p, false, timings, scan, { maxQuery: extra?.count ? Infinity : MAX_KP_PER_IMAGE, record: reprobes(index, p, extra) });
  const confident = direct.hits.some((h) => h.score >= p.confidentScore);
  // The mirror pass finds left-right flipped copies (SIFT descriptors are not mirror-invariant); run only
  // when the direct pass found nothing confident, since a flipped copy matches nothing directly.
  const mirrorPass = p.mirror && !confident;
  let hits = mergeHits(direct.hits, [], false);
  const shortlist = [...direct.shortlist];
  if (mirrorPass) {
    const m = await pass(index, load, prepare(mirrorFeatures(query)), p, true, timings, scan);
    for (const s of m.shortlist) if (!shortlist.includes(s)) shortlist.push(s);
    hits = mergeHits(direct.hits, m.hits, false);
  }
  // Still nothing confident: the query votes again over more buckets (lsh.reprobe), and the images of that shortlist the
  // direct pass did not verify are verified. Among 100,000 targets a phone's blurred photo of a small object has 0-2
  // keypoints voting for its true target at 24 probes, more at 48 (issue 35 round 13).
  if (reprobes(index, p, extra) && !hits.some((h) => h.score >= p.confidentScore)) {
    const voted = votePass(index, q, p, false, { probes: p.reprobe, resume: direct.record });
    const fresh = dropSeen(voted, voted.shortlist, direct.shortlist, ['shortlist', 'votes', 'coll', 'voting']);
    Object.assign(scan, sumScans([{ scan }, { scan: voted.stats }]));
    timings.probeMs += voted.probeMs;
    timings.voteMs += voted.voteMs;
    const t2 = performance.now();
    hits = mergeHits(hits, await verifyShortlist(indexSource(index, load), q, fresh, reprobeParams(p), false), false);
    timings.verifyMs += performance.now() - t2;
    for (const s of fresh.shortlist) if (!shortlist.includes(s)) shortlist.push(s);
  }
  return { hits, shortlist, mirrorPass, timings, scan, votes: direct.votes };
}


/** Indexes of the k largest values with a positive count, largest first; `among`: only these indexes (each once; the
 *  slots a scan voted for), with the same result as over every index. */
export function topK(v: Float32Array | Uint32Array, k: number, key?: ArrayLike<number>, window?: SlotWindow, among?: ArrayLike<number>): number[] {
  // One pass keeping the k best in a short sorted list: at 100k images most slots get a vote, and sorting
  // them all cost more than the rest of the ranking. Equal votes rank by `key` (the index's tie keys: the
  // target item id, so that the shortlist does not depend on the order the images were loaded in), then by slot: a
  // total order, so the k best do not depend on the order the indexes are met in.
  const before = (a: number, b: number) => v[a]! > v[b]! || (v[a] === v[b] && (key && key[a] !== key[b] ? key[a]! < key[b]! : a < b));
  const best: number[] = [];
  const n = among ? among.length : v.length;
  for (let t = 0; t < n; t++) {
    const i = among ? among[t]! : t;
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
