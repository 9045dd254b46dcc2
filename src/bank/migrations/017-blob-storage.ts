// Migration 17 (scale): PostgreSQL keeps the large binary columns uncompressed (STORAGE EXTERNAL: out of line in
// TOAST, no compression). By default every value over ~2 KB is first tried with pglz; SIFT keypoints, descriptors
// and LSH codes hardly compress (3 % on features of 200 photos) while pglz cost 6.1 ms of server CPU per 130 KB
// row written against 0.9 ms without it (measured on PostgreSQL 15), and the server shares the machine's cores with
// the workers. Only rows written from now on are stored this way; old rows read as before. SQLite has no TOAST:
// nothing to do there.
import type { Migration } from './types.js';

export const m017BlobStorage: Migration = {
  version: 17,
  name: 'large binary columns stored without compression (PostgreSQL)',
  up: async () => undefined,
  pg: `
    ALTER TABLE features ALTER COLUMN keypoints SET STORAGE EXTERNAL, ALTER COLUMN descriptors SET STORAGE EXTERNAL;
    ALTER TABLE lsh_codes ALTER COLUMN codes SET STORAGE EXTERNAL;
    ALTER TABLE candidates ALTER COLUMN pairs SET STORAGE EXTERNAL;
  `,
};
