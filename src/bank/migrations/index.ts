// The ordered list of schema migrations. Append only: a released migration is never edited.
// Version numbers are reserved per layer so parallel work does not collide:
//   1 banks (foundation) · 2 features (features) · 3 LSH codes + candidates (match) · 4 IDF term counts
//   (comparability) · 5 crawler state (crawl) · 6 pairs + exports (pair, export) · 8 reviews (review)
//   9 crawl frontier (crawl) · 10 items.credit (extraction) · 11 sentence pairs (pair) · 12 the candidate's
//   geometric model (match) · 13 picture hashes and twins (features) · 15 jobs of the workers (worker)
//   16 crawl jobs keyed by host group (worker) · 17 BLOB columns uncompressed on PostgreSQL (bank)
//   18 captions counted into IDF per item (comparability, features) · 33 dense views of targets for archive
//   matching (match) · 36 export claims (export, issue 36) · 37 which verification stored a candidate (match,
//   issue 33).
//   30-32 the image index at archive scale (match, issue 35): 30 match results per index shard, merged per source;
//   31 each shard's bucket entry counts.
//   No migration has number 7 or 14.
import type { Migration } from './types.js';
import { m001Banks } from './001-banks.js';
import { m002Features } from './002-features.js';
import { m004Comparability } from './004-comparability.js';
import { m003Index } from './003-index.js';
import { m006Pairs } from './006-pairs.js';
import { m005Crawler } from './005-crawler.js';
import { m008Reviews } from './008-reviews.js';
import { m009CrawlFrontier } from './009-crawl-frontier.js';
import { m010Credit } from './010-credit.js';
import { m011SentencePairs } from './011-sentence-pairs.js';
import { m013Twins } from './013-twins.js';
import { m033DenseViews } from './033-dense-views.js';
import { m015Jobs } from './015-jobs.js';
import { m016CrawlJobs } from './016-crawl-jobs.js';
import { m017BlobStorage } from './017-blob-storage.js';
import { m018IdfCounted } from './018-idf-counted.js';
import { m012CandidateModel } from './012-candidate-model.js';
import { m036ExportClaims } from './036-export-claims.js';
import { m037CandidateVerifiedBy } from './037-candidate-verified-by.js';
import { m030MatchPartials } from './030-match-partials.js';
import { m031LshBucketCounts } from './031-lsh-bucket-counts.js';

// One entry per line (merges stay trivial). Applied in version order; a migration that landed later with a lower
// number than one already applied is still applied (src/bank/db.ts tracks each version, not just the highest).
export const migrations: Migration[] = [
  m001Banks,
  m002Features,
  m004Comparability,
  m003Index,
  m006Pairs,
  m005Crawler,
  m008Reviews,
  m009CrawlFrontier,
  m010Credit,
  m011SentencePairs,
  m013Twins,
  m015Jobs,
  m016CrawlJobs,
  m017BlobStorage,
  m018IdfCounted,
  m012CandidateModel,
  m036ExportClaims,
  m037CandidateVerifiedBy,
  m033DenseViews,
  m030MatchPartials,
  m031LshBucketCounts,
].sort((a, b) => a.version - b.version);
export type { Migration };
