// `capbridge features [--threads N] [--retry-failed] [--json]`: the features stage (src/stages/features) through the
// stage registry: SIFT for every bank item still 'new', the LSH codes of the target items, their captions into the
// IDF table. Resumable: Ctrl-C stops after the current batch. `capbridge index` is its old name (kept for one release,
// with a warning); `capbridge features FILE…` was the keypoint dump, now `capbridge keypoints FILE…` (forwarded, with a
// warning).
import type { Command } from 'commander';
import { loadStage } from '../stages/index.js';
import { createProgress, stepOn } from '../util/progress.js';
import { action, printJson, runStoppable, type Context } from './context.js';
import { dumpKeypoints, parseThreads, type KeypointsOptions } from './keypoints.js';

interface Opts extends KeypointsOptions {
  retryFailed?: boolean;
}

/** Runs the features stage over the whole bank; the exit code. */
export async function runFeaturesCommand(ctx: Context, name: string, opts: Opts): Promise<number> {
  const threads = parseThreads(opts.threads);
  const progress = createProgress('features', 0, { enabled: !opts.json && Boolean(process.stderr.isTTY) });
  const bank = await ctx.bank;
  if (opts.retryFailed) ctx.logger.info(`${name}: ${await bank.items.retryFailed()} failed item(s) sent back to be tried again`);
  const features = await loadStage('features');
  const { detail: s } = await runStoppable(name, ctx.logger, (signal) =>
    features(bank, ctx.config, { threads, progress, signal, logger: ctx.logger, reencodeProgress: stepOn(progress, 're-encoding the index') }),
  ).finally(() => progress.stop());
  if (opts.json) printJson(s);
  else
    process.stdout.write(
      `${name}: featured ${s.featured} items (${s.images} images computed), already had features ${s.skipped}, ` +
        `failed ${s.failed}, indexed ${s.indexed} targets, counted ${s.captionsCounted} captions` +
        `${s.aborted ? ' — stopped early, run again to resume' : ''} in ${(s.ms / 1000).toFixed(1)} s\n`,
    );
  return s.aborted ? 130 : 0;
}

function define(program: Command, name: string, description: string): Command {
  return program
    .command(name)
    .description(description)
    .option('--threads <n>', 'worker threads (default: config sift.threads; 0 = one per core)')
    .option('--retry-failed', 'try the items that failed before again (by default a failed item waits for a new image)')
    .option('--json', 'print the summary as JSON');
}

export function registerFeatures(program: Command): void {
  define(program, 'features', "the features stage: SIFT for every bank item still 'new', LSH codes of the targets, captions into the IDF table (resumable)")
    .argument('[files...]', 'deprecated: image files to dump keypoints of (now `capbridge keypoints FILE…`)')
    .option('--descriptors', 'deprecated, with FILE…: see `capbridge keypoints`')
    .action(
      action(async (ctx, files: string[], opts: Opts) => {
        if (!files.length) return runFeaturesCommand(ctx, 'features', opts);
        ctx.logger.warn('`capbridge features FILE…` is now `capbridge keypoints FILE…` (this form goes away in the next release)');
        return dumpKeypoints(ctx, files, opts);
      }),
    );
}

export function registerIndex(program: Command): void {
  define(program, 'index', 'old name of `capbridge features` (goes away in the next release)').action(
    action(async (ctx, opts: Opts) => {
      ctx.logger.warn('`capbridge index` is now `capbridge features` (this name goes away in the next release)');
      return runFeaturesCommand(ctx, 'index', opts);
    }),
  );
}
