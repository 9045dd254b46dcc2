// `capbridge eval --set DIR [--fresh] [--json]`
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { Bank } from '../bank/index.js';
import { runEval } from '../eval/eval.js';
import { action, printJson } from './context.js';

export function registerEval(program: Command): void {
  program
    .command('eval')
    .description(
      'evaluate on a labelled set (source.tsv, target.tsv, truth.tsv, images/): import, match, pair, then P@1..5, hit@1, ' +
        'emitted precision, coverage and false emission rate; the result is kept in the bank for the review page',
    )
    .requiredOption('--set <dir>', 'the set folder')
    .option('--fresh', 'use a new temporary data dir instead of --data (removed afterwards)')
    .option('--json', 'print the result as JSON')
    .action(
      action(async (ctx, opts: { set: string; fresh?: boolean; json?: boolean }) => {
        let bank: Bank;
        let tmp: string | null = null;
        if (opts.fresh) {
          tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-eval-'));
          bank = await Bank.open(tmp);
        } else bank = await ctx.bank;
        try {
          const r = await runEval(bank, ctx.config, { set: opts.set, logger: ctx.logger });
          if (opts.json) printJson(r);
          else {
            const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);
            process.stdout.write(
              [
                `eval ${r.set}: ${r.sources} sources (${r.sourcesWithCounterpart} with a counterpart), ${r.targets} targets`,
                `  ranking   P@1 ${r.pAt['1']}  P@2 ${r.pAt['2']}  P@3 ${r.pAt['3']}  P@4 ${r.pAt['4']}  P@5 ${r.pAt['5']}  hit@1 ${r.hitAt1}  hit@5 ${r.hitAt5}`,
                `  emitted   ${r.emitted} pairs (par ${r.emittedByLevel.par}, com ${r.emittedByLevel.com}, pse ${r.emittedByLevel.pse}), ${r.emittedCorrect} correct`,
                `  precision ${pct(r.emittedPrecision)}   coverage ${pct(r.coverage)}   false emission rate ${pct(r.falseEmissionRate)}`,
                `  thresholds: level >= ${r.thresholds.minLevel}, inliers >= ${r.thresholds.minInliers}, image score >= ${r.thresholds.minImageScore}; ${r.seconds}s`,
              ].join('\n') + '\n',
            );
          }
          return 0;
        } finally {
          if (tmp) {
            await bank.close();
            fs.rmSync(tmp, { recursive: true, force: true });
          }
        }
      }),
    );
}
