// Moving a bank's images between stores, and checking a store against the bank: `capbridge images copy --to
// STORE` (a folder bank's images into a bucket before pointing capbridge at it, or a bucket's back into the data
// dir) and `capbridge images check`. Both walk the `images` table by sha256 (keyset pages) and are idempotent: an
// object already in the target with its size is not sent again, so a copy stopped midway (Ctrl-C, the store down)
// is completed by running it again. An object the source has lost is reported by name, never invented.
import type { Bank } from './bank.js';
import { asImageStoreError, type ImageBlobs, type ImageRecord } from './image-store.js';

export interface ImageCopySummary {
  from: string;
  to: string;
  images: number;
  copied: number;
  /** Already in the target with the same size. */
  present: number;
  /** Rows whose object the source does not have: their objects (first 20). */
  missing: number;
  missingObjects: string[];
  bytes: number;
  aborted: boolean;
  ms: number;
}

export interface ImageCheckSummary {
  store: string;
  images: number;
  present: number;
  /** Missing, or there with another size: the objects (first 20) and why. */
  missing: number;
  missingObjects: string[];
  aborted: boolean;
  ms: number;
}

export interface ImageWalkOptions {
  /** Objects in flight at once (default 8). */
  concurrency?: number;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

const PAGE = 500;
const LISTED = 20;

/** Runs fn over every image row, `concurrency` at a time, page by page; stops between pages when aborted. */
async function walkImages(bank: Bank, opts: ImageWalkOptions, fn: (rec: ImageRecord) => Promise<void>): Promise<{ images: number; aborted: boolean }> {
  const total = (await bank.images.totals()).files;
  const concurrency = Math.max(1, opts.concurrency ?? 8);
  let after = '';
  let done = 0;
  for (;;) {
    if (opts.signal?.aborted) return { images: done, aborted: true };
    const page = await bank.images.list(after, PAGE);
    if (!page.length) break;
    after = page[page.length - 1]!.sha256;
    let next = 0;
    const lane = async () => {
      while (next < page.length) {
        await fn(page[next++]!);
        done++;
        opts.onProgress?.(done, total);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, page.length) }, lane));
  }
  return { images: done, aborted: false };
}

/** Copies every image of the bank from its store to `to` (same keys). A store failing stops it with the reason. */
export async function copyImages(bank: Bank, to: ImageBlobs, opts: ImageWalkOptions = {}): Promise<ImageCopySummary> {
  const t0 = performance.now();
  const from = bank.images.blobs;
  const s: ImageCopySummary = { from: from.location, to: to.location, images: 0, copied: 0, present: 0, missing: 0, missingObjects: [], bytes: 0, aborted: false, ms: 0 };
  const walk = await walkImages(bank, opts, async (rec) => {
    if (await to.has(rec.path, rec.bytes)) {
      s.present++;
      return;
    }
    let buf: Buffer;
    try {
      buf = await from.get(rec.path);
    } catch (err) {
      const e = asImageStoreError(err);
      if (!e?.missing) throw err;
      s.missing++;
      if (s.missingObjects.length < LISTED) s.missingObjects.push(e.object);
      return;
    }
    await to.put(rec.path, buf);
    s.copied++;
    s.bytes += buf.length;
  });
  return { ...s, images: walk.images, aborted: walk.aborted, ms: Math.round(performance.now() - t0) };
}

/** Checks that the bank's store holds every image row's object with its size (HEAD requests on S3). */
export async function checkImages(bank: Bank, opts: ImageWalkOptions = {}): Promise<ImageCheckSummary> {
  const t0 = performance.now();
  const blobs = bank.images.blobs;
  const s: ImageCheckSummary = { store: blobs.location, images: 0, present: 0, missing: 0, missingObjects: [], aborted: false, ms: 0 };
  const walk = await walkImages(bank, opts, async (rec) => {
    if (await blobs.has(rec.path, rec.bytes)) s.present++;
    else {
      s.missing++;
      if (s.missingObjects.length < LISTED) s.missingObjects.push(`${rec.path} (${rec.bytes} bytes expected)`);
    }
  });
  return { ...s, images: walk.images, aborted: walk.aborted, ms: Math.round(performance.now() - t0) };
}
