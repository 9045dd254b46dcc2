// Local import: a TSV manifest (id, image, caption[, url][, credit]) into one bank.
// Rows are read one at a time; images are hashed and copied into the store one at a time; items are committed
// in batches (one transaction per batch), so a killed import leaves every committed batch whole and a rerun
// completes the rest (unchanged rows are recognised and skipped).
import fs from 'node:fs';
import path from 'node:path';
import type { Bank, BankName, ImageBounds, ImageRecord, UpsertOutcome } from '../bank/index.js';
import { ImageReadError, isInfrastructureFailure } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import { openTsv, type TsvLimits } from '../util/tsv.js';
import { checkCaption } from '../lib/captions/language.js';
import type { Progress } from '../util/progress.js';

export interface ImportProblem {
  file: string;
  line: number;
  reason: string;
}

export interface ImportSummary {
  manifest: string;
  bank: BankName;
  rows: number;
  added: number;
  unchanged: number;
  updated: number;
  failed: number;
  languageMismatches: number;
  emptyCaptions: number;
  problems: ImportProblem[];
}

export interface ImportOptions {
  bank: BankName;
  manifest: string;
  config: Config;
  progress?: Progress;
  /** Called for each bad row as it is found (the CLI prints it at once). */
  onProblem?: (p: ImportProblem) => void;
}

const REQUIRED = ['id', 'image', 'caption'];

/** The manifest's bounds (config import.maxLineBytes, import.maxManifestBytes). */
export function manifestLimits(config: Config): TsvLimits {
  return { maxLineBytes: config.import.maxLineBytes, maxBytes: config.import.maxManifestBytes, lineKey: 'import.maxLineBytes', bytesKey: 'import.maxManifestBytes' };
}

/** Counts data lines cheaply (for the progress bar's total) without holding the file; 0 (no total) for anything
 *  but a regular file within import.maxManifestBytes (a pipe or /dev/zero would never end). */
export async function countManifestRows(file: string, maxBytes = Infinity): Promise<number> {
  const st = fs.statSync(file);
  if (!st.isFile() || st.size > maxBytes) return 0;
  let n = 0;
  let last = 10;
  for await (const chunk of fs.createReadStream(file)) {
    const buf = chunk as Buffer;
    for (let i = 0; i < buf.length; i++) if (buf[i] === 10) n++;
    if (buf.length) last = buf[buf.length - 1]!;
  }
  if (last !== 10) n++;
  return Math.max(0, n - 1);
}

interface Pending {
  line: number;
  extId: string;
  caption: string;
  credit: string | null;
  url: string | null;
  imagePath: string;
  image: ImageRecord;
}

export async function importManifest(bank: Bank, opts: ImportOptions): Promise<ImportSummary> {
  const manifest = path.resolve(opts.manifest);
  const baseDir = path.dirname(manifest);
  const { config } = opts;
  const reader = await openTsv(manifest, REQUIRED, manifestLimits(config));
  const bounds: ImageBounds = { minSide: config.import.minImageSide, minSideKey: 'import.minImageSide', maxPixels: config.sift.maxPixels, maxPixelsKey: 'sift.maxPixels' };
  const width = reader.header.length;
  const summary: ImportSummary = {
    manifest, bank: opts.bank, rows: 0, added: 0, unchanged: 0, updated: 0, failed: 0,
    languageMismatches: 0, emptyCaptions: 0, problems: [],
  };
  const fail = (line: number, reason: string) => {
    const p = { file: manifest, line, reason };
    summary.failed++;
    summary.problems.push(p);
    opts.onProblem?.(p);
  };
  const seen = new Map<string, number>(); // ext id -> first line (ids repeated inside the file are errors)
  const expected = opts.bank === 'source' ? config.captions.sourceLanguages : config.captions.targetLanguages;
  const importedAt = new Date().toISOString();
  let batch: Pending[] = [];

  const flush = async () => {
    if (!batch.length) return;
    const rows = batch;
    batch = [];
    const outcomes = await bank.transaction(async (tx) => {
      const out: UpsertOutcome[] = [];
      for (const r of rows) {
        await tx.images.record(r.image);
        const check = checkCaption(r.caption, expected, { check: config.captions.checkLanguage, minLength: config.captions.minLengthForDetection });
        if (check.status === 'lang-mismatch') summary.languageMismatches++;
        if (check.status === 'empty') summary.emptyCaptions++;
        const { outcome } = await tx.items.upsert({
          bank: opts.bank, extId: r.extId, caption: r.caption, credit: r.credit, lang: check.lang, captionStatus: check.status,
          captionReason: check.reason, imageSha256: r.image.sha256, pageUrl: r.url, imageUrl: r.imagePath,
          site: 'local', importedAt,
        });
        out.push(outcome);
      }
      return out;
    });
    rows.forEach((r, i) => {
      summary[outcomes[i]!]++;
    });
  };

  try {
    for await (const row of reader.rows) {
      summary.rows++;
      opts.progress?.tick(1);
      if (row.problem) {
        fail(row.line, row.problem);
        continue;
      }
      if (row.fields.length !== width) {
        fail(row.line, `expected ${width} columns (${reader.header.join(', ')}), found ${row.fields.length}`);
        continue;
      }
      const extId = (row.get('id') ?? '').trim();
      const imageField = (row.get('image') ?? '').trim();
      const caption = (row.get('caption') ?? '').replace(/\s+/g, ' ').trim();
      const url = (row.get('url') ?? '').trim() || null;
      // Optional: the photo credit, kept apart from the caption (exported as source_credit/target_credit).
      const credit = (row.get('credit') ?? '').replace(/\s+/g, ' ').trim() || null;
      if (!extId) {
        fail(row.line, 'empty id');
        continue;
      }
      const firstLine = seen.get(extId);
      if (firstLine !== undefined) {
        fail(row.line, `id "${extId}" repeated (first on line ${firstLine})`);
        continue;
      }
      seen.set(extId, row.line);
      if (!imageField) {
        fail(row.line, 'empty image path');
        continue;
      }
      const imagePath = path.isAbsolute(imageField) ? imageField : path.join(baseDir, imageField);
      let image: ImageRecord;
      try {
        const st = fs.statSync(imagePath);
        if (!st.isFile()) throw new ImageReadError(`not a file: ${imageField}`);
        if (st.size > config.import.maxImageBytes) throw new ImageReadError(`image too large: ${st.size} bytes > ${config.import.maxImageBytes}`);
        image = await bank.images.prepare(fs.readFileSync(imagePath), bounds);
      } catch (err) {
        // the image store or the bank failing (not this image): stop; committed batches stay, a rerun resumes
        if (isInfrastructureFailure(err)) throw err;
        const e = err as NodeJS.ErrnoException;
        const reason = e.code === 'ENOENT' ? `image not found: ${imageField}` : e.code ? `image unreadable: ${imageField}: ${e.code}` : `${imageField}: ${e.message}`;
        fail(row.line, reason);
        continue;
      }
      batch.push({ line: row.line, extId, caption, credit, url, imagePath, image });
      if (batch.length >= config.import.batchSize) await flush();
    }
    await flush();
  } finally {
    reader.close();
  }
  return summary;
}
