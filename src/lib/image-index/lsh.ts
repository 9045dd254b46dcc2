// The keypoint index: one hash table over RootSIFT vectors with a 64-bit sketch beside each entry (Hamming
// embedding, Jégou et al. 2008, with random-hyperplane signs for both the bucket and the signature: Charikar 2002),
// probed query-directed (Lv et al. 2007: the query's own bucket and those reached by flipping its least certain
// bits, in order of how likely the flip is). Written by hand because no maintained npm package offers a persistent,
// incremental LSH over binary-packed codes.
//
// Memory: 12 bytes per indexed keypoint (the keypoint's 64-bit sketch and a uint32 entry: slot * 2048 + keypoint), about 9 KB per image at SIFT's ~750 keypoints. The index before issue 35 kept 8 tables of entries and
// sketch halves and the sketches once more (72 bytes per keypoint, ~55 KB an image); one table probed at 24
// buckets, with the full sketch read in the same sequential pass, shortlists as well (bench/RESULTS.md, issue 35).
// The entries sit in segments (sorted by bucket: offsets by bucket + the sketches, then the entries) plus a small
// delta of recent additions; the delta becomes a segment when it grows, and segments of similar size merge
// (log-structured, as Lucene's segments: about log2(entries / a batch's) segments, each with 2^bits offsets and one
// lookup per probed bucket). A segment's entries are held in parts by bucket range, and a merge frees each source
// part once it is copied, so growing the index never holds two copies of what it merges (a million images hold
// ~9 GB; a whole-index merge held at once would need twice that). Removed images are tombstoned and dropped when
// their segment is rewritten. Each part is allocated in a WebAssembly memory of its own (wasm.ts allocPart: the vote
// scan's kernel runs over it in place; plain memory where WebAssembly is missing), freed with the part.
import { DESC_SIZE } from './features.js';
import { mulberry32 } from '../../util/random.js';
import { MEAN_ROOTSIFT } from './mean-rootsift.js';
import { allocPart, partBytes, wasmProject } from './wasm.js';

export interface LshParams {
  /** Bucket width: the table has 2^bits buckets (a prefix of the stored CODE_BITS). */
  bits: number;
  /** Buckets probed per query keypoint: its own and the next most likely ones (lsh.multiprobe). */
  probes: number;
  /** Buckets holding more entries than this are skipped at query time (stop-word buckets). */
  maxBucket: number;
  seed: number;
}

export const MAX_KP_PER_IMAGE = 2048;

/** Bucket bits kept per keypoint in the stored codes. An index uses the first `bits` of them, so the bucket width
 *  can follow the bank's size (lsh.bits: auto) without projecting any descriptor again. */
export const CODE_BITS = 24;

/** Bits of the per-keypoint sketch: a colliding entry only votes when its sketch is close to the query's. */
export const SKETCH_BITS = 64;

/** uint32 words per stored (and indexed) keypoint: the bucket code, then the sketch's two halves. In a segment the
 *  code's place holds the entry (slot * MAX_KP_PER_IMAGE + keypoint): the bucket is where it sits. */
export const STRIDE = 3;

// The seeded PRNG lives in src/util/random.ts (re-exported for the index's users).
export { mulberry32 };

/**
 * Structured random projections (SRHT): the centred vector times random signs, then a Walsh-Hadamard transform:
 * 128 projections for 7*128 additions instead of 128*128 multiply-adds. One round gives the CODE_BITS bucket bits
 * and the SKETCH_BITS sketch bits. Returns the signs (Float32Array(128 * rounds)).
 */
export function makeProjections(seed: number): Float32Array {
  const rnd = mulberry32(seed);
  const rounds = Math.ceil((CODE_BITS + SKETCH_BITS) / DESC_SIZE);
  const signs = new Float32Array(rounds * DESC_SIZE);
  for (let i = 0; i < signs.length; i++) signs[i] = rnd() < 0.5 ? -1 : 1;
  return signs;
}

function fwht(a: Float32Array, o: number): void {
  for (let h = 1; h < DESC_SIZE; h <<= 1)
    for (let i = 0; i < DESC_SIZE; i += h << 1)
      for (let j = i; j < i + h; j++) {
        const x = a[o + j]!;
        const y = a[o + j + h]!;
        a[o + j] = x + y;
        a[o + j + h] = x - y;
      }
}

