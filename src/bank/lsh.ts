// The persistent LSH index rows (migration 3): per indexed target item, the bucket codes and sketches of its
// keypoints. The image index (src/lib/image-index/store.ts) loads them into memory and adds rows as targets get features.
import type { Sql } from './sql.js';
import { blobColumn, blobToUint32, blobValue, toBlob } from './blob.js';

export interface LshRow {
  id: number;
  itemId: number;
  imageSha256: string;
  count: number;
  codes: Uint32Array;
  /** When the target item was harvested (fetched, else imported; ISO), for lsh.window. */
  harvestedAt: string | null;
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

const n = (r: { n: number | string } | undefined): number => Number(r?.n ?? 0);

/** A range's bucket entry counts and the signature of the rows counted (row count, largest row id). */
export interface BucketCounts {
  rows: number;
  maxId: number;
  counts: Uint32Array;
}

/** Target item ids first..last (inclusive): one shard of the index (issue 35). Absent: every row. */
export interface TargetRange {
  first: number;
  last: number;
}
/** SQL condition (and its parameters) on lsh_codes' item_id for a range. */
const inRange = (col: string, r?: TargetRange): [string, number[]] => (r ? [` AND ${col} BETWEEN ? AND ?`, [r.first, r.last]] : ['', []]);

export class LshRepo {
  constructor(private db: Sql) {}

  /** Rows computed with other parameters than `params` are removed (the caller re-indexes). */
  dropOtherParams(params: string): Promise<number> {
    return this.db.run('DELETE FROM lsh_codes WHERE params <> ?', [params]);
  }

  /** Rows whose codes were computed with other parameters than `params`, in id order after `afterId`: what a change
   *  of the index's representation re-encodes in place (recode). */
  otherParams(params: string, afterId: number, limit: number): Promise<{ id: number; itemId: number; imageSha256: string }[]> {
    return this.db
      .all<{ id: number; itemId: number; imageSha256: string }>(
        `SELECT id, item_id AS "itemId", image_sha256 AS "imageSha256" FROM lsh_codes WHERE id > ? AND params <> ? ORDER BY id LIMIT ?`,
        [afterId, params, limit],
      )
      .then((rows) => rows.map((r) => ({ id: Number(r.id), itemId: Number(r.itemId), imageSha256: r.imageSha256 })));
  }

  async countOtherParams(params: string): Promise<number> {
    return n(await this.db.get('SELECT COUNT(*) AS n FROM lsh_codes WHERE params <> ?', [params]));
  }

  /** Replaces a row's codes in place, keeping its id: the watermark of additions (sequence()) does not move, so a
   *  re-encoded index sends no source back to matching. Only while the row still has other parameters (two workers
   *  re-encoding the same row write the same codes once). Returns whether it wrote. */
  async recode(id: number, params: string, count: number, codes: Uint32Array): Promise<boolean> {
    return (await this.db.run('UPDATE lsh_codes SET params = ?, count = ?, codes = ? WHERE id = ? AND params <> ?', [params, count, toBlob(codes), id, params])) > 0;
  }

  /** Rows whose item now has another image, lost its features, or no longer stands for its picture, leave the index. */
  dropStale(): Promise<number> {
    return this.db.run(
      `DELETE FROM lsh_codes WHERE item_id IN (
         SELECT l.item_id FROM lsh_codes l JOIN items i ON i.id = l.item_id
         WHERE i.image_sha256 <> l.image_sha256 OR NOT (${HAS_FEATURES}) OR NOT (${STANDS_FOR_PICTURE}))`,
    );
  }

  /** Target items with features that are not (or no longer correctly) indexed, in id order. */
  pendingTargets(afterId: number, limit: number): Promise<{ itemId: number; imageSha256: string }[]> {
    return this.db.all(
      `SELECT i.id AS "itemId", i.image_sha256 AS "imageSha256" FROM items i
         LEFT JOIN lsh_codes l ON l.item_id = i.id
       WHERE i.bank = 'target' AND i.id > ? AND (l.item_id IS NULL OR l.image_sha256 <> i.image_sha256)
         AND ${HAS_FEATURES} AND ${STANDS_FOR_PICTURE}
       ORDER BY i.id LIMIT ?`,
      [afterId, limit],
    );
  }

