// The features this layer reads: the shape of src/sift/types.ts (kept structurally identical, so a
// FeaturesRepo from the sift layer or the OpenCV dumps of bench/ both fit).
export interface Features {
  /** Detection image size. */
  width: number;
  height: number;
  /** Detection pixels per original pixel. */
  scale: number;
  count: number;
  /** count*6 floats: x, y, size, angle (deg), response, octave. */
  keypoints: Float32Array;
  /** count*128 bytes, OpenCV's uint8 SIFT layout. */
  descriptors: Uint8Array;
}

export const KP_STRIDE = 6;
export const DESC_SIZE = 128;

/** Where verification reads a target image's features (the sift layer's FeaturesRepo has this shape). */
export interface FeaturesSource {
  get(sha256: string): Features | undefined;
}
