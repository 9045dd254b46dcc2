// Items of the two banks: one (image, caption) pair with its provenance and pipeline status.
// Later stages walk items by status with keyset pagination (id > last), so a stage is a resumable job
// over bank rows and can be split across workers by id range.
import type Database from 'better-sqlite3';

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

const COLUMNS = `id, bank, ext_id AS extId, caption, credit, lang, caption_status AS captionStatus, caption_reason AS captionReason,
  image_sha256 AS imageSha256, page_url AS pageUrl, image_url AS imageUrl, site, imported_at AS importedAt,
  fetched_at AS fetchedAt, updated_at AS updatedAt, caption_updated_at AS captionUpdatedAt, status,
  status_reason AS statusReason, status_at AS statusAt`;

export class ItemsRepo {
  private byExt: Database.Statement;
  private byIdStmt: Database.Statement;
  private insert: Database.Statement;

  constructor(private db: Database.Database) {
    this.byExt = db.prepare(`SELECT ${COLUMNS} FROM items WHERE bank = ? AND ext_id = ?`);
    this.byIdStmt = db.prepare(`SELECT ${COLUMNS} FROM items WHERE id = ?`);
    this.insert = db.prepare(`INSERT INTO items (bank, ext_id, caption, credit, lang, caption_status, caption_reason, image_sha256,
        page_url, image_url, site, imported_at, fetched_at, updated_at, caption_updated_at, status, status_at)
      VALUES (@bank, @extId, @caption, @credit, @lang, @captionStatus, @captionReason, @imageSha256, @pageUrl, @imageUrl, @site,
        @importedAt, @fetchedAt, @now, @now, 'new', @now)`);
  }

  get(bank: BankName, extId: string): Item | undefined {
    return this.byExt.get(bank, extId) as Item | undefined;
  }

  byId(id: number): Item | undefined {
    return this.byIdStmt.get(id) as Item | undefined;
  }

  /**
   * Adds or updates an item. Same caption and image: unchanged (provenance is not touched, so re-importing
   * is a no-op). A new image sends the item back to 'new' so its features are computed again; a new caption
   * bumps caption_updated_at so its pairs are scored again.
   */
  upsert(input: ItemInput, now = new Date().toISOString()): { outcome: UpsertOutcome; id: number } {
    const existing = this.get(input.bank, input.extId);
    const row = {
      pageUrl: null, imageUrl: null, site: null, importedAt: null, fetchedAt: null,
      ...input,
      credit: input.credit || null,
      now,
    };
    if (!existing) {
      const info = this.insert.run(row);
      return { outcome: 'added', id: Number(info.lastInsertRowid) };
    }
    const imageChanged = existing.imageSha256 !== input.imageSha256;
    const captionChanged = existing.caption !== input.caption || existing.captionStatus !== input.captionStatus;
    const creditChanged = (existing.credit ?? null) !== row.credit;
    if (!imageChanged && !captionChanged && !creditChanged) return { outcome: 'unchanged', id: existing.id };
    this.db
      .prepare(
        `UPDATE items SET caption = @caption, credit = @credit, lang = @lang, caption_status = @captionStatus, caption_reason = @captionReason,
           image_sha256 = @imageSha256, page_url = COALESCE(@pageUrl, page_url), image_url = COALESCE(@imageUrl, image_url),
           site = COALESCE(@site, site), imported_at = COALESCE(@importedAt, imported_at), fetched_at = COALESCE(@fetchedAt, fetched_at),
           updated_at = @now,
           caption_updated_at = CASE WHEN @captionChanged THEN @now ELSE caption_updated_at END,
           status = CASE WHEN @imageChanged THEN 'new' ELSE status END,
           status_reason = CASE WHEN @imageChanged THEN NULL ELSE status_reason END,
           status_at = CASE WHEN @imageChanged THEN @now ELSE status_at END
         WHERE id = @id`,
      )
      .run({ ...row, id: existing.id, imageChanged: imageChanged ? 1 : 0, captionChanged: captionChanged ? 1 : 0 });
    return { outcome: 'updated', id: existing.id };
  }

  /** Items of a bank in a status, in id order after `afterId`: the resumable walk every stage uses. */
  listByStatus(bank: BankName | null, status: string, limit: number, afterId = 0): Item[] {
    if (bank) {
      return this.db
        .prepare(`SELECT ${COLUMNS} FROM items WHERE bank = ? AND status = ? AND id > ? ORDER BY id LIMIT ?`)
        .all(bank, status, afterId, limit) as Item[];
    }
    return this.db
      .prepare(`SELECT ${COLUMNS} FROM items WHERE status = ? AND id > ? ORDER BY id LIMIT ?`)
      .all(status, afterId, limit) as Item[];
  }

  /** All items of a bank in id order, page by page. */
  list(bank: BankName, limit: number, afterId = 0): Item[] {
    return this.db
      .prepare(`SELECT ${COLUMNS} FROM items WHERE bank = ? AND id > ? ORDER BY id LIMIT ?`)
      .all(bank, afterId, limit) as Item[];
  }

  countByStatus(bank: BankName | null, status: string): number {
    const row = bank
      ? this.db.prepare('SELECT COUNT(*) AS n FROM items WHERE bank = ? AND status = ?').get(bank, status)
      : this.db.prepare('SELECT COUNT(*) AS n FROM items WHERE status = ?').get(status);
    return (row as { n: number }).n;
  }

  setStatus(id: number, status: string, reason: string | null = null, now = new Date().toISOString()): void {
    this.db.prepare('UPDATE items SET status = ?, status_reason = ?, status_at = ? WHERE id = ?').run(status, reason, now, id);
  }

  /** Moves every item of an image from one status to another (features are per image, items share them). */
  setStatusByImage(sha256: string, fromStatus: string | null, status: string, reason: string | null = null): number {
    const now = new Date().toISOString();
    const info = fromStatus
      ? this.db
          .prepare('UPDATE items SET status = ?, status_reason = ?, status_at = ? WHERE image_sha256 = ? AND status = ?')
          .run(status, reason, now, sha256, fromStatus)
      : this.db.prepare('UPDATE items SET status = ?, status_reason = ?, status_at = ? WHERE image_sha256 = ?').run(status, reason, now, sha256);
    return info.changes;
  }

  remove(bank: BankName, extId: string): boolean {
    return this.db.prepare('DELETE FROM items WHERE bank = ? AND ext_id = ?').run(bank, extId).changes > 0;
  }

  count(bank: BankName): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM items WHERE bank = ?').get(bank) as { n: number }).n;
  }
}
