// One row of an exported corpus: a caption pair with its scores and every provenance it was harvested from
// (pairs with identical caption texts are collapsed into one record; provenance lists keep one entry per item pair).
import type { PairLevel } from '../bank/index.js';

export interface ExportRecord {
  en: string;
  zh: string;
  level: PairLevel;
  c: number;
  fc: number;
  fe: number;
  fl: number;
  image_score: number;
  inliers: number;
  source_url: string[];
  target_url: string[];
  source_image: string[];
  target_image: string[];
  source_id: string[];
  target_id: string[];
  harvested_at: string;
  /** Photo credits printed with the captions (one entry per item pair, '' where none). */
  source_credit: string[];
  target_credit: string[];
}

/** Column order of TSV (and key order of JSONL). */
export const EXPORT_FIELDS = [
  'en', 'zh', 'level', 'c', 'fc', 'fe', 'fl', 'image_score', 'inliers',
  'source_url', 'target_url', 'source_image', 'target_image', 'source_id', 'target_id', 'harvested_at',
  'source_credit', 'target_credit',
] as const satisfies readonly (keyof ExportRecord)[];

export const PROVENANCE_FIELDS = ['source_url', 'target_url', 'source_image', 'target_image', 'source_id', 'target_id', 'source_credit', 'target_credit'] as const;

/** Separator of provenance lists in one TSV cell / one Moses-less prop. */
export const LIST_SEPARATOR = ' | ';

/** One line of text: tabs, newlines and other control characters collapsed to single spaces. */
export function oneLine(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f\u0085\u2028\u2029\s]+/g, ' ').trim();
}

/** Scores rounded for text formats (4 decimals is finer than any threshold). */
export const fmtScore = (x: number): string => (Number.isFinite(x) ? String(Math.round(x * 10000) / 10000) : '');
