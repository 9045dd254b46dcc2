// Decoding HTML by its bytes. A page's declared charset is a hint, not a fact: some pages declare GB2312 and are
// UTF-8, others declare nothing. Order: BOM; valid UTF-8 (a strict decode succeeds) → UTF-8; a declared legacy
// charset (GB*, Big5, Shift_JIS...) → that (GB2312/GBK are decoded as GB18030, their superset); else chardet's
// guess; else windows-1252. iconv-lite does the decoding.
import iconv from 'iconv-lite';
import chardet from 'chardet';

export interface Decoded {
  text: string;
  charset: string;
  declared: string | null;
}

const utf8Strict = new TextDecoder('utf-8', { fatal: true });

/** The charset a page declares in its first bytes (<meta charset> or http-equiv content-type), lower-cased. */
export function declaredCharset(buf: Uint8Array, contentType?: string | null): string | null {
  const fromHeader = contentType ? /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType)?.[1] : undefined;
  if (fromHeader) return fromHeader.toLowerCase();
  const head = Buffer.from(buf.subarray(0, 4096)).toString('latin1');
  const m = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head);
  return m ? m[1]!.toLowerCase() : null;
}

function normaliseCharset(cs: string): string {
  const c = cs.toLowerCase().replace(/_/g, '-');
  if (c === 'gb2312' || c === 'gbk' || c === 'x-gbk' || c === 'gb-2312' || c === 'cp936' || c === 'euc-cn') return 'gb18030';
  if (c === 'big5-hkscs' || c === 'x-x-big5') return 'big5';
  if (c === 'iso-8859-1' || c === 'latin1' || c === 'us-ascii' || c === 'ascii') return 'windows-1252';
  return c;
}

export function decodeHtml(input: Uint8Array | string, contentType?: string | null): Decoded {
  if (typeof input === 'string') return { text: input, charset: 'utf-8', declared: null };
  const buf = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const declared = declaredCharset(buf, contentType);
  if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) return { text: buf.subarray(3).toString('utf8'), charset: 'utf-8', declared };
  if (buf[0] === 0xff && buf[1] === 0xfe) return { text: iconv.decode(buf.subarray(2), 'utf-16le'), charset: 'utf-16le', declared };
  if (buf[0] === 0xfe && buf[1] === 0xff) return { text: iconv.decode(buf.subarray(2), 'utf-16be'), charset: 'utf-16be', declared };
  try {
    return { text: utf8Strict.decode(buf), charset: 'utf-8', declared };
  } catch {
    /* not UTF-8 */
  }
  // A declared charset iconv knows is taken as it is: chardet (half the time of a small Big5 or GBK page) is asked only when
  // there is none.
  if (declared && !/^utf-?8$/.test(declared)) {
    const d = decodeAs(buf, normaliseCharset(declared), declared);
    if (d) return d;
  }
  const guess = chardet.detect(buf.subarray(0, 65536));
  // Mostly-UTF-8 pages with a few broken bytes: keep UTF-8 when chardet agrees.
  return (guess && decodeAs(buf, normaliseCharset(guess), declared)) || decodeAs(buf, 'windows-1252', declared) || { text: buf.toString('latin1'), charset: 'windows-1252', declared };
}

function decodeAs(buf: Buffer, cs: string, declared: string | null): Decoded | null {
  if (cs === 'utf-8') return { text: buf.toString('utf8'), charset: 'utf-8', declared };
  if (iconv.encodingExists(cs)) return { text: iconv.decode(buf, cs), charset: cs, declared };
  return null;
}
