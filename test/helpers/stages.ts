// What the match stage did before it stopped doing the features stage's work: SIFT for whatever is still new and the
// targets' LSH codes, then the match. Tests of matching that start from imported (unfeatured) items use this; the
// features stage's caption counting (IDF) is left out, as those tests never score captions (and it would load the
// lexicon into every fresh data dir).
import type { Bank } from '../../src/bank/index.js';
import type { Config } from '../../src/config/schema.js';
import { computeMissingFeatures } from '../../src/stages/features/index.js';
import { indexTargets } from '../../src/lib/image-index/index.js';
import { runMatch, type MatchOptions, type MatchSummary } from '../../src/stages/match/index.js';

export interface FeaturesThenMatch extends MatchSummary {
  /** Items moved to 'featured' (computed or reused). */
  featured: number;
  /** Items marked failed by the features step. */
  featureFailures: number;
  /** Images that reused a near-identical picture's features. */
  twins: number;
}

/** `retryFailed`: first send the failed items back, as `capbridge match --retry-failed` does. */
export async function featuresThenMatch(bank: Bank, config: Config, opts: MatchOptions & { retryFailed?: boolean } = {}): Promise<FeaturesThenMatch> {
  if (opts.retryFailed) await bank.items.retryFailed();
  const f = await computeMissingFeatures(bank, config, { threads: opts.threads, signal: opts.signal, logger: opts.logger, idRange: opts.idRange });
  const { indexed } = f.aborted ? { indexed: 0 } : await indexTargets(bank, config, { signal: opts.signal, logger: opts.logger, idRange: opts.idRange });
  const m = await runMatch(bank, config, opts);
  // targets newly indexed: by the features step (it writes their LSH codes) or, for older rows, by the match stage
  return { ...m, indexed: m.indexed + indexed, featured: f.featured + f.skipped, featureFailures: f.failed, twins: f.twins, aborted: m.aborted || f.aborted };
}
