// Hostile images for the hostile-input suite, generated here (no files from outside): images of every decoder
// sharp has (JPEG, PNG, WebP, GIF, TIFF, AVIF/HEIF, SVG) that are degenerate (1 px on a side, before or after the
// downscale) or decompression bombs (a small file whose header declares far more pixels than sift.maxPixels).
// The bombs are real files of their format: a real image of the format with its size fields rewritten, so each
// decoder's own header reader is what declares the size.
import zlib from 'node:zlib';
import sharp from 'sharp';
import type { Bank, BankName, ImageRecord } from '../../src/bank/index.js';

export type Format = 'jpeg' | 'png' | 'webp' | 'gif' | 'tiff' | 'avif' | 'svg';
export const FORMATS: Format[] = ['jpeg', 'png', 'webp', 'gif', 'tiff', 'avif', 'svg'];

/** A plain image of a size in a format (grey noise, so encoders keep it as it is). */
export async function plainImage(format: Exclude<Format, 'svg'>, width: number, height: number): Promise<Buffer> {
  const px = Buffer.alloc(width * height * 3);
  for (let i = 0; i < px.length; i++) px[i] = (i * 2654435761) >>> 24;
  const img = sharp(px, { raw: { width, height, channels: 3 } });
  switch (format) {
    case 'jpeg': return img.jpeg({ quality: 80 }).toBuffer();
    case 'png': return img.png().toBuffer();
    case 'webp': return img.webp({ lossless: true }).toBuffer();
    case 'gif': return img.gif().toBuffer();
    case 'tiff': return img.tiff().toBuffer();
    case 'avif': return img.avif({ quality: 50, effort: 0 }).toBuffer();
  }
}

