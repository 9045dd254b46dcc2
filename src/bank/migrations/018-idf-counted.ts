// Migration 18 (comparability, scale): which captions the IDF table has counted is kept per item (idf_counted)
// instead of as one watermark per bank (term_docs.last_item, no longer read). A watermark admits one counter at a
// time, walking ids in order: in the scale-out mode every worker that reached the pair stage analysed the same new
// captions (2 ms each) and all but one threw its work away. A flag lets the features jobs count the captions of
// their own id ranges, in parallel and once each, and any process count what is left. Items at or below the old
// watermark were counted.
import type { Migration } from './types.js';

const SQL = `
  ALTER TABLE items ADD COLUMN idf_counted INTEGER NOT NULL DEFAULT 0;
  UPDATE items SET idf_counted = 1 WHERE id <= COALESCE((SELECT MAX(d.last_item) FROM term_docs d WHERE d.bank = items.bank), 0);
  CREATE INDEX items_idf_pending ON items (bank, id) WHERE idf_counted = 0;
`;

export const m018IdfCounted: Migration = {
  version: 18,
  name: 'captions counted into the IDF table, per item',
  up: SQL,
  pg: SQL,
};
