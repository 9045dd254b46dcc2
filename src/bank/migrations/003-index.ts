// Migration 3 (lsh-index): the persistent keypoint index, the ranked candidates of each source item, and
// when each source was last matched.
// lsh_codes: per indexed target item, its keypoints' LSH bucket codes and 64-bit sketches (uint32 LE BLOB,
//   count*(tables+2)); the in-memory index is loaded from these rows on open (no projection work), and grows by
//   rows with a larger id. AUTOINCREMENT: ids are never reused, so MAX(id) is a watermark of index additions.
// candidates: the verified, ranked target items per source item; pairs = inlier point pairs as float32 LE
//   (x_source, y_source, x_target, y_target, original pixels) so the review page can draw match lines.
// match_state: which index watermark and image each source was last matched against (stale when targets were
//   added since, or the source's image changed).
import type { Migration } from './types.js';

export const m003Index: Migration = {
  version: 3,
  name: 'lsh index, candidates, match state',
  up: `
    CREATE TABLE lsh_codes (
      id            INTEGER PRIMARY KEY AUTOINCREMENT,
      item_id       INTEGER NOT NULL UNIQUE REFERENCES items(id) ON DELETE CASCADE,
      image_sha256  TEXT NOT NULL,
      params        TEXT NOT NULL,
      count         INTEGER NOT NULL,
      codes         BLOB NOT NULL,
      indexed_at    TEXT NOT NULL
    );

    CREATE TABLE candidates (
      source_item_id  INTEGER REFERENCES items(id) ON DELETE CASCADE,
      target_item_id  INTEGER REFERENCES items(id) ON DELETE CASCADE,
      rank            INTEGER,
      image_score     REAL,
      matches         INTEGER,
      inliers         INTEGER,
      homography      TEXT,      -- JSON 9 numbers (row-major, source px -> target px) or null
      matched_at      TEXT,
      mirrored        INTEGER NOT NULL DEFAULT 0,
      pairs           BLOB,
      PRIMARY KEY (source_item_id, target_item_id)
    );
    CREATE INDEX candidates_target ON candidates (target_item_id);

    CREATE TABLE match_state (
      source_item_id  INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
      image_sha256    TEXT NOT NULL,
      index_seq       INTEGER NOT NULL,
      matched_at      TEXT NOT NULL
    );
  `,
};
