// Aligned sentence pairs of caption pairs (the `sentence_pairs` table, migration 11) and the export walk over them.
// The pairing stage replaces a caption pair's sentence pairs whenever it re-decides that pair; a sentence pair whose
// texts were exported before keeps its export watermark, so `export --new` never writes it again.
import type { Sql } from './sql.js';
import { LEVEL_RANK, textKey, type Level, type SentencePairDecision, type SentencePairFields } from './pairs.js';

export interface SentencePairRow extends SentencePairFields {
  id: number;
  pairId: number;
  sourceItemId: number;
  targetItemId: number;
  textKey: string;
  emitted: number;
  exportedAt: string | null;
}

/** A sentence pair with the provenance of its caption pair and items, as exports read it. */
export interface SentencePairForExport extends SentencePairRow {
  imageScore: number | null;
  inliers: number | null;
  sourceExtId: string;
  targetExtId: string;
  sourceUrl: string | null;
  targetUrl: string | null;
  sourceImage: string | null;
  targetImage: string | null;
  /** Photo credits stored with the items (migration 10). */
  sourceCredit: string | null;
  targetCredit: string | null;
  sourceHarvestedAt: string | null;
  targetHarvestedAt: string | null;
  /** 1 when a sentence pair with the same texts was exported before (only set for onlyNew walks). */
  textExported: number;
}

const COLUMNS = `sp.id, sp.pair_id AS "pairId", sp.source_item_id AS "sourceItemId", sp.target_item_id AS "targetItemId",
  sp.en_first AS "enFirst", sp.en_last AS "enLast", sp.zh_first AS "zhFirst", sp.zh_last AS "zhLast", sp.en, sp.zh, sp.text_key AS "textKey",
  sp.emitted, sp.level, sp.c, sp.fc, sp.fe, sp.fl, sp.fcov, sp.exported_at AS "exportedAt"`;

export class SentencePairsRepo {
  constructor(private db: Sql) {}

  /**
   * Replaces the sentence pairs of a caption pair (call inside the transaction that stored the pair). A new row
   * whose texts equal an old row's keeps that row's export watermark; so does one whose texts equal the caption
   * pair's when the caption pair itself was exported before sentence pairs existed.
   */
  async replace(pairId: number, sourceItemId: number, targetItemId: number, list: SentencePairDecision[]): Promise<void> {
    const old = new Map<string, { exportedAt: string | null; exportId: number | null }>();
    for (const r of await this.db.all<{ k: string; exportedAt: string | null; exportId: number | null }>(
      'SELECT text_key AS k, exported_at AS "exportedAt", export_id AS "exportId" FROM sentence_pairs WHERE pair_id = ?',
      [pairId],
    )) {
      if (r.exportedAt) old.set(r.k, r);
    }
    const legacy = await this.db.get<{ k: string; exportedAt: string; exportId: number | null }>(
      'SELECT text_key AS k, exported_at AS "exportedAt", export_id AS "exportId" FROM pairs WHERE id = ? AND exported_at IS NOT NULL',
      [pairId],
    );
    if (legacy && !old.has(legacy.k)) old.set(legacy.k, legacy);
    await this.db.run('DELETE FROM sentence_pairs WHERE pair_id = ?', [pairId]);
    await this.db.copyRows(
      'sentence_pairs',
      ['pair_id', 'source_item_id', 'target_item_id', 'en_first', 'en_last', 'zh_first', 'zh_last', 'en', 'zh', 'text_key',
        'emitted', 'level', 'level_rank', 'c', 'fc', 'fe', 'fl', 'fcov', 'exported_at', 'export_id'],
      list.map((d) => {
        const k = textKey(d.en, d.zh);
        const kept = old.get(k);
        return [
          pairId, sourceItemId, targetItemId, d.enFirst, d.enLast, d.zhFirst, d.zhLast, d.en, d.zh, k,
          d.emitted ? 1 : 0, d.level, LEVEL_RANK[d.level], d.c, d.fc, d.fe, d.fl, d.fcov, kept?.exportedAt ?? null, kept?.exportId ?? null,
        ];
      }),
    );
  }

  /** The sentence pairs of one caption pair, in English sentence order. */
  ofPair(pairId: number): Promise<SentencePairRow[]> {
    return this.db.all<SentencePairRow>(`SELECT ${COLUMNS} FROM sentence_pairs sp WHERE sp.pair_id = ? ORDER BY sp.en_first, sp.zh_first`, [pairId]);
  }

