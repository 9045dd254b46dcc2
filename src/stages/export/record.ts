// One row of an exported corpus: a sentence pair with its scores and every provenance it was harvested from
// (sentence pairs with identical texts are collapsed into one record; provenance lists keep one entry per item pair:
// the caption pair's id in the bank, the sentences' indices in each caption, the items' ids, pages and images).
import type { Level } from '../../bank/index.js';

export interface ExportRecord {
  en: string;
  zh: string;
  level: Level;
  c: number;
  fc: number;
  fe: number;
  fl: number;
  fcov: number;
  image_score: number;
  inliers: number;
  source_url: string[];
  target_url: string[];
  source_image: string[];
  target_image: string[];
  source_id: string[];
  target_id: string[];
  /** The caption pair (pairs.id) each provenance's sentence pair was aligned in. */
  pair_id: string[];
  /** Sentence indices in the English and the Chinese caption ("0", or "1-2" for two merged; credits not counted). */
  en_sentences: string[];
  zh_sentences: string[];
  harvested_at: string;
  /** Photo credits printed with the captions (one entry per item pair, '' where none). */
  source_credit: string[];
  target_credit: string[];
}

/** Column order of TSV (and key order of JSONL). */
export const EXPORT_FIELDS = [
  'en', 'zh', 'level', 'c', 'fc', 'fe', 'fl', 'fcov', 'image_score', 'inliers',
  'source_url', 'target_url', 'source_image', 'target_image', 'source_id', 'target_id', 'pair_id', 'en_sentences', 'zh_sentences', 'harvested_at',
  'source_credit', 'target_credit',
] as const satisfies readonly (keyof ExportRecord)[];

export const PROVENANCE_FIELDS = [
  'source_url', 'target_url', 'source_image', 'target_image', 'source_id', 'target_id', 'pair_id', 'en_sentences', 'zh_sentences', 'source_credit', 'target_credit',
] as const;

/** Separator of provenance lists in one TSV cell / one Moses-less prop. */
export const LIST_SEPARATOR = ' | ';

/** One line of text: tabs, newlines and other control characters collapsed to single spaces. */
export function oneLine(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f\u0085\u2028\u2029\s]+/g, ' ').trim();
}

/** Scores rounded for text formats (4 decimals is finer than any threshold). */
export const fmtScore = (x: number): string => (Number.isFinite(x) ? String(Math.round(x * 10000) / 10000) : '');

/** A record that cannot be written, and why (the exporter skips it and names its pairs and items). */
export class ExportRecordError extends Error {}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The text itself when UTF-8 can encode it; an unpaired UTF-16 surrogate (a caption cut inside a character by some
 * earlier program) cannot be, and Node would silently write U+FFFD in its place: refused instead.
 */
export function assertUtf8(text: string, what: string): string {
  const m = LONE_SURROGATE.exec(text);
  if (m) throw new ExportRecordError(`${what}: unpaired surrogate U+${m[0].charCodeAt(0).toString(16).toUpperCase()} at character ${m.index} cannot be encoded as UTF-8`);
  return text;
}
