// `capbridge index [--threads N] [--json]`: computes SIFT features for every bank item still 'new', and the LSH codes
// of the target items (what `match` then loads).
import type { Command } from 'commander';
import { runFeatures } from '../stages/match/stage.js';
import { createProgress } from '../util/progress.js';
import { action, printJson, runStoppable } from './context.js';
import { parseThreads } from './features.js';

export function registerIndex(program: Command): void {
  program
    .command('index')
    .description("compute SIFT features for every bank item still 'new' and index the target bank (resumable; failed images are marked and skipped)")
    .option('--threads <n>', 'worker threads (default: config sift.threads; 0 = one per core)')
    .option('--retry-failed', 'try the items that failed before again (by default a failed item waits for a new image)')
    .option('--json', 'print the summary as JSON')
    .action(
      action(async (ctx, opts: { threads?: string; json?: boolean; retryFailed?: boolean }) => {
        const threads = parseThreads(opts.threads);
        const progress = createProgress('features', 0, { enabled: !opts.json && Boolean(process.stderr.isTTY) });
        const bank = await ctx.bank;
        if (opts.retryFailed) ctx.logger.info(`index: ${await bank.items.retryFailed()} failed item(s) sent back to be tried again`);
        const summary = await runStoppable('index', ctx.logger, (signal) =>
          runFeatures(bank, ctx.config, { threads, progress, signal, logger: ctx.logger }),
        ).finally(() => progress.stop());
        if (opts.json) printJson(summary);
        else {
          process.stdout.write(
            `index: featured ${summary.featured} items (${summary.images} images computed), already had features ${summary.skipped}, ` +
              `failed ${summary.failed}, indexed ${summary.indexed} targets${summary.aborted ? ' — stopped early, run again to resume' : ''} in ${(summary.ms / 1000).toFixed(1)} s\n`,
          );
        }
        return summary.aborted ? 130 : 0;
      }),
    );
}