/** Projects every vector, centred on the mean RootSIFT descriptor of natural photos (balanced bits: see
 *  mean-rootsift.ts): count * (rounds*128) floats. */
export function project(vecs: Float32Array, count: number, signs: Float32Array): Float32Array {
  return wasmProject(vecs, count, signs, MEAN_ROOTSIFT) ?? projectJs(vecs, count, signs);
}

/** project in JavaScript: where WebAssembly is missing, and the reference its kernel (wasm.ts) is tested against. */
export function projectJs(vecs: Float32Array, count: number, signs: Float32Array): Float32Array {
  const rounds = signs.length / DESC_SIZE;
  const nproj = rounds * DESC_SIZE;
  const out = new Float32Array(count * nproj);
  for (let i = 0; i < count; i++) {
    const vo = i * DESC_SIZE;
    for (let r = 0; r < rounds; r++) {
      const o = i * nproj + r * DESC_SIZE;
      for (let j = 0; j < DESC_SIZE; j++) out[o + j] = (vecs[vo + j]! - MEAN_ROOTSIFT[j]!) * signs[r * DESC_SIZE + j]!;
      fwht(out, o);
    }
  }
  return out;
}

/** Stored codes from projections: per keypoint its CODE_BITS bucket code and its sketch (count * STRIDE words). */
export function encode(pr: Float32Array, count: number, nproj: number): Uint32Array {
  const out = new Uint32Array(count * STRIDE);
  for (let i = 0; i < count; i++) {
    const o = i * nproj;
    let c = 0;
    let lo = 0;
    let hi = 0;
    for (let b = 0; b < CODE_BITS; b++) if (pr[o + b]! > 0) c |= 1 << b;
    for (let b = 0; b < 32; b++) {
      if (pr[o + CODE_BITS + b]! > 0) lo |= 1 << b;
      if (pr[o + CODE_BITS + 32 + b]! > 0) hi |= 1 << b;
    }
    out[i * STRIDE] = c >>> 0;
    out[i * STRIDE + 1] = lo >>> 0;
    out[i * STRIDE + 2] = hi >>> 0;
  }
  return out;
}

/** The sketches (count*2 uint32) of stored codes. */
export function sketchesOfCodes(codes: Uint32Array): Uint32Array {
  const n = codes.length / STRIDE;
  const out = new Uint32Array(n * 2);
  for (let i = 0; i < n; i++) {
    out[2 * i] = codes[i * STRIDE + 1]!;
    out[2 * i + 1] = codes[i * STRIDE + 2]!;
  }
  return out;
}

export function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** Least certain bits a probe may flip (more would never be reached within the probes a query affords). */
const FLIPPABLE = 12;

/**
 * The query-directed probe sequence of one keypoint (Lv et al. 2007, section 4): the bucket codes reached by
 * flipping subsets of its FLIPPABLE least certain bits (projections nearest 0), in increasing order of the sum of
 * the flipped projections' squares (the likelier a true neighbour sits across those boundaries, the earlier), by the
 * paper's shift/expand heap over the sorted bits. `out[o..o+probes)` gets the codes, its own bucket first.
 */
class ProbeSequence {
  private readonly bit: Int32Array;
  private readonly z2: Float64Array;
  // heap of (score, mask over sorted positions)
  private hs = new Float64Array(64);
  private hm = new Int32Array(64);
  private hn = 0;
  constructor(private readonly bits: number, private readonly probes: number) {
    this.bit = new Int32Array(Math.min(FLIPPABLE, bits));
    this.z2 = new Float64Array(Math.min(FLIPPABLE, bits));
  }

  fill(pr: Float32Array, o: number, out: Uint32Array, at: number): void {
    const m = this.bit.length;
    let code = 0;
    let have = 0;
    for (let b = 0; b < this.bits; b++) {
      const v = pr[o + b]!;
      if (v > 0) code |= 1 << b;
      const a = v * v;
      if (have < m || a < this.z2[have - 1]!) {
        let k = have < m ? have++ : have - 1;
        while (k > 0 && this.z2[k - 1]! > a) {
          this.z2[k] = this.z2[k - 1]!;
          this.bit[k] = this.bit[k - 1]!;
          k--;
        }
        this.z2[k] = a;
        this.bit[k] = b;
      }
    }
    out[at] = code >>> 0;
    this.hn = 0;
    if (m) this.push(this.z2[0]!, 1);
    for (let p = 1; p < this.probes; p++) {
      if (!this.hn) {
        out[at + p] = out[at + p - 1]!; // fewer distinct buckets than probes: repeat the last (scanVotes skips repeats)
        continue;
      }
      const mask = this.pop();
      let c = code;
      let last = 0;
      for (let k = 0; k < m; k++) if (mask & (1 << k)) (c ^= 1 << this.bit[k]!), (last = k);
      out[at + p] = c >>> 0;
      if (last + 1 < m) {
        const s = this.score(mask);
        this.push(s - this.z2[last]! + this.z2[last + 1]!, (mask & ~(1 << last)) | (1 << (last + 1)));
        this.push(s + this.z2[last + 1]!, mask | (1 << (last + 1)));
      }
    }
  }

