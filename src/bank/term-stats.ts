// Document frequencies of caption terms (comparability's IDF), per language, updated incrementally.
import type Database from 'better-sqlite3';
import { TermStats, type Lang } from '../comparability/idf.js';
import type { BankName } from './items.js';

export class TermStatsRepo {
  constructor(private db: Database.Database) {}

  /** The whole table in memory (a few tens of thousands of rows at most). */
  load(): TermStats {
    const stats = new TermStats();
    for (const lang of ['en', 'zh'] as const) {
      const docs = (this.db.prepare('SELECT docs FROM term_docs WHERE lang = ?').get(lang) as { docs: number } | undefined)?.docs ?? 0;
      const rows = this.db.prepare('SELECT term, df FROM term_df WHERE lang = ?').raw().all(lang) as Array<[string, number]>;
      stats.set(lang, docs, rows);
    }
    return stats;
  }

  /** Last item id of this bank already counted (0 when none). */
  watermark(bank: BankName): number {
    const row = this.db.prepare('SELECT last_item FROM term_docs WHERE bank = ?').get(bank) as { last_item: number } | undefined;
    return row?.last_item ?? 0;
  }

  /** Counts documents (each a caption's tokens) and moves the watermark; call inside a transaction. */
  addDocuments(lang: Lang, docs: string[][], bank: BankName, lastItem: number): void {
    const inc = this.db.prepare('INSERT INTO term_df (lang, term, df) VALUES (?, ?, 1) ON CONFLICT(lang, term) DO UPDATE SET df = df + 1');
    for (const tokens of docs) for (const t of new Set(tokens)) inc.run(lang, t);
    this.db
      .prepare(
        `INSERT INTO term_docs (lang, docs, bank, last_item) VALUES (?, ?, ?, ?)
         ON CONFLICT(lang) DO UPDATE SET docs = docs + excluded.docs, last_item = excluded.last_item`,
      )
      .run(lang, docs.length, bank, lastItem);
  }
}
