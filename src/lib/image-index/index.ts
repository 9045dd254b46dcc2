// The image-index library's public interface: the rest of the code imports this file only.
export { concatFeatures, mirrorFeatures, rootSift } from './descriptors.js';
export { DESC_SIZE, type Features } from './features.js';
export { DEFAULT_KD, KdForest } from './kdforest.js';
export { CODE_BITS, STRIDE, LshIndex, bucketSpan, countBuckets, entriesAt, encode, mulberry32, project, type LshParams } from './lsh.js';
export { MEAN_ROOTSIFT } from './mean-rootsift.js';
export { type DirectVotes, type Hit, type KeypointVotes, type SearchParams, type ScanStats, type SearchResult, type ShardVotedPass, type ShortlistSource, type SlotLoader, type VotedPass, SHARD_REPORT, burstCounts, exactVotes, mergeHits, prepare, dropSeen, reprobeParams, reprobes, search, shardVotePass, sumScans, sketchCollisions, targetSketches, tooFewCollisions, verifyShortlist, votePass } from './searcher.js';
export { type IndexHandle, type IndexTargetsOptions, autoBits, featureBytes, estimateIndexBytes, heldRanges, indexTargets, loadBatch, lshParams, openIndex, searchParams, syncIndex } from './store.js';
export { type Prepared, type Verification, type VerifyParams, unverified, verifyCandidate } from './verify.js';
