// TSV: a header line, then one line per record; no quoting (a cell never holds a tab or newline: they are
// collapsed to spaces), provenance lists joined with " | ".
import { AtomicWriter } from '../../../util/atomic.js';
import { EXPORT_FIELDS, LIST_SEPARATOR, assertUtf8, fmtScore, oneLine, type ExportRecord } from '../record.js';
import { RecordWriter } from './types.js';

export function tsvCell(v: unknown): string {
  if (Array.isArray(v)) return v.map((x) => oneLine(String(x ?? ''))).join(LIST_SEPARATOR);
  if (typeof v === 'number') return fmtScore(v);
  return oneLine(String(v ?? ''));
}

export class TsvWriter extends RecordWriter {
  private out: AtomicWriter;
  readonly paths: string[];
  constructor(path: string) {
    super();
    this.out = new AtomicWriter(path);
    this.paths = [path];
    this.out.write(EXPORT_FIELDS.join('\t') + '\n');
  }
  render(rec: ExportRecord): string[] {
    return [assertUtf8(EXPORT_FIELDS.map((f) => (f === 'inliers' ? String(rec.inliers) : tsvCell(rec[f]))).join('\t') + '\n', 'TSV')];
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
