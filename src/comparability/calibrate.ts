// Calibration on labelled pairs (`capbridge calibrate`):
//   1. hanzi per English word: the median ratio over the par pairs (robust to odd captions);
//   2. the weights (α fc, β fe, γ fl, δ fcov; sum 1, steps of 0.05) that maximise the mean ROC AUC of the two
//      boundaries that matter, par-vs-com and com-vs-inc (par-vs-inc when there is no com), ties broken by the
//      Pearson correlation of C with the level ratings;
//   3. the thresholds: ϑ_par (with the par length gate parMinLengthRatio) the lowest C whose par precision,
//      judged on the par, com and inc pairs, stays at or above the target (the recall is then the highest the
//      target allows), precision taken at its one-sided 90 % lower confidence bound (fitted on a few hundred
//      pairs, a threshold at exactly the target falls below it on new pairs about half the time); ϑ_com the same for "com or better" against inc; ϑ_pse the C that best separates pse from
//      inc (Youden's J). pse pairs take no part in the par and com thresholds: labelled sets build them from other
//      images by word overlap, and some are near-translations.
// `splitHoldout` draws the held-out part that a fit must not see (seeded, stratified by level and corpus).
import type { Config } from '../config/schema.js';
import { mulberry32 } from '../util/random.js';
import { auc, evaluate, pearson } from './metrics.js';
import { lengthFeature } from './measure.js';
import { LEVEL_RATING, levelOf, type Level, type LevelConfig, type Thresholds } from './levels.js';

export interface LabelledFeatures {
  level: Level;
  fc: number;
  fe: number;
  fcov: number;
  /** Length units, for hanziPerWord and fl: English words and Chinese characters. */
  enLength: number;
  zhLength: number;
  corpus?: string;
}

export interface Figures {
  aucParCom: number;
  aucParInc: number;
  aucComInc: number;
  aucPseInc: number;
  pearsonPairs: number;
  meanC: Partial<Record<Level, number>>;
  /** Share of pairs given their own level. */
  levelAccuracy: number;
  /** Pairs graded par that are par, judged on the par, com and inc pairs; and the share of par pairs graded par. */
  parPrecision: number;
  parRecall: number;
  /** Pairs graded com or par that are com or par, judged on the par, com and inc pairs; and the recall of those. */
  comOrBetterPrecision: number;
  comOrBetterRecall: number;
  pairs: number;
}

type Weights = Config['comparability']['weights'];
export type CalibrationValues = Pick<Config['comparability'], 'weights' | 'hanziPerWord' | 'thresholds' | 'parMinLengthRatio'>;

const RANK: Record<Level, number> = { par: 3, com: 2, pse: 1, inc: 0 };
/** Length gates tried for par (0 = none). */
const PAR_GATES = [0, 0.3, 0.4, 0.5, 0.6, 0.7];

interface Scored {
  level: Level;
  c: number;
  fl: number;
}

const combine = (r: LabelledFeatures & { fl: number }, w: Weights): number => w.alpha * r.fc + w.beta * r.fe + w.gamma * r.fl + w.delta * r.fcov;

function withFl(rows: LabelledFeatures[], hanziPerWord: number): Array<LabelledFeatures & { fl: number }> {
  return rows.map((r) => ({ ...r, fl: lengthFeature(r.enLength, r.zhLength, hanziPerWord) }));
}

/** Scores of rows under a calibration (the same C and fl the scorer computes). */
export function scoreRows(rows: LabelledFeatures[], v: Pick<CalibrationValues, 'weights' | 'hanziPerWord'>): Scored[] {
  return withFl(rows, v.hanziPerWord).map((r) => ({ level: r.level, c: combine(r, v.weights), fl: r.fl }));
}

const ratio = (a: number, b: number): number => (b ? a / b : NaN);

