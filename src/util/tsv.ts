// Reading the project's TSV files (header first, tab-separated, no quoting) line by line, so a 100k-row
// manifest never sits in memory whole. Rows carry their 1-based line number for error messages.
import fs from 'node:fs';
import readline from 'node:readline';
import { UserError } from './errors.js';

export interface TsvRow {
  line: number;
  fields: string[];
  /** Column name -> value, for the header's columns. */
  get(column: string): string | undefined;
}

export interface TsvReader {
  header: string[];
  rows: AsyncIterable<TsvRow>;
  close(): void;
}

export async function openTsv(file: string, required: string[] = []): Promise<TsvReader> {
  let stream: fs.ReadStream;
  try {
    fs.accessSync(file, fs.constants.R_OK);
    stream = fs.createReadStream(file, { encoding: 'utf8' });
  } catch (err) {
    throw new UserError(`${file}: cannot read: ${(err as Error).message}`);
  }
  const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
  const it = rl[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done) throw new UserError(`${file}: empty file (a header line is required)`);
  const header = first.value.replace(/^\uFEFF/, '').replace(/\r$/, '').split('\t').map((h) => h.trim());
  const missing = required.filter((c) => !header.includes(c));
  if (missing.length) throw new UserError(`${file}:1: missing column(s) ${missing.join(', ')} in header "${header.join('\\t')}"`);
  const index = new Map(header.map((h, i) => [h, i]));
  async function* rows(): AsyncIterable<TsvRow> {
    let line = 1;
    for (;;) {
      const next = await it.next();
      if (next.done) return;
      line++;
      const text = next.value.replace(/\r$/, '');
      if (text.trim() === '') continue;
      const fields = text.split('\t');
      yield { line, fields, get: (c: string) => {
        const i = index.get(c);
        return i === undefined ? undefined : fields[i];
      } };
    }
  }
  return { header, rows: rows(), close: () => { rl.close(); stream.destroy(); } };
}

/** Reads a whole small TSV into objects (for pairs files, truth files). */
export async function readTsvObjects(file: string, required: string[] = []): Promise<Array<Record<string, string> & { _line: string }>> {
  const reader = await openTsv(file, required);
  const out: Array<Record<string, string> & { _line: string }> = [];
  for await (const row of reader.rows) {
    const obj: Record<string, string> = { _line: String(row.line) };
    reader.header.forEach((h, i) => (obj[h] = row.fields[i] ?? ''));
    out.push(obj as Record<string, string> & { _line: string });
  }
  return out;
}
