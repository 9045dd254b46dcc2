// Descriptor transforms: RootSIFT (Arandjelović & Zisserman 2012: L1-normalise, then square root, so the
// Euclidean distance between the results is the Hellinger distance of the SIFT histograms; it makes the
// ratio test and the LSH work on a better-behaved metric), and the bin permutation that turns the SIFT
// descriptor of a keypoint into that of its mirror image (OpenCV layout: index = (row*4 + col)*8 + ori).
import { DESC_SIZE, KP_STRIDE, type Features } from './features.js';

/** RootSIFT vectors (unit L2 norm) of all descriptors, row-major count*128 floats. */
export function rootSift(desc: Uint8Array, count: number): Float32Array {
  const out = new Float32Array(count * DESC_SIZE);
  for (let i = 0; i < count; i++) {
    const o = i * DESC_SIZE;
    let sum = 0;
    for (let j = 0; j < DESC_SIZE; j++) sum += desc[o + j]!;
    if (sum <= 0) continue;
    const inv = 1 / sum;
    for (let j = 0; j < DESC_SIZE; j++) out[o + j] = Math.sqrt(desc[o + j]! * inv);
  }
  return out;
}

/**
 * MIRROR[j] = the bin of the original descriptor that lands at bin j when the image is flipped left-right:
 * in the keypoint's frame a horizontal flip reverses the row axis and negates relative orientations
 * (measured on OpenCV descriptors of a flipped photo: 464 of 467 ratio matches land on the mirrored keypoint).
 */
export const MIRROR: Uint8Array = (() => {
  const p = new Uint8Array(DESC_SIZE);
  for (let r = 0; r < 4; r++)
    for (let c = 0; c < 4; c++)
      for (let o = 0; o < 8; o++) p[((3 - r) * 4 + c) * 8 + ((8 - o) % 8)] = (r * 4 + c) * 8 + o;
  return p;
})();

/** The features of the left-right mirror image, without detecting again. */
export function mirrorFeatures(f: Features): Features {
  const kp = new Float32Array(f.keypoints);
  for (let i = 0; i < f.count; i++) {
    kp[i * KP_STRIDE] = f.width - 1 - kp[i * KP_STRIDE]!;
    kp[i * KP_STRIDE + 3] = (540 - kp[i * KP_STRIDE + 3]!) % 360;
  }
  const d = new Uint8Array(f.count * DESC_SIZE);
  for (let i = 0; i < f.count; i++) {
    const o = i * DESC_SIZE;
    for (let j = 0; j < DESC_SIZE; j++) d[o + j] = f.descriptors[o + MIRROR[j]!]!;
  }
  return { ...f, keypoints: kp, descriptors: d };
}

/** Several keypoint sets of one image (the same frame) as one Features: the views' keypoints, or the query
 *  and its views. */
export function concatFeatures(base: Pick<Features, 'width' | 'height' | 'scale'>, parts: Features[]): Features {
  const count = parts.reduce((a, f) => a + f.count, 0);
  const keypoints = new Float32Array(count * KP_STRIDE);
  const descriptors = new Uint8Array(count * DESC_SIZE);
  let k = 0;
  for (const f of parts) {
    keypoints.set(f.keypoints.subarray(0, f.count * KP_STRIDE), k * KP_STRIDE);
    descriptors.set(f.descriptors.subarray(0, f.count * DESC_SIZE), k * DESC_SIZE);
    k += f.count;
  }
  return { width: base.width, height: base.height, scale: base.scale, count, keypoints, descriptors };
}
