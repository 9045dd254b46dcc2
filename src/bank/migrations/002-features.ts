// Migration 2 (sift): SIFT features per image, keyed by the image's sha256 (items share images, so features are
// computed once per distinct image). Compact BLOBs: keypoints as little-endian float32 (count*6: x, y, size, angle,
// response, octave, detection coordinates), descriptors raw uint8 (count*128). 1000 keypoints = 24 KB + 128 KB.
import type { Migration } from './types.js';

export const m002Features: Migration = {
  version: 2,
  name: 'sift features',
  up: `
    CREATE TABLE features (
      sha256       TEXT PRIMARY KEY,       -- images.sha256 (not a foreign key: features may outlive a re-import)
      width        INTEGER NOT NULL,       -- detection image size
      height       INTEGER NOT NULL,
      scale        REAL NOT NULL,          -- detection px per original px
      count        INTEGER NOT NULL,
      keypoints    BLOB NOT NULL,          -- float32 LE, count*6
      descriptors  BLOB NOT NULL,          -- uint8, count*128
      ms           REAL NOT NULL,          -- time spent decoding + extracting
      created_at   TEXT NOT NULL
    );
  `,
  // PostgreSQL: BIGINT identities for ids, BYTEA for BLOBs, DOUBLE PRECISION for SQLite's 8-byte REAL.
  pg: `
    CREATE TABLE features (
      sha256       TEXT PRIMARY KEY,
      width        INTEGER NOT NULL,
      height       INTEGER NOT NULL,
      scale        DOUBLE PRECISION NOT NULL,
      count        INTEGER NOT NULL,
      keypoints    BYTEA NOT NULL,
      descriptors  BYTEA NOT NULL,
      ms           DOUBLE PRECISION NOT NULL,
      created_at   TEXT NOT NULL
    );
  `,
};
