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
};
