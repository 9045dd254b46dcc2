// The bank's index in memory: loaded from the lsh_codes rows (no projection work on restart), kept in step
// with them (rows added since, rows gone), and the mapping slot -> target item. One handle per open bank.
import type { Bank } from '../bank/index.js';
import { FeaturesRepo, LshRepo, type LshRow } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../util/log.js';
import type { Progress } from '../util/progress.js';
import { LshIndex, type LshParams } from './lsh.js';
import { prepare, type SearchParams } from './searcher.js';
import type { Prepared } from './verify.js';

export function lshParams(config: Config): LshParams {
  const l = config.lsh;
  return { tables: l.tables, bits: l.bits, probes: l.probes, maxBucket: l.maxBucket, seed: l.seed };
}

export function searchParams(config: Config): SearchParams {
  return {
    ratio: config.match.ratio,
    ransacThreshold: config.match.ransacThreshold,
    ransacIterations: config.match.ransacIterations,
    minInliers: config.match.minInliers,
    farDistance: config.lsh.farDistance,
    shortlist: config.lsh.shortlist,
    mirror: config.lsh.mirror,
    confidentScore: config.lsh.confidentScore,
    voteHamming: config.lsh.voteHamming,
    matchHamming: config.lsh.matchHamming,
    recollide: config.lsh.recollide,
  };
}

/** What the stored codes depend on: a change means re-indexing. */
export function paramsKey(p: LshParams): string {
  return `srht-v1:t${p.tables}:b${p.bits}:s${p.seed}`;
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
  private loadedUpTo = 0;
  private sig = { count: -1, maxId: -1 };
  private cache = new Map<string, Prepared>();

  constructor(private bank: Bank, params: LshParams) {
    this.index = new LshIndex(params);
    this.key = paramsKey(params);
  }

  /** Brings the in-memory index in step with the rows (cheap when nothing changed). */
  refresh(): void {
    const repo = this.bank.repo(LshRepo);
    const sig = repo.signature();
    if (sig.count === this.sig.count && sig.maxId === this.sig.maxId) return;
    // In batches of up to 5,000 images: a bank opened at 100k images loads in 20 compact merges instead of
    // growing the delta image by image.
    let batch: LshRow[] = [];
    const flush = () => {
      const slots = this.index.addBatch(batch.map((r) => r.codes));
      batch.forEach((row, i) => {
        this.slots[slots[i]!] = { rowId: row.id, itemId: row.itemId, sha: row.imageSha256 };
        this.slotByRow.set(row.id, slots[i]!);
        this.loadedUpTo = row.id;
      });
      batch = [];
    };
    for (const row of repo.rowsAfter(this.loadedUpTo)) if (batch.push(row) >= 5000) flush();
    flush();
    if (this.slotByRow.size !== sig.count) {
      const ids = repo.ids();
      for (const [rowId, slot] of this.slotByRow) {
        if (!ids.has(rowId)) {
          this.index.remove(slot);
          this.slotByRow.delete(rowId);
        }
      }
    }
    this.sig = sig;
  }

  slot(slot: number): SlotInfo | undefined {
    return this.index.isAlive(slot) ? this.slots[slot] : undefined;
  }

  /** Prepared (RootSIFT) features of an indexed image for verification; a small cache by image. */
  load(slot: number): Prepared | undefined {
    const info = this.slot(slot);
    if (!info) return undefined;
    let p = this.cache.get(info.sha);
    if (!p) {
      const f = this.bank.repo(FeaturesRepo).get(info.sha);
      if (!f) return undefined;
      p = prepare(f);
      if (this.cache.size >= 256) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(info.sha, p);
    }
    return p;
  }
}

const handles = new WeakMap<Bank, IndexHandle>();

export interface IndexSummary {
  indexed: number;
  removed: number;
  images: number;
  memoryBytes: number;
}

/**
 * Indexes every target item with features that is not indexed yet (committed per batch), drops rows of items
 * whose image changed, and returns the in-memory handle, in step with the rows.
 */
export function syncIndex(
  bank: Bank,
  config: Config,
  opts: { signal?: AbortSignal; progress?: Progress; logger?: Logger } = {},
): { handle: IndexHandle; summary: IndexSummary } {
  const params = lshParams(config);
  let handle = handles.get(bank);
  if (!handle || handle.key !== paramsKey(params)) {
    handle = new IndexHandle(bank, params);
    handles.set(bank, handle);
  }
  const repo = bank.repo(LshRepo);
  const feats = bank.repo(FeaturesRepo);
  let removed = bank.transaction(() => repo.dropOtherParams(handle.key) + repo.dropStale());
  let indexed = 0;
  const total = repo.countPending();
  if (total) opts.logger?.info(`lsh: indexing ${total} target items`);
  let afterId = 0;
  for (;;) {
    if (opts.signal?.aborted) break;
    const batch = repo.pendingTargets(afterId, 100);
    if (!batch.length) break;
    afterId = batch[batch.length - 1]!.itemId;
    const rows: { itemId: number; sha: string; count: number; codes: Uint32Array }[] = [];
    for (const b of batch) {
      const f = feats.get(b.imageSha256);
      if (!f) continue;
      const p = prepare(f);
      rows.push({ itemId: b.itemId, sha: b.imageSha256, count: f.count, codes: handle.index.codes(p.vecs, f.count) });
    }
    bank.transaction(() => {
      for (const r of rows) repo.put(r.itemId, r.sha, handle.key, r.count, r.codes);
    });
    indexed += rows.length;
  }
  handle.refresh();
  removed += 0;
  return { handle, summary: { indexed, removed, images: handle.index.size, memoryBytes: handle.index.memoryBytes() } };
}
