// Reading the project's TSV files (header first, tab-separated, no quoting) line by line, so a 100k-row
// manifest never sits in memory whole. Rows carry their 1-based line number for error messages.
//
// Hostile files are refused before they cost memory (issue 18). The reader works on bytes, not on a text stream:
// a line is cut off at `maxLineBytes` (the rest of it is skipped without being kept, and the row says so), the file
// at `maxBytes` (a regular file from its size before a byte is read; a pipe or a device when that much has been
// read). The first 4 KiB are sniffed: UTF-16 text and binary data (a NUL byte: /dev/zero, an image, an archive)
// are refused at line 1 with what they look like. A line with a NUL byte or bytes that are not UTF-8 is a row with
// a `problem` (line number and reason) instead of fields; the caller skips it and goes on. Line ends may be LF,
// CRLF or a lone CR; a UTF-8 byte-order mark is dropped. Hand-written (not readline or csv-parse) because neither
// bounds a line before building it as a string, and both decode invalid UTF-8 silently into U+FFFD.
import fs from 'node:fs';
import { UserError } from './errors.js';

export interface TsvRow {
  line: number;
  fields: string[];
  /** Column name -> value, for the header's columns. */
  get(column: string): string | undefined;
  /** Set when the line cannot be read as text (too long, a NUL byte, not UTF-8): `fields` is empty, skip it. */
  problem?: string;
}

export interface TsvReader {
  header: string[];
  rows: AsyncIterable<TsvRow>;
  close(): void;
}

export interface TsvLimits {
  /** A longer line is a row with a problem (its bytes beyond this are read and dropped, never kept). */
  maxLineBytes: number;
  /** A larger file is refused (a regular file before it is read; a pipe or device once this much is read). */
  maxBytes: number;
  /** The config keys named in the messages. */
  lineKey?: string;
  bytesKey?: string;
}

/** Bounds for files that are not manifests (pairs files, truth files): generous, but still bounds. */
export const DEFAULT_TSV_LIMITS: TsvLimits = { maxLineBytes: 16 * 1024 * 1024, maxBytes: 4 * 1024 * 1024 * 1024, lineKey: 'maxLineBytes', bytesKey: 'maxBytes' };

const SNIFF = 4096;
const CHUNK = 64 * 1024;

/** Why the start of a file is not UTF-8 TSV text, or null. */
function sniff(head: Buffer): string | null {
  if (head[0] === 0xff && head[1] === 0xfe) return 'UTF-16 text (byte-order mark FF FE): save the file as UTF-8';
  if (head[0] === 0xfe && head[1] === 0xff) return 'UTF-16 text (byte-order mark FE FF): save the file as UTF-8';
  const firstNul = head.indexOf(0);
  if (firstNul < 0) return null;
  // UTF-16 without a mark: ASCII text has a NUL in (nearly) every other byte, all on one side
  let even = 0;
  let odd = 0;
  for (let i = 0; i < head.length; i++) if (head[i] === 0) i % 2 ? odd++ : even++;
  const pairs = Math.floor(head.length / 2);
  if (pairs >= 2 && Math.max(even, odd) >= 0.3 * pairs && Math.min(even, odd) <= 0.05 * Math.max(even, odd)) {
    return 'UTF-16 text without a byte-order mark: save the file as UTF-8';
  }
  return `binary data (a NUL byte at byte ${firstNul + 1} of the file): not a TSV file`;
}

/** The index of the first byte that breaks UTF-8 (overlong forms, surrogates and code points past U+10FFFF included), or -1. */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= n; k++) {
      const d = b[i + k];
      if (d === undefined) return i; // cut off at the end of the line
      if (d < (k === 1 ? lo : 0x80) || d > (k === 1 ? hi : 0xbf)) return k === 1 ? i : i + k;
    }
    i += n + 1;
  }
  return -1;
}

/** A guess at the legacy encoding of a line that is not UTF-8, for the message. */
function guessEncoding(b: Uint8Array): string | null {
  for (const [label, name] of [['gb18030', 'GBK'], ['big5', 'Big5'], ['shift_jis', 'Shift-JIS']] as const) {
    try {
      const text = new TextDecoder(label, { fatal: true }).decode(b);
      if (/[\u4e00-\u9fff]/.test(text)) return name;
    } catch {
      /* not this one */
    }
  }
  return /[\x80-\xff]/.test(Buffer.from(b).toString('latin1')) ? 'Latin-1 or Windows-1252' : null;
}

/** A line's bytes as text, or why they are not. */
function decodeLine(b: Buffer): { text: string } | { problem: string } {
  const nul = b.indexOf(0);
  if (nul >= 0) return { problem: `binary data (a NUL byte at byte ${nul + 1} of the line)` };
  const bad = firstInvalidUtf8(b);
  if (bad >= 0) {
    const guess = guessEncoding(b);
    return { problem: `not UTF-8 text (byte 0x${b[bad]!.toString(16).padStart(2, '0')} at byte ${bad + 1} of the line${guess ? ` (it looks like ${guess})` : ''}): save the file as UTF-8` };
  }
  return { text: b.toString('utf8') };
}

/** Why a path cannot be opened as a TSV file (a UserError naming it), or its stat. */
function statInput(file: string, limits: TsvLimits): fs.Stats {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') throw new UserError(`${file}: no such file`);
    if (e.code === 'EACCES') throw new UserError(`${file}: cannot read: permission denied`);
    throw new UserError(`${file}: cannot read: ${e.message}`);
  }
  if (st.isDirectory()) throw new UserError(`${file}: is a directory, not a TSV file`);
  if (st.isFile() && st.size > limits.maxBytes) {
    throw new UserError(`${file}: ${st.size} bytes, over the limit of ${limits.maxBytes} (${limits.bytesKey ?? 'maxBytes'})`);
  }
  return st;
}

