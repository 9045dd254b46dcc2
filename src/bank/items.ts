// Items of the two banks: one (image, caption) pair with its provenance and pipeline status.
// Later stages walk items by status with keyset pagination (id > last), so a stage is a resumable job
// over bank rows and can be split across workers by id range.
import type { Sql } from './sql.js';

export type BankName = 'source' | 'target';
export const BANKS: BankName[] = ['source', 'target'];
export type CaptionStatus = 'ok' | 'empty' | 'lang-mismatch' | 'rejected';

export interface ItemInput {
  bank: BankName;
  extId: string;
  caption: string;
  /** Photo credit and dateline printed with the caption, kept apart from it. */
  credit?: string | null;
  lang: string | null;
  captionStatus: CaptionStatus;
  captionReason: string | null;
  imageSha256: string;
  pageUrl?: string | null;
  imageUrl?: string | null;
  site?: string | null;
  importedAt?: string | null;
  fetchedAt?: string | null;
}

export interface Item {
  id: number;
  bank: BankName;
  extId: string;
  caption: string;
  credit: string | null;
  lang: string | null;
  captionStatus: CaptionStatus;
  captionReason: string | null;
  imageSha256: string;
  pageUrl: string | null;
  imageUrl: string | null;
  site: string | null;
  importedAt: string | null;
  fetchedAt: string | null;
  updatedAt: string;
  captionUpdatedAt: string;
  status: string;
  statusReason: string | null;
  statusAt: string;
}

export type UpsertOutcome = 'added' | 'unchanged' | 'updated';

const COLUMNS = `id, bank, ext_id AS "extId", caption, credit, lang, caption_status AS "captionStatus", caption_reason AS "captionReason",
  image_sha256 AS "imageSha256", page_url AS "pageUrl", image_url AS "imageUrl", site, imported_at AS "importedAt",
  fetched_at AS "fetchedAt", updated_at AS "updatedAt", caption_updated_at AS "captionUpdatedAt", status,
  status_reason AS "statusReason", status_at AS "statusAt"`;

const num = (r: { n: number | string } | undefined): number => Number(r?.n ?? 0);

export class ItemsRepo {
  constructor(private db: Sql) {}

  get(bank: BankName, extId: string): Promise<Item | undefined> {
    return this.db.get<Item>(`SELECT ${COLUMNS} FROM items WHERE bank = ? AND ext_id = ?`, [bank, extId]);
  }

  byId(id: number): Promise<Item | undefined> {
    return this.db.get<Item>(`SELECT ${COLUMNS} FROM items WHERE id = ?`, [id]);
  }

  /** Items by id in one query, keyed by id (ids with no item are absent). */
  async byIds(ids: readonly number[]): Promise<Map<number, Item>> {
    const unique = [...new Set(ids)];
    const out = new Map<number, Item>();
    // a statement's parameters are bounded (SQLite: 32,766): chunks of 500
    for (let i = 0; i < unique.length; i += 500) {
      const part = unique.slice(i, i + 500);
      for (const row of await this.db.all<Item>(`SELECT ${COLUMNS} FROM items WHERE id IN (${part.map(() => '?').join(', ')})`, part)) out.set(row.id, row);
    }
    return out;
  }

