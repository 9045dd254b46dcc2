// What the parts of one match run share (run.ts walks the windows, wide.ts spends their wide-baseline stages): the
// options and summary of the stage, the state of the current window, and what the wide-baseline stages need of the
// run (MatchContext), so that wide.ts does not import the run that drives it.
import type { Bank, BankScope, IdRange, CandidateInput, Item, PartialWide, TargetRange } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import type { Progress } from '../../util/progress.js';
import type { Logger } from '../../util/log.js';
import { diagnostics } from '../../util/diagnostics.js';
import type { Hit, IndexHandle, IndexTargetsOptions } from '../../lib/image-index/index.js';
import type { MatchSink } from './shards.js';
import type { ViewPool } from './rank.js';
import type { DenseViewsSource } from './archive.js';

/** Which part of the match a source's reported cost is: its plain search, its views search, its archive matching. */
export type MatchStageName = 'plain' | 'views' | 'archive' | 'shard-votes';

export interface MatchOptions {
  top?: number;
  signal?: AbortSignal;
  progress?: Progress;
  logger?: Logger;
  /** Sources per committed batch. */
  batchSize?: number;
  /** Only items with ids in this range (a worker's job): its sources to match; default all. */
  idRange?: IdRange;
  /** Worker threads for the synthesised views and dense views (default: config sift.threads; 1 = this thread). */
  threads?: number;
  /** One shard of the index (a worker's match job, keyed by shard: see shards.ts): the run searches the sources
   *  against that shard only, and merges each source whose every shard is in. Absent: the whole index, or, when the
   *  config shards it (lsh.shards, lsh.memoryMB), each shard in turn. */
  shard?: { plan: string; range: TargetRange; phase?: 'plain' | 'wide' };
  /** A progress bar for re-encoding the index's stored codes, made only when a changed representation needs it. */
  reencodeProgress?: IndexTargetsOptions['reencodeProgress'];
}

/**
 * One part of one source's matching and its cost (not for sources that took another's candidates): CPU of the whole
 * process (the views' worker threads included) and wall time of its plain search (stage 'plain', viewed false), its
 * views search (stage 'views', viewed true) or its archive matching ('archive'); a shard's votes for a picture's
 * wide-baseline queries ('shard-votes': archive matching's or the views search's part on one shard of a sharded index,
 * which the job completing the window then verifies once).
 */
export interface SourceCost {
  itemId: number;
  cpuMs: number;
  wallMs: number;
  viewed: boolean;
  candidates: number;
  stage: MatchStageName;
  /** Stage 'plain' of one process's run, when the plain search left the source unconfident: its shortlist's promise
   *  (promise.ts, what match.views.minVotingKeypoints gates), so that a benchmark can measure the gate's null. */
  promise?: number;
}

/** Where the match stage publishes each SourceCost (node:diagnostics_channel), for benchmarks and tests to measure
 *  without a hook in the stage's options; nothing is measured while nobody listens. */
const sourceCosts = diagnostics<SourceCost>('capbridge:match:source-cost');

/** Calls `fn` with every SourceCost any match run of this process publishes, until the returned function is called. */
export const observeSourceCosts = sourceCosts.observe;

/** Publishes one part of a source's matching, begun at process.cpuUsage() c0 and performance.now() w0 (`promise`: an
 *  unconfident plain search's). */
export function publishSourceCost(itemId: number, stage: MatchStageName, c0: NodeJS.CpuUsage, w0: number, candidates: number, promise?: number): void {
  if (!sourceCosts.listening) return;
  const cpu = process.cpuUsage(c0);
  sourceCosts.publish({ itemId, cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - w0, viewed: stage !== 'plain', candidates, stage, ...(promise === undefined ? {} : { promise }) });
}

