// `capbridge index [--threads N] [--json]`: computes SIFT features for every bank item still 'new'.
import type { Command } from 'commander';
import { computeMissingFeatures } from '../sift/stage.js';
import { createProgress } from '../util/progress.js';
import { action, printJson } from './context.js';
import { parseThreads } from './features.js';

export function registerIndex(program: Command): void {
  program
    .command('index')
    .description("compute SIFT features for every bank item still 'new' (resumable; failed images are marked and skipped)")
    .option('--threads <n>', 'worker threads (default: config sift.threads; 0 = one per core)')
    .option('--json', 'print the summary as JSON')
    .action(
      action(async (ctx, opts: { threads?: string; json?: boolean }) => {
        const threads = parseThreads(opts.threads);
        const progress = createProgress('features', 0, { enabled: !opts.json && Boolean(process.stderr.isTTY) });
        const ac = new AbortController();
        const onSignal = () => {
          process.stderr.write('capbridge index: stopping after the current batch...\n');
          ac.abort();
        };
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        let summary;
        try {
          summary = await computeMissingFeatures(ctx.bank, ctx.config, { threads, progress, signal: ac.signal, logger: ctx.logger });
        } finally {
          progress.stop();
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
        }
        if (opts.json) printJson(summary);
        else {
          process.stdout.write(
            `index: featured ${summary.featured} items (${summary.images} images computed), already had features ${summary.skipped}, ` +
              `failed ${summary.failed}${summary.aborted ? ' — stopped early, run again to resume' : ''} in ${(summary.ms / 1000).toFixed(1)} s\n`,
          );
        }
        return summary.aborted ? 130 : 0;
      }),
    );
}
