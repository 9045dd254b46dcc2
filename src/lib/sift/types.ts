// The shape other layers code against (the image index, the features stage, the bank). Keep it stable.

/** Keypoints and descriptors of one image: declared by the bank, which stores them (src/bank/features.ts). */
export type { Features } from '../../bank/index.js';

/** Floats per keypoint in Features.keypoints. */
export const KP_STRIDE = 6;
/** Bytes per descriptor. */
export const DESC_SIZE = 128;

/** SIFT parameters (config.sift without the decoding and threading keys). */
export interface SiftParams {
  maxKeypoints: number;
  upsample: boolean;
  octaveLayers: number;
  sigma: number;
  contrastThreshold: number;
  edgeThreshold: number;
}

export const DEFAULT_SIFT_PARAMS: SiftParams = {
  maxKeypoints: 1000,
  upsample: true, // OpenCV's default (firstOctave = -1)
  octaveLayers: 3,
  sigma: 1.6,
  contrastThreshold: 0.04,
  edgeThreshold: 10,
};
