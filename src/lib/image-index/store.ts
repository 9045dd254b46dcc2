// The bank's index in memory: loaded from the lsh_codes rows (no projection work on restart), kept in step
// with them (rows added since, rows gone), and the mapping slot -> target item. One handle per open bank.
import type { Bank, IdRange } from '../../bank/index.js';
import { FeaturesRepo, LshRepo, type LshRow, type StoredBucketCounts, type TargetRange } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../util/log.js';
import type { Progress } from '../../util/progress.js';
import { CODE_BITS, LshIndex, SKETCH_BITS, countBuckets, type LshParams } from './lsh.js';
import { RECOLLIDE_POSE_CHECK, prepare, type SearchParams } from './searcher.js';
import type { Prepared } from './verify.js';
import type { Features } from '../sift/index.js';
import { LRUCache } from 'lru-cache';

/** Prepared (RootSIFT, 4x the stored bytes) features held for verification: the last images verified. */
const PREPARED_HELD = 256;

/** The bucket width for an index of `keypoints` keypoints: about 128 entries per bucket on average (one table, whose
 *  entries carry their full sketch: a bucket is scanned in one sequential pass), never fewer than 12 bits (small
 *  banks) nor more than CODE_BITS. */
export function autoBits(keypoints: number): number {
  return Math.max(12, Math.min(CODE_BITS, Math.round(Math.log2(Math.max(1, keypoints) / 128))));
}

/** Images an index of `loaded` images adds at once when loading rows: 5,000 or half the images loaded so far,
 *  whichever is more, up to 20,000 (~180 MB of codes, held twice while they become a segment: the largest transient of
 *  a load since a merge frees its sources part by part; 50,000 before issue 35 round 7). */
export const loadBatch = (loaded: number): number => Math.min(20_000, Math.max(5000, loaded / 2));

/** Index parameters; with lsh.bits 'auto' the width follows the number of keypoints indexed. */
export function lshParams(config: Config, keypoints = 0): LshParams {
  const l = config.lsh;
  const bits = l.bits === 'auto' ? autoBits(keypoints) : l.bits;
  return { bits, probes: l.multiprobe, maxBucket: l.maxBucket, seed: l.seed };
}

export function searchParams(config: Config): SearchParams {
  return {
    ratio: config.match.ratio,
    ransacThreshold: config.match.ransacThreshold,
    ransacIterations: config.match.ransacIterations,
    minInliers: config.match.minInliers,
    farDistance: config.lsh.farDistance,
    epipolar: config.match.epipolar,
    shortlist: config.lsh.shortlist,
    mirror: config.lsh.mirror,
    mirrorShortlist: config.lsh.mirrorShortlist,
    confidentScore: config.lsh.confidentScore,
    voteHamming: config.lsh.voteHamming,
    voteSigma: config.lsh.voteSigma,
    matchHamming: config.lsh.matchHamming,
    recollide: config.lsh.recollide,
    recollideHamming: config.lsh.recollideHamming,
    recollideVoters: config.lsh.recollideVoters,
    reprobe: config.lsh.reprobe,
    recollidePoseCheck: RECOLLIDE_POSE_CHECK,
  };
}

/** What the stored codes depend on: a change means re-encoding them. (Not the bucket width: codes keep CODE_BITS
 *  bits and an index uses a prefix; not the probes.) he-v1: one table's code and the sketch, 12 bytes a keypoint
 *  (before issue 35, srht-v3: 8 tables' codes and the sketch, 40 bytes). */
export function paramsKey(p: Pick<LshParams, 'seed'>): string {
  return `he-v1:c${CODE_BITS}:k${SKETCH_BITS}:s${p.seed}`;
}

/**
 * Per slot: the row, item and image it stands for and when the item was harvested, in typed arrays (56 bytes an
 * image; objects with a hex sha string cost ~250). Slots are taken in row id order (rows load in id order), so a
 * row's slot is found by binary search.
 */
class SlotTable {
  rowId = new Float64Array(1024);
  itemId = new Float64Array(1024);
  at = new Float64Array(1024);
  sha = new Uint8Array(1024 * 32);
  length = 0;

