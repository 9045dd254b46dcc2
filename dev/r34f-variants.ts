// scratch (issue 34 round 5): post-hoc factors on the shipped C (margin included), com-vs-inc AUC on the FIT two thirds
// only, per corpus, per fold (5 folds x 5 draws), deltas against the shipped C.
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer, readPairsFile, splitHoldout, stratifiedFolds, auc, type PairRow, type Level } from '../src/lib/comparability/index.js';
const { config } = loadConfig({ env: {} });
const rows = (await readPairsFile('/work/shared/data/comparability/pairs.tsv', { requireLevel: true })) as Array<PairRow & { level: Level }>;
const part = process.env.PART === 'holdout' ? 'holdout' : 'fit';
const split = splitHoldout(rows, 1 / 3, 15) as unknown as Record<string, Array<PairRow & { level: Level }>>;
const fit = split[part]!.filter((r) => (r.level === 'com' || r.level === 'inc') && r.corpus !== 'xtd10');
const scorer = createScorer(config, {});
addCaptionsToIdf(scorer, rows);
const lex = scorer.lexicon;
const res = fit.map((r) => scorer.score(r.en, r.zh));
if (process.env.SHOW) for (let i = 0; i < 8; i++) console.log(fit[i]!.level, fit[i]!.en, fit[i]!.zh, res[i]!.c.toFixed(3), JSON.stringify(res[i]!.explain.matches), res[i]!.explain.enTokens.join(' '));
const zhForN = (l: string) => lex.zhFor(l).length;
type R = (typeof res)[number];
const strong = (r: R, t: number) => new Set(r.explain.matches.filter((m) => m.weight >= t).map((m) => m.en)).size;
const spec = (r: R, k: number) => {
  const ms = r.explain.matches;
  if (!ms.length) return 1;
  let s = 0, w = 0;
  for (const m of ms) { s += m.weight / (1 + k * Math.log(1 + zhForN(m.en))); w += m.weight; }
  return s / w;
};
const variants: Record<string, (r: R, i: number) => number> = {
  shipped: (r) => r.c,
};
const rel = (r: R, f: number) => { const ms = r.explain.matches; const mx = Math.max(0, ...ms.map((m) => m.weight)); return new Set(ms.filter((m) => m.weight >= f * mx).map((m) => m.en)).size; };
for (const f of [0.25, 0.5]) for (const lam of [0.1, 0.2]) {
  variants[`oneRel f${f} l${lam}`] = (r) => r.c * (rel(r, f) < 2 ? 1 - lam : 1);
  variants[`oneRelShort f${f} l${lam}`] = (r) => r.c * (rel(r, f) < 2 && r.explain.enTokens.length <= 6 ? 1 - lam : 1);
}
const specZ = (r: R, k: number) => { const ms = r.explain.matches; if (!ms.length) return 1; let s = 0, w = 0; for (const m of ms) { s += m.weight / (1 + k * Math.log(1 + (lex.senses(m.zh)?.length ?? 1))); w += m.weight; } return s / w; };
for (const k of [0.05, 0.1, 0.15, 0.2]) variants[`spec k${k}`] = (r) => r.c * spec(r, k);
for (const k of [0.05, 0.1, 0.2, 0.4]) variants[`specZh k${k}`] = (r) => r.c * specZ(r, k);
for (const k of [0.1]) variants[`specBoth k${k}`] = (r) => r.c * spec(r, k) * specZ(r, k);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs: number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));
const scores = Object.fromEntries(Object.entries(variants).map(([n, f]) => [n, res.map(f)]));
for (const corpus of ['flickr8k-cn', 'coco-cn']) {
  const idx = fit.map((r, i) => [r, i] as const).filter(([r]) => r.corpus === corpus).map(([, i]) => i);
  const aucOf = (s: number[], sel: number[]) => auc(sel.filter((i) => fit[i]!.level === 'com').map((i) => s[i]!), sel.filter((i) => fit[i]!.level === 'inc').map((i) => s[i]!));
  for (const name of Object.keys(variants)) {
    const s = scores[name]!;
    const d: number[] = [];
    for (let rep = 0; rep < 5; rep++) {
      const fold = stratifiedFolds(idx.map((i) => fit[i]!), 5, 15 + rep);
      for (let k = 0; k < 5; k++) { const sel = idx.filter((_, j) => fold[j] === k); d.push(aucOf(s, sel) - aucOf(scores.shipped!, sel)); }
    }
    const thr = config.comparability.thresholds.com;
    const inc = idx.filter((i) => fit[i]!.level === 'inc' && s[i]! >= thr).length, com = idx.filter((i) => fit[i]!.level === 'com' && s[i]! >= thr).length;
    console.log(`${part} ${corpus} ${name.padEnd(22)} auc ${aucOf(s, idx).toFixed(4)} delta ${mean(d).toFixed(4)} ± ${sd(d).toFixed(4)} better ${d.filter((x) => x > 1e-9).length}/25 worse ${d.filter((x) => x < -1e-9).length}  C>=com: com ${com} inc ${inc}`);
  }
}
{
  const all = split.fit!.filter((r) => r.corpus !== 'xtd10');
  const vals = all.map((r) => { const x = scorer.score(r.en, r.zh); return spec(x, 0.1) * specZ(x, 0.1); }).sort((a, b) => a - b);
  const s0 = vals[Math.floor(vals.length / 2)]!;
  console.log('median specBoth fit', s0.toFixed(4), 'q25', vals[Math.floor(vals.length / 4)]!.toFixed(4), 'q75', vals[Math.floor(vals.length * 3 / 4)]!.toFixed(4));
  for (const corpus of ['flickr8k-cn', 'coco-cn']) {
    const idx = fit.map((r, i) => [r, i] as const).filter(([r]) => r.corpus === corpus).map(([, i]) => i);
    const thr = config.comparability.thresholds.com;
    const s = res.map((r) => Math.min(1, r.c * spec(r, 0.1) * specZ(r, 0.1) / s0));
    console.log(corpus, 'normalised: com', idx.filter((i) => fit[i]!.level === 'com' && s[i]! >= thr).length, 'inc', idx.filter((i) => fit[i]!.level === 'inc' && s[i]! >= thr).length);
  }
}
