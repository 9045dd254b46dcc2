// The stages behind one contract, and their registry: crawl → features → match → pair, each a resumable run over bank
// rows (DEVELOPERS.md, "Rules of the house"), then export (sentence pairs → corpus files). The daemon's cycle,
// `capbridge worker`'s jobs, the CLI's commands, `capbridge eval`, the demo and the benchmarks all run a stage the
// same way: `loadStage(name)`. Each stage is imported on first use with a literal specifier (type-checked against its
// real signature; a CLI start does not pay for loading the crawler, SIFT or the lexicon), and each returns one typed
// summary: what every caller needs (items handled, items failed, stopped early, time) beside the stage's own detail.
import type { Bank, IdRange } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import type { CrawlOptions, CrawlSummary } from './crawl/index.js';
import type { PairingOptions, PairingSummary } from './pair/index.js';
import type { MatchOptions, MatchSummary } from './match/index.js';
import type { FeaturesOptions, FeaturesSummary } from './features/index.js';
import type { ExportOptions, ExportSummary } from './export/index.js';
import type { Logger } from '../util/log.js';
import type { Progress } from '../util/progress.js';

/** The pipeline's stages, in order (what a daemon cycle runs and workers take as jobs). */
export const STAGES = ['crawl', 'features', 'match', 'pair'] as const;
export type StageName = (typeof STAGES)[number];
/** Every stage the registry holds: the pipeline's, and export (run on demand and on the export schedule). */
export type AnyStageName = StageName | 'export';

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
  features: Pick<FeaturesOptions, 'reencodeProgress'>;
  match: Pick<MatchOptions, 'top' | 'batchSize' | 'shard' | 'reencodeProgress'>;
  pair: Pick<PairingOptions, 'batchSize' | 'all' | 'scorer' | 'minLevel'>;
  export: Omit<ExportOptions, 'logger'>;
}

/** Each stage's own summary. */
export interface StageDetails {
  crawl: CrawlSummary;
  features: FeaturesSummary;
  match: MatchSummary;
  pair: PairingSummary;
  export: ExportSummary;
}

/** One stage run, as every caller sees it. */
export interface StageSummary<N extends AnyStageName = StageName> {
  stage: N;
  /** Items the run handled (crawl: pages fetched; features: items featured, skipped or failed; match and pair:
   *  source items; export: records written). */
  items: number;
  /** Items marked failed by this run (sites that could not run, for the crawl; records left out, for export). */
  failed: number;
  aborted: boolean;
  ms: number;
  detail: StageDetails[N];
}

/** A stage: export needs its options (a format and a file), the pipeline's stages run with none. */
export type Stage<N extends AnyStageName> = N extends 'export'
  ? (bank: Bank, config: Config, opts: StageOptions & StageExtras['export']) => Promise<StageSummary<'export'>>
  : (bank: Bank, config: Config, opts?: StageOptions & StageExtras[N]) => Promise<StageSummary<N>>;
type Registry = { [N in AnyStageName]: () => Promise<Stage<N>> };

/** Runs `fn` and times it into a StageSummary. */
const timed = <N extends AnyStageName>(stage: N, run: () => Promise<StageDetails[N]>, count: (d: StageDetails[N]) => { items: number; failed: number; aborted: boolean }) =>
  async (): Promise<StageSummary<N>> => {
    const t0 = performance.now();
    const detail = await run();
    return { stage, ...count(detail), ms: Math.round(performance.now() - t0), detail };
  };

const REGISTRY: Registry = {
  crawl: async () => {
    const { runCrawl } = await import('./crawl/index.js');
    return (bank, config, o = {}) =>
      timed('crawl', () => runCrawl(bank, config, { ...o, once: true }), (d) => ({ items: d.pagesFetched, failed: d.sitesFailed, aborted: o.signal?.aborted === true }))();
  },
  features: async () => {
    const { runFeatures } = await import('./features/index.js');
    return (bank, config, o = {}) =>
      timed('features', () => runFeatures(bank, config, o), (d) => ({ items: d.featured + d.skipped + d.failed, failed: d.failed, aborted: d.aborted }))();
  },
  match: async () => {
    const { runMatch } = await import('./match/index.js');
    return (bank, config, o = {}) => timed('match', () => runMatch(bank, config, o), (d) => ({ items: d.sources, failed: d.failed, aborted: d.aborted }))();
  },
  pair: async () => {
    const { runPairing } = await import('./pair/index.js');
    return (bank, config, o = {}) => timed('pair', () => runPairing(bank, config, o), (d) => ({ items: d.sources, failed: d.failed, aborted: d.aborted }))();
  },
  export: async () => {
    const { exportPairs } = await import('./export/index.js');
    return (bank, config, o) => timed('export', () => exportPairs(bank, config, o), (d) => ({ items: d.records, failed: d.skipped, aborted: false }))();
  },
};

/** The stage of this name, loaded on first use. */
export function loadStage<N extends AnyStageName>(name: N): Promise<Stage<N>> {
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
    // A sharded index is not loaded ahead: which shard this worker's next job needs is not known yet (the queue then
    // prefers the jobs of the shards it holds).
    const { storedPlan } = await import('./match/index.js');
    const { openIndex } = await import('../lib/image-index/index.js');
    if (!(await storedPlan(bank))) await openIndex(bank, config);
  } else if (name === 'pair') {
    const { updateIdf } = await import('../lib/comparability/index.js');
    await updateIdf(bank, config, { signal: opts.signal });
    const { loadLexicon } = await import('../lib/comparability/index.js');
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