  set(slot: number, row: { id: number; itemId: number; imageSha256: string; harvestedAt: string | null }): void {
    if (slot >= this.rowId.length) this.grow(Math.max(slot + 1, this.rowId.length * 2));
    this.rowId[slot] = row.id;
    this.itemId[slot] = row.itemId;
    this.at[slot] = row.harvestedAt ? Date.parse(row.harvestedAt) : NaN;
    this.sha.set(Buffer.from(row.imageSha256, 'hex'), slot * 32);
    this.length = Math.max(this.length, slot + 1);
  }

  shaOf(slot: number): string {
    return Buffer.from(this.sha.buffer, this.sha.byteOffset + slot * 32, 32).toString('hex');
  }

  /** The slot of a row id, or -1. */
  slotOfRow(rowId: number): number {
    let lo = 0;
    let hi = this.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = this.rowId[mid]!;
      if (v === rowId) return mid;
      if (v < rowId) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  get bytes(): number {
    return this.rowId.byteLength + this.itemId.byteLength + this.at.byteLength + this.sha.byteLength;
  }

  private grow(n: number): void {
    const f = (a: Float64Array) => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    this.rowId = f(this.rowId);
    this.itemId = f(this.itemId);
    this.at = f(this.at);
    const s = new Uint8Array(n * 32);
    s.set(this.sha);
    this.sha = s;
  }
}

interface SlotInfo {
  rowId: number;
  itemId: number;
  sha: string;
}

export class IndexHandle {
  readonly index: LshIndex;
  readonly key: string;
  private readonly table = new SlotTable();
  /** Live rows held (slots not removed). */
  private held = 0;
  /** Rows not loaded because their target was harvested before `floor` (lsh.window). */
  private skippedRows = new Set<number>();
  private loadedUpTo = 0;
  private sig = { count: -1, maxId: -1 };
  /** Rows of its codes appeared below what it loaded (re-encoded in place meanwhile): openIndex loads it anew. */
  stale = false;
  /** Verification's reads, least recently used dropped (lru-cache): the prepared (RootSIFT) features of the last PREPARED_HELD images, and
   *  the stored features of as many images as `cacheBytes` holds (preparing them again costs ~0.2 ms; reading them
   *  from the bank, a round trip and ~1 ms of CPU on each side). */
  private readonly prepared: LRUCache<string, Prepared>;
  private readonly stored: LRUCache<string, Features> | null;
  /** Targets' features with their own synthesised views (two-sided views, match.views.targetViews), keyed by image
   *  and views; within a quarter of `cacheBytes` (a target's views cost ~1 s to compute, ~1 MB to hold; archive
   *  matching's dense views ~4 s and ~5 MB, and src/stages/match/views.ts keeps their kd-forest beside them while they are held). */
  readonly viewed: LRUCache<string, Features> | null;
  /** Reads of a target's features for verification: answered from memory, and from the bank. */
  readonly reads = { memory: 0, bank: 0 };

  /** `floor` (epoch ms): targets harvested before it are not held (lsh.window's bound on memory); -Infinity: all.
   *  `range`: only the targets of these item ids (one shard of the index); absent: every target. */
  constructor(
    readonly bank: Bank,
    params: LshParams,
    public floor = -Infinity,
    readonly cacheBytes = 0,
    private readonly preparedHeld = PREPARED_HELD,
    readonly range?: TargetRange,
  ) {
    this.index = new LshIndex(params);
    this.key = paramsKey(params);
    this.prepared = new LRUCache({ max: Math.max(1, preparedHeld) });
    this.stored = cacheBytes > 0 ? new LRUCache({ maxSize: cacheBytes, sizeCalculation: featureBytes }) : null;
    this.viewed = cacheBytes >= 4 ? new LRUCache({ maxSize: Math.floor(cacheBytes / 4), sizeCalculation: featureBytes }) : null;
  }

  /** Each slot's harvest time (epoch ms; NaN when unknown), for lsh.window. */
  get harvestedAt(): ArrayLike<number> {
    return this.table.at;
  }