  async countPending(): Promise<number> {
    return n(
      await this.db.get(
        `SELECT COUNT(*) AS n FROM items i LEFT JOIN lsh_codes l ON l.item_id = i.id
         WHERE i.bank = 'target' AND (l.item_id IS NULL OR l.image_sha256 <> i.image_sha256)
           AND ${HAS_FEATURES} AND ${STANDS_FOR_PICTURE}`,
      ),
    );
  }

  async put(itemId: number, imageSha256: string, params: string, count: number, codes: Uint32Array, now = new Date().toISOString()): Promise<void> {
    await this.putMany([{ itemId, imageSha256, count, codes }], params, now);
  }

  /** Rows of several items at once (one batch of the indexing; call inside its transaction); returns the rows
   *  written. An item already indexed with the same image and parameters keeps its row (and its id): two indexers
   *  that raced over one item leave the watermark of additions (sequence()) where one would, so no source becomes
   *  due for matching again. */
  async putMany(rows: readonly { itemId: number; imageSha256: string; count: number; codes: Uint32Array }[], params: string, now = new Date().toISOString()): Promise<number> {
    if (!rows.length) return 0;
    // Match workers on several machines index concurrently: one writer at a time, so two never insert one item
    // (the second replaces the first's rows). SQLite's write lock does this already.
    if (this.db.dialect === 'postgres') await this.db.get('SELECT pg_advisory_xact_lock(7216018)');
    const have = await this.db.all<{ itemId: number; imageSha256: string; params: string }>(
      `SELECT item_id AS "itemId", image_sha256 AS "imageSha256", params FROM lsh_codes WHERE item_id IN (${rows.map(() => '?').join(', ')})`,
      rows.map((r) => r.itemId),
    );
    const same = new Set(have.filter((h) => h.params === params && rows.some((r) => r.itemId === Number(h.itemId) && r.imageSha256 === h.imageSha256)).map((h) => Number(h.itemId)));
    const fresh = rows.filter((r) => !same.has(r.itemId));
    await this.db.runMany('DELETE FROM lsh_codes WHERE item_id = ?', fresh.map((r) => [r.itemId]));
    await this.db.copyRows(
      'lsh_codes',
      ['item_id', 'image_sha256', 'params', 'count', 'codes', 'indexed_at'],
      fresh.map((r) => [r.itemId, r.imageSha256, params, r.count, toBlob(r.codes), now]),
    );
    return fresh.length;
  }

  /** Keypoints indexed in all, or in a range of target items (what the automatic bucket width is chosen from). */
  async keypointTotal(range?: TargetRange): Promise<number> {
    const [cond, args] = inRange('item_id', range);
    return n(await this.db.get(`SELECT COALESCE(SUM(count), 0) AS n FROM lsh_codes WHERE 1 = 1${cond}`, args));
  }

  /** (row count, largest row id), of every row or a range's, and only of rows with codes of `params` when given:
   *  changes when rows are added, removed or re-encoded. */
  async signature(range?: TargetRange, params?: string): Promise<{ count: number; maxId: number }> {
    const [cond, args] = inRange('item_id', range);
    const [pcond, pargs] = params === undefined ? ['', []] : [' AND params = ?', [params]];
    const r = await this.db.get<{ count: number; maxId: number }>(`SELECT COUNT(*) AS count, COALESCE(MAX(id), 0) AS "maxId" FROM lsh_codes WHERE 1 = 1${cond}${pcond}`, [...args, ...pargs]);
    return { count: Number(r!.count), maxId: Number(r!.maxId) };
  }

  /** Indexed target item ids with their keypoint counts, in id order after `afterItemId` (the shard plan's input). */
  async itemKeypoints(afterItemId: number, limit: number): Promise<{ itemId: number; count: number }[]> {
    const rows = await this.db.all<{ itemId: number; count: number }>(
      'SELECT item_id AS "itemId", count FROM lsh_codes WHERE item_id > ? ORDER BY item_id LIMIT ?',
      [afterItemId, limit],
    );
    return rows.map((r) => ({ itemId: Number(r.itemId), count: Number(r.count) }));
  }

