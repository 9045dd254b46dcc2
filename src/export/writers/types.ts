// A corpus writer: records in, files out. Every writer writes through AtomicWriter (temp file, then rename), so
// a reader or a crash never sees a half-written export; commit() renames, abort() leaves nothing behind.
import type { ExportRecord } from '../record.js';

export type ExportFormat = 'tsv' | 'jsonl' | 'tmx' | 'moses';
export const EXPORT_FORMATS: ExportFormat[] = ['tsv', 'jsonl', 'tmx', 'moses'];

export interface CorpusWriter {
  /** The files this writer produces (Moses: two). */
  readonly paths: string[];
  write(rec: ExportRecord): void;
  commit(): void;
  abort(): void;
}
