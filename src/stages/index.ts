// The pipeline's stages behind one contract, and their registry: crawl → features → match → pair, each a resumable
// run over bank rows (DEVELOPERS.md, "Rules of the house") that the daemon's cycle, `capbridge worker`'s jobs,
// `capbridge eval`, the demo and the benchmarks all run the same way. Each stage is imported on first use with a
// literal specifier (type-checked against its real signature; a CLI start does not pay for loading the crawler, SIFT or
// the lexicon), and each returns one typed summary: what every caller needs (items handled, items failed, stopped
// early, time) beside the stage's own detail.
import type { Bank, IdRange } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import type { CrawlOptions, CrawlSummary } from './crawl/stage.js';
import type { PairingOptions, PairingSummary } from './pair/pairing.js';
import type { MatchOptions, MatchSummary } from './match/stage.js';
import type { SiftStageSummary } from './features/stage.js';
import type { Logger } from '../util/log.js';
import type { Progress } from '../util/progress.js';

export const STAGES = ['crawl', 'features', 'match', 'pair'] as const;
export type StageName = (typeof STAGES)[number];

/** What every stage takes. */
export interface StageOptions {
  logger?: Logger;
  progress?: Progress;
  /** Checked between batches: the stage commits what it did and returns with `aborted`. */
  signal?: AbortSignal;
  /** Only items with ids in this range (a worker's job); default all. */
  idRange?: IdRange;
  /** SIFT threads (features, and the views of match); default config sift.threads. */
  threads?: number;
}

/** What one stage takes beyond StageOptions (its own knobs, for the commands and benchmarks that use them). */
export interface StageExtras {
  crawl: Pick<CrawlOptions, 'site' | 'sites' | 'sitesDir' | 'retryGivenUp' | 'resolve' | 'clock' | 'random'>;
  features: Record<never, never>;
  match: Pick<MatchOptions, 'top' | 'batchSize' | 'onSource' | 'retryFailed'>;
  pair: Pick<PairingOptions, 'batchSize' | 'all' | 'scorer' | 'minLevel'>;
}

/** Each stage's own summary. */
export interface StageDetails {
  crawl: CrawlSummary;
  features: SiftStageSummary & { indexed: number; captionsCounted: number };
  match: MatchSummary;
  pair: PairingSummary;
}

/** One stage run, as every caller sees it. */
export interface StageSummary<N extends StageName = StageName> {
  stage: N;
  /** Items the run handled (crawl: pages fetched; features: items featured, skipped or failed; match and pair:
   *  source items). */
  items: number;
  /** Items marked failed by this run (sites that could not run, for the crawl). */
  failed: number;
  aborted: boolean;
  ms: number;
  detail: StageDetails[N];
}

export type Stage<N extends StageName> = (bank: Bank, config: Config, opts?: StageOptions & StageExtras[N]) => Promise<StageSummary<N>>;
type Registry = { [N in StageName]: () => Promise<Stage<N>> };

/** Runs `fn` and times it into a StageSummary. */
const timed = <N extends StageName>(stage: N, run: () => Promise<StageDetails[N]>, count: (d: StageDetails[N]) => { items: number; failed: number; aborted: boolean }) =>
  async (): Promise<StageSummary<N>> => {
    const t0 = performance.now();
    const detail = await run();
    return { stage, ...count(detail), ms: Math.round(performance.now() - t0), detail };
  };

const REGISTRY: Registry = {
  crawl: async () => {
    const { runCrawl } = await import('./crawl/stage.js');
    return (bank, config, o = {}) =>
      timed('crawl', () => runCrawl(bank, config, { ...o, once: true }), (d) => ({ items: d.pagesFetched, failed: d.sitesFailed, aborted: o.signal?.aborted === true }))();
  },
  features: async () => {
    const { runFeatures } = await import('./match/stage.js');
    const { updateIdf } = await import('../lib/comparability/index.js');
    // The features of a range's items, then their captions into the IDF table: the counting (about 2 ms a caption)
    // is spread over the features jobs, which run in parallel, instead of waiting for the pairing's start.
    const run = async (bank: Bank, config: Config, o: StageOptions): Promise<StageDetails['features']> => {
      const d = await runFeatures(bank, config, o);
      if (d.aborted) return { ...d, captionsCounted: 0 };
      const { added } = await updateIdf(bank, config, { idRange: o.idRange, signal: o.signal });
      return { ...d, captionsCounted: added.source + added.target, aborted: o.signal?.aborted === true };
    };
    return (bank, config, o = {}) =>
      timed('features', () => run(bank, config, o), (d) => ({ items: d.featured + d.skipped + d.failed, failed: d.failed, aborted: d.aborted }))();
  },
  match: async () => {
    const { runMatch } = await import('./match/stage.js');
    return (bank, config, o = {}) => timed('match', () => runMatch(bank, config, o), (d) => ({ items: d.sources, failed: d.failed, aborted: d.aborted }))();
  },
  pair: async () => {
    const { runPairing } = await import('./pair/pairing.js');
    return (bank, config, o = {}) => timed('pair', () => runPairing(bank, config, o), (d) => ({ items: d.sources, failed: d.failed, aborted: d.aborted }))();
  },
};

/** The stage of this name, loaded on first use. */
export function loadStage<N extends StageName>(name: N): Promise<Stage<N>> {
  return (REGISTRY[name] as () => Promise<Stage<N>>)();
}

/**
 * What a stage can do ahead of its first run, while a worker waits for the stage before it to finish (the stages go
 * in order): match loads the index of the target rows written so far (its runs then only add the rest), pairing
 * counts the captions left uncounted into the IDF table and loads the lexicon. The work is the stage's own (a run
 * would do it first), so doing it early changes no result.
 */
export async function warmStage(name: StageName, bank: Bank, config: Config, opts: { signal?: AbortSignal } = {}): Promise<void> {
  if (name === 'match') {
    const { openIndex } = await import('../lib/image-index/store.js');
    await openIndex(bank, config);
  } else if (name === 'pair') {
    const { updateIdf } = await import('../lib/comparability/index.js');
    await updateIdf(bank, config, { signal: opts.signal });
    const { loadLexicon } = await import('../lib/comparability/lexicon.js');
    loadLexicon({ dataDir: bank.dataDir });
  }
}

/** Whether a stage's layer is in this build (the demo runs without the crawler when it is not). */
export async function hasStage(name: StageName): Promise<boolean> {
  try {
    await loadStage(name);
    return true;
  } catch {
    return false;
  }
}
