// Migration 11 (export: sentence pairs). A matched caption pair (a `pairs` row) is split into sentences and
// aligned; each aligned sentence pair is a `sentence_pairs` row with its own C, features and level (emitted only at
// or above the export floor; an inc alignment is a sentence without a counterpart, kept for the review page), and the provenance of its caption pair (pair_id, and the two items). Exports write sentence
// pairs; their watermark (`exported_at`/`export_id`, as on pairs) lives here. `pairs` gains the coverage feature
// of its best sentence pair (fcov), how many sentences each caption had (en_sentences, zh_sentences), and the size
// of the IDF table its scores were computed with (idf_docs: the pairing stage re-decides a pair when the table has
// grown enough to move C; NULL = decided before sentence alignment existed, so every such pair is re-decided once).
import type { Migration } from './types.js';

export const m011SentencePairs: Migration = {
  version: 11,
  name: 'sentence pairs',
  up: `
    ALTER TABLE pairs ADD COLUMN fcov REAL;
    ALTER TABLE pairs ADD COLUMN en_sentences INTEGER;
    ALTER TABLE pairs ADD COLUMN zh_sentences INTEGER;
    ALTER TABLE pairs ADD COLUMN idf_docs INTEGER;

    CREATE TABLE sentence_pairs (
      id              INTEGER PRIMARY KEY,
      pair_id         INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
      source_item_id  INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
      target_item_id  INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
      en_first        INTEGER NOT NULL,          -- sentence indices in each caption (credits and datelines not counted);
      en_last         INTEGER NOT NULL,          -- first < last for a merge of two sentences
      zh_first        INTEGER NOT NULL,
      zh_last         INTEGER NOT NULL,
      en              TEXT NOT NULL,
      zh              TEXT NOT NULL,
      text_key        TEXT NOT NULL,             -- hash of (en, zh): identical sentence pairs collapse on export
      emitted         INTEGER NOT NULL,          -- 1: a pair of the corpus (its caption pair passed the image and filter checks, its level the floor)
      level           TEXT NOT NULL,
      level_rank      INTEGER NOT NULL,
      c               REAL NOT NULL,
      fc              REAL NOT NULL,
      fe              REAL NOT NULL,
      fl              REAL NOT NULL,
      fcov            REAL NOT NULL,
      exported_at     TEXT,
      export_id       INTEGER REFERENCES exports(id),
      UNIQUE (pair_id, en_first, zh_first)
    );
    CREATE INDEX sentence_pairs_export ON sentence_pairs (emitted, level_rank, text_key);
    CREATE INDEX sentence_pairs_text ON sentence_pairs (text_key);
    CREATE INDEX sentence_pairs_pair ON sentence_pairs (pair_id);
  `,
};
