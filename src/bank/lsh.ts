// The persistent LSH index rows (migration 3): per indexed target item, the bucket codes and sketches of its
// keypoints. The lsh-index layer loads them into memory and adds rows as targets get features.
import type Database from 'better-sqlite3';
import { blobToUint32, toBlob } from './blob.js';

export interface LshRow {
  id: number;
  itemId: number;
  imageSha256: string;
  count: number;
  codes: Uint32Array;
}

/** SQL: item i's image has features, its own or a near-identical picture's (image_twins). */
export const HAS_FEATURES = `(EXISTS (SELECT 1 FROM features f WHERE f.sha256 = i.image_sha256)
  OR EXISTS (SELECT 1 FROM image_twins t WHERE t.sha256 = i.image_sha256))`;

/**
 * SQL: target item i is the one indexed for its picture. One picture is indexed once: not an item whose image is a
 * near-identical copy of another target picture, nor an item whose image an earlier target item already shows
 * (the match stage records every item showing a matched picture: TwinsRepo.targetItemsShowing).
 */
const STANDS_FOR_PICTURE = `(NOT EXISTS (SELECT 1 FROM image_twins t WHERE t.sha256 = i.image_sha256 AND t.bank = 'target')
  AND NOT EXISTS (SELECT 1 FROM items j WHERE j.bank = 'target' AND j.image_sha256 = i.image_sha256 AND j.id < i.id))`;

export class LshRepo {
  constructor(private db: Database.Database) {}

  /** Rows computed with other parameters than `params` are removed (the caller re-indexes). */
  dropOtherParams(params: string): number {
    return this.db.prepare('DELETE FROM lsh_codes WHERE params <> ?').run(params).changes;
  }

  /** Rows whose item now has another image, lost its features, or no longer stands for its picture, leave the index. */
  dropStale(): number {
    return this.db
      .prepare(
        `DELETE FROM lsh_codes WHERE item_id IN (
           SELECT l.item_id FROM lsh_codes l JOIN items i ON i.id = l.item_id
           WHERE i.image_sha256 <> l.image_sha256 OR NOT (${HAS_FEATURES}) OR NOT (${STANDS_FOR_PICTURE}))`,
      )
      .run().changes;
  }

  /** Target items with features that are not (or no longer correctly) indexed, in id order. */
  pendingTargets(afterId: number, limit: number): { itemId: number; imageSha256: string }[] {
    return this.db
      .prepare(
        `SELECT i.id AS itemId, i.image_sha256 AS imageSha256 FROM items i
           LEFT JOIN lsh_codes l ON l.item_id = i.id
         WHERE i.bank = 'target' AND i.id > ? AND (l.item_id IS NULL OR l.image_sha256 <> i.image_sha256)
           AND ${HAS_FEATURES} AND ${STANDS_FOR_PICTURE}
         ORDER BY i.id LIMIT ?`,
      )
      .all(afterId, limit) as { itemId: number; imageSha256: string }[];
  }

  countPending(): number {
    return (
      this.db
        .prepare(
          `SELECT COUNT(*) AS n FROM items i LEFT JOIN lsh_codes l ON l.item_id = i.id
           WHERE i.bank = 'target' AND (l.item_id IS NULL OR l.image_sha256 <> i.image_sha256)
             AND ${HAS_FEATURES} AND ${STANDS_FOR_PICTURE}`,
        )
        .get() as { n: number }
    ).n;
  }

  put(itemId: number, imageSha256: string, params: string, count: number, codes: Uint32Array, now = new Date().toISOString()): void {
    this.db.prepare('DELETE FROM lsh_codes WHERE item_id = ?').run(itemId);
    this.db
      .prepare('INSERT INTO lsh_codes (item_id, image_sha256, params, count, codes, indexed_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(itemId, imageSha256, params, count, toBlob(codes), now);
  }

  /** Keypoints indexed in all (what the automatic bucket width is chosen from). */
  keypointTotal(): number {
    return (this.db.prepare('SELECT COALESCE(SUM(count), 0) AS n FROM lsh_codes').get() as { n: number }).n;
  }

  /** (row count, largest row id): changes when rows are added or removed. */
  signature(): { count: number; maxId: number } {
    const r = this.db.prepare('SELECT COUNT(*) AS count, COALESCE(MAX(id), 0) AS maxId FROM lsh_codes').get() as { count: number; maxId: number };
    return r;
  }

  /** The watermark of additions: ids only grow (AUTOINCREMENT), also past deleted rows. */
  sequence(): number {
    const r = this.db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'lsh_codes'`).get() as { seq: number } | undefined;
    return r?.seq ?? 0;
  }

  /** Rows with id > afterId, in id order. */
  *rowsAfter(afterId: number): Generator<LshRow> {
    const stmt = this.db.prepare(
      'SELECT id, item_id AS itemId, image_sha256 AS imageSha256, count, codes FROM lsh_codes WHERE id > ? ORDER BY id',
    );
    for (const r of stmt.iterate(afterId) as Iterable<{ id: number; itemId: number; imageSha256: string; count: number; codes: Buffer }>) {
      yield { id: r.id, itemId: r.itemId, imageSha256: r.imageSha256, count: r.count, codes: blobToUint32(r.codes) };
    }
  }

  ids(): Set<number> {
    return new Set((this.db.prepare('SELECT id FROM lsh_codes').pluck().all() as number[]));
  }

  bytes(): number {
    return (this.db.prepare('SELECT COALESCE(SUM(LENGTH(codes)), 0) AS n FROM lsh_codes').get() as { n: number }).n;
  }
}
