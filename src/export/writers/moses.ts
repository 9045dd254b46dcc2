// Moses: two line-aligned plain-text files, PATH.en and PATH.zh; line n of one is the translation-candidate of
// line n of the other. Captions are collapsed to one line (tabs/newlines become spaces); both files are renamed
// into place only when both are complete.
import { AtomicWriter } from '../../util/atomic.js';
import { oneLine, type ExportRecord } from '../record.js';
import type { CorpusWriter } from './types.js';

export function mosesPaths(path: string): { en: string; zh: string } {
  return { en: `${path}.en`, zh: `${path}.zh` };
}

export class MosesWriter implements CorpusWriter {
  private en: AtomicWriter;
  private zh: AtomicWriter;
  readonly paths: string[];
  constructor(path: string) {
    const p = mosesPaths(path);
    this.en = new AtomicWriter(p.en);
    this.zh = new AtomicWriter(p.zh);
    this.paths = [p.en, p.zh];
  }
  write(rec: ExportRecord): void {
    this.en.write(oneLine(rec.en) + '\n');
    this.zh.write(oneLine(rec.zh) + '\n');
  }
  commit(): void {
    this.en.commit();
    this.zh.commit();
  }
  abort(): void {
    this.en.abort();
    this.zh.abort();
  }
}
