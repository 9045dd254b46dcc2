// What pairing and the export commands need of other layers (the comparability layer's scorer and IDF table, the
// candidates export), imported on first use with literal specifiers: type-checked against their real signatures,
// and a CLI start does not pay for loading the lexicon. (The pipeline's stages are src/stages/'s.)
import type { Bank } from '../../bank/index.js';
import type { CaptionAlignment, ScoreResult, SentencePairScore } from '../../lib/comparability/index.js';
import type { Config } from '../../config/schema.js';

export type { CaptionAlignment, ScoreResult, SentencePairScore };
/** What pairing needs of a scorer (the comparability layer's Scorer has more). */
export interface Scorer {
  score(en: string, zh: string): ScoreResult | Promise<ScoreResult>;
  /** The caption pair split into sentences and aligned. */
  align(en: string, zh: string): CaptionAlignment | Promise<CaptionAlignment>;
  /** Words of a Chinese text (jieba), for export.maxChineseWords. */
  chineseWordCount(text: string): number;
  /** Documents in the IDF table the scorer uses (pairs scored with a much smaller one are re-decided). */
  idfDocs?: number;
}
export type CreateScorer = (config: Config, opts: { bank?: Bank; dataDir?: string }) => Scorer | Promise<Scorer>;

export const loadCreateScorer = async (): Promise<CreateScorer> => {
  const { createScorer } = await import('../../lib/comparability/index.js');
  return (config, opts) => createScorer(config, opts);
};
/** Brings the comparability layer's IDF table up to date with new captions. */
export const loadUpdateIdf = async () => {
  const { updateIdf } = await import('../../lib/comparability/index.js');
  return (bank: Bank, config: Config, opts: { signal?: AbortSignal }) => updateIdf(bank, config, opts);
};
export const loadExportCandidates = async () => {
  const { exportCandidatesJsonl } = await import('../export/candidates.js');
  return (bank: Bank, out: string) => exportCandidatesJsonl(bank, out);
};
