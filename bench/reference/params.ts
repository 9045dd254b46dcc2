// REFERENCE (issue 35): the index parameters of before the one-table codes (main at b0cf5ac: 8 tables, 2 probes a
// table, buckets of ~64 entries, 300 at most), for bench:index's side-by-side run.
import type { Config } from '../../src/config/schema.js';
import { CODE_BITS, type LshParams } from './lsh.js';

export function autoBits(keypoints: number): number {
  return Math.max(16, Math.min(CODE_BITS, Math.round(Math.log2(Math.max(1, keypoints) / 64))));
}

export function lshParams(config: Config, keypoints = 0): LshParams {
  return { tables: 8, bits: autoBits(keypoints), probes: 2, maxBucket: 300, seed: config.lsh.seed };
}
