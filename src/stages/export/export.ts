// exportPairs: emitted sentence pairs → corpus files. Sentence pairs with identical texts are collapsed into one
// record that keeps every provenance (caption pair id, sentence spans, items). Files are written atomically; only
// after every file is in place does the export watermark move (sentence_pairs.exported_at), so a crash mid-export
// leaves no partial file and the next `--new` export still holds those pairs. One record that cannot be written (a text
// a format cannot encode, a row that makes a writer throw) does not sink the export: every writer renders it before any
// file takes a byte of it, and if one fails the record is left out of every file, logged with its sentence pairs,
// caption pairs and items, counted in the summary and not marked exported (a later `--new` export tries it again).
import type { Bank, Level, SentencePairForExport } from '../../bank/index.js';
import { ExportClaimsRepo, PairsRepo, SentencePairsRepo } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../util/log.js';
import { UserError } from '../../util/errors.js';
import { ExportRecordError, type ExportRecord } from './record.js';
import { createWriter, EXPORT_FORMATS, type CorpusWriter, type ExportFormat } from './writers/index.js';

export interface ExportOutput {
  format: ExportFormat;
  out: string;
}

export interface ExportOptions {
  /** One format and path... */
  format?: ExportFormat;
  out?: string;
  /** ...or several, written from one walk (the nightly export writes several formats of the same pairs). */
  outputs?: ExportOutput[];
  minLevel?: Level;
  /** Only pairs never exported before (and whose caption texts were never exported). */
  onlyNew?: boolean;
  /** The pairs linguists judged on the review page (accepted / rejected / all judged) instead of the emitted pairs. */
  reviewed?: 'accepted' | 'rejected' | 'all';
  logger?: Logger;
  signal?: AbortSignal;
}

export interface ExportSummary {
  exportId: number;
  formats: ExportFormat[];
  files: string[];
  minLevel: Level;
  onlyNew: boolean;
  /** Records written (collapsed sentence pairs). */
  records: number;
  /** Sentence pairs of item pairs those records stand for. */
  pairs: number;
  /** With onlyNew: new sentence pairs whose texts had been exported already (marked, not written again). */
  skippedKnownTexts: number;
  byLevel: Record<Level, number>;
  /** Records left out because they could not be written (every file leaves them out), and the first of them. */
  skipped: number;
  skippedRecords: SkippedRecord[];
}

export interface SkippedRecord {
  /** Sentence pairs (sentence_pairs.id), caption pairs (pairs.id) and items (ext ids) the record stands for. */
  sentencePairIds: number[];
  pairIds: number[];
  sourceIds: string[];
  targetIds: string[];
  reason: string;
}

/** Skipped records listed in a summary (all are logged). */
export const MAX_SKIPPED_LISTED = 100;

function harvested(p: SentencePairForExport): string {
  const a = p.sourceHarvestedAt ?? '';
  const b = p.targetHarvestedAt ?? '';
  return a > b ? a : b;
}

const span = (a: number, b: number): string => (a === b ? String(a) : `${a}-${b}`);

const LEVELS_OUT = new Set<string>(['par', 'com', 'pse', 'inc']);
const kindOf = (v: unknown): string => (v === null ? 'null' : Buffer.isBuffer(v) ? 'binary data' : typeof v);

/** A row as the bank should give it, or an ExportRecordError saying what is wrong with it (a foreign write, a bug). */
function checkRow(p: SentencePairForExport): void {
  for (const f of ['en', 'zh'] as const) if (typeof p[f] !== 'string') throw new ExportRecordError(`${f} text is ${kindOf(p[f])}, not text`);
  if (!LEVELS_OUT.has(p.level)) throw new ExportRecordError(`level ${JSON.stringify(p.level)} is not one of par, com, pse, inc`);
  if (typeof p.c !== 'number' || !Number.isFinite(p.c)) throw new ExportRecordError(`C is ${kindOf(p.c)} ${String(p.c)}, not a number`);
}