  private score(mask: number): number {
    let s = 0;
    for (let k = 0; k < this.z2.length; k++) if (mask & (1 << k)) s += this.z2[k]!;
    return s;
  }

  private push(s: number, mask: number): void {
    if (this.hn === this.hs.length) {
      const a = new Float64Array(this.hn * 2);
      a.set(this.hs);
      this.hs = a;
      const b = new Int32Array(this.hn * 2);
      b.set(this.hm);
      this.hm = b;
    }
    let i = this.hn++;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (this.hs[up]! <= s) break;
      this.hs[i] = this.hs[up]!;
      this.hm[i] = this.hm[up]!;
      i = up;
    }
    this.hs[i] = s;
    this.hm[i] = mask;
  }

  private pop(): number {
    const top = this.hm[0]!;
    const s = this.hs[--this.hn]!;
    const mk = this.hm[this.hn]!;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= this.hn) break;
      if (c + 1 < this.hn && this.hs[c + 1]! < this.hs[c]!) c++;
      if (this.hs[c]! >= s) break;
      this.hs[i] = this.hs[c]!;
      this.hm[i] = this.hm[c]!;
      i = c;
    }
    this.hs[i] = s;
    this.hm[i] = mk;
    return top;
  }
}

/** Probe codes of every keypoint: count * probes bucket codes (`bits` wide), each keypoint's own bucket first. */
export function probeCodes(pr: Float32Array, count: number, bits: number, probes: number, nproj: number): Uint32Array {
  const per = Math.max(1, probes);
  const out = new Uint32Array(count * per);
  const seq = new ProbeSequence(bits, per);
  for (let i = 0; i < count; i++) seq.fill(pr, i * nproj, out, i * per);
  return out;
}

/** Adds one image's stored codes (encode's output) to bucket entry counts of a `bits`-wide table (what an index
 *  holding the image would count in each bucket). */
export function countBuckets(sizes: Uint32Array, codes: Uint32Array, bits: number): void {
  const mask = bits >= 32 ? 0xffffffff : (1 << bits) - 1;
  const n = Math.min(codes.length / STRIDE, MAX_KP_PER_IMAGE);
  for (let i = 0; i < n; i++) sizes[codes[i * STRIDE]! & mask]!++;
}

/** Entries of some images, sorted by bucket: bucket c holds entries offsets[c] .. offsets[c+1] (exclusive), kept in
 *  parts by bucket range (bucket c's part is c >>> shift), from its first bucket's entry `base[part]` on. A part of n
 *  entries holds STRIDE words each: first every entry's sketch (two words, low then high: entry k's at 2k), then every
 *  entry (slot * MAX_KP_PER_IMAGE + keypoint: entry k's at 2n + k). The vote scan reads the sketches in sequence, 8
 *  bytes an entry, and an entry only when its sketch passes (issue 35 round 15: interleaved, the scan read 12 bytes an
 *  entry, and it is bound by memory). Parts let a merge free each source part as soon as it is
 *  copied (no second copy of a whole segment held) and keep each allocation within PART_ENTRIES. */
export interface Segment {
  offsets: Uint32Array;
  parts: Uint32Array[];
  shift: number;
  base: Uint32Array;
  /** Entries of images removed since the segment was written. */
  dead: number;
}

/** Entries a segment's part is made for (48 MB): what a merge holds at most beyond its sources and its result. */
export const PART_ENTRIES = 1 << 22;

/** The word at which a part's entries start, after its sketches (Segment). */
export const entriesAt = (part: Uint32Array): number => (part.length / STRIDE) * 2;

