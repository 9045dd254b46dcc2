// The features this layer reads: the sift layer's shape (src/lib/sift/types.ts), re-exported so the index, the
// benches' OpenCV dumps and the tests name one type.
import type { Features } from '../sift/index.js';

export { KP_STRIDE, DESC_SIZE, type Features } from '../sift/index.js';

/** Where verification reads a target image's features (the sift layer's FeaturesRepo has this shape). */
export interface FeaturesSource {
  get(sha256: string): Features | undefined;
}
