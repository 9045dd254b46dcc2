// Migration 37 (the match stage, issue 33): which verification stored a candidate. 'search': the plain or the views
// search (ratio test, then a homography or the epipolar geometry, at least match.minInliers inliers); 'archive':
// archive matching (dense views of both photos, verified beyond chance by the a-contrario test, at least
// archive.minInliers inliers). The pair stage re-checks each candidate against its own path's floor. Rows stored
// before this migration were stored by either; they read 'search' (the stricter floor, as before archive matching).
import type { Migration } from './types.js';

const sql = `
    ALTER TABLE candidates ADD COLUMN verified_by TEXT NOT NULL DEFAULT 'search' CHECK (verified_by IN ('search', 'archive'));
  `;

export const m037CandidateVerifiedBy: Migration = {
  version: 37,
  name: 'which verification stored a candidate',
  up: sql,
  pg: sql, // the same statement in both dialects
};
