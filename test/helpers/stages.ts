// What `capbridge match` does: the features stage for whatever is still new, then the match stage. Tests that start
// from imported (unfeatured) items use this; the match stage itself only matches featured items.
import type { Bank } from '../../src/bank/index.js';
import type { Config } from '../../src/config/schema.js';
import { runFeatures } from '../../src/stages/features/index.js';
import { runMatch, type MatchOptions, type MatchSummary } from '../../src/stages/match/index.js';

export interface FeaturesThenMatch extends MatchSummary {
  /** Items the features stage moved to 'featured' (computed or reused). */
  featured: number;
  /** Items the features stage marked failed. */
  featureFailures: number;
  /** Images that reused a near-identical picture's features. */
  twins: number;
}

/** `retryFailed`: first send the failed items back, as `capbridge match --retry-failed` does. */
export async function featuresThenMatch(bank: Bank, config: Config, opts: MatchOptions & { retryFailed?: boolean } = {}): Promise<FeaturesThenMatch> {
  if (opts.retryFailed) await bank.items.retryFailed();
  const f = await runFeatures(bank, config, { threads: opts.threads, signal: opts.signal, logger: opts.logger, idRange: opts.idRange });
  const m = await runMatch(bank, config, opts);
  return { ...m, featured: f.featured + f.skipped, featureFailures: f.failed, twins: f.twins, aborted: m.aborted || f.aborted };
}
