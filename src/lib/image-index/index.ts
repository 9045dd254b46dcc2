// The image-index library's public interface: the rest of the code imports this file only.
export { concatFeatures, mirrorFeatures } from './descriptors.js';
export { DESC_SIZE, type Features } from './features.js';
export { DEFAULT_KD, KdForest } from './kdforest.js';
export { CODE_BITS, LshIndex, mulberry32, project } from './lsh.js';
export { MEAN_ROOTSIFT } from './mean-rootsift.js';
export { type Hit, type SearchParams, type SearchResult, type SlotLoader, mergeHits, prepare, scanStats, search, sketchCollisions } from './searcher.js';
export { type IndexHandle, autoBits, featureBytes, indexTargets, lshParams, openIndex, searchParams, syncIndex } from './store.js';
export { type Prepared, type Verification, type VerifyParams, verifyCandidate } from './verify.js';
