// Document frequencies of caption terms (comparability's IDF), per language, updated incrementally.
import type { Sql } from './sql.js';
import type { BankName } from './items.js';

/** A caption's language as the IDF table counts it (the source bank's captions are English, the target's Chinese). */
export type Lang = 'en' | 'zh';

/** The table as counts: documents per language and each term's document frequency (comparability's TermStats reads it). */
export interface TermCounts {
  docs: Record<Lang, number>;
  df: Record<Lang, Map<string, number>>;
}

export class TermStatsRepo {
  constructor(private db: Sql) {}

  /** The whole table in memory (a few tens of thousands of rows at most). */
  async load(): Promise<TermCounts> {
    const counts: TermCounts = { docs: { en: 0, zh: 0 }, df: { en: new Map(), zh: new Map() } };
    for (const lang of ['en', 'zh'] as const) {
      counts.docs[lang] = Number((await this.db.get<{ docs: number }>('SELECT docs FROM term_docs WHERE lang = ?', [lang]))?.docs ?? 0);
      const rows = await this.db.all<{ term: string; df: number }>('SELECT term, df FROM term_df WHERE lang = ?', [lang]);
      counts.df[lang] = new Map(rows.map((r) => [r.term, Number(r.df)] as [string, number]));
    }
    return counts;
  }

  /** Items of a bank whose caption the table has not counted yet (idf_counted, migration 18), in id order; only
   *  ids in `range` when given (a features job's). `caption` is null where there is nothing to count (the caption
   *  is empty or failed its language check): such an item is only marked. */
  uncounted(bank: BankName, limit: number, afterId = 0, range?: { first: number; last: number }): Promise<{ id: number; caption: string | null }[]> {
    return this.db
      .all<{ id: number; caption: string | null }>(
        `SELECT id, CASE WHEN caption_status = 'ok' THEN caption END AS caption FROM items
         WHERE bank = ? AND idf_counted = 0 AND id > ? AND id <= ? ORDER BY id LIMIT ?`,
        [bank, Math.max(afterId, range ? range.first - 1 : 0), range ? range.last : Number.MAX_SAFE_INTEGER, limit],
      )
      .then((rows) => rows.map((r) => ({ id: Number(r.id), caption: r.caption && r.caption.trim() ? r.caption : null })));
  }

  /**
   * A fixed sample of at most `n` captions of a bank (items whose caption passed, non-empty): the comparability null
   * margin's reference. The order is a hash of the id, so the sample is the same on every call and both backends, and an
   * item joins it as the bank grows only if its hash places it among the first n.
   */
  async sampleCaptions(bank: BankName, n: number): Promise<string[]> {
    if (n <= 0) return [];
    const rows = await this.db.all<{ caption: string }>(
      `SELECT caption FROM items WHERE bank = ? AND caption_status = 'ok' AND caption IS NOT NULL AND caption <> ''
       ORDER BY (id * 7919) % 10007, id LIMIT ?`,
      [bank, n],
    );
    return rows.map((r) => r.caption).filter((c) => c.trim() !== '');
  }

  /** Whether a bank (none given: either bank) has captions left to count. */
  async anyUncounted(bank?: BankName): Promise<boolean> {
    const row = bank
      ? await this.db.get('SELECT 1 AS x FROM items WHERE bank = ? AND idf_counted = 0 LIMIT 1', [bank])
      : await this.db.get('SELECT 1 AS x FROM items WHERE idf_counted = 0 LIMIT 1');
    return row !== undefined;
  }

  /**
   * Counts the documents of these items (each a caption's tokens; null: nothing to count) and marks the items
   * counted; call inside a transaction. An item another process marked meanwhile is skipped, so each caption counts
   * once however many processes count at the same time. Returns the documents counted.
   */
  async addDocuments(lang: Lang, docs: { itemId: number; tokens: string[] | null }[]): Promise<number> {
    if (!docs.length) return 0;
    // one writer at a time on PostgreSQL: concurrent upserts of overlapping terms in different orders deadlock
    if (this.db.dialect === 'postgres') await this.db.get('SELECT pg_advisory_xact_lock(7216019)');
    const mine = new Set<number>();
    for (let i = 0; i < docs.length; i += 500) {
      const ids = docs.slice(i, i + 500).map((d) => d.itemId);
      const rows = await this.db.all<{ id: number }>(`UPDATE items SET idf_counted = 1 WHERE idf_counted = 0 AND id IN (${ids.map(() => '?').join(', ')}) RETURNING id`, ids);
      for (const r of rows) mine.add(Number(r.id));
    }
    const counted = docs.filter((d) => d.tokens && mine.has(d.itemId));
    if (!counted.length) return 0;
    const terms: [string, string][] = [];
    for (const d of counted) for (const t of new Set(d.tokens!)) terms.push([lang, t]);
    await this.db.runMany('INSERT INTO term_df (lang, term, df) VALUES (?, ?, 1) ON CONFLICT(lang, term) DO UPDATE SET df = term_df.df + 1', terms);
    await this.db.run(
      `INSERT INTO term_docs (lang, docs, bank, last_item) VALUES (?, ?, ?, 0)
       ON CONFLICT(lang) DO UPDATE SET docs = term_docs.docs + excluded.docs`,
      [lang, counted.length, lang === 'en' ? 'source' : 'target'],
    );
    return counted.length;
  }
}