/** Turns one group of sentence pairs with identical texts (best score first) into a record. */
export function collapseGroup(group: SentencePairForExport[]): ExportRecord {
  for (const p of group) checkRow(p);
  const best = group[0]!;
  const rec: ExportRecord = {
    en: best.en,
    zh: best.zh,
    level: best.level,
    c: best.c,
    fc: best.fc,
    fe: best.fe,
    fl: best.fl,
    fcov: best.fcov,
    image_score: best.imageScore ?? 0,
    inliers: best.inliers ?? 0,
    source_url: [],
    target_url: [],
    source_image: [],
    target_image: [],
    source_id: [],
    target_id: [],
    pair_id: [],
    en_sentences: [],
    zh_sentences: [],
    harvested_at: harvested(best),
    source_credit: [],
    target_credit: [],
  };
  for (const p of group) {
    rec.pair_id.push(String(p.pairId));
    rec.en_sentences.push(span(p.enFirst, p.enLast));
    rec.zh_sentences.push(span(p.zhFirst, p.zhLast));
    rec.source_credit.push(p.sourceCredit ?? '');
    rec.target_credit.push(p.targetCredit ?? '');
    rec.source_url.push(p.sourceUrl ?? '');
    rec.target_url.push(p.targetUrl ?? '');
    rec.source_image.push(p.sourceImage ?? '');
    rec.target_image.push(p.targetImage ?? '');
    rec.source_id.push(p.sourceExtId);
    rec.target_id.push(p.targetExtId);
    const h = harvested(p);
    if (h && (!rec.harvested_at || h < rec.harvested_at)) rec.harvested_at = h;
  }
  return rec;
}

/** An export's claim on the new sentence pairs is held this long without renewal (renewed every third of it while the
 *  export writes); an export killed mid-way leaves its claim to another export after it. */
export const EXPORT_CLAIM_LEASE_MS = 120_000;

/** The walk of one export: groups of sentence pairs with identical texts become records in every writer, or are
 *  skipped whole (named in the summary and the log); `marked` are the ids whose watermark moves when it is done. */
class ExportWalk {
  readonly marked: number[] = [];
  private group: SentencePairForExport[] = [];

  constructor(
    private writers: CorpusWriter[],
    private summary: ExportSummary,
    private logger?: Logger,
  ) {}

  add(p: SentencePairForExport, signal?: AbortSignal): void {
    if (this.group.length && this.group[0]!.textKey !== p.textKey) {
      this.flush();
      if (signal?.aborted) throw new Error('export aborted');
    }
    this.group.push(p);
  }

  flush(): void {
    if (!this.group.length) return;
    const g = this.group;
    this.group = [];
    const summary = this.summary;
    if (summary.onlyNew && g[0]!.textExported) {
      for (const p of g) this.marked.push(p.id);
      summary.skippedKnownTexts += g.length;
      return;
    }
    let rec: ExportRecord;
    let chunks: string[][];
    try {
      rec = collapseGroup(g);
      chunks = this.writers.map((w) => w.render(rec));
    } catch (err) {
      this.skip(g, err);
      return;
    }
    for (const p of g) this.marked.push(p.id);
    this.writers.forEach((w, i) => w.append(chunks[i]!));
    summary.records++;
    summary.pairs += g.length;
    summary.byLevel[rec.level]++;
  }

  private skip(g: SentencePairForExport[], err: unknown): void {
    const uniq = <T>(xs: T[]) => [...new Set(xs)];
    const s: SkippedRecord = {
      sentencePairIds: g.map((p) => p.id),
      pairIds: uniq(g.map((p) => p.pairId)),
      sourceIds: uniq(g.map((p) => String(p.sourceExtId))),
      targetIds: uniq(g.map((p) => String(p.targetExtId))),
      reason: err instanceof Error ? err.message : String(err),
    };
    this.summary.skipped++;
    if (this.summary.skippedRecords.length < MAX_SKIPPED_LISTED) this.summary.skippedRecords.push(s);
    this.logger?.error(
      `export: sentence pair${g.length > 1 ? 's' : ''} ${s.sentencePairIds.join(', ')} (caption pair ${s.pairIds.join(', ')}; items ${s.sourceIds.join(', ')} / ${s.targetIds.join(', ')}) left out of every file: ${s.reason}`,
    );
  }
}

