// Moses: two line-aligned plain-text files, PATH.en and PATH.zh; line n of one is the translation-candidate of
// line n of the other. Sentences are collapsed to one line (tabs/newlines become spaces). A third line-aligned file,
// PATH.ids, gives each line's provenance as TSV (level, pair_id, source_id, target_id, en_sentences, zh_sentences;
// lists joined with " | "), which Moses tools ignore. All files are renamed into place only when all are complete.
import { AtomicWriter } from '../../../util/atomic.js';
import { assertUtf8, oneLine, type ExportRecord } from '../record.js';
import { RecordWriter } from './types.js';
import { tsvCell } from './tsv.js';

export function mosesPaths(path: string): { en: string; zh: string; ids: string } {
  return { en: `${path}.en`, zh: `${path}.zh`, ids: `${path}.ids` };
}

export const MOSES_ID_FIELDS = ['level', 'pair_id', 'source_id', 'target_id', 'en_sentences', 'zh_sentences'] as const satisfies readonly (keyof ExportRecord)[];

export class MosesWriter extends RecordWriter {
  private en: AtomicWriter;
  private zh: AtomicWriter;
  private ids: AtomicWriter;
  readonly paths: string[];
  constructor(path: string) {
    super();
    const p = mosesPaths(path);
    this.en = new AtomicWriter(p.en);
    this.zh = new AtomicWriter(p.zh);
    this.ids = new AtomicWriter(p.ids);
    this.paths = [p.en, p.zh, p.ids];
  }
  render(rec: ExportRecord): string[] {
    return [
      assertUtf8(oneLine(rec.en) + '\n', 'Moses en'),
      assertUtf8(oneLine(rec.zh) + '\n', 'Moses zh'),
      assertUtf8(MOSES_ID_FIELDS.map((f) => tsvCell(rec[f])).join('\t') + '\n', 'Moses ids'),
    ];
  }
  /** The three lines together: the files stay line-aligned whatever record is skipped. */
  append(chunks: string[]): void {
    this.en.write(chunks[0]!);
    this.zh.write(chunks[1]!);
    this.ids.write(chunks[2]!);
  }
  commit(): void {
    this.en.commit();
    this.zh.commit();
    this.ids.commit();
  }
  abort(): void {
    this.en.abort();
    this.zh.abort();
    this.ids.abort();
  }
}
