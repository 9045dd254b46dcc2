// The corpus writers by format.
import { JsonlWriter } from './jsonl.js';
import { MosesWriter } from './moses.js';
import { TmxWriter } from './tmx.js';
import { TsvWriter } from './tsv.js';
import type { CorpusWriter, ExportFormat } from './types.js';

export { EXPORT_FORMATS, type CorpusWriter, type ExportFormat } from './types.js';
export { TsvWriter, tsvCell } from './tsv.js';
export { JsonlWriter } from './jsonl.js';
export { TmxWriter, xmlEscape } from './tmx.js';
export { MosesWriter, mosesPaths } from './moses.js';

export function createWriter(format: ExportFormat, path: string): CorpusWriter {
  switch (format) {
    case 'tsv':
      return new TsvWriter(path);
    case 'jsonl':
      return new JsonlWriter(path);
    case 'tmx':
      return new TmxWriter(path);
    case 'moses':
      return new MosesWriter(path);
  }
}
