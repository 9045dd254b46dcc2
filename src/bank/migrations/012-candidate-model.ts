// Migration 12 (the match stage): which geometric model verified a candidate. 'homography': one plane maps the source
// onto the target (a copy of one photo, a flat cover, a facade); 'fundamental': the epipolar geometry of two
// photos of one 3D scene taken from different places (homography stays the dominant plane's, when one was
// fitted). fundamental: JSON 9 numbers, row-major, x_targetᵀ F x_source = 0 in original pixels, or null.
// Rows stored before this migration were all verified by a homography.
import type { Migration } from './types.js';

const sql = `
    ALTER TABLE candidates ADD COLUMN model TEXT NOT NULL DEFAULT 'homography' CHECK (model IN ('homography', 'fundamental'));
    ALTER TABLE candidates ADD COLUMN fundamental TEXT;
  `;

export const m012CandidateModel: Migration = {
  version: 12,
  name: 'candidate verification model',
  up: sql,
  pg: sql, // the same statements in both dialects
};