export function figures(rows: Scored[], lv: LevelConfig): Figures {
  const ev = evaluate(rows);
  let correct = 0;
  const n = { parPred: 0, parTrue: 0, par: 0, comPred: 0, comTrue: 0, comPlus: 0 };
  for (const r of rows) {
    const got = levelOf(r.c, r.fl, lv);
    if (got === r.level) correct++;
    if (r.level === 'pse') continue; // judged on par, com and inc
    if (r.level === 'par') n.par++;
    if (RANK[r.level] >= RANK.com) n.comPlus++;
    if (got === 'par') {
      n.parPred++;
      if (r.level === 'par') n.parTrue++;
    }
    if (RANK[got] >= RANK.com) {
      n.comPred++;
      if (RANK[r.level] >= RANK.com) n.comTrue++;
    }
  }
  const by = (l: Level) => rows.filter((r) => r.level === l).map((r) => r.c);
  return {
    aucParCom: auc(by('par'), by('com')),
    aucParInc: ev.aucParInc,
    aucComInc: ev.aucComInc,
    aucPseInc: ev.aucPseInc,
    pearsonPairs: ev.pearsonPairs,
    meanC: ev.meanC,
    levelAccuracy: ratio(correct, rows.length),
    parPrecision: ratio(n.parTrue, n.parPred),
    parRecall: ratio(n.parTrue, n.par),
    comOrBetterPrecision: ratio(n.comTrue, n.comPred),
    comOrBetterRecall: ratio(n.comTrue, n.comPlus),
    pairs: rows.length,
  };
}

