// The bank's public interface.
export { Bank, BankScope, DB_FILE, type BankTx, type BankOpenOptions, type RepoClass } from './bank.js';
export { ItemsRepo, BANKS, type BankName, type Item, type ItemInput, type UpsertOutcome, type CaptionStatus } from './items.js';
export { ImageStore, FolderBlobs, ImageReadError, ImageStoreError, asImageStoreError, isStoreUnavailable, openImageBlobs, probeImage, checkImageBounds, sha256Hex, imageKey, type ImageRecord, type ImageBlobs, type ImageBounds, type ImageStoreSettings } from './image-store.js';
export { copyImages, checkImages, type ImageCopySummary, type ImageCheckSummary } from './image-copy.js';
export { MetaRepo } from './meta.js';
export { StatsRepo, failureKind, type BankStats, type BankCounts } from './stats.js';
export { LATEST_SCHEMA_VERSION } from './db.js';
export { CrawlRepo, type Validators, type RobotsRow, type FrontierRow, type NewUrl, type UrlKind, type UrlState, type RowOutcome, type CrawlStats } from './crawl.js';
export { PairsRepo, LEVELS, LEVEL_RANK, textKey, type PairLevel, type PairDecision, type PairRow, type PairCandidate, type SentencePairDecision } from './pairs.js';
export { SentencePairsRepo, type SentencePairRow, type SentencePairForExport } from './sentence-pairs.js';
export { FeaturesRepo, type StoredFeatures } from './features.js';
export { ReviewsRepo, VERDICTS, type Verdict, type Review, type ReviewState, type PairListFilter, type PairListKind, type PairListSort, type ListCursor, type ReviewPairRow, type LabelledPair } from './reviews.js';
export { TermStatsRepo } from './term-stats.js';
export { LshRepo, type LshRow } from './lsh.js';
export { TwinsRepo, type StoredHash, type Twin } from './twins.js';
export { CandidatesRepo, type CandidateInput, type Candidate, type CandidateJoined } from './candidates.js';
export { JobsRepo, JOB_STAGES, SCHEDULED_STAGES, type JobStage, type ScheduledStage, type Job, type JobCounts, type IdRange } from './jobs.js';
