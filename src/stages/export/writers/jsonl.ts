// JSONL: one JSON object per line with the TSV's fields; provenance fields are arrays.
import { AtomicWriter } from '../../../util/atomic.js';
import { EXPORT_FIELDS, assertUtf8, type ExportRecord } from '../record.js';
import { RecordWriter } from './types.js';

export class JsonlWriter extends RecordWriter {
  private out: AtomicWriter;
  readonly paths: string[];
  constructor(path: string) {
    super();
    this.out = new AtomicWriter(path);
    this.paths = [path];
  }
  render(rec: ExportRecord): string[] {
    const obj: Record<string, unknown> = {};
    for (const f of EXPORT_FIELDS) obj[f] = rec[f];
    // JSON.stringify escapes U+2028/2029 since ES2019, so a line is always one record; it would write an unpaired
    // surrogate as a \ud800 escape, which strict JSON readers refuse: checked on the fields instead
    for (const f of EXPORT_FIELDS) {
      const v = rec[f];
      for (const x of Array.isArray(v) ? v : [v]) if (typeof x === 'string') assertUtf8(x, `JSONL ${f}`);
    }
    return [JSON.stringify(obj) + '\n'];
  }
  append(chunks: string[]): void {
    this.out.write(chunks[0]!);
  }
  commit(): void {
    this.out.commit();
  }
  abort(): void {
    this.out.abort();
  }
}
