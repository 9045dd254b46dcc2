// Document frequencies for the TF-IDF weights, per language. Kept in memory here; persisted in the bank by
// TermStatsRepo (migration 4) and updated incrementally as captions arrive. With too few documents, every
// term weighs the same (uniform IDF): stopwords already remove the most frequent words.

import type { Lang, TermCounts } from '../../bank/index.js';

export type { Lang };

export interface IdfSource {
  idf(lang: Lang, term: string): number;
  /** The share of captions of this language that hold the term (the null model's chance of meeting it). */
  chance(lang: Lang, term: string): number;
  /** Changes whenever idf() or chance() may answer differently (what is computed from them is computed again). */
  readonly version?: number;
}

/**
 * The chance of a term before the bank says anything: a term is taken to be in CHANCE_PRIOR of the captions, and the
 * bank's counts move it from there as if CHANCE_PRIOR_DOCS captions had been seen already (a small bank, e.g. the demo
 * with a dozen captions a side, cannot make a word it holds once look rare).
 */
export const CHANCE_PRIOR = 0.05;
export const CHANCE_PRIOR_DOCS = 20;

export const MIN_DOCS_FOR_IDF = 20;

export class TermStats implements IdfSource {
  readonly docs: Record<Lang, number> = { en: 0, zh: 0 };
  readonly df: Record<Lang, Map<string, number>> = { en: new Map(), zh: new Map() };
  private memo: Record<Lang, Map<string, number>> = { en: new Map(), zh: new Map() };
  private changes = 0;

  get version(): number {
    return this.changes;
  }

  /** Adds one caption's distinct terms. */
  addDocument(lang: Lang, tokens: Iterable<string>): void {
    this.docs[lang]++;
    this.changes++;
    this.memo[lang].clear();
    const m = this.df[lang];
    for (const t of new Set(tokens)) m.set(t, (m.get(t) ?? 0) + 1);
  }

  /** The table as the bank stores it (TermStatsRepo.load). */
  static from(counts: TermCounts): TermStats {
    const stats = new TermStats();
    for (const lang of ['en', 'zh'] as const) stats.set(lang, counts.docs[lang], counts.df[lang]);
    return stats;
  }

  set(lang: Lang, docs: number, df: Iterable<[string, number]>): void {
    this.docs[lang] = docs;
    this.df[lang] = new Map(df);
    this.changes++;
    this.memo[lang].clear();
  }

  chance(lang: Lang, term: string): number {
    return ((this.df[lang].get(term) ?? 0) + CHANCE_PRIOR * CHANCE_PRIOR_DOCS) / (this.docs[lang] + CHANCE_PRIOR_DOCS);
  }

  idf(lang: Lang, term: string): number {
    const n = this.docs[lang];
    if (n < MIN_DOCS_FOR_IDF) return 1;
    let v = this.memo[lang].get(term);
    if (v === undefined) {
      v = Math.log((n + 1) / ((this.df[lang].get(term) ?? 0) + 1)) + 1;
      this.memo[lang].set(term, v);
    }
    return v;
  }
}

export const UNIFORM_IDF: IdfSource = { idf: () => 1, chance: () => CHANCE_PRIOR };