/** One-sided 90 % lower confidence bound of a proportion (Wilson score interval). */
export function wilsonLower(successes: number, n: number, z = 1.2816): number {
  if (!n) return 0;
  const p = successes / n;
  const z2 = z * z;
  return (p + z2 / (2 * n) - z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
}

/**
 * The threshold with the highest recall whose precision is at least `target`, precision judged by its lower
 * confidence bound (wilsonLower) so that a threshold fitted on a few hundred pairs keeps its precision on pairs it
 * did not see. Positives and negatives are scores (−Infinity = can never pass). Null when no threshold qualifies.
 */
export function thresholdFor(pos: number[], neg: number[], target: number): { t: number; recall: number; precision: number } | null {
  const all = [...pos.map((c) => [c, 1] as const), ...neg.map((c) => [c, 0] as const)].filter(([c]) => c > -Infinity).sort((a, b) => b[0] - a[0]);
  let tp = 0;
  let fp = 0;
  let best: { t: number; recall: number; precision: number } | null = null;
  for (let i = 0; i < all.length; i++) {
    if (all[i]![1]) tp++;
    else fp++;
    if (i + 1 < all.length && all[i + 1]![0] === all[i]![0]) continue; // a threshold sits between distinct scores
    const precision = tp / (tp + fp);
    if (wilsonLower(tp, tp + fp) >= target && (!best || tp / pos.length > best.recall)) best = { t: all[i]![0], recall: tp / pos.length, precision };
  }
  return best;
}

/** The C that best separates positives from negatives (Youden's J = recall − false positive rate). */
function youden(pos: number[], neg: number[]): number | null {
  if (!pos.length || !neg.length) return null;
  const all = [...pos.map((c) => [c, 1] as const), ...neg.map((c) => [c, 0] as const)].sort((a, b) => b[0] - a[0]);
  let tp = 0;
  let fp = 0;
  let best = { j: -Infinity, t: all[0]![0] };
  for (let i = 0; i < all.length; i++) {
    if (all[i]![1]) tp++;
    else fp++;
    if (i + 1 < all.length && all[i + 1]![0] === all[i]![0]) continue;
    const j = tp / pos.length - fp / neg.length;
    if (j > best.j) best = { j, t: all[i]![0] };
  }
  return best.t;
}

function fitWeights(rows: Array<LabelledFeatures & { fl: number }>, start: Weights): Weights {
  const objective = (w: Weights): [number, number] => {
    const by = (l: Level) => rows.filter((r) => r.level === l).map((r) => combine(r, w));
    const [par, com, inc] = [by('par'), by('com'), by('inc')];
    const aucs = (com.length ? [auc(par, com), auc(com, inc)] : [auc(par, inc)]).filter((x) => Number.isFinite(x));
    const rated = rows.filter((r) => r.level !== 'pse');
    const p = pearson(rated.map((r) => LEVEL_RATING[r.level]), rated.map((r) => combine(r, w)));
    return [aucs.length ? aucs.reduce((a, b) => a + b, 0) / aucs.length : 0, Number.isFinite(p) ? p : 0];
  };
  let best = start;
  let bestScore = objective(best);
  const S = 20;
  for (let a = 0; a <= S; a++) {
    for (let b = 0; a + b <= S; b++) {
      for (let g = 0; a + b + g <= S; g++) {
        const w = { alpha: a / S, beta: b / S, gamma: g / S, delta: (S - a - b - g) / S };
        const s = objective(w);
        if (s[0] > bestScore[0] + 1e-9 || (Math.abs(s[0] - bestScore[0]) <= 1e-9 && s[1] > bestScore[1] + 1e-9)) {
          best = w;
          bestScore = s;
        }
      }
    }
  }
  return best;
}

export interface CalibrationResult {
  values: CalibrationValues;
  before: Figures;
  after: Figures;
}

export function calibrate(
  config: Config,
  rows: LabelledFeatures[],
  opts: { precision?: number; comPrecision?: number } = {},
): CalibrationResult {
  const cfg = config.comparability;
  const parTarget = opts.precision ?? 0.9;
  const comTarget = opts.comPrecision ?? 0.95;
  const before = figures(scoreRows(rows, cfg), cfg);

  const ratios = rows.filter((r) => r.level === 'par' && r.enLength > 0 && r.zhLength > 0).map((r) => r.zhLength / r.enLength).sort((a, b) => a - b);
  const hanziPerWord = ratios.length >= 5 ? round(ratios[Math.floor(ratios.length / 2)]!) : cfg.hanziPerWord;
  const feats = withFl(rows, hanziPerWord);
  const weights = fitWeights(feats, cfg.weights);
  const scored = feats.map((r) => ({ level: r.level, c: combine(r, weights), fl: r.fl }));
  const cOf = (pred: (r: Scored) => boolean, gate = 0) => scored.filter(pred).map((r) => (r.fl >= gate ? r.c : -Infinity));

  const thresholds: Thresholds = { ...cfg.thresholds };
  let parMinLengthRatio = cfg.parMinLengthRatio;
  let parBest: { t: number; recall: number; gate: number } | null = null;
  for (const gate of PAR_GATES) {
    const r = thresholdFor(cOf((x) => x.level === 'par', gate), cOf((x) => x.level === 'com' || x.level === 'inc', gate), parTarget);
    if (r && (!parBest || r.recall > parBest.recall + 1e-9)) parBest = { t: r.t, recall: r.recall, gate };
  }
  if (parBest) {
    thresholds.par = round(parBest.t);
    parMinLengthRatio = parBest.gate;
  }
  const com = thresholdFor(cOf((x) => x.level === 'par' || x.level === 'com'), cOf((x) => x.level === 'inc'), comTarget);
  if (com) thresholds.com = round(com.t);
  const pse = youden(cOf((x) => x.level === 'pse'), cOf((x) => x.level === 'inc'));
  if (pse !== null) thresholds.pse = round(pse);
  // keep the levels ordered whatever the data said
  thresholds.com = Math.min(thresholds.com, thresholds.par);
  thresholds.pse = Math.min(thresholds.pse, thresholds.com);

  const values: CalibrationValues = { weights, hanziPerWord, thresholds, parMinLengthRatio };
  return { values, before, after: figures(scored, values) };
}

/**
 * Splits labelled rows into a part to fit on and a held-out part: within each (level, corpus) stratum, in file
 * order, the rows are shuffled by a PRNG seeded with `seed` and the first round(n·fraction) are held out.
 */
export function splitHoldout<T extends { level?: Level; corpus?: string }>(rows: T[], fraction: number, seed: number): { fit: T[]; heldOut: T[] } {
  const strata = new Map<string, T[]>();
  for (const r of rows) {
    const k = `${r.level ?? ''}\u0000${r.corpus ?? ''}`;
    let list = strata.get(k);
    if (!list) strata.set(k, (list = []));
    list.push(r);
  }
  const rnd = mulberry32(seed);
  const fit: T[] = [];
  const heldOut: T[] = [];
  for (const k of [...strata.keys()].sort()) {
    const a = strata.get(k)!.slice();
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [a[i], a[j]] = [a[j]!, a[i]!];
    }
    const n = Math.round(a.length * fraction);
    heldOut.push(...a.slice(0, n));
    fit.push(...a.slice(n));
  }
  return { fit, heldOut };
}

const round = (x: number): number => Math.round(x * 10000) / 10000;
