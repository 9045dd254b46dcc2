// Document frequencies of caption terms (comparability's IDF), per language, updated incrementally.
import type { Sql } from './sql.js';
import { TermStats, type Lang } from '../comparability/idf.js';
import type { BankName } from './items.js';

export class TermStatsRepo {
  constructor(private db: Sql) {}

  /** The whole table in memory (a few tens of thousands of rows at most). */
  async load(): Promise<TermStats> {
    const stats = new TermStats();
    for (const lang of ['en', 'zh'] as const) {
      const docs = Number((await this.db.get<{ docs: number }>('SELECT docs FROM term_docs WHERE lang = ?', [lang]))?.docs ?? 0);
      const rows = await this.db.all<{ term: string; df: number }>('SELECT term, df FROM term_df WHERE lang = ?', [lang]);
      stats.set(lang, docs, rows.map((r) => [r.term, Number(r.df)] as [string, number]));
    }
    return stats;
  }

  /** Last item id of this bank already counted (0 when none). */
  async watermark(bank: BankName): Promise<number> {
    const row = await this.db.get<{ last_item: number }>('SELECT last_item FROM term_docs WHERE bank = ?', [bank]);
    return Number(row?.last_item ?? 0);
  }

  /** Counts documents (each a caption's tokens) and moves the watermark; call inside a transaction. With `from`
   *  (the watermark the documents were read after), nothing is counted and false returned when another process
   *  moved the watermark meanwhile (workers on several machines update the table; each caption counts once). */
  async addDocuments(lang: Lang, docs: string[][], bank: BankName, lastItem: number, from?: number): Promise<boolean> {
    if (this.db.dialect === 'postgres') await this.db.get('SELECT pg_advisory_xact_lock(7216019)');
    if (from !== undefined && (await this.watermark(bank)) !== from) return false;
    const terms: [string, string][] = [];
    for (const tokens of docs) for (const t of new Set(tokens)) terms.push([lang, t]);
    await this.db.runMany('INSERT INTO term_df (lang, term, df) VALUES (?, ?, 1) ON CONFLICT(lang, term) DO UPDATE SET df = term_df.df + 1', terms);
    await this.db.run(
      `INSERT INTO term_docs (lang, docs, bank, last_item) VALUES (?, ?, ?, ?)
       ON CONFLICT(lang) DO UPDATE SET docs = term_docs.docs + excluded.docs, last_item = excluded.last_item`,
      [lang, docs.length, bank, lastItem],
    );
    return true;
  }
}
