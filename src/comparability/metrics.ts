// Evaluation figures shared by `calibrate` and the benchmark: ROC AUC (Mann–Whitney, ties counted half),
// Pearson correlation, level means.
import { LEVEL_RATING, type Level } from './levels.js';

export function auc(pos: number[], neg: number[]): number {
  if (!pos.length || !neg.length) return NaN;
  const all = [...pos.map((v) => [v, 1] as const), ...neg.map((v) => [v, 0] as const)].sort((a, b) => a[0] - b[0]);
  let rankSumPos = 0;
  for (let i = 0; i < all.length; ) {
    let j = i;
    while (j < all.length && all[j]![0] === all[i]![0]) j++;
    const avgRank = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) if (all[k]![1] === 1) rankSumPos += avgRank;
    i = j;
  }
  return (rankSumPos - (pos.length * (pos.length + 1)) / 2) / (pos.length * neg.length);
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
    pearsonPairs: pearson(rated.map((r) => LEVEL_RATING[r.level]), rated.map((r) => r.c)),
    pearsonLevelMeans: pearson(levelsPresent.map((l) => LEVEL_RATING[l]), levelsPresent.map((l) => meanC[l]!)),
  };
}
