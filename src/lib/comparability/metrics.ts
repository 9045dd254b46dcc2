// Evaluation figures shared by `calibrate` and the benchmark: ROC AUC (Mann–Whitney, ties counted half),
// Pearson correlation, level means.
import { LEVEL_RANK, type Level } from './levels.js';

export function auc(pos: ArrayLike<number>, neg: ArrayLike<number>): number {
  if (!pos.length || !neg.length) return NaN;
  // both sides sorted (native numeric sort), then each positive counts the negatives below it and half those equal
  const p = Float64Array.from(pos).sort();
  const n = Float64Array.from(neg).sort();
  let below = 0;
  let upTo = 0;
  let sum = 0;
  for (let i = 0; i < p.length; i++) {
    const v = p[i]!;
    while (below < n.length && n[below]! < v) below++;
    if (upTo < below) upTo = below;
    while (upTo < n.length && n[upTo]! <= v) upTo++;
    sum += below + (upTo - below) / 2;
  }
  return sum / (p.length * n.length);
}

export function pearson(x: number[], y: number[]): number {
  const n = x.length;
  if (n < 2) return NaN;
  const mx = x.reduce((a, b) => a + b, 0) / n;
  const my = y.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = x[i]! - mx;
    const dy = y[i]! - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return sxx && syy ? sxy / Math.sqrt(sxx * syy) : NaN;
}

export const mean = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

export interface LabelledScore {
  level: Level;
  c: number;
  corpus?: string;
}

/** AUCs, level means and correlations of scores against labels (par 3, com 2, inc 0; pse kept out of the correlations). */
export function evaluate(rows: LabelledScore[]): {
  meanC: Partial<Record<Level, number>>;
  aucParInc: number;
  aucComInc: number;
  aucPseInc: number;
  pearsonPairs: number;
  pearsonLevelMeans: number;
} {
  const by = (l: Level) => rows.filter((r) => r.level === l).map((r) => r.c);
  const meanC: Partial<Record<Level, number>> = {};
  for (const l of ['par', 'com', 'pse', 'inc'] as Level[]) {
    const v = by(l);
    if (v.length) meanC[l] = mean(v);
  }
  const rated = rows.filter((r) => r.level !== 'pse');
  const levelsPresent = (['par', 'com', 'inc'] as Level[]).filter((l) => meanC[l] !== undefined);
  return {
    meanC,
    aucParInc: auc(by('par'), by('inc')),
    aucComInc: auc(by('com'), by('inc')),
    aucPseInc: auc(by('pse'), by('inc')),
    pearsonPairs: pearson(rated.map((r) => LEVEL_RANK[r.level]), rated.map((r) => r.c)),
    pearsonLevelMeans: pearson(levelsPresent.map((l) => LEVEL_RANK[l]), levelsPresent.map((l) => meanC[l]!)),
  };
}