/** Bucket c's entries in a segment: the part holding them and their indexes [from, to) in it (entry k's sketch at
 *  words 2k and 2k + 1, the entry at ids + k). */
export function bucketSpan(s: Segment, c: number): { data: Uint32Array; from: number; to: number; ids: number } {
  const p = c >>> s.shift;
  const data = s.parts[p]!;
  return { data, from: s.offsets[c]! - s.base[p]!, to: s.offsets[c + 1]! - s.base[p]!, ids: entriesAt(data) };
}

/** Entries of a segment (removed images' included). */
const entriesOf = (s: Segment): number => s.offsets[s.offsets.length - 1]!;

/** A segment's frame from its bucket counts (`counts[b + 1]`: bucket b's entries; made prefix sums in place): the
 *  parts' bucket ranges (as many as PART_ENTRIES needs, a power of two) and bases; the parts not allocated yet. */
function segmentFrame(counts: Uint32Array, bits: number, partEntries = PART_ENTRIES): Segment {
  const nb = 1 << bits;
  for (let b = 0; b < nb; b++) counts[b + 1]! += counts[b]!;
  const total = counts[nb]!;
  const partBits = Math.min(bits, Math.max(0, Math.ceil(Math.log2(total / partEntries))));
  const shift = bits - partBits;
  const base = new Uint32Array((1 << partBits) + 1);
  for (let p = 0; p < base.length; p++) base[p] = counts[Math.min(nb, p << shift)]!;
  return { offsets: counts, parts: new Array<Uint32Array>(1 << partBits), shift, base, dead: 0 };
}

const EMPTY = new Uint32Array(0);

/** One image's entries to bucket (from codes(), or read back from a segment). */
interface Pending {
  slot: number;
  count: number;
  codes: Uint32Array;
}

/** The in-memory index. Slots are dense image numbers; the caller maps them to item ids. */
export class LshIndex {
  readonly params: LshParams;
  readonly proj: Float32Array;
  /** The bits of a stored code this index buckets by. */
  private readonly mask: number;
  private segs: Segment[] = [];
  /** Recent additions by bucket: entry, sketch lo, sketch hi, entry, ... */
  private delta = new Map<number, number[]>();
  private deltaCount = 0;
  private alive: Uint8Array = new Uint8Array(1024);
  private kpCount: Uint16Array = new Uint16Array(1024);
  /** Which segment holds each slot's entries (-1: the delta). */
  private segOf: Int32Array = new Int32Array(1024);
  private nSlots = 0;
  /** What equal votes are ranked by (setTieKey; the slot itself by default). */
  private tie: Float64Array = new Float64Array(1024);
  private liveEntries = 0;
  private liveImages = 0;
  /** A shard's view of the whole index's buckets (useBucketSizes); null: its own. */
  private wholeSizes: Uint32Array | null = null;
  private gen = 0;

  /** `partEntries`: entries a segment's part is made for (PART_ENTRIES; tests make it small). */
  constructor(params: LshParams, private readonly partEntries = PART_ENTRIES) {
    if (params.bits > CODE_BITS) throw new Error(`lsh.bits above ${CODE_BITS} would need more than 64 MB of offsets per segment`);
    this.params = params;
    this.proj = makeProjections(params.seed);
    this.mask = params.bits >= 32 ? 0xffffffff : (1 << params.bits) - 1;
  }

  get size(): number {
    return this.liveImages;
  }
  /** Keypoints of the live images. */
  get keypoints(): number {
    return this.liveEntries;
  }
  get slots(): number {
    return this.nSlots;
  }

  /** What is persisted per image: its keypoints' bucket codes and sketches (encode: count * STRIDE words). */
  codes(vecs: Float32Array, count: number): Uint32Array {
    const n = Math.min(count, MAX_KP_PER_IMAGE);
    return encode(project(vecs, n, this.proj), n, this.proj.length);
  }

  /** Query side: probe codes (count * probes) and sketches (count*2) of RootSIFT vectors. */
  probe(vecs: Float32Array, count: number, probes = this.params.probes): { probes: Uint32Array; sketches: Uint32Array } {
    const pr = project(vecs, count, this.proj);
    const nproj = this.proj.length;
    return { probes: probeCodes(pr, count, this.params.bits, probes, nproj), sketches: sketchesOfCodes(encode(pr, count, nproj)) };
  }

