// One image's bytes -> Features: decode (sharp) then SIFT, in the calling thread.
import type { Config } from '../../config/schema.js';
import { decodeGrey } from './decode.js';
import { detectAndDescribe } from './sift.js';
import type { Features, SiftParams } from './types.js';

export type SiftConfig = Config['sift'];

export function siftParams(c: SiftConfig): SiftParams {
  return {
    maxKeypoints: c.maxKeypoints,
    upsample: c.upsample,
    octaveLayers: c.octaveLayers,
    sigma: c.sigma,
    contrastThreshold: c.contrastThreshold,
    edgeThreshold: c.edgeThreshold,
  };
}

/**
 * Decodes and describes one image. Keypoints are in detection coordinates (the image after the maxSide
 * downscale); `scale` is detection px per original px, so original = detection / scale.
 * Throws DecodeError for empty, non-image, truncated, too-large or too-small input.
 */
export async function extractFeatures(buf: Uint8Array, config: { sift: SiftConfig }): Promise<Features> {
  const d = await decodeGrey(buf, { maxSide: config.sift.maxSide, maxPixels: config.sift.maxPixels, minSide: config.sift.minSide });
  const f = detectAndDescribe(d.grey, d.width, d.height, siftParams(config.sift));
  f.scale = d.scale;
  return f;
}
