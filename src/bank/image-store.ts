// The image store: bytes named by the sha256 of their content (images/ab/<sha>.<ext>), so the same photo found
// on two pages, or imported twice, is stored once. Where the bytes live is an ImageBlobs (a folder in the data
// dir by default); the `images` table indexes what is stored. Bytes are written before the row that names them
// is committed: a crash leaves at most an orphan object, which the next store of the same bytes reuses.
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import crypto from 'node:crypto';
import sharp, { type Metadata } from 'sharp';
import { writeFileAtomic } from '../util/atomic.js';
import type { Sql } from './sql.js';
import type { S3BlobsSettings } from './s3-blobs.js';
import { parseImageStore } from '../util/store-url.js';
import { UserError } from '../util/errors.js';

export interface ImageRecord {
  sha256: string;
  /** The object's key, relative to the store's root (images/ab/<sha>.<ext>). */
  path: string;
  bytes: number;
  format: string;
  width: number;
  height: number;
}

export class ImageReadError extends Error {}

/**
 * The image store could not give or take an object. `missing`: the store answered that the object is not there
 * (a lost or deleted object: the image's own failure); otherwise the store itself failed (unreachable, refused,
 * over its retries): a transient failure, so a stage stops and the next run resumes instead of failing items.
 */
export class ImageStoreError extends Error {
  constructor(
    /** Where the object is: a file path, or s3://bucket/key. */
    readonly object: string,
    readonly op: 'get' | 'put' | 'head',
    readonly reason: string,
    readonly missing: boolean,
    readonly transient: boolean,
  ) {
    super(`image store: ${op} ${object}: ${reason}`);
    this.name = 'ImageStoreError';
  }
}

/**
 * The error as an ImageStoreError, or undefined. Recognised by name, not `instanceof`: the S3 backend is loaded by
 * a dynamic import, and a loader may give it its own instance of this module (tsx does in the tests).
 */
export const asImageStoreError = (err: unknown): ImageStoreError | undefined =>
  err instanceof Error && err.name === 'ImageStoreError' ? (err as ImageStoreError) : undefined;

/** True for a failure of the store itself (not of one image): the caller should stop and retry later. */
export const isStoreUnavailable = (err: unknown): err is ImageStoreError => asImageStoreError(err)?.transient === true;

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

/** Sides and pixels an image must be within to be stored (the config keys are named in the refusal). */
export interface ImageBounds {
  minSide: number;
  minSideKey: string;
  maxPixels: number;
  maxPixelsKey: string;
}

/** Throws an ImageReadError when an image's header size is outside the bounds. */
export function checkImageBounds(d: { width: number; height: number }, b: ImageBounds): void {
  const pixels = d.width * d.height;
  if (pixels > b.maxPixels) throw new ImageReadError(`image too large: ${d.width}x${d.height} = ${pixels} pixels, over ${b.maxPixelsKey} ${b.maxPixels}`);
  if (Math.min(d.width, d.height) < b.minSide) throw new ImageReadError(`image too small: ${d.width}x${d.height}, a side under ${b.minSideKey} ${b.minSide}`);
}

/** Where image bytes live: a folder (default) or an S3-compatible bucket. Keys are ImageRecord.path. */
export interface ImageBlobs {
  readonly kind: string;
  /** Which store this is, as the bank records it: 'folder', or s3://bucket/prefix. */
  readonly id: string;
  /** Where the bytes are, for messages (a folder, or s3://bucket/prefix). */
  readonly location: string;
  /** True when the object exists with this many bytes. */
  has(key: string, bytes: number): Promise<boolean>;
  /** Stores the bytes under the key. Keys are content hashes, so writing a key again writes the same bytes. */
  put(key: string, buf: Uint8Array): Promise<void>;
  /** The whole object. Throws ImageStoreError. */
  get(key: string): Promise<Buffer>;
  /** The object as a stream (opened, so a missing object throws here, not mid-stream). Throws ImageStoreError. */
  stream(key: string): Promise<Readable>;
  close?(): Promise<void>;
}

/** The content-addressed folder in the data dir (files written atomically). */
export class FolderBlobs implements ImageBlobs {
  readonly kind = 'folder';
  readonly id = 'folder';
  constructor(readonly root: string) {}
  get location(): string {
    return path.join(this.root, 'images');
  }
  private abs(key: string): string {
    return path.join(this.root, key);
  }
  async has(key: string, bytes: number): Promise<boolean> {
    try {
      return fs.statSync(this.abs(key)).size === bytes;
    } catch {
      return false;
    }
  }
  async put(key: string, buf: Uint8Array): Promise<void> {
    writeFileAtomic(this.abs(key), buf);
  }
  private failed(op: 'get' | 'put', key: string, err: unknown): ImageStoreError {
    const e = err as NodeJS.ErrnoException;
    const missing = e.code === 'ENOENT';
    return new ImageStoreError(this.abs(key), op, missing ? 'no such file (ENOENT)' : e.message, missing, false);
  }
  async get(key: string): Promise<Buffer> {
    try {
      return await fs.promises.readFile(this.abs(key));
    } catch (err) {
      throw this.failed('get', key, err);
    }
  }
  async stream(key: string): Promise<Readable> {
    let fh: fs.promises.FileHandle;
    try {
      fh = await fs.promises.open(this.abs(key), 'r');
    } catch (err) {
      throw this.failed('get', key, err);
    }
    return fh.createReadStream();
  }
}

