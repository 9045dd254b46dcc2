// Migration 31 (match, issue 35 round 7): each index shard's bucket entry counts, so that a shard weighs and skips
// buckets by the whole index's sizes (the sum over the plan's ranges) without every worker reading every stored code
// (~9 GB at 1M targets): a range's counts are read back while its rows are unchanged (`row_count`, `max_id`: the
// signature of the rows counted), counted again from its rows otherwise.
// params: the codes' representation (lsh_codes.params); bits: the bucket width counted; first_item..last_item: the
// target item id range; counts: 2^bits uint32 little-endian.
import type { Migration } from './types.js';

const table = (blob: string) => `
  CREATE TABLE lsh_bucket_counts (
    params      TEXT NOT NULL,
    bits        INTEGER NOT NULL,
    first_item  BIGINT NOT NULL,
    last_item   BIGINT NOT NULL,
    row_count   BIGINT NOT NULL,
    max_id      BIGINT NOT NULL,
    counts      ${blob} NOT NULL,
    counted_at  TEXT NOT NULL,
    PRIMARY KEY (params, bits, first_item, last_item)
  );
`;

export const m031LshBucketCounts: Migration = {
  version: 31,
  name: 'bucket entry counts per index shard',
  up: table('BLOB'),
  pg: `${table('BYTEA')}
    ALTER TABLE lsh_bucket_counts ALTER COLUMN counts SET STORAGE EXTERNAL;`,
};