  /** Emitted sentence pairs per level. */
  async countByLevel(): Promise<Record<Level, number>> {
    const out: Record<Level, number> = { par: 0, com: 0, pse: 0, inc: 0 };
    for (const r of await this.db.all<{ level: Level; n: number }>('SELECT level, COUNT(*) AS n FROM sentence_pairs WHERE emitted = 1 GROUP BY level')) {
      out[r.level] = Number(r.n);
    }
    return out;
  }

  /**
   * Sentence pairs to export (with the provenance of their caption pair), grouped by texts (text_key), best score
   * first in a group, best groups first. Without `reviewed`: the emitted sentence pairs at or above minLevel, except
   * those of a caption pair a linguist rejected. With it: the sentence pairs of the caption pairs a linguist accepted
   * / rejected / judged at all, emitted or not, at the linguist's level when one was set on the caption pair.
   * claimedBy: only the sentence pairs that export claimed (ExportClaimsRepo.claim).
   */
  iterateForExport(opts: { minLevel: Level; onlyNew: boolean; reviewed?: 'accepted' | 'rejected' | 'all'; claimedBy?: number }): AsyncIterable<SentencePairForExport> {
    const r = opts.reviewed;
    const rank = r ? 'COALESCE(r.level_rank, sp.level_rank)' : 'sp.level_rank';
    return this.db.iterate<SentencePairForExport>(
      `SELECT ${r ? COLUMNS.replace('sp.level,', 'COALESCE(r.level, sp.level) AS level,') : COLUMNS},
              p.image_score AS "imageScore", p.inliers,
              s.ext_id AS "sourceExtId", t.ext_id AS "targetExtId", s.page_url AS "sourceUrl", t.page_url AS "targetUrl",
              s.image_url AS "sourceImage", t.image_url AS "targetImage", s.credit AS "sourceCredit", t.credit AS "targetCredit",
              COALESCE(s.fetched_at, s.imported_at) AS "sourceHarvestedAt", COALESCE(t.fetched_at, t.imported_at) AS "targetHarvestedAt",
              ${opts.onlyNew ? `CASE WHEN EXISTS (SELECT 1 FROM sentence_pairs q WHERE q.text_key = sp.text_key AND q.exported_at IS NOT NULL) THEN 1 ELSE 0 END` : '0'} AS "textExported"
       FROM sentence_pairs sp JOIN pairs p ON p.id = sp.pair_id JOIN items s ON s.id = sp.source_item_id JOIN items t ON t.id = sp.target_item_id
       ${r ? 'JOIN reviews r ON r.source_item_id = sp.source_item_id AND r.target_item_id = sp.target_item_id' : ''}
       WHERE ${
         r
           ? `${r === 'all' ? '1 = 1' : `r.verdict = '${r === 'accepted' ? 'accepted' : 'rejected'}'`} AND ${rank} >= ?`
           : `sp.emitted = 1 AND sp.level_rank >= ?
              AND NOT EXISTS (SELECT 1 FROM reviews x WHERE x.source_item_id = sp.source_item_id AND x.target_item_id = sp.target_item_id
                              AND x.verdict = 'rejected')`
       } ${opts.onlyNew ? 'AND sp.exported_at IS NULL' : ''} ${opts.claimedBy !== undefined ? 'AND sp.export_id = ?' : ''}
       WINDOW w AS (PARTITION BY sp.text_key)
       -- best groups first (level, then the C of the group's best pair); a group's rows stay adjacent (text_key)
       ORDER BY MAX(${rank}) OVER w DESC, MAX(sp.c) OVER w DESC, sp.text_key, sp.c DESC, sp.id`,
      opts.claimedBy !== undefined ? [LEVEL_RANK[opts.minLevel], opts.claimedBy] : [LEVEL_RANK[opts.minLevel]],
    );
  }

  /** Marks exported sentence pairs (and their caption pairs) with the export that wrote them: the --new watermark. */
  async markExported(exportId: number, ids: number[], now = new Date().toISOString()): Promise<void> {
    await this.db.runMany('UPDATE sentence_pairs SET exported_at = ?, export_id = ? WHERE id = ? AND exported_at IS NULL', ids.map((id) => [now, exportId, id]));
    await this.db.runMany(
      'UPDATE pairs SET exported_at = ?, export_id = ? WHERE id = (SELECT pair_id FROM sentence_pairs WHERE id = ?) AND exported_at IS NULL',
      ids.map((id) => [now, exportId, id]),
    );
  }
}
