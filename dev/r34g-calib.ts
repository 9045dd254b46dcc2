// scratch (issue 34 round 6): what `capbridge calibrate --pairs pairs.tsv --holdout 0.3333333 --seed 15` fits (the
// weights, thresholds, par rule) with the scorer as it now is, on the FIT two thirds only (the held-out third is not
// scored here). FIXED=t: the specificity factor's typical value fixed at t (round 5's way) instead of the bank's.
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, calibrate, createScorer, readPairsFile, splitHoldout } from '../src/lib/comparability/index.js';
const { config } = loadConfig({ env: {} });
const rows = await readPairsFile('/work/shared/data/comparability/pairs.tsv', { requireLevel: true });
const { fit, heldOut } = splitHoldout(rows, 1 / 3, 15);
const measure = process.env.FIXED ? { specificityTypical: Number(process.env.FIXED) } : {};
const scorer = createScorer(config, { measure });
if (process.env.FIXED) (scorer.nullMargin as any).indexReferences = undefined;
addCaptionsToIdf(scorer, [...fit, ...heldOut]);
const t0 = performance.now();
const feats = fit.map((r) => ({ level: r.level!, corpus: r.corpus, ...scorer.features(r.en, r.zh) }));
console.error('features', ((performance.now() - t0) / 1000).toFixed(1), 's; typical', scorer.score('A dog.', '狗。').explain.margin.specificityTypical);
const res = calibrate(config, feats, { precision: 0.9, comPrecision: 0.95, cvFolds: 5, cvRepeats: 5, cvSeed: 15, cvMarginSd: 2 });
console.log(JSON.stringify({ values: res.values, after: { comOrBetterPrecision: res.after.comOrBetterPrecision, comOrBetterRecall: res.after.comOrBetterRecall, aucComInc: res.after.aucComInc, parPrecision: res.after.parPrecision, parRecall: res.after.parRecall } }));
// the thresholds calibrate's rules give with the SHIPPED weights (ϑ_com: highest recall of com-or-better against inc
// at 0.95 precision, 90 % lower bound; ϑ_pse: Youden's J of pse against inc), fit part only
{
  const { scoreRows } = await import('../src/lib/comparability/index.js');
  const cfg = config.comparability;
  const s = scoreRows(feats, { weights: cfg.weights, hanziPerWord: cfg.hanziPerWord, parWeights: cfg.parWeights });
  const wl = (k: number, n: number, z = 1.2816) => { if (!n) return 0; const p = k / n, z2 = z * z; return (p + z2 / (2 * n) - z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n); };
  const sorted = (pos: number[], neg: number[]) => [...pos.map((c) => [c, 1] as const), ...neg.map((c) => [c, 0] as const)].sort((a, b) => b[0] - a[0]);
  const thFor = (pos: number[], neg: number[], target: number) => { const all = sorted(pos, neg); let tp = 0, fp = 0, best: any = null; for (let i = 0; i < all.length; i++) { if (all[i]![1]) tp++; else fp++; if (i + 1 < all.length && all[i + 1]![0] === all[i]![0]) continue; if (wl(tp, tp + fp) >= target && (!best || tp / pos.length > best.recall)) best = { t: all[i]![0], recall: tp / pos.length, precision: tp / (tp + fp) }; } return best; };
  const youden = (pos: number[], neg: number[]) => { const all = sorted(pos, neg); let tp = 0, fp = 0, best = { j: -Infinity, t: all[0]![0] }; for (let i = 0; i < all.length; i++) { if (all[i]![1]) tp++; else fp++; if (i + 1 < all.length && all[i + 1]![0] === all[i]![0]) continue; const j = tp / pos.length - fp / neg.length; if (j > best.j) best = { j, t: all[i]![0] }; } return best.t; };
  const c = (pred: (l: string) => boolean) => s.filter((x) => pred(x.level)).map((x) => x.c);
  const com = thFor(c((l) => l === 'par' || l === 'com'), c((l) => l === 'inc'), 0.95);
  const pse = youden(c((l) => l === 'pse'), c((l) => l === 'inc'));
  console.log(JSON.stringify({ shippedWeights: cfg.weights, com, pse, round4: Math.round(com.t * 1e4) / 1e4, pse4: Math.round(Math.min(pse, com.t) * 1e4) / 1e4 }));
}
