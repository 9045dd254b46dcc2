// The shape other layers code against (the image index, the features stage, the bank). Keep it stable.

/** Keypoints and descriptors of one image, in detection coordinates. */
export interface Features {
  /** Detection image size (after the maxSide downscale, before any internal x2 upsampling). */
  width: number;
  height: number;
  /** Detection pixels per original pixel (1 when the image was not downscaled; < 1 otherwise). */
  scale: number;
  count: number;
  /** count*6 floats: x, y, size, angle (degrees, OpenCV convention), response, octave (signed, -1 = upsampled). */
  keypoints: Float32Array;
  /** count*128 bytes, row-major, OpenCV's uint8 SIFT layout. */
  descriptors: Uint8Array;
}

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
