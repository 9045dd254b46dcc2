// `capbridge calibrate --pairs FILE.tsv [--from-reviews] [--holdout F --seed N] [--out FILE.yaml] [--precision P]
// [--com-precision P] [--cv-folds K --cv-repeats N --cv-seed S --cv-margin-sd M] [--json]`: fits the C-measure's weights, hanzi per
// word, the par length gate and the level thresholds on labelled pairs (src/lib/comparability/calibrate.ts), the par
// threshold chosen by cross-validation inside the fit rows, writes them to a config file, and prints the figures
// before, after and cross-validated; with --holdout, a seeded stratified part of the file is kept out of the fit and
// scored only after it, with the fitted values.
import path from 'node:path';
import type { Command } from 'commander';
import { calibrate, figures, scoreRows, splitHoldout, type Figures } from '../lib/comparability/index.js';
import { readPairsFile, type PairRow } from '../lib/comparability/index.js';
import { labelledPairsFromReviews } from '../review/labelled.js';
import { writeConfigFile } from '../config/load.js';
import { UserError } from '../util/errors.js';
import { action, printJson } from './context.js';
import { scorerForCommand } from './score.js';

const f3 = (x: number): string => (Number.isFinite(x) ? x.toFixed(3) : '–');

function describe(name: string, f: Figures): string {
  return (
    `${name} (${f.pairs} pairs): par precision ${f3(f.parPrecision)}, recall ${f3(f.parRecall)}; ` +
    `com-or-better precision ${f3(f.comOrBetterPrecision)}, recall ${f3(f.comOrBetterRecall)}; ` +
    `AUC par-vs-com ${f3(f.aucParCom)}, com-vs-inc ${f3(f.aucComInc)}, pse-vs-inc ${f3(f.aucPseInc)}; level accuracy ${f3(f.levelAccuracy)}\n`
  );
}

function fraction(text: string, name: string, lo: number, hiInclusive: boolean): number {
  const x = Number(text);
  if (!(x > lo && (hiInclusive ? x <= 1 : x < 1))) throw new UserError(`${name}: expected a number in (${lo}, 1${hiInclusive ? ']' : ')'}, got "${text}"`);
  return x;
}

