// `capbridge match [--top N] [--retry-failed] [--json]`: the features stage for whatever is still new, then the match
// stage (ranked, verified candidates for every source not yet matched, or matched before targets were added), both
// through the stage registry. Resumable: Ctrl-C stops after the current batch.
import type { Command } from 'commander';
import { loadStage } from '../stages/index.js';
import { createProgress, stepOn } from '../util/progress.js';
import { action, printJson, runStoppable } from './context.js';
import { parseTop } from './search.js';

export function registerMatch(program: Command): void {
  program
    .command('match')
    .description('features for new items, then rank the target bank for every source item not yet matched (or stale) and store the verified candidates')
    .option('--top <n>', 'candidates stored per source (default: config match.top)')
    .option('--retry-failed', 'try the items that failed before again (by default a failed item waits for a new image)')
    .option('--json', 'print the summary as JSON')
    .action(
      action(async (ctx, opts: { top?: string; json?: boolean; retryFailed?: boolean }) => {
        const top = parseTop(opts.top);
        const bank = await ctx.bank;
        if (opts.retryFailed) ctx.logger.info(`match: ${await bank.items.retryFailed()} failed item(s) sent back to be tried again (--retry-failed)`);
        const [features, match] = [await loadStage('features'), await loadStage('match')];
        const tty = !opts.json && Boolean(process.stderr.isTTY);
        const fp = createProgress('features', 0, { enabled: tty });
        const f = await runStoppable('match', ctx.logger, (signal) => features(bank, ctx.config, { progress: fp, signal, logger: ctx.logger, reencodeProgress: stepOn(fp, 're-encoding the index') })).finally(() => fp.stop());
        if (f.aborted) return 130;
        const progress = createProgress('match', 0, { enabled: tty });
        const { detail: s } = await runStoppable('match', ctx.logger, (signal) =>
          match(bank, ctx.config, { top, progress, signal, logger: ctx.logger, reencodeProgress: stepOn(progress, 're-encoding the index') }),
        ).finally(() => progress.stop());
        if (opts.json) printJson({ ...s, features: f.detail });
        else
          process.stdout.write(
            `match: ${s.sources} sources ranked, ${s.withCandidates} with candidates, ${s.candidates} candidates stored; ` +
              `${s.failed || f.failed ? `${s.failed + f.failed} failed (reasons in \`capbridge stats\`); ` : ''}` +
              `${f.detail.featured} items featured, ${s.indexed + f.detail.indexed} targets newly indexed (${s.indexedImages} in the index, ${(s.indexMemoryBytes / 1048576).toFixed(1)} MiB)` +
              `${s.aborted ? ' — stopped early, run again to resume' : ''}\n`,
          );
        return s.aborted ? 130 : 0;
      }),
    );
}
