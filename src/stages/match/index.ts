// The match stage's public interface (run it through the registry, src/stages/index.ts: loadStage('match')): the run,
// image search (`capbridge search`, the review page), and the progressive-views and archive search the benchmarks
// measure.
export { observeSourceCosts, observeSourceRankings, type SourceCost, type SourceRanking, type MatchStageName } from './stage.js';
export { runMatch, searchImage, rankAgainstIndex, toOriginal, rescaleCandidate, ViewPool, type MatchOptions, type MatchSummary, type SearchHit } from './stage.js';
export {
  viewParams, viewEvidence, inThreadViews, poolViews, withOwnViews, searchProgressive, viewsKey,
  type ViewParams, type GreyImage, type ViewRunner, type TargetViews, type ProgressiveResult,
} from './views.js';
export { shortlistPromise, verifiedBelow } from './promise.js';
export { storable, unconfident } from './rank.js';
export { fuseRankings } from './archive.js';
export { archiveParams, archiveVerifyParams, archiveCompare, archiveMatch, denseKey, denseViews, preselect, type ArchiveParams } from './archive.js';
export { currentPlan, storedPlan, shardKey, type ShardPlan } from './shards.js';
