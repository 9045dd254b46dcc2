// Picture hashes and near-identical images (migration 13): the features stage files each featured image's hash and
// records an image that reuses the features of a near-identical picture of the same bank; the match stage asks
// which target items show one picture (indexed once, every item recorded) and reuses a source picture's
// candidates. See src/lib/sift/twins.ts.
import type { Sql } from './sql.js';
import type { BankName } from './items.js';

export interface StoredHash {
  hi: number;
  lo: number;
  width: number;
  height: number;
  thumb: Uint8Array;
}

export interface Twin {
  sha256: string;
  ofSha256: string;
  bank: BankName;
  distance: number;
}

const hex = (h: { hi: number; lo: number }) => h.hi.toString(16).padStart(8, '0') + h.lo.toString(16).padStart(8, '0');

function fromRow(r: { hash: string; width: number; height: number; thumb: Buffer }): StoredHash {
  return {
    hi: parseInt(r.hash.slice(0, 8), 16) >>> 0,
    lo: parseInt(r.hash.slice(8, 16), 16) >>> 0,
    width: r.width,
    height: r.height,
    thumb: new Uint8Array(r.thumb.buffer, r.thumb.byteOffset, r.thumb.byteLength),
  };
}

export class TwinsRepo {
  constructor(private db: Sql) {}

  async putHash(sha256: string, h: StoredHash): Promise<void> {
    await this.db.run(
      `INSERT INTO image_hashes (sha256, hash, width, height, thumb) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(sha256) DO UPDATE SET hash = excluded.hash, width = excluded.width, height = excluded.height, thumb = excluded.thumb`,
      [sha256, hex(h), h.width, h.height, Buffer.from(h.thumb.buffer, h.thumb.byteOffset, h.thumb.byteLength)],
    );
  }

  async getHash(sha256: string): Promise<StoredHash | undefined> {
    const r = await this.db.get<{ hash: string; width: number; height: number; thumb: Buffer }>('SELECT hash, width, height, thumb FROM image_hashes WHERE sha256 = ?', [sha256]);
    return r ? fromRow(r) : undefined;
  }

  /** The hashed pictures of a bank that have features of their own (what a new image may reuse), with the
   *  width of their detection frame. */
  async *featuredHashes(bank: BankName): AsyncGenerator<{ sha256: string; hash: StoredHash; detectionWidth: number }> {
    const rows = this.db.iterate<{ sha256: string; hash: string; width: number; height: number; thumb: Buffer; fw: number }>(
      `SELECT h.sha256, h.hash, h.width, h.height, h.thumb, f.width AS fw FROM image_hashes h JOIN features f ON f.sha256 = h.sha256
       WHERE EXISTS (SELECT 1 FROM items i WHERE i.bank = ? AND i.image_sha256 = h.sha256)`,
      [bank],
    );
    for await (const r of rows) yield { sha256: r.sha256, hash: fromRow(r), detectionWidth: r.fw };
  }

  async putTwin(t: Twin, now = new Date().toISOString()): Promise<void> {
    await this.db.run(
      `INSERT INTO image_twins (sha256, of_sha256, bank, distance, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(sha256) DO UPDATE SET of_sha256 = excluded.of_sha256, bank = excluded.bank, distance = excluded.distance,
         created_at = excluded.created_at`,
      [t.sha256, t.ofSha256, t.bank, t.distance, now],
    );
  }

  twinOf(sha256: string): Promise<Twin | undefined> {
    return this.db.get<Twin>('SELECT sha256, of_sha256 AS "ofSha256", bank, distance FROM image_twins WHERE sha256 = ?', [sha256]);
  }

  async count(): Promise<number> {
    return Number((await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM image_twins'))!.n);
  }

  /**
   * The target items that show the picture `sha256` (an indexed image): items with that image, and items whose
   * image is a near-identical copy of it found in the target bank; with each image's original width.
   */
  targetItemsShowing(sha256: string): Promise<{ itemId: number; sha256: string; width: number | null }[]> {
    return this.db.all(
      `SELECT i.id AS "itemId", i.image_sha256 AS sha256, h.width AS width FROM items i
         LEFT JOIN image_hashes h ON h.sha256 = i.image_sha256
       WHERE i.bank = 'target' AND (i.image_sha256 = @sha
         OR i.image_sha256 IN (SELECT t.sha256 FROM image_twins t WHERE t.of_sha256 = @sha AND t.bank = 'target'))
       ORDER BY i.id`,
      { sha: sha256 },
    );
  }
}
