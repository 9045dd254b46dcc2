// REFERENCE (issue 35): the index as it was before the one-table codes (main at b0cf5ac), kept so that bench:index
// measures today's query CPU and memory beside the new index in the same run. Not used by the product.
// The keypoint index: random-hyperplane LSH (sign of random projections, Charikar 2002) over RootSIFT
// vectors, L tables of k bits, with multi-probe queries (Lv et al. 2007: also probe the buckets reached by
// flipping the least certain bits, so fewer tables reach the same recall). Written by hand because no
// maintained npm package offers a persistent, incremental LSH over binary-packed codes.
//
// Memory: every indexed keypoint costs 8 bytes per table plus 8: a uint32 entry (slot * 2048 + keypoint)
// and, next to it, one 32-bit half of the keypoint's 64-bit sketch (a Hamming embedding, Jégou et al.
// 2008; tables alternate halves), then the full sketch per image. The half beside the entry makes the
// query scan sequential: the half's distance is a lower bound of the full one, so only entries that pass
// it look up the full sketch (before, every colliding entry did: a cache miss each, 95 ns at 10k images).
// Compact CSR arrays per table (offsets by bucket + entries + tags) plus a small delta for recent
// additions, merged when it grows past a quarter of the base. Removed images are tombstoned and dropped
// at merge.
import { DESC_SIZE } from '../../src/lib/image-index/index.js';
import { mulberry32 } from '../../src/util/random.js';
import { MEAN_ROOTSIFT } from '../../src/lib/image-index/index.js';

export interface LshParams {
  tables: number;
  bits: number;
  probes: number;
  /** Buckets holding more entries than this are skipped at query time (stop-word buckets). */
  maxBucket: number;
  seed: number;
}

export const MAX_KP_PER_IMAGE = 2048;

/** Projections kept per table in the stored codes. An index uses the first `bits` of them, so the bucket
 *  width can follow the bank's size (lsh.bits: auto) without projecting any descriptor again. */
export const CODE_BITS = 24;

// The seeded PRNG lives in src/util/random.ts (re-exported for the index's users).
export { mulberry32 };

/** Bits of the per-keypoint sketch: a colliding entry only votes when its sketch is close to the query's.
 *  Table t keeps half (t & 1) of it, 32 bits, beside each entry. */
export const SKETCH_BITS = 64;

/**
 * Structured random projections (SRHT): each round multiplies the centred vector by random signs and a
 * Walsh-Hadamard transform, 128 projections for 7*128 additions instead of 128*128 multiply-adds.
 * Returns the sign patterns, one Float32Array(128) per round.
 */
