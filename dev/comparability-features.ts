// The feature study of issue 15 (session 3), reproducible: candidate features of the C-measure measured on the FIT two
// thirds of the comparability file only (splitHoldout seed 15; the held-out third is never scored here), by 5-fold
// cross-validation (stratifiedFolds, seed 15): AUC par-vs-com over the fit part and its range over the folds, and par
// precision / recall when ϑ is set in the 4 training folds at recall 0.72 with the length gate fl >= 0.7, pooled over
// the held-out folds. Run: npx tsx dev/comparability-features.ts  (bench/RESULTS.md, issue 15, has its output).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer } from '../src/lib/comparability/index.js';
import { readPairsFile, type PairRow } from '../src/lib/comparability/index.js';
import { splitHoldout, stratifiedFolds } from '../src/lib/comparability/index.js';
import { ConceptSpace, DEFAULT_MEASURE, contentSimilarity } from '../src/lib/comparability/index.js';
import { auc } from '../src/lib/comparability/index.js';
import type { Level } from '../src/lib/comparability/index.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const file = path.join(process.env.CAPBRIDGE_SHARED_DATA ?? path.resolve(repoRoot, '..', 'shared', 'data'), 'comparability', 'pairs.tsv');
const { config } = loadConfig({ env: {} });
const rows = (await readPairsFile(file, { requireLevel: true })) as Array<PairRow & { level: Level }>;
const fit = splitHoldout(rows, 1 / 3, 15).fit.filter((r) => r.level !== 'pse');
const scorer = createScorer(config, {});
addCaptionsToIdf(scorer, rows); // IDF needs no labels (as calibrate does)
const space = new ConceptSpace(scorer.lexicon, DEFAULT_MEASURE);
const idf = scorer.termStats;

const feats = fit.map((r) => {
  const a = scorer.analyzer.english(r.en);
  const b = scorer.analyzer.chinese(r.zh);
  const f = scorer.features(r.en, r.zh);
  const { links } = contentSimilarity(space, a, b, idf, true);
  const simE = new Map<string, number>();
  const simZ = new Map<string, number>();
  for (const l of links) {
    simE.set(l.en, Math.max(simE.get(l.en) ?? 0, l.sim));
    simZ.set(l.zh, Math.max(simZ.get(l.zh) ?? 0, l.sim));
  }
  const cov = (toks: string[], m: Map<string, number>, lang: 'en' | 'zh', weight: (t: string) => number, sim: (s: number) => number) => {
    let t = 0;
    let g = 0;
    for (const x of toks) {
      const w = weight(x);
      t += w;
      g += w * sim(m.get(x) ?? 0);
    }
    return t ? g / t : 0;
  };
  const one = () => 1;
  const covE = cov(a.tokens, simE, 'en', one, (s) => s);
  const covZ = cov(b.tokens, simZ, 'zh', one, (s) => s);
  const covEi = cov(a.tokens, simE, 'en', (t) => idf.idf('en', t), (s) => s);
  const covZi = cov(b.tokens, simZ, 'zh', (t) => idf.idf('zh', t), (s) => s);
  const strict = Math.min(cov(a.tokens, simE, 'en', one, (s) => (s >= 0.85 ? 1 : 0)), cov(b.tokens, simZ, 'zh', one, (s) => (s >= 0.85 ? 1 : 0)));
  // order: Kendall tau of the links by first position on each side
  const L = links.map((l) => [a.tokens.indexOf(l.en), b.tokens.indexOf(l.zh)] as const);
  let conc = 0;
  let disc = 0;
  for (let i = 0; i < L.length; i++)
    for (let j = i + 1; j < L.length; j++) {
      const s = Math.sign(L[i]![0] - L[j]![0]) * Math.sign(L[i]![1] - L[j]![1]);
      if (s > 0) conc++;
      else if (s < 0) disc++;
    }
  const tau = conc + disc ? (conc - disc) / (conc + disc) : 0;
  const nums = (t: string[]) => [...new Set(t.filter((x) => x.startsWith('#')))].sort().join();
  const numMismatch = nums(a.tokens) !== nums(b.tokens) ? 1 : 0;
  const C = 0.2 * f.fc + 0.8 * f.fcov;
  return {
    level: r.level,
    corpus: r.corpus,
    fl: f.fl,
    cand: {
      'shipped C = 0.2 fc + 0.8 fcov': C,
      fc: f.fc,
      'fcov (lower side)': f.fcov,
      'coverage EN side': covE,
      'coverage ZH side': covZ,
      'coverage harmonic mean': covE + covZ ? (2 * covE * covZ) / (covE + covZ) : 0,
      'coverage product': covE * covZ,
      'IDF-weighted coverage, lower side': Math.min(covEi, covZi),
      'strict coverage (sim >= 0.85)': strict,
      'order (Kendall tau)': tau,
      'C + 0.05 tau': C + 0.05 * tau,
      'C + 0.1 tau': C + 0.1 * tau,
      'C - 0.1 number mismatch': C - 0.1 * numMismatch,
    } as Record<string, number>,
  };
});

const fold = stratifiedFolds(feats, 5, 15);
const r3 = (x: number) => x.toFixed(3);
for (const name of Object.keys(feats[0]!.cand)) {
  const s = feats.map((f) => f.cand[name]!);
  const aucOf = (k: number | null) => {
    const pick = (l: Level) => s.filter((_, i) => feats[i]!.level === l && (k === null || fold[i] === k));
    return auc(pick('par'), pick('com'));
  };
  const folds = [0, 1, 2, 3, 4].map(aucOf);
  let tp = 0;
  let fp = 0;
  let pars = 0;
  for (let k = 0; k < 5; k++) {
    const train = feats.map((_, i) => i).filter((i) => fold[i] !== k);
    const nPar = train.filter((i) => feats[i]!.level === 'par').length;
    const above = train.filter((i) => feats[i]!.level === 'par' && feats[i]!.fl >= 0.7).map((i) => s[i]!).sort((x, y) => y - x);
    const t = above[Math.ceil(0.72 * nPar) - 1] ?? Infinity;
    for (let i = 0; i < feats.length; i++) {
      if (fold[i] !== k) continue;
      if (feats[i]!.level === 'par') pars++;
      if (feats[i]!.fl >= 0.7 && s[i]! >= t) feats[i]!.level === 'par' ? tp++ : fp++;
    }
  }
  console.log(`${name.padEnd(36)} AUC par-vs-com ${r3(aucOf(null))} (folds ${r3(Math.min(...folds))}–${r3(Math.max(...folds))})  CV par precision ${r3(tp / (tp + fp))} recall ${r3(tp / pars)}`);
}
