// The bank's index in memory: loaded from the lsh_codes rows (no projection work on restart), kept in step
// with them (rows added since, rows gone), and the mapping slot -> target item. One handle per open bank.
import type { Bank, IdRange } from '../../bank/index.js';
import { FeaturesRepo, LshRepo, type LshRow } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../util/log.js';
import type { Progress } from '../../util/progress.js';
import { CODE_BITS, LshIndex, type LshParams } from './lsh.js';
import { prepare, type SearchParams } from './searcher.js';
import type { Prepared } from './verify.js';
import type { Features } from '../sift/index.js';
import { LRUCache } from 'lru-cache';

/** Prepared (RootSIFT, 4x the stored bytes) features held for verification: the last images verified. */
const PREPARED_HELD = 256;

/** The bucket width for a bank of `keypoints` indexed keypoints: about 64 entries per bucket on average,
 *  never fewer than 16 bits (small banks) nor more than CODE_BITS. */
export function autoBits(keypoints: number): number {
  return Math.max(16, Math.min(CODE_BITS, Math.round(Math.log2(Math.max(1, keypoints) / 64))));
}

/** Index parameters; with lsh.bits 'auto' the width follows the number of keypoints indexed. */
export function lshParams(config: Config, keypoints = 0): LshParams {
  const l = config.lsh;
  const bits = l.bits === 'auto' ? autoBits(keypoints) : l.bits;
  return { tables: l.tables, bits, probes: l.probes, maxBucket: l.maxBucket, seed: l.seed };
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
    matchHamming: config.lsh.matchHamming,
    recollide: config.lsh.recollide,
    recollideHamming: config.lsh.recollideHamming,
  };
}

/** What the stored codes depend on: a change means re-indexing. (Not the bucket width: codes keep
 *  CODE_BITS bits per table and an index uses a prefix.) */
export function paramsKey(p: LshParams): string {
  return `srht-v3:t${p.tables}:c${CODE_BITS}:s${p.seed}`;
}

interface SlotInfo {
  rowId: number;
  itemId: number;
  sha: string;
}

export class IndexHandle {
  readonly index: LshIndex;
  readonly key: string;
  private slots: SlotInfo[] = [];
  private slotByRow = new Map<number, number>();
  /** Rows not loaded because their target was harvested before `floor` (lsh.window). */
  private skippedRows = new Set<number>();
  private loadedUpTo = 0;
  private sig = { count: -1, maxId: -1 };
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
  /** Each slot's harvest time (epoch ms; NaN when unknown), for lsh.window. */
  readonly harvestedAt: number[] = [];

  /** `floor` (epoch ms): targets harvested before it are not held (lsh.window's bound on memory); -Infinity: all. */
  constructor(readonly bank: Bank, params: LshParams, public floor = -Infinity, readonly cacheBytes = 0, private readonly preparedHeld = PREPARED_HELD) {
    this.index = new LshIndex(params);
    this.key = paramsKey(params);
    this.prepared = new LRUCache({ max: Math.max(1, preparedHeld) });
    this.stored = cacheBytes > 0 ? new LRUCache({ maxSize: cacheBytes, sizeCalculation: featureBytes }) : null;
    this.viewed = cacheBytes >= 4 ? new LRUCache({ maxSize: Math.floor(cacheBytes / 4), sizeCalculation: featureBytes }) : null;
  }

  /** Drops the targets harvested before `floor` from memory, and loads none of them from now on. */
  evictBefore(floor: number): number {
    if (!(floor > this.floor)) return 0;
    this.floor = floor;
    let n = 0;
    for (const [rowId, slot] of this.slotByRow) {
      if (this.harvestedAt[slot]! < floor) {
        this.index.remove(slot);
        this.slotByRow.delete(rowId);
        this.skippedRows.add(rowId);
        n++;
      }
    }
    return n;
  }

  /** Brings the in-memory index in step with the rows (cheap when nothing changed). */
  async refresh(): Promise<void> {
    const repo = this.bank.repo(LshRepo);
    const sig = await repo.signature();
    if (sig.count === this.sig.count && sig.maxId === this.sig.maxId) return;
    // In batches of 5,000 images or half the images loaded so far, whichever is more: a bank opened at 100k
    // images loads in about 6 compact merges (each one copies the whole index) instead of growing the delta
    // image by image.
    let batch: LshRow[] = [];
    const flush = () => {
      const slots = this.index.addBatch(batch.map((r) => r.codes));
      batch.forEach((row, i) => {
        this.slots[slots[i]!] = { rowId: row.id, itemId: row.itemId, sha: row.imageSha256 };
        this.index.setTieKey(slots[i]!, row.itemId);
        this.harvestedAt[slots[i]!] = row.harvestedAt ? Date.parse(row.harvestedAt) : NaN;
        this.slotByRow.set(row.id, slots[i]!);
        this.loadedUpTo = Math.max(this.loadedUpTo, row.id);
      });
      batch = [];
    };
    for await (const row of repo.rowsAfter(this.loadedUpTo)) {
      if (row.harvestedAt && Date.parse(row.harvestedAt) < this.floor) {
        this.skippedRows.add(row.id);
        this.loadedUpTo = row.id;
        continue;
      }
      if (batch.push(row) >= Math.max(5000, this.index.size / 2)) flush();
    }
    flush();
    if (this.slotByRow.size + this.skippedRows.size !== sig.count) {
      const ids = await repo.ids();
      for (const [rowId, slot] of this.slotByRow) {
        if (!ids.has(rowId)) {
          this.index.remove(slot);
          this.slotByRow.delete(rowId);
        }
      }
      for (const rowId of this.skippedRows) if (!ids.has(rowId)) this.skippedRows.delete(rowId);
    }
    this.sig = sig;
  }

