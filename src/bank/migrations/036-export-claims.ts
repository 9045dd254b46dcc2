// Migration 36 (scale, issue 36): exports claim what they write. An `export --new` (and the daemon's scheduled
// export) first claims the new sentence pairs it will write (sentence_pairs.export_id set while exported_at is still
// NULL), under a lock, and holds the claim with a lease on its exports row (lease_until, epoch ms of the database's
// clock, renewed while it writes); the claim becomes the watermark (exported_at) once the files are in place. Two
// exports started together therefore write each sentence pair once; an export that dies leaves its claim to run out.
import type { Migration } from './types.js';

const SQL = `
  ALTER TABLE exports ADD COLUMN lease_until BIGINT;
  CREATE INDEX sentence_pairs_claimed ON sentence_pairs (export_id) WHERE exported_at IS NULL;
`;

export const m036ExportClaims: Migration = {
  version: 36,
  name: 'exports claim the sentence pairs they write',
  up: SQL,
  pg: SQL,
};
