// Migration 33 (match, issue 33): archive matching's dense views of a target image (ASIFT's views described by SIFT
// and mapped back to the image's frame), computed the first time the target is a candidate and kept, so that no
// target is described twice however many sources, runs or workers meet it. `key` names the views and their sizes
// (src/stages/match/archive.ts denseKey): other settings are other rows. Keypoints are packed (x, y, size, angle as
// 16-bit fixed point: 8 bytes a keypoint), descriptors as SIFT's 128 bytes.
import type { Migration } from './types.js';

export const m033DenseViews: Migration = {
  version: 33,
  name: 'dense views of target images (archive matching)',
  up: `
    CREATE TABLE dense_views (
      sha256       TEXT NOT NULL,     -- images.sha256
      key          TEXT NOT NULL,     -- the views and their sizes
      width        INTEGER NOT NULL,  -- detection frame
      height       INTEGER NOT NULL,
      scale        REAL NOT NULL,
      count        INTEGER NOT NULL,
      keypoints    BLOB NOT NULL,     -- count x 4 uint16 little-endian: x*16, y*16, size*16, angle*65536/360
      descriptors  BLOB NOT NULL,     -- count x 128 bytes
      ms           REAL NOT NULL,     -- time it took to compute
      created_at   TEXT NOT NULL,
      PRIMARY KEY (sha256, key)
    );
  `,
  pg: `
    CREATE TABLE dense_views (
      sha256       TEXT NOT NULL,
      key          TEXT NOT NULL,
      width        INTEGER NOT NULL,
      height       INTEGER NOT NULL,
      scale        DOUBLE PRECISION NOT NULL,
      count        INTEGER NOT NULL,
      keypoints    BYTEA NOT NULL,
      descriptors  BYTEA NOT NULL,
      ms           DOUBLE PRECISION NOT NULL,
      created_at   TEXT NOT NULL,
      PRIMARY KEY (sha256, key)
    );
    ALTER TABLE dense_views ALTER COLUMN keypoints SET STORAGE EXTERNAL, ALTER COLUMN descriptors SET STORAGE EXTERNAL;
  `,
};
