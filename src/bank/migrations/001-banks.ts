// Migration 1: the two banks (items), the image store's index, and a key/value table for watermarks.
import type { Migration } from './types.js';

export const m001Banks: Migration = {
  version: 1,
  name: 'banks, images, meta',
  up: `
    CREATE TABLE images (
      sha256      TEXT PRIMARY KEY,          -- content hash: identical bytes are stored once
      path        TEXT NOT NULL,             -- relative to the data dir
      bytes       INTEGER NOT NULL,
      format      TEXT NOT NULL,             -- as sharp reads it: jpeg, png, webp, gif, tiff, heif...
      width       INTEGER NOT NULL,
      height      INTEGER NOT NULL,
      created_at  TEXT NOT NULL
    );

    CREATE TABLE items (
      id              INTEGER PRIMARY KEY,
      bank            TEXT NOT NULL CHECK (bank IN ('source', 'target')),
      ext_id          TEXT NOT NULL,         -- stable external id, unique per bank
      caption         TEXT NOT NULL DEFAULT '',
      lang            TEXT,                  -- detected language (ISO 639-3, 'und' when too short to tell)
      caption_status  TEXT NOT NULL DEFAULT 'ok' CHECK (caption_status IN ('ok', 'empty', 'lang-mismatch', 'rejected')),
      caption_reason  TEXT,
      image_sha256    TEXT NOT NULL REFERENCES images(sha256),
      page_url        TEXT,
      image_url       TEXT,
      site            TEXT,
      imported_at     TEXT,                  -- when a local import stored it
      fetched_at      TEXT,                  -- when the crawler fetched it
      updated_at      TEXT NOT NULL,
      caption_updated_at TEXT NOT NULL,      -- scoring stages re-score pairs whose captions changed after them
      status          TEXT NOT NULL DEFAULT 'new',   -- image pipeline: new -> featured -> ...; failed + reason
      status_reason   TEXT,
      status_at       TEXT NOT NULL,
      UNIQUE (bank, ext_id)
    );
    CREATE INDEX items_bank_status ON items (bank, status, id);
    CREATE INDEX items_image ON items (image_sha256);
    CREATE INDEX items_site ON items (site);

    CREATE TABLE meta (
      key   TEXT PRIMARY KEY,
      value TEXT NOT NULL
    );
  `,
};
