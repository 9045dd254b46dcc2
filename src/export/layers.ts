// The stages of other layers, as the stage contract (DEVELOPERS.md, helper preamble) names them, loaded on demand.
// A layer that is not part of this build is reported as unavailable (null) — the daemon logs the stage as skipped
// and the commands say which layer is missing — never replaced by a stand-in.
import type { Bank } from '../bank/index.js';
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

export interface ScoreResult {
  fc: number;
  fe: number;
  fl: number;
  c: number;
  level: 'par' | 'com' | 'pse' | 'inc';
  explain: unknown;
}
export interface Scorer {
  score(en: string, zh: string): ScoreResult | Promise<ScoreResult>;
  [k: string]: unknown;
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
  crawl: ['../crawler/stage.js', 'runCrawl'],
  features: ['../sift/stage.js', 'computeMissingFeatures'],
  match: ['../lsh-index/stage.js', 'runMatch'],
  scorer: ['../comparability/index.js', 'createScorer'],
  exportCandidates: ['../lsh-index/export-candidates.js', 'exportCandidatesJsonl'],
} as const;

export const loadCrawl = () => fn<StageFn>(...LAYER_MODULES.crawl);
export const loadFeatures = () => fn<StageFn>(...LAYER_MODULES.features);
export const loadMatch = () => fn<StageFn>(...LAYER_MODULES.match);
export const loadCreateScorer = () => fn<CreateScorer>(...LAYER_MODULES.scorer);
/** Brings the comparability layer's IDF table up to date with new captions (when the layer exposes it). */
export const loadUpdateIdf = () =>
  fn<(bank: Bank, config: Config, opts: { signal?: AbortSignal }) => Promise<unknown>>('../comparability/index.js', 'updateIdf');
export const loadExportCandidates = () =>
  fn<(bank: Bank, out: string) => Promise<unknown> | unknown>(...LAYER_MODULES.exportCandidates);
