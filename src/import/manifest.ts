// Local import: a TSV manifest (id, image, caption[, url][, credit]) into one bank.
// Rows are read one at a time; images are hashed and copied into the store one at a time; items are committed
// in batches (one transaction per batch), so a killed import leaves every committed batch whole and a rerun
// completes the rest (unchanged rows are recognised and skipped).
import fs from 'node:fs';
import path from 'node:path';
import type { Bank, BankName, BankTx, ImageBounds, ImageRecord, UpsertOutcome } from '../bank/index.js';
import { ImageReadError, isDatabaseRefusal, isInfrastructureFailure } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import { openTsv, type TsvLimits, type TsvRow } from '../util/tsv.js';
import { checkCaption } from '../lib/captions/index.js';
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

/** The longest item id a manifest may give, in UTF-8 bytes: ids are a unique key of the bank, and PostgreSQL's
 *  btree indexes refuse entries over ~2.7 KB; a longer id is refused per row, before the bank sees it. */
export const MAX_ID_BYTES = 1024;

interface Pending {
  line: number;
  extId: string;
  caption: string;
  credit: string | null;
  url: string | null;
  imagePath: string;
  image: ImageRecord;
}

/** The refusal of a row the bank would not store, in words (the server's own message names its internals). */
function refusedRow(err: Error & { code: string }): string {
  const cls = err.code.slice(0, 2);
  const what =
    cls === '54'
      ? 'a value of this row is too large for the bank'
      : cls === '22'
        ? 'a value of this row cannot be stored (invalid text or number)'
        : cls === '23'
          ? 'this row conflicts with a row already stored'
          : 'the bank refused this row';
  return `${what} (SQLSTATE ${err.code})`;
}

/** One import: its summary, the ids seen, the batch waiting to be committed. */
class ManifestImport {
  readonly summary: ImportSummary;
  private seen = new Map<string, number>(); // ext id -> first line (ids repeated inside the file are errors)
  private batch: Pending[] = [];
  private readonly importedAt = new Date().toISOString();
  private readonly bounds: ImageBounds;

  constructor(
    private bank: Bank,
    private opts: ImportOptions,
    readonly manifest: string,
  ) {
    const c = opts.config;
    this.bounds = { minSide: c.import.minImageSide, minSideKey: 'import.minImageSide', maxPixels: c.sift.maxPixels, maxPixelsKey: 'sift.maxPixels' };
    this.summary = { manifest, bank: opts.bank, rows: 0, added: 0, unchanged: 0, updated: 0, failed: 0, languageMismatches: 0, emptyCaptions: 0, problems: [] };
  }

  fail(line: number, reason: string): void {
    const p = { file: this.manifest, line, reason };
    this.summary.failed++;
    this.summary.problems.push(p);
    this.opts.onProblem?.(p);
  }

  /** A row's fields checked (every bound before the bank sees them) and its image stored; null when it failed. */
  async prepare(row: TsvRow, width: number, header: string[]): Promise<Pending | null> {
    if (row.problem) return this.fail(row.line, row.problem), null;
    if (row.fields.length !== width) return this.fail(row.line, `expected ${width} columns (${header.join(', ')}), found ${row.fields.length}`), null;
    const extId = (row.get('id') ?? '').trim();
    const imageField = (row.get('image') ?? '').trim();
    const caption = (row.get('caption') ?? '').replace(/\s+/g, ' ').trim();
    const url = (row.get('url') ?? '').trim() || null;
    // Optional: the photo credit, kept apart from the caption (exported as source_credit/target_credit).
    const credit = (row.get('credit') ?? '').replace(/\s+/g, ' ').trim() || null;
    if (!extId) return this.fail(row.line, 'empty id'), null;
    if (Buffer.byteLength(extId) > MAX_ID_BYTES) return this.fail(row.line, `id longer than ${MAX_ID_BYTES} bytes`), null;
    const firstLine = this.seen.get(extId);
    if (firstLine !== undefined) return this.fail(row.line, `id "${extId}" repeated (first on line ${firstLine})`), null;
    this.seen.set(extId, row.line);
    if (!imageField) return this.fail(row.line, 'empty image path'), null;
    const imagePath = path.isAbsolute(imageField) ? imageField : path.join(path.dirname(this.manifest), imageField);
    const max = this.opts.config.import.maxImageBytes;
    try {
      const st = fs.statSync(imagePath);
      if (!st.isFile()) throw new ImageReadError(`not a file: ${imageField}`);
      if (st.size > max) throw new ImageReadError(`image too large: ${st.size} bytes > ${max}`);
      const image = await this.bank.images.prepare(fs.readFileSync(imagePath), this.bounds);
      return { line: row.line, extId, caption, credit, url, imagePath, image };
    } catch (err) {
      // the image store or the bank failing (not this image: a full disk, an unreachable bucket): stop; committed
      // batches stay, a rerun resumes
      if (isInfrastructureFailure(err)) throw err;
      const e = err as NodeJS.ErrnoException;
      const reason = e.code === 'ENOENT' ? `image not found: ${imageField}` : e.code ? `image unreadable: ${imageField}: ${e.code}` : `${imageField}: ${e.message}`;
      return this.fail(row.line, reason), null;
    }
  }

