// A corpus writer: records in, files out. Every writer writes through AtomicWriter (temp file, then rename), so
// a reader or a crash never sees a half-written export; commit() renames, abort() leaves nothing behind. A record is
// rendered whole before anything of it is appended, so one that cannot be written leaves no trace in any file.
import type { ExportRecord } from '../record.js';

export type ExportFormat = 'tsv' | 'jsonl' | 'tmx' | 'moses';
export const EXPORT_FORMATS: ExportFormat[] = ['tsv', 'jsonl', 'tmx', 'moses'];

export interface CorpusWriter {
  /** The files this writer produces (Moses: three). */
  readonly paths: string[];
  /**
   * The text one record adds to each of `paths`, without writing it: throws (an ExportRecordError or any error) when
   * the record cannot be written, so that an exporter can skip it before any file holds a part of it.
   */
  render(rec: ExportRecord): string[];
  /** Appends what render() returned. */
  append(chunks: string[]): void;
  /** render() then append(). */
  write(rec: ExportRecord): void;
  commit(): void;
  abort(): void;
}

/** What every writer shares: write() is render() then append(), so a record is written the same way everywhere. */
export abstract class RecordWriter implements CorpusWriter {
  abstract readonly paths: string[];
  abstract render(rec: ExportRecord): string[];
  abstract append(chunks: string[]): void;
  abstract commit(): void;
  abstract abort(): void;
  write(rec: ExportRecord): void {
    this.append(this.render(rec));
  }
}
