// Comparability levels. Two scores: the C-measure C (weights) places a pair among com, pse and inc; the par score
// (parWeights, default the same) decides par, where the null model's significance fs (null-model.ts) separates a
// translation, aligned far beyond chance, from two independent captions of one photo. Com also needs the pair's
// significance S ≥ comMinSignificance: shared content beyond what chance gives two captions of that length and
// vocabulary (issue 34). The seed paper's thresholds were ϑ(C, ε) = C̄_level − a·ε (level means shifted by a
// multiple of the within-level spread); capbridge fits the thresholds themselves on labelled pairs
// (`capbridge calibrate`, src/lib/comparability/calibrate.ts): a pair is Par when C ≥ ϑ_par and its length ratio fl ≥
// parMinLengthRatio (a translation keeps the length of what it translates; two captions written independently
// need not), else Com when C ≥ ϑ_com, else Pse when C ≥ ϑ_pse, else Inc.
import type { Config } from '../../config/schema.js';
import { LEVELS, type Level } from '../../bank/index.js';

// One type for the levels, declared where they are stored (src/bank/pairs.ts); LEVEL_RANK (par 3 … inc 0) is also the
// rating the correlations use.
export { LEVELS, LEVEL_RANK, type Level } from '../../bank/index.js';

export type Thresholds = Record<'par' | 'com' | 'pse', number>;
export type LevelConfig = Pick<Config['comparability'], 'thresholds' | 'parMinLengthRatio'> & { comMinSignificance?: number };

/** The level of a pair with C-measure c, length ratio fl, par score cPar (default c) and significance s (nats). */
export function levelOf(c: number, fl: number, cfg: LevelConfig, cPar = c, s = Infinity): Level {
  const t = cfg.thresholds;
  if (cPar >= t.par && fl >= cfg.parMinLengthRatio) return 'par';
  if (c >= t.com && s >= (cfg.comMinSignificance ?? 0)) return 'com';
  if (c >= t.pse) return 'pse';
  return 'inc';
}

export function isLevel(s: string): s is Level {
  return (LEVELS as string[]).includes(s);
}