  async add(p: Pending): Promise<void> {
    this.batch.push(p);
    if (this.batch.length >= this.opts.config.import.batchSize) await this.flush();
  }

  /** Commits the batch in one transaction. Should the bank refuse it (a row the checks above did not foresee), each
   *  row is committed on its own and a refused row fails alone, in words, naming its line. */
  async flush(): Promise<void> {
    if (!this.batch.length) return;
    const rows = this.batch;
    this.batch = [];
    let outcomes: UpsertOutcome[];
    try {
      outcomes = await this.bank.transaction((tx) => this.store(tx, rows));
    } catch (err) {
      if (!isDatabaseRefusal(err) || rows.length === 1) {
        if (isDatabaseRefusal(err)) return this.fail(rows[0]!.line, refusedRow(err));
        throw err;
      }
      for (const r of rows) {
        this.batch = [r];
        await this.flush();
      }
      return;
    }
    for (const o of outcomes) this.summary[o]++;
  }

  private async store(tx: BankTx, rows: Pending[]): Promise<UpsertOutcome[]> {
    const { config } = this.opts;
    const expected = this.opts.bank === 'source' ? config.captions.sourceLanguages : config.captions.targetLanguages;
    const out: UpsertOutcome[] = [];
    const counted = { mismatches: 0, empty: 0 };
    for (const r of rows) {
      await tx.images.record(r.image);
      const check = checkCaption(r.caption, expected, { check: config.captions.checkLanguage, minLength: config.captions.minLengthForDetection });
      if (check.status === 'lang-mismatch') counted.mismatches++;
      if (check.status === 'empty') counted.empty++;
      const { outcome } = await tx.items.upsert({
        bank: this.opts.bank, extId: r.extId, caption: r.caption, credit: r.credit, lang: check.lang, captionStatus: check.status,
        captionReason: check.reason, imageSha256: r.image.sha256, pageUrl: r.url, imageUrl: r.imagePath,
        site: 'local', importedAt: this.importedAt,
      });
      out.push(outcome);
    }
    // counted once the batch is committed (a batch refused and stored row by row is not counted twice)
    this.summary.languageMismatches += counted.mismatches;
    this.summary.emptyCaptions += counted.empty;
    return out;
  }
}

export async function importManifest(bank: Bank, opts: ImportOptions): Promise<ImportSummary> {
  const manifest = path.resolve(opts.manifest);
  const reader = await openTsv(manifest, REQUIRED, manifestLimits(opts.config));
  const run = new ManifestImport(bank, opts, manifest);
  try {
    for await (const row of reader.rows) {
      run.summary.rows++;
      opts.progress?.tick(1);
      const p = await run.prepare(row, reader.header.length, reader.header);
      if (p) await run.add(p);
    }
    await run.flush();
  } finally {
    reader.close();
  }
  return run.summary;
}