export function registerCalibrate(program: Command): void {
  program
    .command('calibrate')
    .description('fit the C-measure weights and level thresholds on labelled pairs (TSV: level, en, zh) and write them to a config file')
    .option('--pairs <file>', 'TSV with a header and columns level (par|com|pse|inc), en, zh[, corpus]; others ignored')
    .option('--from-reviews', 'also learn from the review page\'s judgements that set a level (capbridge serve)')
    .option('--holdout <fraction>', 'keep this share of --pairs out of the fit (stratified by level and corpus) and score it after', '0')
    .option('--seed <n>', 'seed of the held-out draw', '15')
    .option('--out <file>', 'config file to write (other keys in it are kept); default: the --config file, else <data>/calibration.yaml')
    .option('--precision <p>', 'par precision to reach (judged on par, com and inc pairs, at its 90% lower confidence bound)', '0.9')
    .option('--com-precision <p>', 'precision of "com or better" against inc to reach', '0.95')
    .option('--cv-folds <k>', 'choose the par threshold by k-fold cross-validation inside the fit rows (0 = fit once at --precision)', '5')
    .option('--cv-repeats <n>', 'fold draws of the cross-validation', '5')
    .option('--cv-seed <n>', 'seed of the first fold draw', '15')
    .option('--cv-margin-sd <m>', 'the par rule keeps --precision at the folds\' mean par precision minus this many standard deviations of the folds', '2')
    .option('--json', 'print the figures and the fitted values as JSON')
    .action(
      action(
        async (
          ctx,
          opts: {
            pairs?: string;
            fromReviews?: boolean;
            holdout: string;
            seed: string;
            out?: string;
            precision: string;
            comPrecision: string;
            cvFolds: string;
            cvRepeats: string;
            cvSeed: string;
            cvMarginSd: string;
            json?: boolean;
          },
        ) => {
          const precision = fraction(opts.precision, '--precision', 0, true);
          const comPrecision = fraction(opts.comPrecision, '--com-precision', 0, true);
          const holdout = opts.holdout === '0' ? 0 : fraction(opts.holdout, '--holdout', 0, false);
          const int = (text: string, name: string, min: number): number => {
            const x = Number(text);
            if (!Number.isInteger(x) || x < min) throw new UserError(`${name}: expected an integer >= ${min}, got "${text}"`);
            return x;
          };
          const seed = int(opts.seed, '--seed', -(2 ** 31));
          const cvFolds = int(opts.cvFolds, '--cv-folds', 0);
          if (cvFolds === 1) throw new UserError('--cv-folds: expected 0 (off) or at least 2, got "1"');
          const cvRepeats = int(opts.cvRepeats, '--cv-repeats', 1);
          const cvSeed = int(opts.cvSeed, '--cv-seed', -(2 ** 31));
          const cvMarginSd = Number(opts.cvMarginSd);
          if (!(cvMarginSd >= 0 && cvMarginSd <= 10)) throw new UserError(`--cv-margin-sd: expected a number in [0, 10], got "${opts.cvMarginSd}"`);
          if (!opts.pairs && !opts.fromReviews) throw new UserError('calibrate: give --pairs FILE.tsv, --from-reviews, or both');
          if (holdout && !opts.pairs) throw new UserError('calibrate: --holdout splits the --pairs file; give --pairs');
          const fileRows = opts.pairs ? await readPairsFile(opts.pairs, { requireLevel: true }) : [];
          const { fit, heldOut } = holdout ? splitHoldout(fileRows, holdout, seed) : { fit: fileRows, heldOut: [] as PairRow[] };
          const rows = [...fit];
          if (opts.fromReviews) {
            const judged = await labelledPairsFromReviews(await ctx.bank);
            if (!judged.length) throw new UserError(`calibrate --from-reviews: no judgement that sets a level in ${ctx.dataDir} (set levels with 1-4 in capbridge serve)`);
            rows.push(...judged.map((j) => ({ line: 0, en: j.en, zh: j.zh, level: j.label, corpus: 'reviews' })));
          }
          // IDF from the bank, else from every caption of the file (held-out ones too: IDF needs no label)
          const scorer = await scorerForCommand(ctx, [...rows, ...heldOut]);
          const feats = (list: PairRow[]) => list.map((r) => ({ level: r.level!, corpus: r.corpus, ...scorer.features(r.en, r.zh) }));
          if (cvFolds && process.stderr.isTTY) process.stderr.write(`cross-validating the par threshold (${cvFolds} folds × ${cvRepeats} draws)…\n`);
          const res = calibrate(ctx.config, feats(rows), { precision, comPrecision, cvFolds, cvRepeats, cvSeed, cvMarginSd });
          const cv = res.crossValidation;
          const held = heldOut.length ? figures(scoreRows(feats(heldOut), res.values), res.values) : null;
          const out = path.resolve(opts.out ?? (ctx.configFiles.length > 1 ? ctx.configFiles[ctx.configFiles.length - 1]! : path.join(ctx.dataDir, 'calibration.yaml')));
          writeConfigFile(out, { comparability: res.values });
          if (opts.json) {
            printJson({
              pairs: rows.length,
              heldOutPairs: heldOut.length,
              seed: holdout ? seed : null,
              out,
              before: res.before,
              after: res.after,
              crossValidated: cv ?? null,
              heldOut: held,
              values: res.values,
            });
          } else {
            process.stdout.write(describe('before  ', res.before));
            process.stdout.write(describe('after   ', res.after));
            if (cv) {
              const rule = 'recall' in cv.rule ? `par-score quantile at recall ${cv.rule.recall}, length gate ${cv.rule.gate}` : `precision ${cv.rule.precision}`;
              process.stdout.write(
                `cross-validated (${cv.folds} folds × ${cv.repeats} draws, seed ${cv.seed}; rule: ${rule}${cv.met ? '' : `; NO rule kept par precision ${cv.precision} with its margin`}): ` +
                  `par precision ${f3(cv.parPrecisionMean)} ± ${f3(cv.parPrecisionSd)} (mean − ${cv.marginSd} sd: ${f3(cv.parPrecisionLower)}), recall ${f3(cv.parRecallMean)} ± ${f3(cv.parRecallSd)}; ` +
                  `com-or-better precision ${f3(cv.pooled.comOrBetterPrecision)}, recall ${f3(cv.pooled.comOrBetterRecall)}\n`,
              );
            } else if (cvFolds) process.stdout.write(`cross-validation: too few par pairs for ${cvFolds} folds; par fitted once at precision ${precision}\n`);
            if (held) process.stdout.write(describe(`held out (seed ${seed})`, held));
            const v = res.values;
            const w = v.weights;
            process.stdout.write(
              `wrote ${out}: weights α ${w.alpha}, β ${w.beta}, γ ${w.gamma}, δ ${w.delta}, ε ${w.epsilon}; hanziPerWord ${v.hanziPerWord}; ` +
                `thresholds par ${v.thresholds.par} (fl >= ${v.parMinLengthRatio}), com ${v.thresholds.com}, pse ${v.thresholds.pse}\n` +
                `use it with --config ${out}\n`,
            );
          }
          return 0;
        },
      ),
    );
}
