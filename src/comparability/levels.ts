// Comparability levels by thresholds ϑ(C, ε) = C̄_level − a·ε (the seed paper's section 4.4): a pair is Par
// when C ≥ ϑ_par, else Com when C ≥ ϑ_com, else Pse when C ≥ ϑ_pse, else Inc.
import type { Config } from '../config/schema.js';

export type Level = 'par' | 'com' | 'pse' | 'inc';
export const LEVELS: Level[] = ['par', 'com', 'pse', 'inc'];
/** Ratings used for correlations: par 3, com 2, pse 1, inc 0. */
export const LEVEL_RATING: Record<Level, number> = { par: 3, com: 2, pse: 1, inc: 0 };

export type LevelConfig = Pick<Config['comparability'], 'levels' | 'a' | 'epsilon'>;

export function thresholds(cfg: LevelConfig): Record<'par' | 'com' | 'pse', number> {
  const shift = cfg.a * cfg.epsilon;
  return { par: cfg.levels.par - shift, com: cfg.levels.com - shift, pse: cfg.levels.pse - shift };
}

export function levelOf(c: number, t: Record<'par' | 'com' | 'pse', number>): Level {
  if (c >= t.par) return 'par';
  if (c >= t.com) return 'com';
  if (c >= t.pse) return 'pse';
  return 'inc';
}

export function isLevel(s: string): s is Level {
  return (LEVELS as string[]).includes(s);
}