/** An SVG of a declared size with a little drawing (rsvg renders it at the declared size). */
export function svgImage(width: number, height: number): Buffer {
  return Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect x="0" y="0" width="${width / 2}" height="${height / 2}" fill="#123"/></svg>`);
}

/** A degenerate image: width x height in a format. */
export function degenerate(format: Format, width: number, height: number): Promise<Buffer> {
  return format === 'svg' ? Promise.resolve(svgImage(width, height)) : plainImage(format, width, height);
}

/** An animated GIF of three 1x1 frames: the decoder reads frame 0 only. */
export function gifWithTinyFrame(): Promise<Buffer> {
  const px = Buffer.from([10, 20, 30, 200, 200, 200, 90, 90, 90]);
  return sharp(px, { raw: { width: 1, height: 3, channels: 3, pageHeight: 1 } as never }).gif({ loop: 0 }).toBuffer();
}

const crcTable = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();
function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/**
 * A PNG declaring width x height (8-bit grey) whose IDAT is the deflate of its first rows only: a few KB on disk,
 * width*height bytes once decoded.
 */
export function pngBomb(width = 100_000, height = 100_000): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // grey
  const rows = Buffer.alloc(Math.min(height, 4) * (width + 1)); // filter byte 0 + zero pixels
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', zlib.deflateSync(rows)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A real JPEG with its SOF frame size rewritten to width x height (at most 65535 a side). */
export async function jpegBomb(width = 65_000, height = 65_000): Promise<Buffer> {
  const b = Buffer.from(await plainImage('jpeg', 64, 64));
  for (let i = 2; i < b.length - 9; ) {
    if (b[i] !== 0xff) throw new Error('jpegBomb: lost the marker chain');
    const m = b[i + 1]!;
    const len = b.readUInt16BE(i + 2);
    if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) {
      b.writeUInt16BE(height, i + 5);
      b.writeUInt16BE(width, i + 7);
      return b;
    }
    i += 2 + len;
  }
  throw new Error('jpegBomb: no SOF marker');
}

/** A real GIF with its logical screen and first image descriptor rewritten to width x height (<= 65535). */
export async function gifBomb(width = 65_535, height = 65_535): Promise<Buffer> {
  const b = Buffer.from(await plainImage('gif', 16, 16));
  b.writeUInt16LE(width, 6);
  b.writeUInt16LE(height, 8);
  let i = 13 + (b[10]! & 0x80 ? 3 * 2 ** ((b[10]! & 7) + 1) : 0); // after the global colour table
  while (b[i] === 0x21) { // extension blocks: label, then sub-blocks until a 0 length
    i += 2;
    while (b[i]) i += b[i]! + 1;
    i++;
  }
  if (b[i] !== 0x2c) throw new Error('gifBomb: no image descriptor');
  b.writeUInt16LE(width, i + 5);
  b.writeUInt16LE(height, i + 7);
  return b;
}

/** A real lossless WebP whose VP8L header declares width x height (<= 16383 a side, libwebp's limit). */
export async function webpBomb(width = 16_383, height = 16_383): Promise<Buffer> {
  const b = Buffer.from(await plainImage('webp', 16, 16));
  if (b.toString('latin1', 12, 16) !== 'VP8L' || b[20] !== 0x2f) throw new Error('webpBomb: not a simple lossless WebP');
  const bits = b.readUInt32LE(21);
  b.writeUInt32LE(((bits & 0xf0000000) | ((height - 1) << 14) | (width - 1)) >>> 0, 21);
  return b;
}

/** A baseline TIFF (8-bit grey, one strip of a few bytes) declaring width x height. */
export function tiffBomb(width = 100_000, height = 100_000): Buffer {
  const entries: Array<[number, number, number]> = [ // tag, type (3 short, 4 long), value
    [256, 4, width], [257, 4, height], [258, 3, 8], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, height], [279, 4, 16],
  ];
  const ifdOffset = 8;
  const ifdSize = 2 + entries.length * 12 + 4;
  const dataOffset = ifdOffset + ifdSize;
  entries[5]![2] = dataOffset;
  const b = Buffer.alloc(dataOffset + 16);
  b.write('II', 0, 'latin1');
  b.writeUInt16LE(42, 2);
  b.writeUInt32LE(ifdOffset, 4);
  b.writeUInt16LE(entries.length, ifdOffset);
  entries.forEach(([tag, type, value], k) => {
    const o = ifdOffset + 2 + k * 12;
    b.writeUInt16LE(tag, o);
    b.writeUInt16LE(type, o + 2);
    b.writeUInt32LE(1, o + 4);
    if (type === 3) b.writeUInt16LE(value, o + 8);
    else b.writeUInt32LE(value, o + 8);
  });
  return b;
}

/** A real AVIF with its 'ispe' (image spatial extents) box rewritten to width x height. */
export async function avifBomb(width = 60_000, height = 60_000): Promise<Buffer> {
  const b = Buffer.from(await plainImage('avif', 16, 16));
  let at = b.indexOf('ispe', 0, 'latin1');
  if (at < 0) throw new Error('avifBomb: no ispe box');
  while (at >= 0) {
    b.writeUInt32BE(width, at + 8); // after 'ispe' and version/flags
    b.writeUInt32BE(height, at + 12);
    at = b.indexOf('ispe', at + 4, 'latin1');
  }
  return b;
}

/** The decompression bombs of every decoder, named by format. */
export async function bombs(): Promise<Array<{ format: Format; buf: Buffer }>> {
  return [
    { format: 'png', buf: pngBomb() },
    { format: 'jpeg', buf: await jpegBomb() },
    { format: 'gif', buf: await gifBomb() },
    { format: 'webp', buf: await webpBomb() },
    { format: 'tiff', buf: tiffBomb() },
    { format: 'avif', buf: await avifBomb() },
    { format: 'svg', buf: svgImage(100_000, 100_000) },
  ];
}

/**
 * Stores an item as an older bank or a crawl may hold it: the image by its header only (no import bounds), the
 * caption as checked. For putting hostile images in a bank past the import's refusals.
 */
export async function storeItem(bank: Bank, b: BankName, extId: string, buf: Buffer, caption: string): Promise<ImageRecord> {
  const rec = await bank.images.prepare(buf);
  await bank.transaction(async (tx) => {
    await tx.images.record(rec);
    await tx.items.upsert({ bank: b, extId, caption, lang: b === 'source' ? 'eng' : 'cmn', captionStatus: 'ok', captionReason: null, imageSha256: rec.sha256 });
  });
  return rec;
}
