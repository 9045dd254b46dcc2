// What an `export --new` writes, claimed before it writes it (migration 36). The claim is one short transaction under
// a lock (PostgreSQL: a transaction-scoped advisory lock; SQLite: the write lock every transaction takes first), in
// which the export gets its row and marks the new sentence pairs it selects as its own (export_id set, exported_at
// still NULL). Another export started at the same time waits for that transaction and finds nothing left to claim but
// what came after, so concurrent exports write each sentence pair once. The claim is held by a lease on the exports
// row (renewed while the files are written); the claim of an export that died is taken over once its lease ran out.
// When the files are in place, finish() turns the claim into the watermark (exported_at); what the export left out
// is given back.
import type { Sql } from './sql.js';
import { LEVEL_RANK, type Level } from './pairs.js';

const EXPORT_LOCK = 7216036;

/** Now in epoch ms on the database's clock (the exporters' clocks may differ). */
const nowMs = (sql: Sql) =>
  sql.dialect === 'postgres' ? `(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT` : `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`;

export interface ExportClaim {
  exportId: number;
  /** Sentence pairs claimed (those this export will write or mark). */
  claimed: number;
  /** Of them, taken over from an export whose lease had run out. */
  takenOver: number;
}

export class ExportClaimsRepo {
  constructor(private db: Sql) {}

  /**
   * Opens an export and claims the new sentence pairs it selects: emitted, at or above minLevel, not rejected by a
   * linguist, never exported, and not claimed by another export that is still running. Call it outside a
   * transaction: it is its own.
   */
  async claim(e: { formats: string[]; paths: string[]; minLevel: Level; leaseMs: number }, now = new Date().toISOString()): Promise<ExportClaim> {
    return this.db.transaction(async (tx) => {
      if (tx.dialect === 'postgres') await tx.run(`SELECT pg_advisory_xact_lock(${EXPORT_LOCK})`);
      const row = await tx.get<{ id: number }>(
        `INSERT INTO exports (started_at, formats, paths, only_new, min_level, lease_until) VALUES (?, ?, ?, 1, ?, ${nowMs(tx)} + ?) RETURNING id`,
        [now, JSON.stringify(e.formats), JSON.stringify(e.paths), e.minLevel, e.leaseMs],
      );
      const exportId = Number(row!.id);
      const stale = `SELECT id FROM exports WHERE finished_at IS NULL AND id <> ? AND (lease_until IS NULL OR lease_until < ${nowMs(tx)})`;
      const takenOver = await tx.run(`UPDATE sentence_pairs SET export_id = ? WHERE exported_at IS NULL AND export_id IN (${stale})`, [exportId, exportId]);
      const fresh = await tx.run(
        `UPDATE sentence_pairs SET export_id = ?
         WHERE exported_at IS NULL AND export_id IS NULL AND emitted = 1 AND level_rank >= ?
           AND NOT EXISTS (SELECT 1 FROM reviews x WHERE x.source_item_id = sentence_pairs.source_item_id
                           AND x.target_item_id = sentence_pairs.target_item_id AND x.verdict = 'rejected')`,
        [exportId, LEVEL_RANK[e.minLevel]],
      );
      // the exports whose claims were taken over are over: closed, so they are not taken over again
      await tx.run(`UPDATE exports SET finished_at = ?, lease_until = NULL WHERE id IN (${stale}) AND NOT EXISTS (SELECT 1 FROM sentence_pairs s WHERE s.export_id = exports.id AND s.exported_at IS NULL)`, [now, exportId]);
      return { exportId, claimed: takenOver + fresh, takenOver };
    });
  }

  /** Extends the lease of a running export's claim; false when the export is no longer running. */
  async renew(exportId: number, leaseMs: number): Promise<boolean> {
    return (await this.db.run(`UPDATE exports SET lease_until = ${nowMs(this.db)} + ? WHERE id = ? AND finished_at IS NULL`, [leaseMs, exportId])) > 0;
  }

  /** Files in place: the sentence pairs written (or marked) become exported, the rest of the claim is given back
   *  (a later --new tries them again), and the export is finished. Returns how many became exported. */
  async finish(exportId: number, ids: readonly number[], rows: number, now = new Date().toISOString()): Promise<number> {
    return this.db.transaction(async (tx) => {
      const marked = await tx.runMany('UPDATE sentence_pairs SET exported_at = ? WHERE id = ? AND export_id = ? AND exported_at IS NULL', ids.map((id) => [now, id, exportId]));
      await tx.runMany(
        'UPDATE pairs SET exported_at = ?, export_id = ? WHERE id = (SELECT pair_id FROM sentence_pairs WHERE id = ?) AND exported_at IS NULL',
        ids.map((id) => [now, exportId, id]),
      );
      await tx.run('UPDATE sentence_pairs SET export_id = NULL WHERE export_id = ? AND exported_at IS NULL', [exportId]);
      await tx.run('UPDATE exports SET finished_at = ?, lease_until = NULL, pairs = ?, members = ? WHERE id = ?', [now, rows, marked, exportId]);
      return marked;
    });
  }

  /** An export that failed: its claim is given back and its row removed (no file of it was kept). */
  async abandon(exportId: number): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.run('UPDATE sentence_pairs SET export_id = NULL WHERE export_id = ? AND exported_at IS NULL', [exportId]);
      await tx.run('DELETE FROM exports WHERE id = ? AND NOT EXISTS (SELECT 1 FROM sentence_pairs WHERE export_id = ?) AND NOT EXISTS (SELECT 1 FROM pairs WHERE export_id = ?)', [exportId, exportId, exportId]);
    });
  }
}
