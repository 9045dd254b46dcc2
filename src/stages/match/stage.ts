// The match stage and image search (stage contract): the index is brought in step with the target bank (the features
// stage, run before, wrote the targets' LSH codes), then every source item not yet matched, or matched before targets were added, is
// ranked against the index; its verified candidates are stored (committed per batch, so a killed run resumes).
// The plain searches come first; the synthesised views and archive matching then go, within each window's budgets,
// to the sources whose plain search found nothing confident (run.ts, wide.ts).
import type { Bank, IdRange, Item } from '../../bank/index.js';
import { CandidatesRepo, LshRepo, MatchPartialsRepo } from '../../bank/index.js';
import type { CandidateInput } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import { extractFeatures } from '../../lib/sift/index.js';
import type { SiftPool } from '../../lib/sift/index.js';
import type { Logger } from '../../util/log.js';
import { syncIndex } from '../../lib/image-index/index.js';
import { poolViews } from './views.js';
import { ViewPool, archiveRank, candidatesOf, denseViewsFor, greyLoader, rankAgainstIndex, unconfident } from './rank.js';
import { MatchRun, emptySummary, type MatchOptions, type MatchSummary } from './run.js';
import { currentPlan, storedPlan, type MatchShard } from './shards.js';

export { ViewPool, rankAgainstIndex, rescaleCandidate, toOriginal } from './rank.js';
export { observeSourceRankings, type SourceRanking } from './rankings.js';
export { observeSourceCosts, type MatchOptions, type MatchStageName, type MatchSummary, type SourceCost } from './context.js';

/**
 * The match stage: every pending source against the index. With a shard (a worker's job), against that shard only;
 * without one, against the whole index, or, when the config shards it, against each shard in turn (one process does
 * what the shard jobs do, in the same windows, and merges as they do).
 */
export async function runMatch(bank: Bank, config: Config, opts: MatchOptions = {}): Promise<MatchSummary> {
  if (opts.shard) {
    const plan = await storedPlan(bank);
    if (plan?.id !== opts.shard.plan) {
      // the plan changed since the job was queued: its sources stay pending, the next round queues them anew
      opts.logger?.warn(`match: job of shard ${opts.shard.range.first}..${opts.shard.range.last} of an old shard plan (${opts.shard.plan}): nothing done`);
      return emptySummary();
    }
    return runMatchOn(bank, config, opts, { plan, range: opts.shard.range, phase: opts.shard.phase ?? 'plain', queueWide: true });
  }
  const plan = await currentPlan(bank, config);
  if (!plan) return runMatchOn(bank, config, opts, null);
  // The windows the scheduler would make (worker.batch.match pending sources each), fixed before the first shard,
  // each searched on every shard as one job would: the same windows, so the same decisions and the same merge. The
  // plain phase of every window first, then the wide phase of those whose decision asks for it, as the workers' jobs.
  const windows = await pendingWindows(bank, config, opts.idRange);
  opts.logger?.info(`match: ${windows.length} window(s) of sources against the index in ${plan.ranges.length} shards (plan ${plan.id}), shard after shard`);
  const progress = opts.progress;
  progress?.setTotal(windows.reduce((a, w) => a + w.count, 0) * plan.ranges.length);
  const quiet = progress ? { tick: (n?: number, l?: string) => progress.tick(n, l), setTotal: () => undefined, stop: () => undefined } : undefined;
  let sum = emptySummary();
  for (const phase of ['plain', 'wide'] as const) {
    const todo = phase === 'plain' ? windows : await wideWindows(bank, plan.id, windows);
    for (const range of plan.ranges)
      for (const w of todo) {
        const s = await runMatchOn(bank, config, { ...opts, idRange: w, progress: quiet }, { plan, range, phase, queueWide: false });
        sum = addSummaries(sum, s);
        if (s.aborted) return sum;
      }
  }
  return sum;
}

/** The windows with sources waiting for their wide-baseline stages (the plain phase's decision chose them). */
async function wideWindows<W extends IdRange>(bank: Bank, plan: string, windows: W[]): Promise<W[]> {
  if (!windows.length) return [];
  // one read over all the windows (they are in id order)
  const rows = await bank.repo(MatchPartialsRepo).inRange(plan, windows[0]!.first, windows[windows.length - 1]!.last);
  const waiting = rows.filter((p) => p.wide?.stages && !p.wide.done).map((p) => p.sourceItemId);
  return windows.filter((w) => waiting.some((id) => id >= w.first && id <= w.last));
}

