// scratch (issue 34 round 3): measure variants of the lexicon/measure, com-vs-inc AUC on the FIT two thirds only,
// shipped weights (no refit), per fold (5 folds x 5 draws) against the shipped measure.
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer, DEFAULT_MEASURE, readPairsFile, splitHoldout, stratifiedFolds, auc, type PairRow, type Level } from '../src/lib/comparability/index.js';
const { config } = loadConfig({ env: {} });
const variants: Record<string, object> = { shipped: {}, ...JSON.parse(process.env.VARIANTS ?? '{}') };
const rows = (await readPairsFile('/work/shared/data/comparability/pairs.tsv', { requireLevel: true })) as Array<PairRow & { level: Level }>;
const fit = splitHoldout(rows, 1 / 3, 15).fit.filter((r) => (r.level === 'com' || r.level === 'inc') && r.corpus !== 'xtd10');
const w = config.comparability.weights;
const scores: Record<string, number[]> = {};
for (const [name, m] of Object.entries(variants)) {
  const scorer = createScorer(config, { measure: { ...DEFAULT_MEASURE, ...m } });
  addCaptionsToIdf(scorer, rows);
  scores[name] = fit.map((r) => {
    const f = scorer.features(r.en, r.zh);
    return w.alpha * f.fc + w.delta * f.fcov;
  });
}
for (const corpus of ['flickr8k-cn', 'coco-cn']) {
  const idx = fit.map((r, i) => [r, i] as const).filter(([r]) => r.corpus === corpus).map(([, i]) => i);
  const folds = Array.from({ length: 5 }, (_, rep) => stratifiedFolds(idx.map((i) => fit[i]!), 5, 15 + rep));
  const aucOf = (s: number[], sel: number[]) => auc(sel.filter((i) => fit[i]!.level === 'com').map((i) => s[i]!), sel.filter((i) => fit[i]!.level === 'inc').map((i) => s[i]!));
  for (const name of Object.keys(variants)) {
    const d: number[] = [];
    folds.forEach((fold) => {
      for (let k = 0; k < 5; k++) {
        const sel = idx.filter((_, j) => fold[j] === k);
        d.push(aucOf(scores[name]!, sel) - aucOf(scores.shipped!, sel));
      }
    });
    const md = d.reduce((a, b) => a + b, 0) / d.length;
    console.log(`${corpus} ${name.padEnd(20)} fit ${aucOf(scores[name]!, idx).toFixed(3)} fold delta ${md.toFixed(3)} better ${d.filter((x) => x > 1e-9).length}/25 worse ${d.filter((x) => x < -1e-9).length}`);
  }
}
