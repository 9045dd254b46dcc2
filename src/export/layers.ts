// The stages of other layers, as the stage contract (DEVELOPERS.md) names them. Layers in this build are imported
// on first use with literal specifiers (type-checked against their real signatures, and a CLI start does not pay
// for loading crawlee, SIFT or the lexicon); a layer not yet in the build is loaded on demand and
// reported as unavailable (null) — the daemon logs the stage as skipped and the commands say which layer is
// missing — never replaced by a stand-in.
import type { Bank } from '../bank/index.js';
import type { ScoreResult } from '../comparability/index.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../util/log.js';
import type { Progress } from '../util/progress.js';

export interface StageOptions {
  logger?: Logger;
  progress?: Progress;
  signal?: AbortSignal;
  [k: string]: unknown;
}
export type StageFn = (bank: Bank, config: Config, opts: StageOptions) => Promise<Record<string, unknown>>;

export type { ScoreResult };
/** What pairing needs of a scorer (the comparability layer's Scorer has more). */
export interface Scorer {
  score(en: string, zh: string): ScoreResult | Promise<ScoreResult>;
}
export type CreateScorer = (config: Config, opts: { bank?: Bank; dataDir?: string }) => Scorer | Promise<Scorer>;

async function load(spec: string): Promise<Record<string, unknown> | null> {
  try {
    return (await import(spec)) as Record<string, unknown>;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes(spec.replace(/^\.\.\//, '').replace(/\.js$/, ''))) return null;
    throw err;
  }
}

async function fn<T>(spec: string, name: string): Promise<T | null> {
  const mod = await load(spec);
  const f = mod?.[name];
  return typeof f === 'function' ? (f as T) : null;
}

export const LAYER_MODULES = {
  match: ['../lsh-index/stage.js', 'runMatch'],
  exportCandidates: ['../lsh-index/export-candidates.js', 'exportCandidatesJsonl'],
} as const;

export const loadCrawl = async (): Promise<StageFn> => {
  const { runCrawl } = await import('../crawler/stage.js');
  return (bank, config, opts) => runCrawl(bank, config, opts) as unknown as Promise<Record<string, unknown>>;
};
export const loadFeatures = async (): Promise<StageFn> => {
  const { computeMissingFeatures } = await import('../sift/stage.js');
  return (bank, config, opts) => computeMissingFeatures(bank, config, opts) as unknown as Promise<Record<string, unknown>>;
};
export const loadMatch = () => fn<StageFn>(...LAYER_MODULES.match);
export const loadCreateScorer = async (): Promise<CreateScorer> => {
  const { createScorer } = await import('../comparability/index.js');
  return (config, opts) => createScorer(config, opts);
};
/** Brings the comparability layer's IDF table up to date with new captions (when the layer exposes it). */
export const loadUpdateIdf = async () => {
  const { updateIdf } = await import('../comparability/index.js');
  return (bank: Bank, config: Config, opts: { signal?: AbortSignal }) => updateIdf(bank, config, opts);
};
export const loadExportCandidates = () =>
  fn<(bank: Bank, out: string) => Promise<unknown> | unknown>(...LAYER_MODULES.exportCandidates);