/** One match run over the whole index (shard null) or one shard. */
async function runMatchOn(bank: Bank, config: Config, opts: MatchOptions, shard: MatchShard | null): Promise<MatchSummary> {
  const t0 = performance.now();
  const run = await MatchRun.open(bank, config, opts, shard);
  if (!(run instanceof MatchRun)) return { ...run, ms: Math.round(performance.now() - t0) };
  try {
    await run.walk();
  } finally {
    await run.close();
  }
  const s = run.summary;
  s.ms = Math.round(performance.now() - t0);
  opts.logger?.info(
    `match: ${s.sources} sources ranked, ${s.withCandidates} with candidates (${s.candidates} stored), ${s.viewed} searched again with synthesised views, ` +
      `${s.archived} by archive matching (${s.denseComputed} targets' dense views computed)` +
      (s.aborted ? ' — stopped early, run again to resume' : ''),
  );
  return s;
}

/** The pending sources (in `within`) as windows of worker.batch.match, as the scheduler queues match jobs. */
async function pendingWindows(bank: Bank, config: Config, within?: IdRange): Promise<(IdRange & { count: number })[]> {
  const seq = await bank.repo(LshRepo).sequence();
  const ids: number[] = [];
  for (let after = within ? within.first - 1 : 0; ; ) {
    const page = (await bank.repo(CandidatesRepo).pendingSources(seq, after, 1000)).filter((s) => !within || s.id <= within.last);
    if (!page.length) break;
    ids.push(...page.map((s) => s.id));
    after = page[page.length - 1]!.id;
  }
  const size = config.worker.batch.match;
  const out: (IdRange & { count: number })[] = [];
  for (let i = 0; i < ids.length; i += size) out.push({ first: ids[i]!, last: ids[Math.min(ids.length, i + size) - 1]!, count: Math.min(size, ids.length - i) });
  return out;
}

/** Shard runs' summaries as one (index images and memory: the largest shard's; sources: once per shard). */
function addSummaries(a: MatchSummary, b: MatchSummary): MatchSummary {
  const out = { ...a };
  for (const k of ['indexed', 'sources', 'withCandidates', 'candidates', 'viewed', 'archived', 'denseComputed', 'reused', 'failed', 'ms'] as const) out[k] += b[k];
  out.indexedImages = Math.max(a.indexedImages, b.indexedImages);
  out.indexMemoryBytes = Math.max(a.indexMemoryBytes, b.indexMemoryBytes);
  out.aborted = a.aborted || b.aborted;
  return out;
}

export interface SearchHit {
  rank: number;
  item: Item;
  imageScore: number;
  matches: number;
  inliers: number;
  mirrored: boolean;
  /** The model that verified it (see CandidateInput.model). */
  model: 'homography' | 'fundamental';
  homography: number[] | null;
  fundamental: number[] | null;
}


/**
 * Ranks the target bank for one image (bytes of any format sharp reads). Indexes pending targets first.
 * The synthesised views and archive matching (when the search before is not confident) run on `opts.pool` when given
 * (a long-lived caller keeps one), else on a ViewPool started for this search only when views run, and stopped
 * before returning. One query a user asked about gets every stage it needs (no window budget).
 */
export async function searchImage(
  bank: Bank,
  config: Config,
  buf: Uint8Array,
  opts: { top?: number; logger?: Logger; pool?: SiftPool; threads?: number; views?: ViewPool } = {},
): Promise<SearchHit[]> {
  const q = await extractFeatures(buf, config);
  const { handle } = await syncIndex(bank, config, { logger: opts.logger });
  if (!handle.index.size) return [];
  // views: a long-lived caller's pool (the review server's), kept open; otherwise one for this search, closed after
  const own = opts.pool || opts.views ? undefined : new ViewPool(config, opts.threads, opts.logger);
  const top = opts.top ?? config.match.top;
  let cand: CandidateInput[];
  try {
    const runViews = opts.pool ? poolViews(opts.pool) : (opts.views ?? own!).run;
    const grey = greyLoader(config, () => buf);
    const r = await rankAgainstIndex(handle, config, q, top, grey, runViews);
    cand = r.cand;
    const g = config.match.views.archive.candidates && r.hits.length && unconfident(config, r.hits) ? await grey() : undefined;
    if (g && g.width === q.width && g.height === q.height) {
      const a = await archiveRank(handle, config, q, g, r.hits, r.votes.slots, runViews, denseViewsFor(bank, config, runViews));
      if (a.archive.hits.length) cand = await candidatesOf(handle, config, q, a.hits, top);
    }
  } finally {
    await own?.close();
  }
  const out: SearchHit[] = [];
  for (const c of cand) {
    const item = await bank.items.byId(c.targetItemId);
    if (!item) continue;
    out.push({
      rank: c.rank, item, imageScore: c.imageScore, matches: c.matches, inliers: c.inliers, mirrored: c.mirrored,
      model: c.model ?? 'homography', homography: c.homography, fundamental: c.fundamental ?? null,
    });
  }
  return out;
}
