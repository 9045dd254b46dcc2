// Migration 8: linguists' judgements (the review page) and the indexes its pair list walks.
// A judgement is keyed by the two item ids, not by the pairs row id: re-matching or re-deciding a pair (which may
// delete and re-insert its `pairs` row) never loses it. The caption texts seen at review time are kept, so a
// caption edited later is shown as such and calibration learns from what the linguist actually read.
// The pair list pages by keyset over (sort column, id) in one direction; the indexes below make every sort order
// of every list kind (emitted / not emitted / all) an index walk, never a sort or a scan of the table.
import type { Migration } from './types.js';

export const m008Reviews: Migration = {
  version: 8,
  name: 'reviews, pair-list indexes',
  up: `
    CREATE TABLE reviews (
      source_item_id  INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
      target_item_id  INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
      verdict         TEXT CHECK (verdict IN ('accepted', 'rejected')),   -- NULL: only a level was set
      level           TEXT CHECK (level IN ('par', 'com', 'pse', 'inc')), -- NULL: the machine's level stands
      level_rank      INTEGER,                                            -- par 3 ... inc 0, like pairs.level_rank
      en              TEXT NOT NULL,                                      -- caption texts as reviewed
      zh              TEXT NOT NULL,
      reviewed_at     TEXT NOT NULL,
      PRIMARY KEY (source_item_id, target_item_id)
    ) WITHOUT ROWID;
    CREATE INDEX reviews_verdict ON reviews (verdict, reviewed_at);

    CREATE INDEX review_pairs_id ON pairs (emitted, id);
    CREATE INDEX review_pairs_c ON pairs (emitted, c, id);
    CREATE INDEX review_pairs_image ON pairs (emitted, image_score, id);
    CREATE INDEX review_pairs_level ON pairs (emitted, level_rank, c, id);
    CREATE INDEX review_pairs_all_c ON pairs (c, id);
    CREATE INDEX review_pairs_all_image ON pairs (image_score, id);
    CREATE INDEX review_pairs_all_decided ON pairs (decided_at, id);
  `,
  // PostgreSQL: BIGINT identities for ids, BYTEA for BLOBs, DOUBLE PRECISION for SQLite's 8-byte REAL.
  pg: `
    CREATE TABLE reviews (
      source_item_id  BIGINT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
      target_item_id  BIGINT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
      verdict         TEXT CHECK (verdict IN ('accepted', 'rejected')),
      level           TEXT CHECK (level IN ('par', 'com', 'pse', 'inc')),
      level_rank      INTEGER,
      en              TEXT NOT NULL,
      zh              TEXT NOT NULL,
      reviewed_at     TEXT NOT NULL,
      PRIMARY KEY (source_item_id, target_item_id)
    );
    CREATE INDEX reviews_verdict ON reviews (verdict, reviewed_at);

    CREATE INDEX review_pairs_id ON pairs (emitted, id);
    CREATE INDEX review_pairs_c ON pairs (emitted, c, id);
    CREATE INDEX review_pairs_image ON pairs (emitted, image_score, id);
    CREATE INDEX review_pairs_level ON pairs (emitted, level_rank, c, id);
    CREATE INDEX review_pairs_all_c ON pairs (c, id);
    CREATE INDEX review_pairs_all_image ON pairs (image_score, id);
    CREATE INDEX review_pairs_all_decided ON pairs (decided_at, id);
  `,
};