  /** Drops the targets harvested before `floor` from memory, and loads none of them from now on. */
  evictBefore(floor: number): number {
    if (!(floor > this.floor)) return 0;
    this.floor = floor;
    let n = 0;
    for (let slot = 0; slot < this.table.length; slot++) {
      if (this.index.isAlive(slot) && this.table.at[slot]! < floor) {
        this.index.remove(slot);
        this.skippedRows.add(this.table.rowId[slot]!);
        this.held--;
        n++;
      }
    }
    return n;
  }

  /** Brings the in-memory index in step with the rows (cheap when nothing changed). */
  async refresh(): Promise<void> {
    const repo = this.bank.repo(LshRepo);
    const sig = await repo.signature(this.range, this.key);
    if (sig.count === this.sig.count && sig.maxId === this.sig.maxId) return;
    // In batches (loadBatch): a bank opened at 100k images loads in a few segments instead of growing the delta image
    // by image.
    let batch: LshRow[] = [];
    const flush = () => {
      const slots = this.index.addBatch(batch.map((r) => r.codes));
      batch.forEach((row, i) => {
        this.table.set(slots[i]!, row);
        this.index.setTieKey(slots[i]!, row.itemId);
        this.loadedUpTo = Math.max(this.loadedUpTo, row.id);
      });
      this.held += batch.length;
      batch = [];
    };
    const before = this.index.keypoints;
    for await (const row of repo.rowsAfter(this.loadedUpTo, this.range, this.key)) {
      if (row.harvestedAt && Date.parse(row.harvestedAt) < this.floor) {
        this.skippedRows.add(row.id);
        this.loadedUpTo = row.id;
        continue;
      }
      if (batch.push(row) >= loadBatch(this.index.size)) flush();
    }
    flush();
    // a load that at least doubled the index (a bank opened, a shard loaded): one segment (LshIndex.compact)
    if (this.index.keypoints >= 2 * before && this.index.keypoints > 0) this.index.compact();
    if (this.held + this.skippedRows.size !== sig.count) await this.dropGone();
    // rows of these codes that were not loaded (a re-encoding in place finished them after this handle's load)
    if (this.held + this.skippedRows.size < sig.count) this.stale = true;
    this.sig = sig;
  }

  /** Removes the slots (and forgets the skipped rows) whose rows are gone from the bank. */
  private async dropGone(): Promise<void> {
    const ids = await this.bank.repo(LshRepo).ids(this.range, this.key);
    for (let slot = 0; slot < this.table.length; slot++) {
      if (this.index.isAlive(slot) && !ids.has(this.table.rowId[slot]!)) {
        this.index.remove(slot);
        this.held--;
      }
    }
    for (const rowId of this.skippedRows) if (!ids.has(rowId)) this.skippedRows.delete(rowId);
  }

  /** The slot holding a row (-1 when not held). */
  slotOfRow(rowId: number): number {
    const s = this.table.slotOfRow(rowId);
    return s >= 0 && this.index.isAlive(s) ? s : -1;
  }

  /** Bytes of the index and of what the handle keeps per image (ids, image hash, harvest time). */
  memoryBytes(): number {
    return this.index.memoryBytes() + this.table.bytes;
  }

  slot(slot: number): SlotInfo | undefined {
    if (!this.index.isAlive(slot)) return undefined;
    return { rowId: this.table.rowId[slot]!, itemId: this.table.itemId[slot]!, sha: this.table.shaOf(slot) };
  }

  /** Prepared (RootSIFT) features of an indexed image for verification, from memory when held (see `prepared`). */
  async load(slot: number): Promise<Prepared | undefined> {
    const info = this.slot(slot);
    if (!info) return undefined;
    const sha = info.sha;
    const p = this.prepared.get(sha);
    if (p) {
      this.reads.memory++;
      return p;
    }
    let f = this.stored?.get(sha);
    if (f) this.reads.memory++;
    else {
      f = await this.bank.repo(FeaturesRepo).get(sha);
      if (!f) return undefined;
      this.reads.bank++;
      this.stored?.set(sha, f); // lru-cache holds nothing larger than the whole budget
    }
    const prepared = prepare(f);
    this.prepared.set(sha, prepared);
    return prepared;
  }