  slot(slot: number): SlotInfo | undefined {
    return this.index.isAlive(slot) ? this.slots[slot] : undefined;
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

/** An image's stored features in bytes (at least 1: lru-cache takes positive sizes only). */
export const featureBytes = (f: Features): number => Math.max(1, f.keypoints.byteLength + f.descriptors.byteLength);

const handles = new WeakMap<Bank, IndexHandle>();

export interface IndexSummary {
  indexed: number;
  removed: number;
  images: number;
  memoryBytes: number;
}

/**
 * Writes the LSH codes of every target item with features that is not indexed yet (committed per batch of 100), in
 * id order, optionally only within an id range (a features job indexes the targets it featured, so that the match
 * stage that follows only loads the rows, and workers never project the same targets twice), and drops rows of
 * items whose image changed or whose codes were made with other parameters. Returns the rows written.
 */
export async function indexTargets(
  bank: Bank,
  config: Config,
  opts: { signal?: AbortSignal; logger?: Logger; idRange?: IdRange } = {},
): Promise<{ indexed: number; removed: number }> {
  const repo = bank.repo(LshRepo);
  const key = paramsKey(lshParams(config));
  // Projects descriptors into stored codes: the open index when its codes match, else made once when needed.
  let codec: LshIndex | undefined = handles.get(bank)?.key === key ? handles.get(bank)!.index : undefined;
  const feats = bank.repo(FeaturesRepo);
  const removed = opts.idRange
    ? 0
    : await bank.transaction(async (tx) => {
        const r = tx.repo(LshRepo);
        return (await r.dropOtherParams(key)) + (await r.dropStale());
      });
  let indexed = 0;
  const range = opts.idRange;
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
    const rows: { itemId: number; sha: string; count: number; codes: Uint32Array }[] = [];
    for (const b of batch) {
      const f = await feats.get(b.imageSha256);
      if (!f) continue;
      const p = prepare(f);
      rows.push({ itemId: b.itemId, sha: b.imageSha256, count: f.count, codes: (codec ??= new LshIndex(lshParams(config))).codes(p.vecs, f.count) });
    }
    indexed += await bank.transaction((tx) => tx.repo(LshRepo).putMany(rows.map((r) => ({ itemId: r.itemId, imageSha256: r.sha, count: r.count, codes: r.codes })), key));
  }
  return { indexed, removed };
}

/**
 * Indexes every target item with features that is not indexed yet (indexTargets), and returns the in-memory handle,
 * in step with the rows.
 */
export async function syncIndex(
  bank: Bank,
  config: Config,
  opts: { signal?: AbortSignal; progress?: Progress; logger?: Logger; floor?: number } = {},
): Promise<{ handle: IndexHandle; summary: IndexSummary }> {
  const { indexed, removed } = await indexTargets(bank, config, opts);
  const handle = await openIndex(bank, config, opts.floor);
  return { handle, summary: { indexed, removed, images: handle.index.size, memoryBytes: handle.index.memoryBytes() } };
}

/** The in-memory index of the rows written so far (no indexing): what syncIndex returns, and what an idle worker
 *  loads ahead of its first match job. `floor` (epoch ms; lsh.window): targets harvested before it are dropped from
 *  memory (a run whose sources need older ones gets a handle loaded anew). */
export async function openIndex(bank: Bank, config: Config, floor = -Infinity): Promise<IndexHandle> {
  const repo = bank.repo(LshRepo);
  const key = paramsKey(lshParams(config));
  // A new in-memory index when the codes' parameters changed, or when the bank outgrew the bucket width
  // (auto bits grow by one as the bank doubles; stored codes are kept, only the buckets are rebuilt).
  // The bank's keypoint total comes from the open index once it has loaded the new rows (a search is not
  // charged a SUM over every lsh_codes row); only a process's first open asks the bank. An index bounded by
  // lsh.window holds fewer keypoints than the bank: its width follows the bank's total (asked each time), so that
  // every process, whatever its bound, buckets alike.
  let handle = handles.get(bank);
  if (handle?.key !== key || floor < handle.floor) handle = undefined;
  else {
    handle.evictBefore(floor);
    await handle.refresh();
  }
  const auto = config.lsh.bits === 'auto';
  const held = handle && handle.floor === -Infinity && floor === -Infinity;
  const params = lshParams(config, auto ? (held ? handle!.index.keypoints : await repo.keypointTotal()) : 0);
  if (!handle || params.bits > handle.index.params.bits || (!auto && params.bits !== handle.index.params.bits)) {
    handle = new IndexHandle(bank, params, floor, config.lsh.featureCacheMB * 1024 * 1024);
    handles.set(bank, handle);
    await handle.refresh();
  }
  return handle;
}