/** Raw lines of a file: bytes without their line end, each bounded; `cut` when the line was longer than the bound. */
async function* byteLines(fd: fs.promises.FileHandle, file: string, limits: TsvLimits, first: Buffer): AsyncGenerator<{ bytes: Buffer; cut: boolean }> {
  let total = first.length;
  let parts: Buffer[] = [];
  let len = 0;
  let cut = false;
  let afterCr = false;
  let line = 1;
  const take = (b: Buffer, from: number, to: number) => {
    if (to <= from || cut) return;
    const room = limits.maxLineBytes - len;
    if (to - from > room) {
      cut = true;
      return;
    }
    parts.push(Buffer.from(b.subarray(from, to))); // a copy: the chunk buffer is reused
    len += to - from;
  };
  const end = () => {
    const out = { bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts, len), cut };
    parts = [];
    len = 0;
    cut = false;
    line++;
    return out;
  };
  let chunk: Buffer = first;
  const buf = Buffer.allocUnsafe(CHUNK);
  for (;;) {
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (c !== 10 && c !== 13) continue;
      if (c === 10 && afterCr && i === start) {
        // the LF of a CRLF split across chunks (or right after the CR): not a line of its own
        afterCr = false;
        start = i + 1;
        continue;
      }
      take(chunk, start, i);
      yield end();
      afterCr = c === 13;
      if (afterCr && chunk[i + 1] === 10) {
        i++;
        afterCr = false;
      }
      start = i + 1;
    }
    if (start < chunk.length) afterCr = false;
    take(chunk, start, chunk.length);
    const { bytesRead } = await fd.read(buf, 0, CHUNK, null);
    if (!bytesRead) break;
    total += bytesRead;
    if (total > limits.maxBytes) throw new UserError(`${file}:${line}: over ${limits.maxBytes} bytes read (${limits.bytesKey ?? 'maxBytes'}): stopped`);
    chunk = buf.subarray(0, bytesRead);
  }
  if (len || cut) yield end();
}

export async function openTsv(file: string, required: string[] = [], limits: TsvLimits = DEFAULT_TSV_LIMITS): Promise<TsvReader> {
  statInput(file, limits);
  let fd: fs.promises.FileHandle;
  try {
    fd = await fs.promises.open(file, 'r');
  } catch (err) {
    throw new UserError(`${file}: cannot read: ${(err as Error).message}`);
  }
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    void fd.close().catch(() => {});
  };
  try {
    // the head, for the sniff (a pipe may hand it over in several reads)
    const head = Buffer.alloc(SNIFF);
    let got = 0;
    while (got < SNIFF) {
      const { bytesRead } = await fd.read(head, got, SNIFF - got, null);
      if (!bytesRead) break;
      got += bytesRead;
    }
    let first = head.subarray(0, got);
    const why = sniff(first);
    if (why) throw new UserError(`${file}:1: ${why}`);
    if (first[0] === 0xef && first[1] === 0xbb && first[2] === 0xbf) first = first.subarray(3);
    const lines = byteLines(fd, file, limits, first);
    const h = await lines.next();
    if (h.done) throw new UserError(`${file}: empty file (a header line is required)`);
    if (h.value.cut) throw new UserError(`${file}:1: line longer than ${limits.maxLineBytes} bytes (${limits.lineKey ?? 'maxLineBytes'}): not a TSV header`);
    const dh = decodeLine(h.value.bytes);
    if ('problem' in dh) throw new UserError(`${file}:1: ${dh.problem}`);
    const header = dh.text.split('\t').map((x) => x.trim());
    const missing = required.filter((c) => !header.includes(c));
    if (missing.length) throw new UserError(`${file}:1: missing column(s) ${missing.join(', ')} in header "${header.join('\\t').slice(0, 200)}"`);
    const index = new Map(header.map((x, i) => [x, i]));
    const none = () => undefined;
    async function* rows(): AsyncIterable<TsvRow> {
      let line = 1;
      try {
        for await (const l of lines) {
          line++;
          if (l.cut) {
            yield { line, fields: [], get: none, problem: `line longer than ${limits.maxLineBytes} bytes (${limits.lineKey ?? 'maxLineBytes'}): skipped` };
            continue;
          }
          const d = decodeLine(l.bytes);
          if ('problem' in d) {
            yield { line, fields: [], get: none, problem: d.problem };
            continue;
          }
          if (d.text.trim() === '') continue;
          const fields = d.text.split('\t');
          yield { line, fields, get: (c: string) => {
            const i = index.get(c);
            return i === undefined ? undefined : fields[i];
          } };
        }
      } finally {
        close();
      }
    }
    return { header, rows: rows(), close };
  } catch (err) {
    close();
    throw err;
  }
}

/** Reads a whole small TSV into objects (for pairs files, truth files); a line that is not text is an error. */
export async function readTsvObjects(file: string, required: string[] = []): Promise<Array<Record<string, string> & { _line: string }>> {
  const reader = await openTsv(file, required);
  const out: Array<Record<string, string> & { _line: string }> = [];
  for await (const row of reader.rows) {
    if (row.problem) throw new UserError(`${file}:${row.line}: ${row.problem}`);
    const obj: Record<string, string> = { _line: String(row.line) };
    reader.header.forEach((h, i) => (obj[h] = row.fields[i] ?? ''));
    out.push(obj as Record<string, string> & { _line: string });
  }
  return out;
}
