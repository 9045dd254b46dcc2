// scratch (issue 34 round 3): round 2's C (weights 0.6/0.4, no margin) against this round's (config: new weights, the
// null margin), com-vs-inc AUC on the FIT two thirds only, per fold (5 folds x 5 draws), per corpus.
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer, readPairsFile, splitHoldout, stratifiedFolds, auc, type PairRow, type Level } from '../src/lib/comparability/index.js';
const { config } = loadConfig({ env: {} });
const rows = (await readPairsFile('/work/shared/data/comparability/pairs.tsv', { requireLevel: true })) as Array<PairRow & { level: Level }>;
const fit = splitHoldout(rows, 1 / 3, 15).fit.filter((r) => (r.level === 'com' || r.level === 'inc') && r.corpus !== 'xtd10');
const scorer = createScorer(config, {});
addCaptionsToIdf(scorer, rows);
const w = config.comparability.weights;
const feats = fit.map((r) => scorer.features(r.en, r.zh));
const oldC = feats.map((f) => 0.6 * f.fc + 0.4 * f.fcov);
const newC = feats.map((f) => Math.min(1, (w.alpha * f.fc + w.beta * f.fe + w.gamma * f.fl + w.delta * f.fcov) * f.margin));
const noMargin = feats.map((f) => w.alpha * f.fc + w.beta * f.fe + w.gamma * f.fl + w.delta * f.fcov);
for (const corpus of ['flickr8k-cn', 'coco-cn']) {
  const idx = fit.map((r, i) => [r, i] as const).filter(([r]) => r.corpus === corpus).map(([, i]) => i);
  const aucOf = (s: number[], sel: number[]) => auc(sel.filter((i) => fit[i]!.level === 'com').map((i) => s[i]!), sel.filter((i) => fit[i]!.level === 'inc').map((i) => s[i]!));
  for (const [name, s] of [['new weights, no margin', noMargin], ['new weights + margin', newC]] as const) {
    const d: number[] = [];
    const per: number[] = [];
    for (let rep = 0; rep < 5; rep++) {
      const fold = stratifiedFolds(idx.map((i) => fit[i]!), 5, 15 + rep);
      for (let k = 0; k < 5; k++) {
        const sel = idx.filter((_, j) => fold[j] === k);
        per.push(aucOf(s, sel));
        d.push(aucOf(s, sel) - aucOf(oldC, sel));
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const sd = (xs: number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));
    console.log(`${corpus} ${name.padEnd(24)} fit ${aucOf(s, idx).toFixed(3)} (round 2: ${aucOf(oldC, idx).toFixed(3)}) folds ${mean(per).toFixed(3)} ± ${sd(per).toFixed(3)} delta ${mean(d).toFixed(3)} ± ${sd(d).toFixed(3)} better ${d.filter((x) => x > 1e-9).length}/25 worse ${d.filter((x) => x < -1e-9).length}`);
  }
}
