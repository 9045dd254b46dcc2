// Decoding: formats, orientation, alpha, downscale; hostile input refused with a typed error, never a crash.
import { expect } from 'chai';
import sharp from 'sharp';
import zlib from 'node:zlib';
import { decodeGrey, DecodeError, type DecodeErrorCode } from '../src/lib/sift/decode.js';
import { extractFeatures } from '../src/lib/sift/extract.js';
import { loadConfig } from '../src/config/load.js';
import { scenePng, sceneSvg } from './sift-helpers.js';

const OPTS = { maxSide: 640, maxPixels: 50_000_000 };

async function expectDecodeError(buf: Uint8Array, codes: DecodeErrorCode[], pattern?: RegExp): Promise<DecodeError> {
  try {
    await decodeGrey(buf, OPTS);
  } catch (err) {
    expect(err).to.be.instanceOf(DecodeError);
    const e = err as DecodeError;
    expect(codes, e.message).to.include(e.code);
    if (pattern) expect(e.message).to.match(pattern);
    return e;
  }
  throw new Error('expected a DecodeError');
}

/** A PNG of only a header claiming w x h, one tiny IDAT and IEND: a decompression bomb's header. */
function pngHeaderOnly(w: number, h: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(td) >>> 0);
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // grey
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(Buffer.alloc(1000))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const mean = (a: Uint8Array) => a.reduce((s, v) => s + v, 0) / a.length;

describe('sift: decoding', function () {
  let png: Buffer;
  before(async () => {
    png = await scenePng(320, 240, 3);
  });

  it('decodes a PNG to 8-bit grey at its size', async () => {
    const d = await decodeGrey(png, OPTS);
    expect([d.width, d.height, d.scale, d.format]).to.deep.equal([320, 240, 1, 'png']);
    expect(d.grey.length).to.equal(320 * 240);
  });

  it('downscales so the longest side is at most maxSide and reports the scale', async () => {
    const big = await sharp(Buffer.from(sceneSvg(1200, 800, 4))).jpeg().toBuffer();
    const d = await decodeGrey(big, OPTS);
    expect([d.width, d.height]).to.deep.equal([640, 427]);
    expect(d.scale).to.be.closeTo(640 / 1200, 1e-9);
    expect([d.originalWidth, d.originalHeight]).to.deep.equal([1200, 800]);
    const f = await extractFeatures(big, loadConfig({}).config);
    expect([f.width, f.height]).to.deep.equal([640, 427]);
    expect(f.scale).to.be.closeTo(0.5333, 1e-3);
    expect(f.count).to.be.greaterThan(50);
  });

  it('applies EXIF orientation', async () => {
    const jpg = await sharp(png).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const d = await decodeGrey(jpg, OPTS);
    expect([d.width, d.height]).to.deep.equal([240, 320]);
  });

  it('flattens alpha on white (WebP with alpha)', async () => {
    const webp = await sharp({ create: { width: 64, height: 48, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).webp({ lossless: true }).toBuffer();
    const d = await decodeGrey(webp, OPTS);
    expect(d.format).to.equal('webp');
    expect(mean(d.grey)).to.be.greaterThan(250);
  });

  it('converts CMYK JPEG and 16-bit PNG to 8-bit grey of the same picture', async () => {
    const ref = await decodeGrey(png, OPTS);
    const cmyk = await sharp(png).toColourspace('cmyk').jpeg({ quality: 95 }).toBuffer();
    expect((await sharp(cmyk).metadata()).space).to.equal('cmyk');
    const p16 = await sharp(png).toColourspace('rgb16').png().toBuffer();
    expect((await sharp(p16).metadata()).depth).to.equal('ushort');
    for (const buf of [cmyk, p16]) {
      const d = await decodeGrey(buf, OPTS);
      expect([d.width, d.height]).to.deep.equal([320, 240]);
      let diff = 0;
      for (let i = 0; i < d.grey.length; i++) diff += Math.abs(d.grey[i]! - ref.grey[i]!);
      expect(diff / d.grey.length).to.be.lessThan(12);
    }
  });

  it('takes the first frame of an animated GIF', async () => {
    const white = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#ffffff' } }).png().toBuffer();
    const black = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#000000' } }).png().toBuffer();
    const gif = await sharp([white, black], { join: { animated: true } }).gif().toBuffer();
    expect((await sharp(gif).metadata()).pages).to.equal(2);
    const d = await decodeGrey(gif, OPTS);
    expect([d.width, d.height]).to.deep.equal([40, 30]);
    expect(mean(d.grey)).to.be.greaterThan(250);
  });

  it('reads TIFF', async () => {
    const tif = await sharp(png).tiff().toBuffer();
    expect((await decodeGrey(tif, OPTS)).format).to.equal('tiff');
  });

  it('refuses zero bytes', async () => {
    await expectDecodeError(new Uint8Array(0), ['empty'], /0 bytes/);
  });

  it('refuses non-image data', async () => {
    await expectDecodeError(Buffer.from('<html><body>not an image</body></html>'), ['not-image'], /not a readable image/);
    await expectDecodeError(Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) & 255)), ['not-image']);
  });

  it('refuses truncated JPEG and PNG data', async () => {
    const jpg = await sharp(png).jpeg().toBuffer();
    await expectDecodeError(jpg.subarray(0, Math.floor(jpg.length / 2)), ['truncated', 'decode']);
    await expectDecodeError(png.subarray(0, Math.floor(png.length / 2)), ['truncated', 'decode', 'not-image']);
  });

  it('refuses a decompression bomb from its header, before decoding', async () => {
    const bomb = pngHeaderOnly(30000, 30000);
    expect(bomb.length).to.be.lessThan(2000);
    const e = await expectDecodeError(bomb, ['too-large'], /30000x30000/);
    expect(e.message).to.match(/maxPixels/);
  });

  it('refuses a real, highly compressed image over maxPixels', async () => {
    const solid = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: '#777777' } }).png({ compressionLevel: 9 }).toBuffer();
    expect(solid.length).to.be.lessThan(200_000);
    try {
      await decodeGrey(solid, { maxSide: 640, maxPixels: 10_000_000 });
      throw new Error('expected a DecodeError');
    } catch (err) {
      expect((err as DecodeError).code).to.equal('too-large');
    }
  });
});