  /**
   * Adds or updates an item. Same caption and image: unchanged (provenance is not touched, so re-importing
   * is a no-op). A new image sends the item back to 'new' so its features are computed again; a new caption
   * bumps caption_updated_at so its pairs are scored again.
   */
  async upsert(input: ItemInput, now = new Date().toISOString()): Promise<{ outcome: UpsertOutcome; id: number }> {
    const existing = await this.get(input.bank, input.extId);
    const row = {
      pageUrl: null, imageUrl: null, site: null, importedAt: null, fetchedAt: null,
      ...input,
      credit: input.credit || null,
      now,
    };
    if (!existing) {
      const r = await this.db.get<{ id: number }>(
        `INSERT INTO items (bank, ext_id, caption, credit, lang, caption_status, caption_reason, image_sha256,
            page_url, image_url, site, imported_at, fetched_at, updated_at, caption_updated_at, status, status_at)
          VALUES (@bank, @extId, @caption, @credit, @lang, @captionStatus, @captionReason, @imageSha256, @pageUrl, @imageUrl, @site,
            @importedAt, @fetchedAt, @now, @now, 'new', @now) RETURNING id`,
        row,
      );
      return { outcome: 'added', id: Number(r!.id) };
    }
    const imageChanged = existing.imageSha256 !== input.imageSha256;
    const captionChanged = existing.caption !== input.caption || existing.captionStatus !== input.captionStatus;
    const creditChanged = (existing.credit ?? null) !== row.credit;
    if (!imageChanged && !captionChanged && !creditChanged) return { outcome: 'unchanged', id: existing.id };
    await this.db.run(
      `UPDATE items SET caption = @caption, credit = @credit, lang = @lang, caption_status = @captionStatus, caption_reason = @captionReason,
         image_sha256 = @imageSha256, page_url = COALESCE(@pageUrl, page_url), image_url = COALESCE(@imageUrl, image_url),
         site = COALESCE(@site, site), imported_at = COALESCE(@importedAt, imported_at), fetched_at = COALESCE(@fetchedAt, fetched_at),
         updated_at = @now,
         caption_updated_at = CASE WHEN @captionChanged = 1 THEN @now ELSE caption_updated_at END,
         status = CASE WHEN @imageChanged = 1 THEN 'new' ELSE status END,
         status_reason = CASE WHEN @imageChanged = 1 THEN NULL ELSE status_reason END,
         status_at = CASE WHEN @imageChanged = 1 THEN @now ELSE status_at END
       WHERE id = @id`,
      { ...row, id: existing.id, imageChanged: imageChanged ? 1 : 0, captionChanged: captionChanged ? 1 : 0 },
    );
    return { outcome: 'updated', id: existing.id };
  }

  /** Items of a bank in a status, in id order after `afterId`: the resumable walk every stage uses. */
  listByStatus(bank: BankName | null, status: string, limit: number, afterId = 0): Promise<Item[]> {
    if (bank) {
      return this.db.all<Item>(`SELECT ${COLUMNS} FROM items WHERE bank = ? AND status = ? AND id > ? ORDER BY id LIMIT ?`, [bank, status, afterId, limit]);
    }
    return this.db.all<Item>(`SELECT ${COLUMNS} FROM items WHERE status = ? AND id > ? ORDER BY id LIMIT ?`, [status, afterId, limit]);
  }

  /** All items of a bank in id order, page by page. */
  list(bank: BankName, limit: number, afterId = 0): Promise<Item[]> {
    return this.db.all<Item>(`SELECT ${COLUMNS} FROM items WHERE bank = ? AND id > ? ORDER BY id LIMIT ?`, [bank, afterId, limit]);
  }

  async countByStatus(bank: BankName | null, status: string): Promise<number> {
    return num(
      bank
        ? await this.db.get('SELECT COUNT(*) AS n FROM items WHERE bank = ? AND status = ?', [bank, status])
        : await this.db.get('SELECT COUNT(*) AS n FROM items WHERE status = ?', [status]),
    );
  }

  async setStatus(id: number, status: string, reason: string | null = null, now = new Date().toISOString()): Promise<void> {
    await this.db.run('UPDATE items SET status = ?, status_reason = ?, status_at = ? WHERE id = ?', [status, reason, now, id]);
  }

  /** Moves every item of an image from one status to another (features are per image, items share them). */
  setStatusByImage(sha256: string, fromStatus: string | null, status: string, reason: string | null = null): Promise<number> {
    const now = new Date().toISOString();
    return fromStatus
      ? this.db.run('UPDATE items SET status = ?, status_reason = ?, status_at = ? WHERE image_sha256 = ? AND status = ?', [status, reason, now, sha256, fromStatus])
      : this.db.run('UPDATE items SET status = ?, status_reason = ?, status_at = ? WHERE image_sha256 = ?', [status, reason, now, sha256]);
  }

  /** Sends every failed item back to 'new' (reason cleared), so the stages try it again: `--retry-failed`.
   *  Without it a failed item waits until its image changes (upsert). Returns how many. */
  retryFailed(bank: BankName | null = null): Promise<number> {
    const now = new Date().toISOString();
    return bank
      ? this.db.run(`UPDATE items SET status = 'new', status_reason = NULL, status_at = ? WHERE status = 'failed' AND bank = ?`, [now, bank])
      : this.db.run(`UPDATE items SET status = 'new', status_reason = NULL, status_at = ? WHERE status = 'failed'`, [now]);
  }

  async remove(bank: BankName, extId: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM items WHERE bank = ? AND ext_id = ?', [bank, extId])) > 0;
  }

  async count(bank: BankName): Promise<number> {
    return num(await this.db.get('SELECT COUNT(*) AS n FROM items WHERE bank = ?', [bank]));
  }
}