export function makeProjections(p: LshParams): Float32Array {
  const rnd = mulberry32(p.seed);
  const rounds = Math.ceil((p.tables * CODE_BITS + SKETCH_BITS) / DESC_SIZE);
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

/** The sketches (count*2 uint32) from projections. */
export function sketchesFromProjections(pr: Float32Array, count: number, p: LshParams, nproj: number): Uint32Array {
  const out = new Uint32Array(count * 2);
  const base = p.tables * CODE_BITS;
  for (let i = 0; i < count; i++) {
    let lo = 0;
    let hi = 0;
    for (let b = 0; b < 32; b++) {
      if (pr[i * nproj + base + b]! > 0) lo |= 1 << b;
      if (pr[i * nproj + base + 32 + b]! > 0) hi |= 1 << b;
    }
    out[i * 2] = lo >>> 0;
    out[i * 2 + 1] = hi >>> 0;
  }
  return out;
}

export function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** Stored codes (count*tables uint32, CODE_BITS bits each) from projections. */
export function codesFromProjections(pr: Float32Array, count: number, p: LshParams, nproj: number): Uint32Array {
  const codes = new Uint32Array(count * p.tables);
  for (let i = 0; i < count; i++)
    for (let t = 0; t < p.tables; t++) {
      let c = 0;
      const o = i * nproj + t * CODE_BITS;
      for (let b = 0; b < CODE_BITS; b++) if (pr[o + b]! > 0) c |= 1 << b;
      codes[i * p.tables + t] = c >>> 0;
    }
  return codes;
}

/** Probe codes per keypoint and table: base code, then the codes with one of the `probes` least certain bits
 *  flipped (the bits whose projections lie closest to 0). Layout count*tables*(1+probes). */
export function probeCodes(pr: Float32Array, count: number, p: LshParams, nproj: number): Uint32Array {
  const per = 1 + p.probes;
  const np = Math.min(p.probes, p.bits);
  const out = new Uint32Array(count * p.tables * per);
  // The np smallest |projection| bits by insertion into a short sorted list (np is 1-3: no sort needed).
  const bestBit = new Int32Array(np);
  const bestAbs = new Float64Array(np);
  for (let i = 0; i < count; i++)
    for (let t = 0; t < p.tables; t++) {
      const o = i * nproj + t * CODE_BITS;
      let c = 0;
      let have = 0;
      for (let b = 0; b < p.bits; b++) {
        const v = pr[o + b]!;
        if (v > 0) c |= 1 << b;
        const a = v < 0 ? -v : v;
        if (have < np || a < bestAbs[have - 1]!) {
          let k = have < np ? have++ : have - 1;
          while (k > 0 && bestAbs[k - 1]! > a) {
            bestAbs[k] = bestAbs[k - 1]!;
            bestBit[k] = bestBit[k - 1]!;
            k--;
          }
          bestAbs[k] = a;
          bestBit[k] = b;
        }
      }
      const base = (i * p.tables + t) * per;
      out[base] = c >>> 0;
      for (let k = 0; k < np; k++) out[base + 1 + k] = (c ^ (1 << bestBit[k]!)) >>> 0;
    }
  return out;
}

class Table {
  offsets: Uint32Array;
  entries: Uint32Array;
  /** tags[k]: the 32-bit sketch half of entries[k]. */
  tags: Uint32Array;
  /** Recent additions by bucket: entry, tag, entry, tag, ... */
  delta = new Map<number, number[]>();
  deltaCount = 0;
  constructor(bits: number) {
    this.offsets = new Uint32Array((1 << bits) + 1);
    this.entries = new Uint32Array(0);
    this.tags = new Uint32Array(0);
  }
}

/** The in-memory index. Slots are dense image numbers; the caller maps them to item ids. */
export class LshIndex {
  readonly params: LshParams;
  readonly proj: Float32Array;
  /** The bits of a stored code this index buckets by. */
  private readonly mask: number;
  private tables: Table[];
  private alive: Uint8Array = new Uint8Array(1024);
  private kpCount: Uint16Array = new Uint16Array(1024);
  private nSlots = 0;
  /** Every slot's full sketches in one array (slot s at sketchOff[s], 2 words per keypoint): the query
   *  scan looks one up per candidate entry, and one flat array costs one cache miss where an array of
   *  per-image arrays cost three dependent loads. */
  private pool: Uint32Array = new Uint32Array(1 << 16);
  private poolLen = 0;
  private sketchOff: Uint32Array = new Uint32Array(1024);
  /** What equal votes are ranked by (setTieKey; the slot itself by default). */
  private tie: Float64Array = new Float64Array(1024);
  private deadEntries = 0;
  private liveEntries = 0;
  private liveImages = 0;

  constructor(params: LshParams) {
    if (params.bits > CODE_BITS) throw new Error(`lsh.bits above ${CODE_BITS} would need more than 64 MB of offsets per table`);
    this.params = params;
    this.proj = makeProjections(params);
    this.mask = params.bits >= 32 ? 0xffffffff : (1 << params.bits) - 1;
    this.tables = Array.from({ length: params.tables }, () => new Table(params.bits));
  }

  get size(): number {
    return this.liveImages;
  }
  /** Keypoints of the live images (each has one entry per table). */
  get keypoints(): number {
    return this.liveEntries / this.params.tables;
  }
  get slots(): number {
    return this.nSlots;
  }

  /** What is persisted per image: its keypoints' bucket codes (count*tables) then sketches (count*2),
   *  one Uint32Array of count*(tables+2). */
  codes(vecs: Float32Array, count: number): Uint32Array {
    const n = Math.min(count, MAX_KP_PER_IMAGE);
    const nproj = this.proj.length;
    const pr = project(vecs, n, this.proj);
    const L = this.params.tables;
    const out = new Uint32Array(n * (L + 2));
    out.set(codesFromProjections(pr, n, this.params, nproj), 0);
    out.set(sketchesFromProjections(pr, n, this.params, nproj), n * L);
    return out;
  }

  /** The full 64-bit sketches of a slot (count*2 uint32). */
  sketch(slot: number): Uint32Array {
    if (!this.alive[slot]) return new Uint32Array(0);
    const o = this.sketchOff[slot]!;
    return this.pool.subarray(o, o + 2 * this.kpCount[slot]!);
  }

  /** Ranks a slot among equal votes by `key` (lower first) instead of by slot: the bank gives each image its item
   *  id, so that a shortlist does not depend on the order images were loaded in (workers load them as their
   *  features jobs commit). */
  setTieKey(slot: number, key: number): void {
    if (slot < this.nSlots) this.tie[slot] = key;
  }

  /** Each slot's tie key (see setTieKey). */
  get tieKeys(): Float64Array {
    return this.tie;
  }

  /** The flat sketch array and each slot's offset in it (read-only use in the query scan). */
  get sketchPool(): { pool: Uint32Array; offsets: Uint32Array } {
    return { pool: this.pool, offsets: this.sketchOff };
  }

  /** Takes a new slot for an image (the output of codes()); its entries are not in the tables yet. */
  private newSlot(packed: Uint32Array): { slot: number; count: number; codes: Uint32Array; sketches: Uint32Array } {
    const L = this.params.tables;
    const n0 = packed.length / (L + 2);
    const codes = packed.subarray(0, n0 * L);
    const count = Math.min(n0, MAX_KP_PER_IMAGE);
    const sketches = packed.subarray(n0 * L, n0 * L + 2 * count);
    const slot = this.nSlots++;
    if (slot >= this.alive.length) {
      const a = new Uint8Array(this.alive.length * 2);
      a.set(this.alive);
      this.alive = a;
      const k = new Uint16Array(this.kpCount.length * 2);
      k.set(this.kpCount);
      this.kpCount = k;
      const o = new Uint32Array(this.sketchOff.length * 2);
      o.set(this.sketchOff);
      this.sketchOff = o;
      const t = new Float64Array(this.tie.length * 2);
      t.set(this.tie);
      this.tie = t;
    }
    this.tie[slot] = slot;
    if (this.poolLen + sketches.length > this.pool.length) {
      const g = new Uint32Array(Math.max(this.poolLen + sketches.length, Math.ceil(this.pool.length * 1.5)));
      g.set(this.pool.subarray(0, this.poolLen));
      this.pool = g;
    }
    this.pool.set(sketches, this.poolLen);
    this.sketchOff[slot] = this.poolLen;
    this.poolLen += sketches.length;
    this.alive[slot] = 1;
    this.kpCount[slot] = count;
    this.liveImages++;
    this.liveEntries += count * L;
    return { slot, count, codes, sketches };
  }

  /** Adds an image (the output of codes()) under a new slot, which it returns. */
  add(packed: Uint32Array): number {
    const { slot, count, codes, sketches } = this.newSlot(packed);
    const L = this.params.tables;
    for (let t = 0; t < L; t++) {
      const tab = this.tables[t]!;
      for (let i = 0; i < count; i++) {
        const c = codes[i * L + t]! & this.mask;
        let arr = tab.delta.get(c);
        if (!arr) tab.delta.set(c, (arr = []));
        arr.push(slot * MAX_KP_PER_IMAGE + i, sketches[2 * i + (t & 1)]!);
      }
      tab.deltaCount += count;
    }
    if (this.tables[0]!.deltaCount > Math.max(50_000, this.tables[0]!.entries.length / 4)) this.merge();
    return slot;
  }

  /**
   * Adds many images at once (loading a bank, a large harvest): small batches go through the delta, large
   * ones straight into the compact arrays with one merge, instead of growing (and re-merging) the delta
   * image by image. Returns the slots in order.
   */
  addBatch(list: Uint32Array[]): number[] {
    const L = this.params.tables;
    const total = list.reduce((a, p) => a + p.length / (L + 2), 0);
    if (total < Math.max(50_000, this.tables[0]!.entries.length / 4)) return list.map((p) => this.add(p));
    const added = list.map((p) => this.newSlot(p));
    this.merge(added);
    return added.map((a) => a.slot);
  }

  remove(slot: number): void {
    if (slot >= this.nSlots || !this.alive[slot]) return;
    this.alive[slot] = 0;
    this.liveImages--;
    const n = this.kpCount[slot]! * this.params.tables;
    this.liveEntries -= n;
    this.deadEntries += n;
    if (this.deadEntries > this.liveEntries / 4 && this.deadEntries > 50_000) this.merge();
  }

  isAlive(slot: number): boolean {
    return slot < this.nSlots && this.alive[slot] === 1;
  }

  keypointCount(slot: number): number {
    return this.kpCount[slot]!;
  }

  /** Folds the deltas (and `extra` new images, from addBatch) into the compact arrays and drops removed images. */
  merge(extra: { slot: number; count: number; codes: Uint32Array; sketches: Uint32Array }[] = []): void {
    const nb = 1 << this.params.bits;
    const L = this.params.tables;
    const alive = this.alive;
    const live = (e: number) => alive[e >>> 11] === 1; // e / MAX_KP_PER_IMAGE
    this.tables.forEach((tab, t) => {
      const { offsets, entries, tags, delta } = tab;
      const counts = new Uint32Array(nb + 1);
      for (let b = 0; b < nb; b++) for (let k = offsets[b]!; k < offsets[b + 1]!; k++) if (live(entries[k]!)) counts[b + 1]!++;
      for (const [c, arr] of delta) for (let k = 0; k < arr.length; k += 2) if (live(arr[k]!)) counts[c + 1]!++;
      const mask = this.mask;
      for (const x of extra) for (let i = 0; i < x.count; i++) counts[(x.codes[i * L + t]! & mask) + 1]!++;
      for (let b = 0; b < nb; b++) counts[b + 1]! += counts[b]!;
      const out = new Uint32Array(counts[nb]!);
      const outTags = new Uint32Array(counts[nb]!);
      const pos = counts.slice(0, nb);
      for (let b = 0; b < nb; b++)
        for (let k = offsets[b]!; k < offsets[b + 1]!; k++) {
          const e = entries[k]!;
          if (live(e)) (outTags[pos[b]!] = tags[k]!), (out[pos[b]!++] = e);
        }
      for (const [c, arr] of delta)
        for (let k = 0; k < arr.length; k += 2) if (live(arr[k]!)) (outTags[pos[c]!] = arr[k + 1]!), (out[pos[c]!++] = arr[k]!);
      for (const x of extra)
        for (let i = 0; i < x.count; i++) {
          const c = x.codes[i * L + t]! & mask;
          outTags[pos[c]!] = x.sketches[2 * i + (t & 1)]!;
          out[pos[c]!++] = x.slot * MAX_KP_PER_IMAGE + i;
        }
      tab.offsets = counts;
      tab.entries = out;
      tab.tags = outTags;
      tab.delta = new Map();
      tab.deltaCount = 0;
    });
    this.deadEntries = 0;
    this.compactSketches();
  }

  /** Drops removed images' sketches from the pool (slot numbers stay). */
  private compactSketches(): void {
    let live = 0;
    for (let s = 0; s < this.nSlots; s++) if (this.alive[s]) live += 2 * this.kpCount[s]!;
    if (live === this.poolLen && this.pool.length <= Math.max(1 << 16, live * 1.5)) return;
    const out = new Uint32Array(Math.max(1 << 16, live));
    let o = 0;
    for (let s = 0; s < this.nSlots; s++) {
      if (!this.alive[s]) continue;
      const n = 2 * this.kpCount[s]!;
      out.set(this.pool.subarray(this.sketchOff[s]!, this.sketchOff[s]! + n), o);
      this.sketchOff[s] = o;
      o += n;
    }
    this.pool = out;
    this.poolLen = o;
  }

  /** The arrays of table t, for inlined scans: entries/tags[offsets[c]..offsets[c+1]) plus delta.get(c). */
  table(t: number): { offsets: Uint32Array; entries: Uint32Array; tags: Uint32Array; delta: Map<number, number[]> } {
    return this.tables[t]!;
  }

  get aliveFlags(): Uint8Array {
    return this.alive;
  }

  /** Query side: probe codes (count*tables*(1+probes)) and sketches (count*2) of RootSIFT vectors. */
  probe(vecs: Float32Array, count: number): { probes: Uint32Array; sketches: Uint32Array } {
    const pr = project(vecs, count, this.proj);
    const nproj = this.proj.length;
    return { probes: probeCodes(pr, count, this.params, nproj), sketches: sketchesFromProjections(pr, count, this.params, nproj) };
  }

  /** Bytes held by the index arrays (offsets, entries, deltas at ~8 bytes per entry plus per-bucket overhead). */
  memoryBytes(): number {
    let b = this.alive.byteLength + this.kpCount.byteLength;
    b += this.pool.byteLength + this.sketchOff.byteLength;
    for (const t of this.tables)
      b += t.offsets.byteLength + t.entries.byteLength + t.tags.byteLength + t.deltaCount * 16 + t.delta.size * 64;
    return b;
  }
}