export interface MatchSummary {
  indexed: number;
  indexedImages: number;
  indexMemoryBytes: number;
  sources: number;
  withCandidates: number;
  candidates: number;
  /** Sources searched again with synthesised views (match.views: their plain search was not confident). */
  viewed: number;
  /** Sources matched again by archive matching (match.views.archive: nothing confident before it). */
  archived: number;
  /** Targets whose dense views archive matching computed in this run (the others were read from the bank). */
  denseComputed: number;
  /** Sources that took the candidates of a picture already ranked in this run (the same or a near-identical image). */
  reused: number;
  /** Sources whose search, verification or views threw: marked failed with the reason (the run went on). */
  failed: number;
  aborted: boolean;
  ms: number;
}

/** A picture searched in the current window: its candidates (in source px of `width`) and the sources showing it. */
export interface PictureEntry {
  cand: CandidateInput[];
  width: number;
  members: { id: number; sha: string; width: number }[];
  /** Its plain search as a sharded window's wide-baseline decision reads it (shardSink). */
  wide?: PartialWide;
}

/** A searched picture whose search found nothing confident: what the wide-baseline stages may take up. */
export interface Unconfident {
  picture: string;
  /** The first source showing it (the one searched). */
  id: number;
  sha: string;
  /** viewEvidence of its plain search (null: views could not pay). */
  evidence: number | null;
  /** Its latest search's hits (plain, then the views search's). */
  hits: Hit[];
  /** How promising its plain search's shortlist is (promise.ts shortlistPromise). */
  promise: number;
  /** Its plain search verified a target without being confident (promise.ts verifiedBelow). Kept apart from `hits`:
   *  with match.views.archive.views `before` the views search replaces them before archive matching is chosen. */
  verified?: boolean;
  /** Its plain search's shortlist in vote order (the direct pass's: archive matching's first ranking). */
  ranking: number[];
  /** Harvest time for lsh.window. */
  at?: number;
}

/** The state of one window of pending sources. */
export class MatchWindow {
  readonly pictures = new Map<string, PictureEntry>();
  readonly unconfident: Unconfident[] = [];
  /** Searched in this window, marked matched at its end. */
  readonly sources: { id: number; sha: string }[] = [];
  /** Pending rows taken into this window. */
  count = 0;

  reset(): void {
    this.pictures.clear();
    this.unconfident.length = 0;
    this.sources.length = 0;
    this.count = 0;
  }
}

/** What the wide-baseline stages (wide.ts) use of a match run (run.ts MatchRun). */
export interface MatchContext {
  readonly bank: Bank;
  readonly config: Config;
  readonly opts: MatchOptions;
  readonly handle: IndexHandle;
  readonly top: number;
  readonly views: ViewPool;
  readonly dense: DenseViewsSource;
  readonly summary: MatchSummary;
  readonly window: MatchWindow;
  /** Where candidates go: the candidates table, or (a shard's job) the shard's partial results. */
  readonly sink: MatchSink;
  /** The run searches one shard of the index (a chosen picture is matched on every shard). */
  readonly sharded: boolean;
  /** lsh.window (the news case): a source keeps only the candidates harvested within N days of it. */
  inWindow(sourceId: number, cand: CandidateInput[]): Promise<CandidateInput[]>;
}

/** When an item was harvested (epoch ms; NaN when unknown). */
export function harvestedAt(i: Item | undefined): number {
  return i ? Date.parse(i.fetchedAt ?? i.importedAt ?? '') : NaN;
}

/** lsh.window (the news case, `windowMs` > 0): a source keeps only the candidates harvested within it of the source. */
export async function candidatesInWindow(bank: Pick<BankScope, 'items'>, windowMs: number, sourceId: number, cand: CandidateInput[]): Promise<CandidateInput[]> {
  if (!windowMs || !cand.length) return cand;
  const items = await bank.items.byIds([sourceId, ...cand.map((c) => c.targetItemId)]);
  const at = harvestedAt(items.get(sourceId));
  if (Number.isNaN(at)) return cand;
  return cand.filter((c) => Math.abs(harvestedAt(items.get(c.targetItemId)) - at) <= windowMs);
}