  /** The sketches (count*2 uint32) of RootSIFT vectors: what a target's keypoints carry in the index, computed from
   *  its features (the index keeps them only in bucket order). */
  sketches(vecs: Float32Array, count: number): Uint32Array {
    const n = Math.min(count, MAX_KP_PER_IMAGE);
    return sketchesOfCodes(encode(project(vecs, n, this.proj), n, this.proj.length));
  }

  /** Ranks a slot among equal votes by `key` (lower first) instead of by slot: the bank gives each image its item
   *  id, so that a shortlist does not depend on the order images were loaded in. */
  setTieKey(slot: number, key: number): void {
    if (slot < this.nSlots) this.tie[slot] = key;
  }

  /** Each slot's tie key (see setTieKey). */
  get tieKeys(): Float64Array {
    return this.tie;
  }

  /**
   * A shard of a larger index (issue 35): bucket sizes of the whole index (2^bits entry counts, this shard's own
   * entries included), by which a query skips and weighs a bucket as one index of every target would; the shard scans
   * its own entries only. Null: its own sizes.
   */
  useBucketSizes(sizes: Uint32Array | null): void {
    this.gen++;
    if (sizes && sizes.length !== 1 << this.params.bits) throw new Error(`bucket sizes for ${sizes.length} buckets, the index has ${1 << this.params.bits}`);
    this.wholeSizes = sizes;
  }

  get bucketSizes(): Uint32Array | null {
    return this.wholeSizes;
  }

  get aliveFlags(): Uint8Array {
    return this.alive;
  }

  /** The segments and the delta, for inlined scans (read-only). */
  get buckets(): { segments: readonly Segment[]; delta: Map<number, number[]> | null } {
    return { segments: this.segs, delta: this.deltaCount ? this.delta : null };
  }

  isAlive(slot: number): boolean {
    return slot < this.nSlots && this.alive[slot] === 1;
  }

  keypointCount(slot: number): number {
    return this.kpCount[slot]!;
  }

  private grow(): void {
    const n = this.alive.length * 2;
    const g = <T extends Uint8Array | Uint16Array | Int32Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.alive = g(this.alive, (k) => new Uint8Array(k));
    this.kpCount = g(this.kpCount, (k) => new Uint16Array(k));
    this.segOf = g(this.segOf, (k) => new Int32Array(k));
    this.tie = g(this.tie, (k) => new Float64Array(k));
  }

  /** Takes a new slot for an image (the output of codes()); its entries are not bucketed yet. */
  private newSlot(packed: Uint32Array): Pending {
    this.gen++;
    const count = Math.min(packed.length / STRIDE, MAX_KP_PER_IMAGE);
    const slot = this.nSlots++;
    if (slot >= this.alive.length) this.grow();
    this.tie[slot] = slot;
    this.alive[slot] = 1;
    this.kpCount[slot] = count;
    this.segOf[slot] = -1;
    this.liveImages++;
    this.liveEntries += count;
    return { slot, count, codes: packed };
  }

  /** Changes with every change to what a scan meets (images added or removed, segments rewritten, bucket sizes):
   *  a scan recorded at one generation can be resumed at the same one only (searcher.ts ScanRecord). */
  get generation(): number {
    return this.gen;
  }

  /** Adds an image (the output of codes()) under a new slot, which it returns. */
  add(packed: Uint32Array): number {
    const { slot, count, codes } = this.newSlot(packed);
    for (let i = 0; i < count; i++) {
      const c = codes[i * STRIDE]! & this.mask;
      let arr = this.delta.get(c);
      if (!arr) this.delta.set(c, (arr = []));
      arr.push(slot * MAX_KP_PER_IMAGE + i, codes[i * STRIDE + 1]!, codes[i * STRIDE + 2]!);
    }
    this.deltaCount += count;
    if (this.deltaCount > Math.max(50_000, this.liveEntries / 8)) this.merge();
    return slot;
  }

  /**
   * Adds many images at once (loading a bank, a large harvest): small batches go through the delta, large ones
   * straight into a new segment, instead of growing the delta image by image. Returns the slots in order.
   */
  addBatch(list: Uint32Array[]): number[] {
    const total = list.reduce((a, p) => a + p.length / STRIDE, 0);
    if (total < 50_000) return list.map((p) => this.add(p));
    const added = list.map((p) => this.newSlot(p));
    this.merge(added);
    return added.map((a) => a.slot);
  }

