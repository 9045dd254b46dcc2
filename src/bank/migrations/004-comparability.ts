// Migration 4 (comparability): document frequencies of caption terms per language, for the C-measure's
// TF-IDF weights, and a watermark per bank (the last item id counted) so updates are incremental.
import type { Migration } from './types.js';

export const m004Comparability: Migration = {
  version: 4,
  name: 'comparability term stats',
  up: `
    CREATE TABLE term_df (
      lang  TEXT NOT NULL CHECK (lang IN ('en', 'zh')),
      term  TEXT NOT NULL,
      df    INTEGER NOT NULL,
      PRIMARY KEY (lang, term)
    ) WITHOUT ROWID;

    CREATE TABLE term_docs (
      lang       TEXT PRIMARY KEY CHECK (lang IN ('en', 'zh')),
      docs       INTEGER NOT NULL,
      bank       TEXT NOT NULL CHECK (bank IN ('source', 'target')),
      last_item  INTEGER NOT NULL             -- items with id <= last_item are counted
    );
  `,
  // PostgreSQL: BIGINT identities for ids, BYTEA for BLOBs, DOUBLE PRECISION for SQLite's 8-byte REAL.
  pg: `
    CREATE TABLE term_df (
      lang  TEXT NOT NULL CHECK (lang IN ('en', 'zh')),
      term  TEXT NOT NULL,
      df    INTEGER NOT NULL,
      PRIMARY KEY (lang, term)
    );

    CREATE TABLE term_docs (
      lang       TEXT PRIMARY KEY CHECK (lang IN ('en', 'zh')),
      docs       INTEGER NOT NULL,
      bank       TEXT NOT NULL CHECK (bank IN ('source', 'target')),
      last_item  BIGINT NOT NULL
    );
  `,
};
