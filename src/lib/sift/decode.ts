// Decoding with sharp: any format sharp reads (JPEG, PNG, WebP, GIF first frame, TIFF, AVIF/HEIF when the build
// has it) to 8-bit grey, EXIF orientation applied, alpha flattened on white, CMYK / 16-bit converted, and the
// longest side downscaled to at most `maxSide`. Hostile input is refused before it costs memory: the header is read
// first (no pixel decode) and images with more than `maxPixels` pixels are refused; sharp's limitInputPixels
// guards the decode itself as a second line. An image with a side shorter than `minSide` at detection size (a 1x1
// pixel, a 2000x3 strip, a 1x1 GIF frame) is refused from the header too: SIFT finds nothing in it and the
// synthesised views cannot warp it, so it fails as this item's fault, with its reason, before any work.
import sharp, { type Metadata } from 'sharp';

export type DecodeErrorCode = 'empty' | 'not-image' | 'too-large' | 'too-small' | 'truncated' | 'decode';

export class DecodeError extends Error {
  constructor(readonly code: DecodeErrorCode, message: string) {
    super(message);
    this.name = 'DecodeError';
  }
}

export interface DecodeOptions {
  maxSide: number;
  maxPixels: number;
  /** The shortest side an image may have at detection size (after the maxSide downscale); default 2. */
  minSide?: number;
}

export interface DecodedGrey {
  /** 8-bit grey pixels, row-major, width*height. */
  grey: Uint8Array;
  /** Detection size (after the downscale). */
  width: number;
  height: number;
  /** Size of the original image as displayed (after EXIF orientation). */
  originalWidth: number;
  originalHeight: number;
  /** Detection pixels per original pixel (width / originalWidth). */
  scale: number;
  format: string;
}

/**
 * Decodes an image to 8-bit grey at detection size. Keypoints computed on the result are in detection
 * coordinates; divide by `scale` to get coordinates in the original (EXIF-oriented) image.
 */
export async function decodeGrey(buf: Uint8Array, opts: DecodeOptions): Promise<DecodedGrey> {
  if (!buf || buf.length === 0) throw new DecodeError('empty', 'empty file (0 bytes)');
  let meta: Metadata;
  try {
    meta = await sharp(buf, { limitInputPixels: false, failOn: 'none' }).metadata();
  } catch (err) {
    throw new DecodeError('not-image', `not a readable image: ${cleanSharpMessage(err)}`);
  }
  if (!meta.format || !meta.width || !meta.height) throw new DecodeError('not-image', 'not a readable image: no format or size in its header');
  const pixels = meta.width * meta.height;
  if (pixels > opts.maxPixels) {
    throw new DecodeError('too-large', `image too large: ${meta.width}x${meta.height} = ${pixels} pixels exceeds sift.maxPixels ${opts.maxPixels}`);
  }
  const swap = (meta.orientation ?? 1) >= 5;
  const ow = swap ? meta.height : meta.width;
  const oh = swap ? meta.width : meta.height;
  const longest = Math.max(ow, oh);
  const f = longest > opts.maxSide ? opts.maxSide / longest : 1;
  const tw = Math.max(1, Math.round(ow * f));
  const th = Math.max(1, Math.round(oh * f));
  const minSide = opts.minSide ?? 2;
  if (Math.min(tw, th) < minSide) {
    const after = f < 1 ? ` (${tw}x${th} after the downscale to sift.maxSide ${opts.maxSide})` : '';
    throw new DecodeError('too-small', `image too small: ${ow}x${oh}${after}, a side below sift.minSide ${minSide}`);
  }
  // failOn 'truncated': a cut-off file is an error, not a half-grey image. pages: 1 = first frame only.
  const decode = () => {
    let img = sharp(buf, { limitInputPixels: opts.maxPixels, failOn: 'truncated', pages: 1, page: 0 })
      .rotate()
      .flatten({ background: '#ffffff' });
    if (f < 1) img = img.resize(tw, th, { fit: 'fill', kernel: 'lanczos3' });
    return img.toColourspace('b-w').raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
  };
  try {
    // libvips keeps one error buffer per process: a decode failing while other images decode on other threads can
    // come back as "Unknown error" (its message cleared by them). Such a failure is decoded once more to learn why.
    const { data, info } = await decode().catch((err: unknown) => (/unknown error/i.test(cleanSharpMessage(err)) ? decode() : Promise.reject(err)));
    if (info.channels !== 1) throw new DecodeError('decode', `decoder gave ${info.channels} channels, expected 1`);
    const grey = new Uint8Array(data.buffer, data.byteOffset, info.width * info.height);
    return {
      grey,
      width: info.width,
      height: info.height,
      originalWidth: ow,
      originalHeight: oh,
      scale: info.width / ow,
      format: meta.format,
    };
  } catch (err) {
    if (err instanceof DecodeError) throw err;
    const msg = cleanSharpMessage(err);
    if (/pixel limit/i.test(msg)) throw new DecodeError('too-large', `image too large: ${msg}`);
    if (/truncat|premature|end of (file|data|stream)|unexpected end|short read|incomplete|corrupt|damaged/i.test(msg)) {
      throw new DecodeError('truncated', `truncated or corrupt image data (${meta.format}): ${msg}`);
    }
    throw new DecodeError('decode', `cannot decode ${meta.format} image: ${msg}`);
  }
}

function cleanSharpMessage(err: unknown): string {
  const m = err instanceof Error ? err.message : String(err);
  return m.split('\n').map((s) => s.trim()).filter(Boolean).join('; ').slice(0, 300);
}
