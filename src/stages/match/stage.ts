// The match stage and image search (stage contract): the index is brought in step with the target bank (the features
// stage, run before, wrote the targets' LSH codes), then every source item not yet matched, or matched before targets were added, is
// ranked against the index; its verified candidates are stored (committed per batch, so a killed run resumes).
// The plain searches come first; the synthesised views and archive matching then go, within each window's budgets,
// to the sources whose plain search found nothing confident (run.ts, wide.ts).
import type { Bank, Item } from '../../bank/index.js';
import type { CandidateInput } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import { extractFeatures } from '../../lib/sift/index.js';
import type { SiftPool } from '../../lib/sift/index.js';
import type { Logger } from '../../util/log.js';
import { syncIndex } from '../../lib/image-index/index.js';
import { poolViews } from './views.js';
import { ViewPool, archiveRank, candidatesOf, denseViewsFor, greyLoader, rankAgainstIndex, unconfident } from './rank.js';
import { MatchRun, type MatchOptions, type MatchSummary } from './run.js';

export { ViewPool, rankAgainstIndex, rescaleCandidate, toOriginal } from './rank.js';
export { observeSourceCosts, type MatchOptions, type MatchStageName, type MatchSummary, type SourceCost } from './context.js';

export async function runMatch(bank: Bank, config: Config, opts: MatchOptions = {}): Promise<MatchSummary> {
  const t0 = performance.now();
  const run = await MatchRun.open(bank, config, opts);
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
      const a = await archiveRank(handle, config, q, g, r.hits, runViews, denseViewsFor(bank, config, runViews));
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
