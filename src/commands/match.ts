// `capbridge match [--top N] [--json]`: features, index, then ranked candidates for every source not yet matched
// (or matched before targets were added). Resumable: Ctrl-C stops after the current batch.
import type { Command } from 'commander';
import { runMatch } from '../stages/match/stage.js';
import { createProgress } from '../util/progress.js';
import { action, printJson, runStoppable } from './context.js';
import { parseTop } from './search.js';

export function registerMatch(program: Command): void {
  program
    .command('match')
    .description('rank the target bank for every source item not yet matched (or stale), and store the verified candidates')
    .option('--top <n>', 'candidates stored per source (default: config match.top)')
    .option('--retry-failed', 'try the items that failed before again (by default a failed item waits for a new image)')
    .option('--json', 'print the summary as JSON')
    .action(
      action(async (ctx, opts: { top?: string; json?: boolean; retryFailed?: boolean }) => {
        const top = parseTop(opts.top);
        const progress = createProgress('match', 0, { enabled: !opts.json && Boolean(process.stderr.isTTY) });
        const bank = await ctx.bank;
        const s = await runStoppable('match', ctx.logger, (signal) =>
          runMatch(bank, ctx.config, { top, progress, signal, logger: ctx.logger, retryFailed: opts.retryFailed }),
        ).finally(() => progress.stop());
        if (opts.json) printJson(s);
        else
          process.stdout.write(
            `match: ${s.sources} sources ranked, ${s.withCandidates} with candidates, ${s.candidates} candidates stored; ` +
              `${s.failed ? `${s.failed} failed (reasons in \`capbridge stats\`); ` : ''}` +
              `${s.indexed} targets newly indexed (${s.indexedImages} in the index, ${(s.indexMemoryBytes / 1048576).toFixed(1)} MiB)` +
              `${s.aborted ? ' — stopped early, run again to resume' : ''}\n`,
          );
        return s.aborted ? 130 : 0;
      }),
    );
}
