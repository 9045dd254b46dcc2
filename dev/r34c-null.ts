// scratch (issue 34 round 3): com-vs-inc on the FIT two thirds only, candidates scored per fold (5 folds x 5 draws)
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer, readPairsFile, splitHoldout, stratifiedFolds, auc, type PairRow, type Level } from '../src/lib/comparability/index.js';
import { mulberry32 } from '../src/util/random.js';
const { config } = loadConfig({ env: {} });
const rows = (await readPairsFile('/work/shared/data/comparability/pairs.tsv', { requireLevel: true })) as Array<PairRow & { level: Level }>;
const split = splitHoldout(rows, 1 / 3, 15);
const scorer = createScorer(config, {});
addCaptionsToIdf(scorer, rows);
const w = config.comparability.weights;
const C = (f: { fc: number; fcov: number; fe: number; fl: number; fs: number }) => w.alpha * f.fc + w.beta * f.fe + w.gamma * f.fl + w.delta * f.fcov;
const R = Number(process.env.R ?? 100);
const K = Number(process.env.K ?? 10);
const enBank = [...new Set(rows.map((r) => r.en))];
const zhBank = [...new Set(rows.map((r) => r.zh))];
const rnd = mulberry32(34);
const sample = (bank: string[], n: number) => Array.from({ length: n }, () => bank[Math.floor(rnd() * bank.length)]!);
const nullEn = new Map<string, number[]>();
const nullZh = new Map<string, number[]>();
const list = split.fit.filter((r) => (r.corpus === 'flickr8k-cn' || r.corpus === 'coco-cn') && (r.level === 'com' || r.level === 'inc'));
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => b - a);
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / xs.length);
  const top = s.slice(0, K).reduce((a, b) => a + b, 0) / K;
  const pos = xs.filter((x) => x > 0).length / xs.length;
  return { m, sd, top, pos };
};
const feats = list.map((r) => {
  const f = scorer.features(r.en, r.zh);
  if (!nullEn.has(r.en)) nullEn.set(r.en, sample(zhBank, R).map((z) => C(scorer.features(r.en, z))));
  if (!nullZh.has(r.zh)) nullZh.set(r.zh, sample(enBank, R).map((e) => C(scorer.features(e, r.zh))));
  const a = stats(nullEn.get(r.en)!);
  const b = stats(nullZh.get(r.zh)!);
  const c = C(f);
  const pE = nullEn.get(r.en)!.filter((x) => x >= c).length / R;
  const pZ = nullZh.get(r.zh)!.filter((x) => x >= c).length / R;
  const ts = scorer.termStats;
  const ea = [...new Set(scorer.analyzer.english(r.en).tokens)];
  const za = [...new Set(scorer.analyzer.chinese(r.zh).tokens)];
  const g = (toks: string[], lang: 'en' | 'zh') => (toks.length ? toks.reduce((s2, t) => s2 + ts.chance(lang, t), 0) / toks.length : 1);
  const gE = g(ea, 'en');
  const gZ = g(za, 'zh');
  const sumE = ea.reduce((s2, t) => s2 + ts.chance('en', t), 0);
  const sumZ = za.reduce((s2, t) => s2 + ts.chance('zh', t), 0);
  return {
    r,
    cand: {
      'C / g mean': c / ((gE + gZ) / 2),
      'C / sqrt g': c / Math.sqrt(gE * gZ),
      'C / sum q': c / ((sumE + sumZ) / 2),
      'C / (0.05+g)': c / (0.05 + (gE + gZ) / 2),
      C: c,
      'C - mean': c - (a.m + b.m) / 2,
      'C / mean': c / (1e-3 + (a.m + b.m) / 2),
      'CSLS top-k': 2 * c - a.top - b.top,
      'ratio top-k': c / (1e-3 + (a.top + b.top) / 2),
      'z mean': (c - a.m) / (a.sd + 1e-3) + (c - b.m) / (b.sd + 1e-3),
      'emp p': -Math.log((pE * R + 1) / (R + 1)) - Math.log((pZ * R + 1) / (R + 1)),
      'C - 0.5 mean': c - 0.25 * (a.m + b.m),
    } as Record<string, number>,
  };
});
const r3 = (x: number) => x.toFixed(3);
for (const corpus of ['flickr8k-cn', 'coco-cn']) {
  const L = feats.filter((x) => x.r.corpus === corpus);
  const names = Object.keys(L[0]!.cand);
  const res: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let rep = 0; rep < 5; rep++) {
    const fold = stratifiedFolds(L.map((x) => x.r), 5, 15 + rep);
    for (let k = 0; k < 5; k++) {
      for (const n of names) {
        const sel = L.filter((_, i) => fold[i] === k);
        res[n]!.push(auc(sel.filter((x) => x.r.level === 'com').map((x) => x.cand[n]!), sel.filter((x) => x.r.level === 'inc').map((x) => x.cand[n]!)));
      }
    }
  }
  console.log(`--- ${corpus} (${L.filter((x) => x.r.level === 'com').length} com, ${L.filter((x) => x.r.level === 'inc').length} inc), R ${R} K ${K}`);
  for (const n of names) {
    const all = auc(L.filter((x) => x.r.level === 'com').map((x) => x.cand[n]!), L.filter((x) => x.r.level === 'inc').map((x) => x.cand[n]!));
    const d = res[n]!.map((v, i) => v - res.C![i]!);
    const md = d.reduce((a, b) => a + b, 0) / d.length;
    const sd = Math.sqrt(d.reduce((a, b) => a + (b - md) ** 2, 0) / d.length);
    console.log(`${n.padEnd(14)} fit ${r3(all)}  folds mean ${r3(res[n]!.reduce((a, b) => a + b, 0) / 25)}  delta ${r3(md)} ± ${r3(sd)}  better in ${d.filter((x) => x > 1e-9).length}/25, worse in ${d.filter((x) => x < -1e-9).length}`);
  }
}