function openWriters(opts: ExportOptions): { writers: CorpusWriter[]; formats: ExportFormat[] } {
  const outputs: ExportOutput[] = opts.outputs ?? (opts.format && opts.out ? [{ format: opts.format, out: opts.out }] : []);
  if (!outputs.length) throw new UserError('export: a format and an output path are required');
  for (const o of outputs) {
    if (!EXPORT_FORMATS.includes(o.format)) throw new UserError(`export: unknown format "${o.format}" (expected ${EXPORT_FORMATS.join(', ')})`);
  }
  const writers: CorpusWriter[] = [];
  try {
    for (const o of outputs) writers.push(createWriter(o.format, o.out));
  } catch (err) {
    for (const w of writers) w.abort();
    throw new UserError(`export: cannot write ${outputs[writers.length]?.out}: ${(err as Error).message}`);
  }
  return { writers, formats: outputs.map((o) => o.format) };
}

/** Renews an export's claim while it writes; returns the function that stops renewing. */
function holdClaim(claims: ExportClaimsRepo, exportId: number, logger?: Logger): () => void {
  const timer = setInterval(() => {
    claims.renew(exportId, EXPORT_CLAIM_LEASE_MS).then(
      (ok) => ok || logger?.warn(`export: export ${exportId} is no longer running in the bank (its claim was taken over); its files may repeat pairs of another export`),
      (err: unknown) => logger?.warn(`export: could not renew the claim of export ${exportId}: ${(err as Error).message}`),
    );
  }, EXPORT_CLAIM_LEASE_MS / 3);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Writes the export. With onlyNew, the new sentence pairs are claimed first (ExportClaimsRepo: under a lock, with a
 * lease), and only the claimed ones are written: exports started together (a manual `export --new` and the daemon's
 * scheduled one) write each sentence pair once. The watermark moves when every file is in place; a failed export
 * gives its claim back.
 */
export async function exportPairs(bank: Bank, config: Config, opts: ExportOptions): Promise<ExportSummary> {
  const minLevel = opts.minLevel ?? config.export.minLevel;
  const onlyNew = Boolean(opts.onlyNew);
  const { writers, formats } = openWriters(opts);
  const files = writers.flatMap((w) => w.paths);
  const summary: ExportSummary = {
    exportId: 0, formats, files, minLevel, onlyNew, records: 0, pairs: 0, skippedKnownTexts: 0,
    byLevel: { par: 0, com: 0, pse: 0, inc: 0 },
    skipped: 0,
    skippedRecords: [],
  };
  const walk = new ExportWalk(writers, summary, opts.logger);
  const claims = bank.repo(ExportClaimsRepo);
  let claimId: number | undefined;
  let stopClaim = () => {};
  try {
    if (onlyNew) {
      const c = await claims.claim({ formats: summary.formats, paths: files, minLevel, leaseMs: EXPORT_CLAIM_LEASE_MS });
      claimId = c.exportId;
      stopClaim = holdClaim(claims, c.exportId, opts.logger);
      if (c.takenOver) opts.logger?.warn(`export: ${c.takenOver} sentence pair(s) claimed by an export that did not finish (its lease ran out) are written by this one`);
    }
    for await (const p of bank.repo(SentencePairsRepo).iterateForExport({ minLevel, onlyNew, reviewed: opts.reviewed, claimedBy: claimId })) walk.add(p, opts.signal);
    walk.flush();
    for (const w of writers) w.commit();
  } catch (err) {
    stopClaim();
    for (const w of writers) w.abort();
    if (claimId !== undefined) await claims.abandon(claimId).catch(() => undefined); // else its lease runs out
    throw err;
  }
  stopClaim();
  // files are in place: move the watermark
  if (claimId !== undefined) {
    summary.exportId = claimId;
    await claims.finish(claimId, walk.marked, summary.records);
  } else {
    await bank.transaction(async (tx) => {
      const pairs = tx.repo(PairsRepo);
      summary.exportId = await pairs.beginExport({ formats: summary.formats, paths: files, onlyNew, minLevel });
      await tx.repo(SentencePairsRepo).markExported(summary.exportId, walk.marked);
      await pairs.finishExport(summary.exportId, summary.records, walk.marked.length);
    });
  }
  opts.logger?.info(
    `export: ${summary.records} sentence pairs (${summary.pairs} with the item pairs they repeat in) → ${files.join(', ')}` +
      (summary.skipped ? `; ${summary.skipped} records could not be written and were left out (logged above)` : ''),
  );
  return summary;
}