  remove(slot: number): void {
    if (slot >= this.nSlots || !this.alive[slot]) return;
    this.gen++;
    this.alive[slot] = 0;
    this.liveImages--;
    const n = this.kpCount[slot]!;
    this.liveEntries -= n;
    const s = this.segOf[slot]!;
    if (s >= 0) {
      const seg = this.segs[s]!;
      seg.dead += n;
      // a segment mostly of removed images is rewritten (its dead entries dropped)
      if (seg.dead > 50_000 && seg.dead > entriesOf(seg) / 4) this.replace([s], this.mergeSegments([seg]));
    }
  }

  /**
   * Folds the delta (and `extra` new images, from addBatch) into a new segment, then merges the newest segments
   * while the newest holds at least half the entries of the one before (log-structured: each entry is copied
   * O(log n) times, and an index holds about log2(entries / a batch's) segments). A merge copies part by part and
   * frees each source part once copied, so it never holds two copies of what it merges (issue 35 round 7: the cap
   * on a segment's size that bounded that copy before left 19 segments at 1M targets, each with 2^bits offsets and
   * a lookup per probed bucket).
   */
  merge(extra: Pending[] = []): void {
    const fromDelta = this.deltaPending();
    const fresh = [...fromDelta, ...extra];
    if (fresh.length) this.replace([], this.freshSegment(fresh), fresh);
    for (;;) {
      const n = this.segs.length;
      if (n < 2) break;
      const a = this.segs[n - 2]!;
      const b = this.segs[n - 1]!;
      if ((entriesOf(b) - b.dead) * 2 < entriesOf(a) - a.dead) break;
      this.replace([n - 2, n - 1], this.mergeSegments([a, b]));
    }
  }

  /**
   * Merges every segment and the delta into one segment, removed images' entries dropped (a force-merge, as
   * Lucene's): each probed bucket is then one run of entries in one place instead of one per segment. The
   * log-structured merges leave an index loaded in batches with ~log2 of its batches' segments (3 at 100,000
   * targets), and the vote scan is bound by memory: every probe starts a read in each (issue 35 round 15: ~250 ns a
   * start; a run of 36 entries costs twice a run of 146 per entry). A scan meets the same entries in the same order
   * after (segments in order, each bucket's entries in segment order, the delta last), so every vote and collision is
   * the same (when no image was removed: the buckets' weights then count live entries alone). Done when a load ends
   * (IndexHandle.refresh: a load that at least doubled the index); copies the index once, freeing each source part as
   * it is copied.
   */
  compact(): void {
    this.merge();
    if (this.segs.length > 1 || this.segs[0]?.dead) this.replace(this.segs.map((_, i) => i), this.mergeSegments([...this.segs]));
  }

  /** The delta's images as pending entries (emptying the delta). */
  private deltaPending(): Pending[] {
    if (!this.deltaCount) return [];
    const bySlot = new Map<number, Pending>();
    for (const [c, arr] of this.delta)
      for (let k = 0; k < arr.length; k += 3) {
        const slot = arr[k]! >>> 11;
        if (!this.alive[slot]) continue;
        let p = bySlot.get(slot);
        if (!p) bySlot.set(slot, (p = { slot, count: this.kpCount[slot]!, codes: new Uint32Array(this.kpCount[slot]! * STRIDE) }));
        const i = arr[k]! & (MAX_KP_PER_IMAGE - 1);
        p.codes[i * STRIDE] = c;
        p.codes[i * STRIDE + 1] = arr[k + 1]!;
        p.codes[i * STRIDE + 2] = arr[k + 2]!;
      }
    this.delta = new Map();
    this.deltaCount = 0;
    return [...bySlot.values()].sort((a, b) => a.slot - b.slot);
  }

  /** New images' entries as one segment (in image order within a bucket). */
  private freshSegment(fresh: Pending[]): Segment {
    const nb = 1 << this.params.bits;
    const mask = this.mask;
    const counts = new Uint32Array(nb + 1);
    for (const x of fresh) for (let i = 0; i < x.count; i++) counts[(x.codes[i * STRIDE]! & mask) + 1]!++;
    const seg = segmentFrame(counts, this.params.bits, this.partEntries);
    for (let p = 0; p < seg.parts.length; p++) seg.parts[p] = allocPart((seg.base[p + 1]! - seg.base[p]!) * STRIDE);
    const pos = counts.slice(0, nb);
    for (const x of fresh)
      for (let i = 0; i < x.count; i++) {
        const b = x.codes[i * STRIDE]! & mask;
        const part = b >>> seg.shift;
        const k = pos[b]!++ - seg.base[part]!;
        const data = seg.parts[part]!;
        data[entriesAt(data) + k] = x.slot * MAX_KP_PER_IMAGE + i;
        data[2 * k] = x.codes[i * STRIDE + 1]!;
        data[2 * k + 1] = x.codes[i * STRIDE + 2]!;
      }
    return seg;
  }

