// The image store: bytes named by the sha256 of their content (images/ab/<sha>.<ext>), so the same photo found
// on two pages, or imported twice, is stored once. Where the bytes live is an ImageBlobs (a folder in the data
// dir by default); the `images` table indexes what is stored. Bytes are written before the row that names them
// is committed: a crash leaves at most an orphan object, which the next store of the same bytes reuses.
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import crypto from 'node:crypto';
import sharp, { type Metadata } from 'sharp';
import os from 'node:os';
import { DISK_ERRORS, tempPathFor, writeFileAtomic } from '../util/atomic.js';
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

/** Which store this is, in full: what the bank records at first use and compares every later run's store with. */
export interface StoreIdentity {
  /** Compared: `folder:<uuid>` (the folder's own id, the same from any machine that mounts it, another for another
   *  machine's folder), or `s3://bucket/prefix at <endpoint>` (AWS S3 when no endpoint is set). */
  key: string;
  /** Said to the operator: the key and where it was seen (the folder's path and host). */
  describe: string;
}

/** Where image bytes live: a folder (default) or an S3-compatible bucket. Keys are ImageRecord.path. */
export interface ImageBlobs {
  readonly kind: string;
  /** Which store this is, as the command line names it: 'folder', or s3://bucket/prefix. */
  readonly id: string;
  /** Which store this is in full (endpoint included; a folder by the id kept in it). */
  identity(): Promise<StoreIdentity>;
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

/** The file in a folder store that names it (a UUID). */
const STORE_ID_FILE = '.capbridge-store';

function readStoreId(file: string): string | null {
  try {
    const v = fs.readFileSync(file, 'utf8').trim();
    return /^[0-9a-f-]{36}$/.test(v) ? v : null;
  } catch {
    return null;
  }
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
  /** The folder's id, kept in images/.capbridge-store (created at first use, never replaced: two processes creating it
   *  at once end with one id), so a data dir mounted on another machine is the same store and a fresh folder on another
   *  machine is not. */
  async identity(): Promise<StoreIdentity> {
    const file = path.join(this.location, STORE_ID_FILE);
    let id = readStoreId(file);
    if (!id) {
      fs.mkdirSync(this.location, { recursive: true });
      const tmp = tempPathFor(file);
      fs.writeFileSync(tmp, `${crypto.randomUUID()}\n`);
      try {
        fs.linkSync(tmp, file); // fails when another process made it first: its id stands
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      } finally {
        fs.rmSync(tmp, { force: true });
      }
      id = readStoreId(file);
      if (!id) throw new Error(`${file}: not a store id`);
    }
    return { key: `folder:${id}`, describe: `the folder ${this.location} on ${os.hostname()} (store id ${id})` };
  }
  async has(key: string, bytes: number): Promise<boolean> {
    try {
      return fs.statSync(this.abs(key)).size === bytes;
    } catch {
      return false;
    }
  }
  async put(key: string, buf: Uint8Array): Promise<void> {
    try {
      writeFileAtomic(this.abs(key), buf);
    } catch (err) {
      throw this.failed('put', key, err);
    }
  }
  /** A disk that is full (or read-only, over quota, failing) is the store's failure, not the image's: transient, so
   *  the stage stops (the import says the disk is full, once) instead of failing every image after it. */
  private failed(op: 'get' | 'put', key: string, err: unknown): ImageStoreError {
    const e = err as NodeJS.ErrnoException;
    const missing = e.code === 'ENOENT' && op === 'get';
    const disk = e.code ? DISK_ERRORS[e.code] : undefined;
    if (disk) return new ImageStoreError(this.abs(key), op, `${disk} (${e.code}) under ${this.location}: free space there, then run again`, false, true);
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

/** The meta keys naming the store the bank's images are in: its identity key, and its description for messages. */
const IMAGE_STORE_KEY = 'images.store';
const IMAGE_STORE_TEXT = 'images.store.describe';

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
   * Checks that this run uses the store the bank's images are in, so that a worker or a command pointed at another
   * store (another endpoint, bucket, prefix, or another machine's folder) is refused, naming both, before it fails
   * items as missing. The first run records its store, atomically: two first runs at once end with one store, and the
   * other is refused. A bank recorded by an older capbridge ('folder', s3://bucket/prefix) is upgraded to the full
   * identity by the first run whose store matches it.
   */
  async checkStore(): Promise<void> {
    const mine = await this.blobs.identity();
    if ((await this.sql.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', [IMAGE_STORE_KEY]))?.value === mine.key) return;
    const recorded = await this.sql.transaction(async (tx) => {
      if ((await tx.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING', [IMAGE_STORE_KEY, mine.key])) > 0) {
        await tx.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value', [IMAGE_STORE_TEXT, mine.describe]);
      } else if ((await tx.run('UPDATE meta SET value = ? WHERE key = ? AND value = ?', [mine.key, IMAGE_STORE_KEY, this.blobs.id])) > 0) {
        await tx.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value', [IMAGE_STORE_TEXT, mine.describe]);
      }
      const key = (await tx.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', [IMAGE_STORE_KEY]))!.value;
      const text = (await tx.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', [IMAGE_STORE_TEXT]))?.value ?? key;
      return { key, text };
    });
    if (recorded.key === mine.key) return;
    throw new UserError(
      `this bank's images are in ${recorded.text}, but this run uses ${mine.describe} (--images / images.store, images.s3.*): ` +
        `point it at the bank's store, or copy them first with \`capbridge images copy --to ${this.blobs.id}\` (which records the new store)`,
    );
  }

  /** Records where the bank's images are (after `images copy`). */
  async recordStore(blobs: ImageBlobs): Promise<void> {
    const id = await blobs.identity();
    await this.sql.transaction(async (tx) => {
      for (const [k, v] of [[IMAGE_STORE_KEY, id.key], [IMAGE_STORE_TEXT, id.describe]]) {
        await tx.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value', [k, v]);
      }
    });
  }

  async totals(): Promise<{ files: number; bytes: number }> {
    const r = await this.sql.get<{ files: number; bytes: number }>('SELECT COUNT(*) AS files, COALESCE(SUM(bytes), 0) AS bytes FROM images');
    return { files: Number(r!.files), bytes: Number(r!.bytes) };
  }
}
