// Calibration with cross-validation (src/lib/comparability/calibrate.ts): stratified folds, and the par rule chosen inside
// the fit rows — the highest recall whose cross-validated par precision keeps the target with its margin.
import { expect } from 'chai';
import { loadConfig } from '../src/config/load.js';
import { calibrate, chooseParRule, crossValidate, figures, scoreRows, stratifiedFolds, type LabelledFeatures } from '../src/lib/comparability/calibrate.js';
import { mulberry32 } from '../src/util/random.js';

const { config } = loadConfig({ env: {} });

/**
 * Labelled features drawn like a caption file: par pairs cover each other well (fcov high, lengths alike), com pairs
 * less, with a tail of near-translations that score like par; inc pairs barely link. Seeded.
 */
function generate(n: { par: number; com: number; inc: number; pse?: number }, seed: number): LabelledFeatures[] {
  const rnd = mulberry32(seed);
  const clamp = (x: number) => Math.max(0, Math.min(1, x));
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const row = (level: LabelledFeatures['level'], mean: number, sd: number, corpus: string): LabelledFeatures => {
    const fcov = clamp(mean + sd * gauss());
    const en = 6 + Math.floor(rnd() * 8);
    const ratio = level === 'par' ? 1.45 * (1 + 0.15 * gauss()) : 1.45 * (0.6 + 0.8 * rnd());
    return { level, corpus, fc: clamp(fcov + 0.1 * gauss()), fe: 0, fcov, enLength: en, zhLength: Math.max(1, Math.round(en * ratio)) };
  };
  const out: LabelledFeatures[] = [];
  for (let i = 0; i < n.par; i++) out.push(row('par', 0.7, 0.15, i % 2 ? 'a' : 'b'));
  for (let i = 0; i < n.com; i++) out.push(i % 6 === 0 ? row('com', 0.62, 0.12, i % 2 ? 'a' : 'b') : row('com', 0.35, 0.12, i % 2 ? 'a' : 'b'));
  for (let i = 0; i < n.inc; i++) out.push(row('inc', 0.05, 0.05, i % 2 ? 'a' : 'b'));
  for (let i = 0; i < (n.pse ?? 0); i++) out.push(row('pse', 0.25, 0.1, i % 2 ? 'a' : 'b'));
  return out;
}

describe('comparability: calibration with cross-validation', function () {
  // 16 weight fits of 1,771 sets each: ~12 s of CPU, several times that in wall time on a shared machine
  this.timeout(240_000);

  it('deals stratified folds: every row in one fold, each (level, corpus) spread evenly, the same for the same seed', () => {
    const rows = generate({ par: 53, com: 41, inc: 30 }, 1);
    const f = stratifiedFolds(rows, 5, 15);
    expect(f).to.have.length(rows.length);
    expect(new Set(f)).to.deep.equal(new Set([0, 1, 2, 3, 4]));
    for (const level of ['par', 'com', 'inc'] as const) {
      for (const corpus of ['a', 'b']) {
        const counts = [0, 1, 2, 3, 4].map((k) => rows.filter((r, i) => r.level === level && r.corpus === corpus && f[i] === k).length);
        expect(Math.max(...counts) - Math.min(...counts)).to.be.at.most(1);
      }
    }
    expect(stratifiedFolds(rows, 5, 15)).to.deep.equal(f);
    expect(stratifiedFolds(rows, 5, 16)).to.not.deep.equal(f);
  });

  it('chooses the highest recall whose cross-validated par precision keeps the target with its margin, and fits that rule on all rows', () => {
    const rows = generate({ par: 300, com: 200, inc: 150, pse: 40 }, 2);
    const opts = { precision: 0.9, folds: 5, seed: 15, repeats: 1 };
    const choice = chooseParRule(config, rows, opts);
    expect(choice.met).to.equal(true);
    expect(choice.rule).to.have.property('recall');
    const rule = choice.rule as { recall: number; gate: number };
    // the margin: two standard deviations of the folds below their mean
    const margin = 2;
    expect(choice.marginSd).to.equal(margin);
    expect(choice.parPrecisionLower).to.be.closeTo(choice.parPrecisionMean - margin * choice.parPrecisionSd, 1e-12);
    expect(choice.parPrecisionLower).to.be.at.least(0.9);
    expect(choice.perFold).to.have.length(5);
    // one recall step higher at the same gate does not keep the target (else it would have been chosen)
    const [next] = crossValidate(config, rows, { ...opts, rules: [{ recall: Math.round((rule.recall + 0.01) * 100) / 100, gate: rule.gate }] });
    expect(next!.parPrecisionMean - margin * next!.parPrecisionSd).to.be.below(0.9);
    // the cross-validated figures are those of pairs each scored by values fitted without it: close to, not above, what
    // the fit shows on its own rows
    const res = calibrate(config, rows, { precision: 0.9, cvFolds: 5, cvSeed: 15, cvRepeats: 1 });
    expect(res.crossValidation?.rule).to.deep.equal(rule);
    expect(res.values.parMinLengthRatio).to.equal(rule.gate);
    const after = figures(scoreRows(rows, res.values), res.values);
    expect(after.parRecall).to.be.closeTo(rule.recall, 0.01);
    expect(res.after.parPrecision).to.be.at.least(0.9);
  });

  it('a wider margin chooses a lower recall, and its precision bound still keeps the target', () => {
    const rows = generate({ par: 300, com: 200, inc: 150, pse: 40 }, 2);
    const opts = { precision: 0.9, folds: 5, seed: 15, repeats: 1 };
    const narrow = chooseParRule(config, rows, { ...opts, marginSd: 0.5 });
    const wide = chooseParRule(config, rows, { ...opts, marginSd: 3 });
    const recall = (c: typeof wide) => ('recall' in c.rule ? c.rule.recall : 0);
    expect(recall(wide)).to.be.below(recall(narrow));
    expect(wide.parPrecisionMean - 3 * wide.parPrecisionSd).to.be.at.least(0.9);
    expect(narrow.parPrecisionMean - 0.5 * narrow.parPrecisionSd).to.be.at.least(0.9);
  });

  it('falls back to the precision rule fitted once when the folds would hold too few par pairs', () => {
    const rows = generate({ par: 60, com: 40, inc: 30 }, 3);
    const res = calibrate(config, rows, { precision: 0.9, cvFolds: 5 });
    expect(res.crossValidation).to.equal(undefined);
    expect(res.values.thresholds.par).to.be.above(0).and.below(1);
  });
});