  /** Live entries of segments (in their order within a bucket) as one new segment, built part by part: each source
   *  part is let go (emptied) as soon as every bucket of it is copied, so the sources are gone when it is done. */
  private mergeSegments(olds: Segment[]): Segment {
    const bits = this.params.bits;
    const nb = 1 << bits;
    const alive = this.alive;
    const counts = new Uint32Array(nb + 1);
    for (const s of olds)
      for (let b = 0; b < nb; b++) {
        if (!s.dead) counts[b + 1]! += s.offsets[b + 1]! - s.offsets[b]!;
        else {
          const data = s.parts[b >>> s.shift]!;
          const o0 = s.base[b >>> s.shift]!;
          const ids = entriesAt(data);
          for (let k = s.offsets[b]! - o0; k < s.offsets[b + 1]! - o0; k++) if (alive[data[ids + k]! >>> 11]) counts[b + 1]!++;
        }
      }
    const seg = segmentFrame(counts, bits, this.partEntries);
    const freed = olds.map(() => 0); // per source: its parts let go so far
    for (let p = 0; p < seg.parts.length; p++) {
      const out = (seg.parts[p] = allocPart((seg.base[p + 1]! - seg.base[p]!) * STRIDE));
      const outIds = entriesAt(out);
      const end = Math.min(nb, (p + 1) << seg.shift);
      let o = 0;
      for (let b = p << seg.shift; b < end; b++)
        for (const s of olds) {
          const data = s.parts[b >>> s.shift]!;
          const o0 = s.base[b >>> s.shift]!;
          const ids = entriesAt(data);
          const from = s.offsets[b]! - o0;
          const to = s.offsets[b + 1]! - o0;
          if (!s.dead) {
            out.set(data.subarray(2 * from, 2 * to), 2 * o);
            out.set(data.subarray(ids + from, ids + to), outIds + o);
            o += to - from;
          } else
            for (let k = from; k < to; k++)
              if (alive[data[ids + k]! >>> 11]) {
                out[outIds + o] = data[ids + k]!;
                out[2 * o] = data[2 * k]!;
                out[2 * o + 1] = data[2 * k + 1]!;
                o++;
              }
        }
      olds.forEach((s, i) => {
        for (; freed[i]! < s.parts.length && (freed[i]! + 1) << s.shift <= end; freed[i]!++) s.parts[freed[i]!] = EMPTY;
      });
    }
    return seg;
  }

  /** Puts `seg` in the place of segments `from` (indexes; at the end when none), and moves their slots and the
   *  `fresh` images' to it. */
  private replace(from: number[], seg: Segment, fresh: Pending[] = []): void {
    this.gen++;
    const at = from.length ? Math.min(...from) : this.segs.length;
    const remap = new Int32Array(this.segs.length);
    const segs: Segment[] = [];
    this.segs.forEach((s, i) => {
      if (i === at) segs.push(seg);
      if (from.includes(i)) remap[i] = at;
      else remap[i] = segs.push(s) - 1;
    });
    if (at === this.segs.length) segs.push(seg);
    // indexes after the replaced ones move down; `at` is below all of them
    for (let s = 0; s < this.nSlots; s++) {
      const o = this.segOf[s]!;
      if (o >= 0) this.segOf[s] = remap[o]!;
    }
    for (const x of fresh) this.segOf[x.slot] = at;
    this.segs = segs;
  }

  /** Bytes held by the index (segments, the delta at ~40 bytes an entry, the per-slot arrays). */
  memoryBytes(): number {
    let b = this.alive.byteLength + this.kpCount.byteLength + this.segOf.byteLength + this.tie.byteLength;
    for (const s of this.segs) b += s.offsets.byteLength + s.base.byteLength + s.parts.reduce((a, d) => a + partBytes(d), 0);
    return b + this.deltaCount * 40 + this.delta.size * 64;
  }
}
