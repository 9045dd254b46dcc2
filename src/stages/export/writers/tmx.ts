// TMX 1.4b: one <tu> per record with an English and a zh-CN <tuv>; scores, level and provenance as <prop>.
// Text is XML-escaped and characters XML 1.0 forbids (C0 controls but tab/newline, lone surrogates, U+FFFE/F)
// are dropped, so any caption yields a well-formed file.
import { createRequire } from 'node:module';
import { AtomicWriter } from '../../../util/atomic.js';
import { LIST_SEPARATOR, fmtScore, oneLine, type ExportRecord } from '../record.js';
import { RecordWriter } from './types.js';

const require = createRequire(import.meta.url);
const VERSION = (require('../../../../package.json') as { version: string }).version;

// eslint-disable-next-line no-control-regex
const INVALID_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function xmlEscape(s: string): string {
  return s
    .replace(INVALID_XML, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

export class TmxWriter extends RecordWriter {
  private out: AtomicWriter;
  readonly paths: string[];
  constructor(path: string, now = new Date()) {
    super();
    this.out = new AtomicWriter(path);
    this.paths = [path];
    const date = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z'); // YYYYMMDDThhmmssZ
    this.out.write(
      '<?xml version="1.0" encoding="UTF-8"?>\n' +
        '<tmx version="1.4">\n' +
        `  <header creationtool="capbridge" creationtoolversion="${xmlEscape(VERSION)}" datatype="plaintext" segtype="sentence"` +
        ` adminlang="en" srclang="en" o-tmf="capbridge" creationdate="${date}"/>\n` +
        '  <body>\n',
    );
  }
  render(rec: ExportRecord): string[] {
    const props: [string, string][] = [
      ['x-level', rec.level],
      ['x-c', fmtScore(rec.c)],
      ['x-fc', fmtScore(rec.fc)],
      ['x-fe', fmtScore(rec.fe)],
      ['x-fl', fmtScore(rec.fl)],
      ['x-fcov', fmtScore(rec.fcov)],
      ['x-image-score', fmtScore(rec.image_score)],
      ['x-inliers', String(rec.inliers)],
      ['x-source-url', rec.source_url.join(LIST_SEPARATOR)],
      ['x-target-url', rec.target_url.join(LIST_SEPARATOR)],
      ['x-source-image', rec.source_image.join(LIST_SEPARATOR)],
      ['x-target-image', rec.target_image.join(LIST_SEPARATOR)],
      ['x-source-id', rec.source_id.join(LIST_SEPARATOR)],
      ['x-target-id', rec.target_id.join(LIST_SEPARATOR)],
      ['x-pair-id', rec.pair_id.join(LIST_SEPARATOR)],
      ['x-en-sentences', rec.en_sentences.join(LIST_SEPARATOR)],
      ['x-zh-sentences', rec.zh_sentences.join(LIST_SEPARATOR)],
      ['x-harvested-at', rec.harvested_at],
    ];
    // Photo credits: a prop only when some item pair has one.
    if (rec.source_credit.some(Boolean)) props.push(['x-source-credit', rec.source_credit.join(LIST_SEPARATOR)]);
    if (rec.target_credit.some(Boolean)) props.push(['x-target-credit', rec.target_credit.join(LIST_SEPARATOR)]);
    let s = '    <tu>\n';
    for (const [type, value] of props) s += `      <prop type="${type}">${xmlEscape(oneLine(value))}</prop>\n`;
    s += `      <tuv xml:lang="en"><seg>${xmlEscape(oneLine(rec.en))}</seg></tuv>\n`;
    s += `      <tuv xml:lang="zh-CN"><seg>${xmlEscape(oneLine(rec.zh))}</seg></tuv>\n`;
    s += '    </tu>\n';
    return [s];
  }
  append(chunks: string[]): void {
    this.out.write(chunks[0]!);
  }
  commit(): void {
    this.out.write('  </body>\n</tmx>\n');
    this.out.commit();
  }
  abort(): void {
    this.out.abort();
  }
}
