// JSONL: one JSON object per line with the TSV's fields; provenance fields are arrays.
import { AtomicWriter } from '../../util/atomic.js';
import { EXPORT_FIELDS, type ExportRecord } from '../record.js';
import type { CorpusWriter } from './types.js';

export class JsonlWriter implements CorpusWriter {
  private out: AtomicWriter;
  readonly paths: string[];
  constructor(path: string) {
    this.out = new AtomicWriter(path);
    this.paths = [path];
  }
  write(rec: ExportRecord): void {
    const obj: Record<string, unknown> = {};
    for (const f of EXPORT_FIELDS) obj[f] = rec[f];
    // JSON.stringify escapes U+2028/2029 since ES2019, so a line is always one record
    this.out.write(JSON.stringify(obj) + '\n');
  }
  commit(): void {
    this.out.commit();
  }
  abort(): void {
    this.out.abort();
  }
}
