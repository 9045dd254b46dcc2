// Migration 6: pairing decisions and exports.
// `pairs` holds one row per (source item, target item) candidate that the pairing stage has decided, emitted or
// not: the decision keeps the caption texts and candidate it was made on, so a later run re-decides exactly the
// pairs whose captions or candidate changed (and nothing else), and the UNIQUE key makes re-runs idempotent.
// `exported_at`/`export_id` are the export watermark (`export --new`); `text_key` groups pairs with identical
// caption texts (collapsed on export, every provenance kept).
import type { Migration } from './types.js';

export const m006Pairs: Migration = {
  version: 6,
  name: 'pairs, exports',
  up: `
    CREATE TABLE pairs (
      id              INTEGER PRIMARY KEY,
      source_item_id  INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
      target_item_id  INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
      emitted         INTEGER NOT NULL,          -- 1: a pair of the corpus; 0: decided against (reason says why)
      reason          TEXT,
      en              TEXT NOT NULL,             -- caption texts the decision was made on
      zh              TEXT NOT NULL,
      text_key        TEXT NOT NULL,             -- hash of (en, zh): identical caption pairs collapse on export
      level           TEXT,                      -- par | com | pse | inc (NULL when not scored)
      level_rank      INTEGER NOT NULL DEFAULT 0,  -- par 3, com 2, pse 1, inc 0: for --min-level filters
      c               REAL,
      fc              REAL,
      fe              REAL,
      fl              REAL,
      image_score     REAL,
      inliers         INTEGER,
      candidate_rank  INTEGER,
      matched_at      TEXT,                      -- the candidate's matched_at, as text, when decided
      explain         TEXT,                      -- JSON from the C-measure
      decided_at      TEXT NOT NULL,
      exported_at     TEXT,                      -- first export that held this pair (the --new watermark)
      export_id       INTEGER REFERENCES exports(id),
      UNIQUE (source_item_id, target_item_id)
    );
    CREATE INDEX pairs_level ON pairs (emitted, level_rank, c DESC, id);
    CREATE INDEX pairs_score ON pairs (emitted, c DESC, id);
    CREATE INDEX pairs_decided ON pairs (emitted, decided_at, id);
    CREATE INDEX pairs_unexported ON pairs (emitted, exported_at, text_key);
    CREATE INDEX pairs_text ON pairs (text_key);
    CREATE INDEX pairs_target ON pairs (target_item_id);

    CREATE TABLE exports (
      id          INTEGER PRIMARY KEY,
      started_at  TEXT NOT NULL,
      finished_at TEXT,
      formats     TEXT NOT NULL,                 -- JSON list
      paths       TEXT NOT NULL,                 -- JSON list of files written
      only_new    INTEGER NOT NULL,
      min_level   TEXT NOT NULL,
      pairs       INTEGER NOT NULL DEFAULT 0,    -- rows written (collapsed caption pairs)
      members     INTEGER NOT NULL DEFAULT 0     -- item pairs those rows stand for
    );
  `,
};