  /** The watermark of additions: ids only grow (AUTOINCREMENT), also past deleted rows. */
  async sequence(): Promise<number> {
    if (this.db.dialect === 'postgres') {
      const r = await this.db.get<{ seq: number; called: boolean }>(`SELECT last_value AS seq, is_called AS called FROM lsh_codes_id_seq`);
      return r?.called ? Number(r.seq) : 0;
    }
    const r = await this.db.get<{ seq: number }>(`SELECT seq FROM sqlite_sequence WHERE name = 'lsh_codes'`);
    return Number(r?.seq ?? 0);
  }

  /** Rows with id > afterId with codes of `params` (all when absent), of every target or a range's, in id order. */
  async *rowsAfter(afterId: number, range?: TargetRange, params?: string): AsyncGenerator<LshRow> {
    const [cond, args] = inRange('l.item_id', range);
    const [pcond, pargs] = params === undefined ? ['', []] : [' AND l.params = ?', [params]];
    for await (const r of this.db.iterate<{ id: number; itemId: number; imageSha256: string; count: number; codes: Buffer | string; harvestedAt: string | null }>(
      `SELECT l.id, l.item_id AS "itemId", l.image_sha256 AS "imageSha256", l.count, ${blobColumn(this.db.dialect, 'l.codes', 'codes')}, COALESCE(i.fetched_at, i.imported_at) AS "harvestedAt"
       FROM lsh_codes l LEFT JOIN items i ON i.id = l.item_id WHERE l.id > ?${cond}${pcond} ORDER BY l.id`,
      [afterId, ...args, ...pargs],
    )) {
      yield { id: Number(r.id), itemId: Number(r.itemId), imageSha256: r.imageSha256, count: r.count, codes: blobToUint32(blobValue(r.codes)), harvestedAt: r.harvestedAt ?? null };
    }
  }

  /** A range's stored bucket entry counts (2^bits) for codes of `params`, with the signature of the rows counted
   *  (migration 31); undefined when none are stored. */
  async bucketCounts(params: string, bits: number, range: TargetRange): Promise<BucketCounts | undefined> {
    const r = await this.db.get<{ rows: number; maxId: number; counts: Buffer | string }>(
      `SELECT row_count AS "rows", max_id AS "maxId", ${blobColumn(this.db.dialect, 'counts', 'counts')} FROM lsh_bucket_counts
       WHERE params = ? AND bits = ? AND first_item = ? AND last_item = ?`,
      [params, bits, range.first, range.last],
    );
    if (!r) return undefined;
    const counts = blobToUint32(blobValue(r.counts));
    return counts.length === 1 << bits ? { rows: Number(r.rows), maxId: Number(r.maxId), counts } : undefined;
  }

  /** Stores a range's bucket entry counts (replacing what was stored): any worker may write them, the same counts for
   *  the same rows. */
  async putBucketCounts(params: string, bits: number, range: TargetRange, c: BucketCounts, now = new Date().toISOString()): Promise<void> {
    await this.db.run(
      `INSERT INTO lsh_bucket_counts (params, bits, first_item, last_item, row_count, max_id, counts, counted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (params, bits, first_item, last_item) DO UPDATE SET row_count = excluded.row_count, max_id = excluded.max_id,
         counts = excluded.counts, counted_at = excluded.counted_at`,
      [params, bits, range.first, range.last, c.rows, c.maxId, toBlob(c.counts), now],
    );
  }

  /** Row ids, of every row or a range's, and only of rows with codes of `params` when given. */
  async ids(range?: TargetRange, params?: string): Promise<Set<number>> {
    const [cond, args] = inRange('item_id', range);
    const [pcond, pargs] = params === undefined ? ['', []] : [' AND params = ?', [params]];
    return new Set((await this.db.all<{ id: number }>(`SELECT id FROM lsh_codes WHERE 1 = 1${cond}${pcond}`, [...args, ...pargs])).map((r) => Number(r.id)));
  }

  async bytes(): Promise<number> {
    return n(await this.db.get('SELECT COALESCE(SUM(LENGTH(codes)), 0) AS n FROM lsh_codes'));
  }
}
