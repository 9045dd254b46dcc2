// The sift layer's public interface.
export { type Features, type SiftParams, KP_STRIDE, DESC_SIZE, DEFAULT_SIFT_PARAMS } from './types.js';
export { detectAndDescribe } from './sift.js';
export { decodeGrey, DecodeError, type DecodeErrorCode, type DecodedGrey } from './decode.js';
export { extractFeatures, siftParams, type SiftConfig } from './extract.js';
export { SiftPool, resolveThreads } from './pool.js';
export { viewSpecs, viewFeatures, checkViewInput, type ViewSpec, type ViewFeaturesResult } from './views.js';
export { type ViewsInput, type ViewsOptions } from './pool.js';
export { ALIGN_SIDE, type PictureHash, TwinIndex, alignmentGrey, misalignment, pictureHash } from './twins.js';
export { asiftSpecs } from './views.js';
