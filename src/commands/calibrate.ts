// `capbridge calibrate --pairs FILE.tsv [--out FILE.yaml] [--precision P] [--json]`: fits the C-measure's
// weights, hanzi per word and level thresholds on labelled pairs, writes them to a config file, and prints the
// figures before and after.
import path from 'node:path';
import type { Command } from 'commander';
import { calibrate, type Figures } from '../comparability/calibrate.js';
import { readPairsFile } from '../comparability/pairs-file.js';
import { labelledPairsFromReviews } from '../review/labelled.js';
import { writeConfigFile } from '../config/load.js';
import { UserError } from '../util/errors.js';
import { action, printJson } from './context.js';
import { scorerForCommand } from './score.js';

const f3 = (x: number): string => (Number.isFinite(x) ? x.toFixed(3) : '–');

function describe(name: string, f: Figures): string {
  return (
    `${name}: AUC par-vs-inc ${f3(f.aucParInc)}, com-vs-inc ${f3(f.aucComInc)}, pse-vs-inc ${f3(f.aucPseInc)}; ` +
    `Pearson ${f3(f.pearsonPairs)} (level means ${f3(f.pearsonLevelMeans)}); level accuracy ${f3(f.levelAccuracy)}; ` +
    `emitted precision ${f3(f.emittedPrecision)}, recall ${f3(f.emittedRecall)}\n`
  );
}

export function registerCalibrate(program: Command): void {
  program
    .command('calibrate')
    .description('fit the C-measure weights and level thresholds on labelled pairs (TSV: level, en, zh) and write them to a config file')
    .option('--pairs <file>', 'TSV with a header and columns level (par|com|pse|inc), en, zh; others ignored')
    .option('--from-reviews', 'also learn from the judgements made on the review page (capbridge serve) in the bank')
    .option('--out <file>', 'config file to write (other keys in it are kept); default: the --config file, else <data>/calibration.yaml')
    .option('--precision <p>', 'precision target for the pairs emitted at or above export.minLevel', '0.9')
    .option('--json', 'print the figures and the fitted values as JSON')
    .action(
      action(async (ctx, opts: { pairs?: string; fromReviews?: boolean; out?: string; precision: string; json?: boolean }) => {
        const precision = Number(opts.precision);
        if (!(precision > 0 && precision <= 1)) throw new UserError(`--precision: expected a number in (0, 1], got "${opts.precision}"`);
        if (!opts.pairs && !opts.fromReviews) throw new UserError('calibrate: give --pairs FILE.tsv, --from-reviews, or both');
        const rows = opts.pairs ? await readPairsFile(opts.pairs, { requireLevel: true }) : [];
        if (opts.fromReviews) {
          const judged = labelledPairsFromReviews(ctx.bank, { minLevel: ctx.config.export.minLevel });
          if (!judged.length) throw new UserError(`calibrate --from-reviews: no judgements in ${ctx.dataDir} (judge pairs with capbridge serve)`);
          rows.push(...judged.map((j) => ({ line: 0, en: j.en, zh: j.zh, level: j.label })));
        }
        const scorer = scorerForCommand(ctx, rows);
        const feats = rows.map((r) => ({ level: r.level!, ...scorer.features(r.en, r.zh) }));
        const res = calibrate(ctx.config, feats, { precision });
        const out = path.resolve(opts.out ?? (ctx.configFiles.length > 1 ? ctx.configFiles[ctx.configFiles.length - 1]! : path.join(ctx.dataDir, 'calibration.yaml')));
        writeConfigFile(out, res.patch);
        if (opts.json) printJson({ pairs: rows.length, out, before: res.before, after: res.after, values: res.patch.comparability });
        else {
          process.stdout.write(describe('before', res.before));
          process.stdout.write(describe('after ', res.after));
          const c = res.patch.comparability;
          process.stdout.write(
            `wrote ${out}: weights α ${c.weights.alpha}, β ${c.weights.beta}, γ ${c.weights.gamma}; hanziPerWord ${c.hanziPerWord}; ` +
              `levels par ${c.levels.par}, com ${c.levels.com}, pse ${c.levels.pse}; a ${c.a}, epsilon ${c.epsilon}\n` +
              `use it with --config ${out}\n`,
          );
        }
        return 0;
      }),
    );
}
