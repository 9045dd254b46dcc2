// Comparability levels. The seed paper's thresholds were ϑ(C, ε) = C̄_level − a·ε (level means shifted by a
// multiple of the within-level spread); capbridge fits the thresholds themselves on labelled pairs
// (`capbridge calibrate`, src/lib/comparability/calibrate.ts): a pair is Par when C ≥ ϑ_par and its length ratio fl ≥
// parMinLengthRatio (a translation keeps the length of what it translates; two captions written independently
// need not), else Com when C ≥ ϑ_com, else Pse when C ≥ ϑ_pse, else Inc.
import type { Config } from '../../config/schema.js';

export type Level = 'par' | 'com' | 'pse' | 'inc';
export const LEVELS: Level[] = ['par', 'com', 'pse', 'inc'];
/** Ratings used for correlations: par 3, com 2, pse 1, inc 0. */
export const LEVEL_RATING: Record<Level, number> = { par: 3, com: 2, pse: 1, inc: 0 };

export type Thresholds = Record<'par' | 'com' | 'pse', number>;
export type LevelConfig = Pick<Config['comparability'], 'thresholds' | 'parMinLengthRatio'>;

export function levelOf(c: number, fl: number, cfg: LevelConfig): Level {
  const t = cfg.thresholds;
  if (c >= t.par && fl >= cfg.parMinLengthRatio) return 'par';
  if (c >= t.com) return 'com';
  if (c >= t.pse) return 'pse';
  return 'inc';
}

export function isLevel(s: string): s is Level {
  return (LEVELS as string[]).includes(s);
}
