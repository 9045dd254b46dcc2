// Images of the store, by sha256 only: thumbnails resized by sharp and cached on disk (bank.subdir('thumbs')),
// and full images served as stored when browsers show the format, else converted to PNG. A sha that is not a
// row of the `images` table is a 404: no path from the request ever reaches the file system. Bytes come through
// the bank's image store (the folder or an S3 bucket).
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { Readable } from 'node:stream';
import { asImageStoreError, type Bank } from '../bank/index.js';
import { writeFileAtomic } from '../util/atomic.js';
import { HttpError, notFound } from './errors.js';

/**
 * The image store failing to give an image's bytes: a 404 naming the object when it is gone from the store (the
 * row outlived its object), a 503 when the store itself failed (unreachable after its retries; logged in full).
 */
function storeFailure(sha: string, cause: unknown): unknown {
  const err = asImageStoreError(cause);
  if (!err) return cause;
  if (err.missing) return new HttpError(404, `image ${sha}: its bytes are missing from the image store (${err.message})`);
  return new HttpError(503, `image ${sha}: the image store is unavailable (${err.message})`);
}

/** A stored image sharp cannot read (damaged since it was stored, or a format this build lacks): the image's fault. */
function undecodable(sha: string, err: unknown): HttpError {
  const msg = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200);
  return new HttpError(422, `image ${sha} cannot be decoded: ${msg}`);
}

export const THUMB_SIDE = 200;
const BROWSER_FORMATS: Record<string, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp', gif: 'image/gif', avif: 'image/avif' };

export class ImageServer {
  private pending = new Map<string, Promise<Buffer>>();
  constructor(private bank: Bank, private maxPixels: number) {}

  private async record(sha: string) {
    const rec = await this.bank.images.get(sha);
    if (!rec) throw notFound(`image ${sha} is not in the store`);
    return rec;
  }

  /**
   * The stored record of an image the server may decode or send: one whose header size is within sift.maxPixels.
   * A decompression bomb (a small file declaring 100000x100000 pixels) is refused from its stored size, before
   * sharp or the browser decodes a pixel of it.
   */
  private async servable(sha: string) {
    const rec = await this.record(sha);
    const pixels = rec.width * rec.height;
    if (!(pixels <= this.maxPixels)) {
      throw new HttpError(422, `image ${sha} is ${rec.width}x${rec.height} (${pixels} pixels), over sift.maxPixels ${this.maxPixels}: not decoded or served`);
    }
    return rec;
  }

  /** A JPEG thumbnail (longest side THUMB_SIDE), from the disk cache or made and cached. */
  async thumbnail(sha: string): Promise<{ body: Buffer; type: string }> {
    await this.servable(sha);
    const file = path.join(this.bank.subdir('thumbs'), sha.slice(0, 2), `${sha}-${THUMB_SIDE}.jpg`);
    try {
      return { body: await fs.promises.readFile(file), type: 'image/jpeg' };
    } catch {
      /* not cached yet */
    }
    let p = this.pending.get(sha);
    if (!p) {
      p = this.bank.images
        .read(sha)
        .catch((err: unknown) => {
          throw storeFailure(sha, err);
        })
        .then((bytes) => sharp(bytes, { limitInputPixels: this.maxPixels, failOn: 'none' })
          .rotate()
          .resize(THUMB_SIDE, THUMB_SIDE, { fit: 'inside', withoutEnlargement: true })
          .flatten({ background: '#ffffff' })
          .jpeg({ quality: 80 })
          .toBuffer()
          .catch((err: unknown) => {
            throw undecodable(sha, err);
          }))
        .then((buf) => {
          writeFileAtomic(file, buf);
          return buf;
        })
        .finally(() => this.pending.delete(sha));
      this.pending.set(sha, p);
    }
    return { body: await p, type: 'image/jpeg' };
  }

  /** The stored image, streamed as it comes from the store (converted to PNG when browsers cannot show its format,
   *  e.g. TIFF, HEIF, SVG). */
  async full(sha: string): Promise<{ body: Buffer | Readable; type: string; bytes?: number }> {
    const rec = await this.servable(sha);
    const type = BROWSER_FORMATS[rec.format];
    try {
      if (type) return { body: await this.bank.images.stream(sha), type, bytes: rec.bytes };
      const bytes = await this.bank.images.read(sha);
      const body = await sharp(bytes, { limitInputPixels: this.maxPixels, failOn: 'none' }).rotate().png().toBuffer().catch((err: unknown) => {
        throw undecodable(sha, err);
      });
      return { body, type: 'image/png' };
    } catch (err) {
      throw storeFailure(sha, err);
    }
  }

  async size(sha: string): Promise<{ width: number; height: number }> {
    const rec = await this.record(sha);
    return { width: rec.width, height: rec.height };
  }
}
