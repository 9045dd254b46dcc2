// The image store: files named by the sha256 of their bytes (images/ab/<sha>.<ext>), so the same photo
// found on two pages, or imported twice, is stored once. The `images` table indexes what is on disk.
// Files are written before the row that names them is committed: a crash leaves at most an orphan file,
// which the next store of the same bytes reuses.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import sharp, { type Metadata } from 'sharp';
import type Database from 'better-sqlite3';
import { writeFileAtomic } from '../util/atomic.js';

export interface ImageRecord {
  sha256: string;
  path: string;
  bytes: number;
  format: string;
  width: number;
  height: number;
}

export class ImageReadError extends Error {}

const EXT: Record<string, string> = { jpeg: 'jpg', png: 'png', webp: 'webp', gif: 'gif', tiff: 'tif', heif: 'heif', avif: 'avif', svg: 'svg', jp2: 'jp2', jxl: 'jxl' };

export const sha256Hex = (buf: Uint8Array): string => crypto.createHash('sha256').update(buf).digest('hex');

/** Reads only the image header (no pixel decode): format and size. Throws ImageReadError when unreadable. */
export async function probeImage(buf: Uint8Array): Promise<{ format: string; width: number; height: number }> {
  if (buf.length === 0) throw new ImageReadError('empty file (0 bytes)');
  let meta: Metadata;
  try {
    meta = await sharp(buf, { failOn: 'none', limitInputPixels: false }).metadata();
  } catch (err) {
    throw new ImageReadError(`not a readable image: ${(err as Error).message}`);
  }
  if (!meta.format || !meta.width || !meta.height) throw new ImageReadError('not a readable image: no format or size in header');
  // EXIF orientations 5-8 swap the displayed width and height.
  const swap = (meta.orientation ?? 1) >= 5;
  return { format: meta.format, width: swap ? meta.height : meta.width, height: swap ? meta.width : meta.height };
}

export class ImageStore {
  readonly root: string;
  private getStmt: Database.Statement;
  private insertStmt: Database.Statement;

  constructor(private dataDir: string, private db: Database.Database) {
    this.root = path.join(dataDir, 'images');
    fs.mkdirSync(this.root, { recursive: true });
    this.getStmt = db.prepare('SELECT sha256, path, bytes, format, width, height FROM images WHERE sha256 = ?');
    this.insertStmt = db.prepare(
      `INSERT INTO images (sha256, path, bytes, format, width, height, created_at)
       VALUES (@sha256, @path, @bytes, @format, @width, @height, @created_at) ON CONFLICT(sha256) DO NOTHING`,
    );
  }

  get(sha256: string): ImageRecord | undefined {
    return this.getStmt.get(sha256) as ImageRecord | undefined;
  }

  /** Absolute path of a stored image. */
  absPath(rec: Pick<ImageRecord, 'path'>): string {
    return path.join(this.dataDir, rec.path);
  }

  read(sha256: string): Buffer {
    const rec = this.get(sha256);
    if (!rec) throw new Error(`image ${sha256} is not in the store`);
    return fs.readFileSync(this.absPath(rec));
  }

  /**
   * Probes and writes the bytes to disk (if not already there) and returns the record to insert.
   * Call `record()` inside the caller's transaction to index it.
   */
  async prepare(buf: Uint8Array): Promise<ImageRecord> {
    const sha256 = sha256Hex(buf);
    const known = this.get(sha256);
    if (known && fs.existsSync(this.absPath(known))) return known;
    const { format, width, height } = await probeImage(buf);
    const rel = path.join('images', sha256.slice(0, 2), `${sha256}.${EXT[format] ?? format}`);
    const abs = path.join(this.dataDir, rel);
    if (!fs.existsSync(abs) || fs.statSync(abs).size !== buf.length) writeFileAtomic(abs, buf);
    return { sha256, path: rel, bytes: buf.length, format, width, height };
  }

  record(rec: ImageRecord): void {
    this.insertStmt.run({ ...rec, created_at: new Date().toISOString() });
  }

  totals(): { files: number; bytes: number } {
    const row = this.db.prepare('SELECT COUNT(*) AS files, COALESCE(SUM(bytes), 0) AS bytes FROM images').get() as { files: number; bytes: number };
    return row;
  }
}
