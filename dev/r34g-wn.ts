// scratch (issue 34 round 6): variants of the specificity factor's word measure, post hoc on C without the factor:
// com-vs-inc AUC per corpus on the FIT two thirds (5 folds x 5 draws, deltas against the shipped measure), ϑ_com as
// calibrate's rule gives it on the fit part for each variant, and mining-flickr8k's true pairs at com or better in the
// kept eval bank (BANK) with that ϑ_com and the bank's own typical value.
import { Bank } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, auc, createScorer, readPairsFile, splitHoldout, stratifiedFolds, type Scorer } from '../src/lib/comparability/index.js';
import { miningSet } from './r34g-mining.js';
const { config } = loadConfig({ env: {} });
const rows = await readPairsFile('/work/shared/data/comparability/pairs.tsv', { requireLevel: true });
const { fit, heldOut } = splitHoldout(rows, 1 / 3, 15);
const sc = createScorer(config, { measure: { specificity: 0 } });
addCaptionsToIdf(sc, [...fit, ...heldOut]);
type L = { en: string; zh: string; weight: number };
const lex = sc.lexicon;
const word = (k: number, n: number) => 1 / (1 + k * Math.log(1 + n));
const variants: Record<string, (l: L) => number> = {
  shipped: (l) => word(0.1, lex.zhFor(l.en).length) * word(0.1, lex.senses(l.zh)?.length ?? 1),
  wnEn: (l) => word(0.1, lex.synsets(l.en)?.length ?? 1) * word(0.1, lex.senses(l.zh)?.length ?? 1),
  wnEnK2: (l) => word(0.2, lex.synsets(l.en)?.length ?? 1) * word(0.1, lex.senses(l.zh)?.length ?? 1),
  zhOnly: (l) => word(0.1, lex.senses(l.zh)?.length ?? 1),
  zhOnlyK2: (l) => word(0.2, lex.senses(l.zh)?.length ?? 1),
  k05: (l) => word(0.05, lex.zhFor(l.en).length) * word(0.05, lex.senses(l.zh)?.length ?? 1),
  enHalf: (l) => word(0.05, lex.zhFor(l.en).length) * word(0.1, lex.senses(l.zh)?.length ?? 1),
};
const raw = (f: (l: L) => number, links: L[]) => { let s = 0, w = 0; for (const l of links) { s += l.weight * f(l); w += l.weight; } return w > 0 ? s / w : null; };
const med = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]!; };
const typicalOf = (s: Scorer, f: (l: L) => number) => med(s.nullMargin.chanceLinks().map((l) => raw(f, l as L[])).filter((x): x is number => x !== null));
function wilsonLower(k: number, n: number, z = 1.2816) { if (!n) return 0; const p = k / n, z2 = z * z; return (p + z2 / (2 * n) - z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n); }
function thresholdFor(pos: number[], neg: number[], target: number) {
  const all = [...pos.map((c) => [c, 1] as const), ...neg.map((c) => [c, 0] as const)].sort((a, b) => b[0] - a[0]);
  let tp = 0, fp = 0, best: { t: number; recall: number } | null = null;
  for (let i = 0; i < all.length; i++) { if (all[i]![1]) tp++; else fp++; if (i + 1 < all.length && all[i + 1]![0] === all[i]![0]) continue; if (wilsonLower(tp, tp + fp) >= target && (!best || tp / pos.length > best.recall)) best = { t: all[i]![0], recall: tp / pos.length }; }
  return best;
}
const scored = fit.map((r) => ({ r, s: sc.score(r.en, r.zh) }));
// mining: the kept eval bank, its own sample and IDF
const bank = await Bank.open(process.env.BANK ?? '/tmp/r34g-bank');
const msc = await createScorer(config, { bank, dataDir: bank.dataDir, measure: { specificity: 0 } });
const { pairs } = await miningSet();
const mres = pairs.map((p) => msc.score(p.en, p.zh));
const comMin = config.comparability.comMinSignificance;
const base: Record<string, number[]> = {};
for (const [name, f] of Object.entries(variants)) {
  const tL = typicalOf(sc, f);
  const cv = scored.map(({ s }) => Math.min(1, s.c * (raw(f, s.explain.matches) ?? tL) / tL));
  base[name] = cv;
  const lv = (i: number) => scored[i]!.r.level;
  const th = thresholdFor(cv.filter((_, i) => lv(i) === 'par' || lv(i) === 'com'), cv.filter((_, i) => lv(i) === 'inc'), 0.95)!;
  const out: string[] = [];
  for (const corpus of ['flickr8k-cn', 'coco-cn']) {
    const idx = scored.map((_, i) => i).filter((i) => scored[i]!.r.corpus === corpus && (lv(i) === 'com' || lv(i) === 'inc'));
    const a = (c: number[], sel: number[]) => auc(sel.filter((i) => lv(i) === 'com').map((i) => c[i]!), sel.filter((i) => lv(i) === 'inc').map((i) => c[i]!));
    const d: number[] = [];
    for (let rep = 0; rep < 5; rep++) { const fold = stratifiedFolds(idx.map((i) => scored[i]!.r), 5, 15 + rep); for (let k = 0; k < 5; k++) { const sel = idx.filter((_, j) => fold[j] === k); d.push(a(cv, sel) - a(base.shipped!, sel)); } }
    const mean = d.reduce((x, y) => x + y, 0) / d.length;
    out.push(`${corpus} auc ${a(cv, idx).toFixed(4)} Δ ${mean.toFixed(4)} better ${d.filter((x) => x > 1e-9).length} worse ${d.filter((x) => x < -1e-9).length}`);
  }
  const tM = typicalOf(msc, f);
  const mining = mres.filter((s) => Math.min(1, s.c * (raw(f, s.explain.matches) ?? tM) / tM) >= th.t && s.explain.chance.sStrong >= comMin || s.level === 'par').length;
  console.log(`${name.padEnd(9)} tL ${tL.toFixed(4)} tM ${tM.toFixed(4)} ϑcom ${th.t.toFixed(4)} (fit recall ${th.recall.toFixed(3)}) | ${out.join(' | ')} | mining com+ ${mining}/180`);
}
await bank.close();