/** images.* of the config: which store, and the S3 settings. */
export interface ImageStoreSettings {
  /** 'folder' (the data dir's images/), 's3' (images.s3.bucket and prefix), or 's3://bucket[/prefix]'. */
  store: string;
  s3: S3BlobsSettings;
}

/**
 * The image blobs the settings select: the folder in the data dir (default), or an S3 bucket (the SDK is loaded
 * only then). `store` overrides settings.store (the command line's --images).
 */
export async function openImageBlobs(dataDir: string, settings: ImageStoreSettings, store = settings.store): Promise<ImageBlobs> {
  const sel = parseImageStore(store);
  if ('error' in sel) throw new UserError(`images.store: ${sel.error}`);
  if (sel.kind === 'folder') return new FolderBlobs(path.resolve(dataDir));
  const { S3Blobs } = await import('./s3-blobs.js');
  return new S3Blobs({ ...settings.s3, bucket: sel.bucket ?? settings.s3.bucket, prefix: sel.prefix ?? settings.s3.prefix });
}

/** The meta key naming the store the bank's images are in. */
const IMAGE_STORE_KEY = 'images.store';

export const imageKey = (sha256: string, format: string): string => path.posix.join('images', sha256.slice(0, 2), `${sha256}.${EXT[format] ?? format}`);

export class ImageStore {
  constructor(readonly blobs: ImageBlobs, private sql: Sql) {}

  /** The same store bound to a transaction (record() inside it). */
  withSql(sql: Sql): ImageStore {
    return new ImageStore(this.blobs, sql);
  }

  get(sha256: string): Promise<ImageRecord | undefined> {
    return this.sql.get<ImageRecord>('SELECT sha256, path, bytes, format, width, height FROM images WHERE sha256 = ?', [sha256]);
  }

  /** Image records in sha256 order after `afterSha` (keyset pages: '' for the first). */
  list(afterSha: string, limit: number): Promise<ImageRecord[]> {
    return this.sql.all<ImageRecord>('SELECT sha256, path, bytes, format, width, height FROM images WHERE sha256 > ? ORDER BY sha256 LIMIT ?', [afterSha, limit]);
  }

  /** The stored bytes of an image. */
  async read(sha256: string): Promise<Buffer> {
    const rec = await this.get(sha256);
    if (!rec) throw new Error(`image ${sha256} is not in the store`);
    return this.blobs.get(rec.path);
  }

  /** The stored bytes of an image as a stream (the review page sends it on as it arrives). */
  async stream(sha256: string): Promise<Readable> {
    const rec = await this.get(sha256);
    if (!rec) throw new Error(`image ${sha256} is not in the store`);
    return this.blobs.stream(rec.path);
  }

  /**
   * Probes and stores the bytes (if not already there) and returns the record to insert.
   * Call `record()` inside the caller's transaction to index it.
   */
  async prepare(buf: Uint8Array, bounds?: ImageBounds): Promise<ImageRecord> {
    const sha256 = sha256Hex(buf);
    const known = await this.get(sha256);
    if (known && (await this.blobs.has(known.path, known.bytes))) {
      if (bounds) checkImageBounds(known, bounds);
      return known;
    }
    const { format, width, height } = await probeImage(buf);
    // refused from the header, before the bytes reach the store or a decoder
    if (bounds) checkImageBounds({ width, height }, bounds);
    const key = imageKey(sha256, format);
    if (!(await this.blobs.has(key, buf.length))) await this.blobs.put(key, buf);
    return { sha256, path: key, bytes: buf.length, format, width, height };
  }

  async record(rec: ImageRecord): Promise<void> {
    await this.sql.run(
      `INSERT INTO images (sha256, path, bytes, format, width, height, created_at)
       VALUES (@sha256, @path, @bytes, @format, @width, @height, @created_at) ON CONFLICT(sha256) DO NOTHING`,
      { ...rec, created_at: new Date().toISOString() },
    );
  }

  /**
   * Checks that this run uses the store the bank's images are in (recorded in meta `images.store` on first use),
   * so that a worker or a command pointed at the wrong store is refused before it fails items as missing.
   */
  async checkStore(): Promise<void> {
    const recorded = await this.sql.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', [IMAGE_STORE_KEY]);
    if (!recorded) return this.recordStore(this.blobs.id);
    if (recorded.value === this.blobs.id) return;
    throw new UserError(
      `this bank's images are in ${recorded.value}, but this run uses ${this.blobs.id} (--images / images.store): ` +
        `point it at ${recorded.value}, or copy them first with \`capbridge images copy --to ${this.blobs.id}\` (which records the new store)`,
    );
  }

  /** Records where the bank's images are (after `images copy`). */
  async recordStore(id: string): Promise<void> {
    await this.sql.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value', [IMAGE_STORE_KEY, id]);
  }

  async totals(): Promise<{ files: number; bytes: number }> {
    const r = await this.sql.get<{ files: number; bytes: number }>('SELECT COUNT(*) AS files, COALESCE(SUM(bytes), 0) AS bytes FROM images');
    return { files: Number(r!.files), bytes: Number(r!.bytes) };
  }
}
