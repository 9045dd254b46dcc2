// Calibration on labelled pairs: hanzi per English word from the par pairs, the weights (α, β, γ; sum 1) that
// maximise the mean ROC AUC of par-vs-inc and com-vs-inc (ties broken by the Pearson correlation of C with the
// level ratings), then the level thresholds ϑ = C̄_level − a·ε with C̄_level the level means under the new
// weights, ε the pooled within-level standard deviation, and a the value that emits the most pairs at or above
// the export level while their precision stays at or above the target.
import type { Config } from '../config/schema.js';
import { evaluate, mean } from './metrics.js';
import { lengthFeature } from './measure.js';
import { LEVELS, levelOf, thresholds, type Level, type LevelConfig } from './levels.js';

export interface LabelledFeatures {
  level: Level;
  fc: number;
  fe: number;
  fl: number;
  /** Length units, for hanziPerWord: English words and Chinese characters. */
  enLength: number;
  zhLength: number;
}

export interface Figures {
  aucParInc: number;
  aucComInc: number;
  aucPseInc: number;
  pearsonPairs: number;
  pearsonLevelMeans: number;
  meanC: Partial<Record<Level, number>>;
  /** Share of pairs given their own level. */
  levelAccuracy: number;
  /** Of the pairs emitted (level ≥ minLevel): the share truly ≥ minLevel; and the share of those found. */
  emittedPrecision: number;
  emittedRecall: number;
}

type Weights = Config['comparability']['weights'];

const RANK: Record<Level, number> = { par: 3, com: 2, pse: 1, inc: 0 };

export function figures(rows: Array<{ level: Level; c: number }>, lv: LevelConfig, minLevel: Level): Figures {
  const ev = evaluate(rows);
  const t = thresholds(lv);
  let correct = 0;
  let emitted = 0;
  let emittedGood = 0;
  let good = 0;
  for (const r of rows) {
    const got = levelOf(r.c, t);
    if (got === r.level) correct++;
    const isGood = RANK[r.level] >= RANK[minLevel];
    if (isGood) good++;
    if (RANK[got] >= RANK[minLevel]) {
      emitted++;
      if (isGood) emittedGood++;
    }
  }
  return {
    ...ev,
    levelAccuracy: rows.length ? correct / rows.length : NaN,
    emittedPrecision: emitted ? emittedGood / emitted : NaN,
    emittedRecall: good ? emittedGood / good : NaN,
  };
}

const combine = (r: LabelledFeatures, w: Weights): number => w.alpha * r.fc + w.beta * r.fe + w.gamma * r.fl;

function objective(rows: LabelledFeatures[], w: Weights): [number, number] {
  const ev = evaluate(rows.map((r) => ({ level: r.level, c: combine(r, w) })));
  const aucs = [ev.aucParInc, ev.aucComInc].filter((x) => Number.isFinite(x));
  return [aucs.length ? mean(aucs) : 0, Number.isFinite(ev.pearsonPairs) ? ev.pearsonPairs : 0];
}

export interface CalibrationResult {
  patch: { comparability: Pick<Config['comparability'], 'weights' | 'hanziPerWord' | 'levels' | 'a' | 'epsilon'> };
  before: Figures;
  after: Figures;
}

export function calibrate(
  config: Config,
  rows: LabelledFeatures[],
  opts: { precision?: number; minLevel?: Level } = {},
): CalibrationResult {
  const cfg = config.comparability;
  const minLevel = opts.minLevel ?? config.export.minLevel;
  const target = opts.precision ?? 0.9;
  const before = figures(rows.map((r) => ({ level: r.level, c: combine(r, cfg.weights) })), cfg, minLevel);

  // Hanzi per English word: the median ratio over the par pairs (robust to odd captions).
  const ratios = rows.filter((r) => r.level === 'par' && r.enLength > 0 && r.zhLength > 0).map((r) => r.zhLength / r.enLength).sort((a, b) => a - b);
  const hanziPerWord = ratios.length >= 5 ? Math.round(ratios[Math.floor(ratios.length / 2)]! * 1000) / 1000 : cfg.hanziPerWord;
  const feats = rows.map((r) => ({ ...r, fl: lengthFeature(r.enLength, r.zhLength, hanziPerWord) }));

  let best: Weights = cfg.weights;
  let bestScore = objective(feats, best);
  for (let a = 0; a <= 20; a++) {
    for (let b = 0; a + b <= 20; b++) {
      const w = { alpha: a / 20, beta: b / 20, gamma: (20 - a - b) / 20 };
      const s = objective(feats, w);
      if (s[0] > bestScore[0] + 1e-9 || (Math.abs(s[0] - bestScore[0]) <= 1e-9 && s[1] > bestScore[1])) {
        best = w;
        bestScore = s;
      }
    }
  }

  const scored = feats.map((r) => ({ level: r.level, c: combine(r, best) }));
  const byLevel = (l: Level) => scored.filter((r) => r.level === l).map((r) => r.c);
  const levels = { ...cfg.levels };
  for (const l of ['par', 'com', 'pse'] as const) {
    const v = byLevel(l);
    if (v.length) levels[l] = round(mean(v));
  }
  let ss = 0;
  let n = 0;
  for (const l of LEVELS) {
    const v = byLevel(l);
    const m = mean(v);
    for (const x of v) ss += (x - m) ** 2;
    n += v.length;
  }
  const epsilon = round(n > LEVELS.length ? Math.sqrt(ss / (n - LEVELS.length)) : cfg.epsilon);
  let chosen = { a: 0, recall: -1, precision: -1 };
  // a < 0 raises the thresholds above the level means (when the levels overlap and precision needs it).
  for (let k = -60; k <= 60; k++) {
    const a = k * 0.05;
    const f = figures(scored, { levels, a, epsilon }, minLevel);
    const p = Number.isFinite(f.emittedPrecision) ? f.emittedPrecision : 0;
    const r = Number.isFinite(f.emittedRecall) ? f.emittedRecall : 0;
    const meets = p >= target;
    const chosenMeets = chosen.precision >= target;
    if ((meets && (!chosenMeets || r > chosen.recall)) || (!meets && !chosenMeets && p > chosen.precision)) chosen = { a: round(a), recall: r, precision: p };
  }
  const lv = { levels, a: chosen.a, epsilon };
  const after = figures(scored, lv, minLevel);
  return { patch: { comparability: { weights: best, hanziPerWord, ...lv } }, before, after };
}

const round = (x: number): number => Math.round(x * 10000) / 10000;