  /** Bytes of stored features held for verification. */
  get cachedBytes(): number {
    return this.stored?.calculatedSize ?? 0;
  }
}

/** An image's stored features in bytes, with the 8-byte sketch a keypoint kept beside them once the image is re-matched
 *  (searcher.ts targetSketches); at least 1: lru-cache takes positive sizes only. */
export const featureBytes = (f: Features): number => Math.max(1, f.keypoints.byteLength + f.descriptors.byteLength + 8 * f.count);

/** The handles a process holds per open bank: the whole index, or its shards (keyed by target range). */
const handles = new WeakMap<Bank, Map<string, IndexHandle>>();
const rangeKey = (r?: TargetRange) => (r ? `${r.first}-${r.last}` : 'all');
const held = (bank: Bank): Map<string, IndexHandle> => {
  let m = handles.get(bank);
  if (!m) handles.set(bank, (m = new Map()));
  return m;
};

/** The target ranges whose index this process holds for a bank (a worker's loaded shards: the queue prefers giving
 *  it their jobs). */
export function heldRanges(bank: Bank): TargetRange[] {
  return [...(handles.get(bank)?.values() ?? [])].flatMap((h) => (h.range ? [h.range] : []));
}

export interface IndexSummary {
  indexed: number;
  removed: number;
  /** Rows whose stored codes were re-encoded in place (a changed representation). */
  reencoded: number;
  images: number;
  memoryBytes: number;
}

export interface IndexTargetsOptions {
  signal?: AbortSignal;
  logger?: Logger;
  idRange?: IdRange;
  /** A progress bar for re-encoding the stored codes (made only when there are any: commands pass createProgress). */
  reencodeProgress?: (total: number) => Progress;
}

/**
 * Re-encodes in place the stored codes of rows made with other parameters (an index representation that changed, as
 * issue 35's one-table codes did): per batch of 100 rows, committed, so a killed run resumes where it stopped; rows
 * keep their ids, so no source is sent back to matching. Returns the rows re-encoded.
 */
async function reencode(bank: Bank, config: Config, key: string, opts: IndexTargetsOptions): Promise<number> {
  const repo = bank.repo(LshRepo);
  const total = await repo.countOtherParams(key);
  if (!total) return 0;
  opts.logger?.info(`lsh: re-encoding the stored codes of ${total} indexed target images (the index representation is now ${key}); resumable`);
  const progress = opts.reencodeProgress?.(total);
  const codec = new LshIndex(lshParams(config));
  const feats = bank.repo(FeaturesRepo);
  let after = 0;
  let done = 0;
  try {
    while (!opts.signal?.aborted) {
      const rows = await repo.otherParams(key, after, 100);
      if (!rows.length) break;
      after = rows[rows.length - 1]!.id;
      const out: { id: number; count: number; codes: Uint32Array }[] = [];
      for (const r of rows) {
        const f = await feats.get(r.imageSha256);
        if (f) out.push({ id: r.id, count: f.count, codes: codec.codes(prepare(f).vecs, f.count) }); // else: dropStale's
      }
      await bank.transaction(async (tx) => {
        for (const o of out) if (await tx.repo(LshRepo).recode(o.id, key, o.count, o.codes)) done++;
      });
      progress?.tick(rows.length);
      if (Math.floor((done - out.length) / 10_000) !== Math.floor(done / 10_000)) opts.logger?.info(`lsh: re-encoded ${done} of ${total}`);
    }
  } finally {
    progress?.stop();
  }
  return done;
}

/**
 * Writes the LSH codes of every target item with features that is not indexed yet (committed per batch of 100), in
 * id order, optionally only within an id range (a features job indexes the targets it featured, so that the match
 * stage that follows only loads the rows, and workers never project the same targets twice), and drops rows of
 * items whose image changed. Without a range, first re-encodes rows whose codes were made with other parameters.
 */
export async function indexTargets(bank: Bank, config: Config, opts: IndexTargetsOptions = {}): Promise<{ indexed: number; removed: number; reencoded: number }> {
  const repo = bank.repo(LshRepo);
  const key = paramsKey(lshParams(config));
  const range = opts.idRange;
  const reencoded = range ? 0 : await reencode(bank, config, key, opts);
  const removed = range ? 0 : await bank.transaction((tx) => tx.repo(LshRepo).dropStale());
  // Projects descriptors into stored codes: an open index when its codes match, else made once when needed.
  let codec: LshIndex | undefined = [...held(bank).values()].find((h) => h.key === key)?.index;
  const feats = bank.repo(FeaturesRepo);
  let indexed = 0;
  if (!range) {
    const total = await repo.countPending();
    if (total) opts.logger?.info(`lsh: indexing ${total} target items`);
  }
  let afterId = range ? range.first - 1 : 0;
  for (;;) {
    if (opts.signal?.aborted) break;
    const batch = (await repo.pendingTargets(afterId, 100)).filter((b) => !range || b.itemId <= range.last);
    if (!batch.length) break;
    afterId = batch[batch.length - 1]!.itemId;
    const rows: { itemId: number; imageSha256: string; count: number; codes: Uint32Array }[] = [];
    for (const b of batch) {
      const f = await feats.get(b.imageSha256);
      if (!f) continue;
      const p = prepare(f);
      rows.push({ itemId: b.itemId, imageSha256: b.imageSha256, count: f.count, codes: (codec ??= new LshIndex(lshParams(config))).codes(p.vecs, f.count) });
    }
    indexed += await bank.transaction((tx) => tx.repo(LshRepo).putMany(rows, key));
  }
  return { indexed, removed, reencoded };
}

/**
 * Indexes every target item with features that is not indexed yet (indexTargets), and returns the in-memory handle,
 * in step with the rows.
 */
export async function syncIndex(
  bank: Bank,
  config: Config,
  opts: IndexTargetsOptions & { progress?: Progress; floor?: number } = {},
): Promise<{ handle: IndexHandle; summary: IndexSummary }> {
  const { indexed, removed, reencoded } = await indexTargets(bank, config, opts);
  const handle = await openIndex(bank, config, opts.floor);
  return { handle, summary: { indexed, removed, reencoded, images: handle.index.size, memoryBytes: handle.memoryBytes() } };
}

/** Bytes an index of these rows takes (12 a keypoint, ~160 an image with the handle's per-image arrays and the
 *  offsets): what a memory budget is checked against before loading. */
export const estimateIndexBytes = (keypoints: number, images: number): number => keypoints * 12 + images * 160;

/**
 * The in-memory index of the rows written so far (no indexing): what syncIndex returns, and what an idle worker loads
 * ahead of its first match job. `floor` (epoch ms; lsh.window): targets harvested before it are dropped from memory
 * (a run whose sources need older ones gets a handle loaded anew). `range`: one shard (target item ids); the process
 * keeps the shards it loaded within lsh.memoryMB (least recently used dropped first), so a worker holds its shards.
 * `plan`: every shard's range (the whole index's bucket sizes are then the sum of each range's counts kept in the bank).
 */
export async function openIndex(bank: Bank, config: Config, floor = -Infinity, range?: TargetRange, plan?: readonly TargetRange[]): Promise<IndexHandle> {
  const repo = bank.repo(LshRepo);
  const key = paramsKey(lshParams(config));
  const map = held(bank);
  const rk = rangeKey(range);
  // A new in-memory index when the codes' parameters changed, or when the bank (shard) outgrew the bucket width
  // (auto bits grow by one as it doubles; stored codes are kept, only the buckets are rebuilt). The keypoint total
  // comes from the open index once it has loaded the new rows (a search is not charged a SUM over every lsh_codes
  // row); only a first open asks the bank. An index bounded by lsh.window holds fewer keypoints than the bank: its
  // width follows the bank's total (asked each time), so that every process, whatever its bound, buckets alike.
  let handle = map.get(rk);
  if (handle?.key !== key || floor < handle.floor) handle = undefined;
  else {
    handle.evictBefore(floor);
    await handle.refresh();
    if (handle.stale) handle = undefined;
  }
  const params = range ? await shardParams(bank, config) : lshParams(config, await wholeKeypoints(bank, config, handle, floor));
  const auto = config.lsh.bits === 'auto';
  if (!handle || params.bits > handle.index.params.bits || (!auto && params.bits !== handle.index.params.bits)) {
    map.delete(rk);
    await makeRoom(bank, config, range);
    handle = new IndexHandle(bank, params, floor, config.lsh.featureCacheMB * 1024 * 1024, undefined, range);
    await handle.refresh();
  }
  // a shard skips and weighs buckets by the whole index's sizes (as loaded with the same floor), so that its votes add
  // up to one index's (issue 35 round 6)
  if (range) handle.index.useBucketSizes(await wholeBucketSizes(bank, handle.index.params.bits, key, floor, plan));
  map.delete(rk); // most recently used last
  map.set(rk, handle);
  return handle;
}

/** The whole index's bucket entry counts, per bank, codes, width and floor, kept in step with the rows (counted once,
 *  then the rows added since; counted again when rows were removed or re-encoded). */
interface WholeCounts {
  key: string;
  bits: number;
  floor: number;
  sizes: Uint32Array;
  sig: { count: number; maxId: number };
}
const bucketCounts = new WeakMap<Bank, WholeCounts>();

/** Bucket entry counts of some rows: `counts` of `rows` rows up to row id `maxId`. */
interface Counting {
  key: string;
  bits: number;
  floor: number;
  counts: Uint32Array;
  rows: number;
  maxId: number;
}

/**
 * Each bucket's entries in an index of every target with these codes (`key`), `bits` wide, holding the rows harvested
 * from `floor` on, as openIndex loads the whole index: what a shard needs of the others (2^bits counts, 2 MB at 19
 * bits; not their entries). Kept per process while the rows do not change. With the shard plan's ranges (`plan`) and
 * no floor, the sum of each range's counts kept in the bank (rangeCounts: a range's rows are read only when they
 * changed since they were counted, by whichever worker meets them first); otherwise counted from every stored code.
 */
async function wholeBucketSizes(bank: Bank, bits: number, key: string, floor: number, plan?: readonly TargetRange[]): Promise<Uint32Array> {
  const repo = bank.repo(LshRepo);
  const sig = await repo.signature(undefined, key);
  const c = bucketCounts.get(bank);
  if (c && c.key === key && c.bits === bits && c.floor === floor && c.sig.count === sig.count && c.sig.maxId === sig.maxId) return c.sizes;
  let sizes: Uint32Array;
  let counted: { count: number; maxId: number };
  if (plan?.length && floor === -Infinity) {
    sizes = new Uint32Array(1 << bits);
    counted = { count: 0, maxId: 0 };
    for (const range of plan) {
      const r = await rangeCounts(repo, key, bits, range);
      for (let b = 0; b < sizes.length; b++) sizes[b]! += r.counts[b]!;
      counted = { count: counted.count + r.rows, maxId: Math.max(counted.maxId, r.maxId) };
    }
  } else {
    const prior = c && c.key === key && c.bits === bits && c.floor === floor ? { counts: c.sizes, rows: c.sig.count, maxId: c.sig.maxId } : undefined;
    const k = await countsUpToDate(repo, { key, bits, floor }, sig, prior);
    sizes = k.counts;
    counted = { count: k.rows, maxId: k.maxId };
  }
  bucketCounts.set(bank, { key, bits, floor, sizes, sig: counted });
  return sizes;
}

/** A range's bucket entry counts: as stored in the bank while its rows are those counted, else brought up to date
 *  (the rows added since, or all of them again when some were removed or re-encoded) and stored. */
async function rangeCounts(repo: LshRepo, key: string, bits: number, range: TargetRange): Promise<StoredBucketCounts> {
  const sig = await repo.signature(range, key);
  const stored = await repo.bucketCounts(key, bits, range);
  if (stored && stored.rows === sig.count && stored.maxId === sig.maxId) return stored;
  const k = await countsUpToDate(repo, { key, bits, floor: -Infinity }, sig, stored, range);
  const out = { rows: k.rows, maxId: k.maxId, counts: k.counts };
  await repo.putBucketCounts(key, bits, range, out);
  return out;
}

/** Bucket counts brought up to the rows of signature `sig` (of `range`, or every row): from `prior` (the counts of
 *  prior.rows rows up to row id prior.maxId) when rows were only added since (ids grow), by counting those; otherwise
 *  (rows removed or re-encoded below the last counted) all of them anew. The whole index's counts kept per process
 *  and a range's kept in the bank are both brought up to date here. */
async function countsUpToDate(repo: LshRepo, what: Pick<Counting, 'key' | 'bits' | 'floor'>, sig: { count: number; maxId: number }, prior: Pick<Counting, 'counts' | 'rows' | 'maxId'> | undefined, range?: TargetRange): Promise<Counting> {
  const fresh = (): Counting => ({ ...what, counts: new Uint32Array(1 << what.bits), rows: 0, maxId: 0 });
  let k: Counting = prior && prior.rows <= sig.count && prior.maxId <= sig.maxId ? { ...what, counts: prior.counts, rows: prior.rows, maxId: prior.maxId } : fresh();
  await countRows(repo, k, range);
  if (k.rows !== sig.count) await countRows(repo, (k = fresh()), range);
  return k;
}

async function countRows(repo: LshRepo, c: Counting, range?: TargetRange): Promise<void> {
  for await (const row of repo.rowsAfter(c.maxId, range, c.key)) {
    c.maxId = row.id;
    c.rows++;
    if (row.harvestedAt && Date.parse(row.harvestedAt) < c.floor) continue;
    countBuckets(c.counts, row.codes, c.bits);
  }
}

/** The keypoint total that sets the whole index's auto bucket width (none needed with a fixed width). */
async function wholeKeypoints(bank: Bank, config: Config, handle: IndexHandle | undefined, floor: number): Promise<number> {
  if (config.lsh.bits !== 'auto') return 0;
  return handle && handle.floor === -Infinity && floor === -Infinity ? handle.index.keypoints : bank.repo(LshRepo).keypointTotal();
}

/**
 * A shard's parameters: the whole bank's bucket width, so that a shard's buckets are the whole index's buckets
 * restricted to its targets; lsh.maxBucket as it is, since a shard skips and weighs a bucket by the whole index's size
 * (openIndex gives it those sizes; round 4 scaled maxBucket by the shard's share instead: about the whole index's,
 * not exactly, and bench:scale's pairs differed by it).
 */
async function shardParams(bank: Bank, config: Config): Promise<LshParams> {
  return lshParams(config, await bank.repo(LshRepo).keypointTotal());
}

/** Drops the least recently used shards held for this bank until the one about to load fits in lsh.memoryMB with
 *  them (0: no bound); the whole index, or a shard of another plan, is dropped before any shard loads. */
async function makeRoom(bank: Bank, config: Config, range?: TargetRange): Promise<void> {
  const map = held(bank);
  const budget = config.lsh.memoryMB * 1024 * 1024;
  if (!range) {
    map.clear();
    return;
  }
  map.delete('all');
  if (!budget) return;
  const sig = await bank.repo(LshRepo).signature(range);
  const need = estimateIndexBytes(await bank.repo(LshRepo).keypointTotal(range), sig.count);
  let used = [...map.values()].reduce((a, h) => a + h.memoryBytes(), 0);
  for (const [k, h] of map) {
    if (used + need <= budget) break;
    used -= h.memoryBytes();
    map.delete(k);
  }
}

/** Forgets every index this process holds for a bank (tests, and a worker told to let go of its shards). */
export function dropIndexes(bank: Bank): void {
  handles.delete(bank);
}
