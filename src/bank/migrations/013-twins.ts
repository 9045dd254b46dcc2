// Migration 13 (sift): work once per picture. image_hashes: the perceptual hash of every featured image, its
// original size and a 16x16 thumbnail (src/lib/sift/twins.ts); image_twins: images found near-identical to a picture
// already in the same bank (another size or JPEG quality of it), which reuse its features instead of a SIFT run.
import type { Migration } from './types.js';

export const m013Twins: Migration = {
  version: 13,
  name: 'picture hashes and near-identical images',
  up: `
    CREATE TABLE image_hashes (
      sha256   TEXT PRIMARY KEY,     -- images.sha256
      hash     TEXT NOT NULL,        -- 64-bit DCT hash, 16 hex digits
      width    INTEGER NOT NULL,     -- original size, EXIF orientation applied
      height   INTEGER NOT NULL,
      thumb    BLOB NOT NULL         -- 16x16 grey thumbnail
    );
    CREATE TABLE image_twins (
      sha256      TEXT PRIMARY KEY,  -- this image is a near-identical copy ...
      of_sha256   TEXT NOT NULL,     -- ... of this one (which has features), and reuses its features
      bank        TEXT NOT NULL,     -- the bank where both were found
      distance    INTEGER NOT NULL,  -- Hamming distance of the hashes
      created_at  TEXT NOT NULL
    );
    CREATE INDEX image_twins_of ON image_twins (of_sha256);
  `,
  pg: `
    CREATE TABLE image_hashes (
      sha256   TEXT PRIMARY KEY,
      hash     TEXT NOT NULL,
      width    INTEGER NOT NULL,
      height   INTEGER NOT NULL,
      thumb    BYTEA NOT NULL
    );
    CREATE TABLE image_twins (
      sha256      TEXT PRIMARY KEY,
      of_sha256   TEXT NOT NULL,
      bank        TEXT NOT NULL,
      distance    INTEGER NOT NULL,
      created_at  TEXT NOT NULL
    );
    CREATE INDEX image_twins_of ON image_twins (of_sha256);
  `,
};
