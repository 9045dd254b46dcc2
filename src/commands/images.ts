// `capbridge images copy --to STORE [--json]` and `capbridge images check [--json]`: move a bank's images between
// the data dir's folder and an S3 bucket (resumable, idempotent), and check that the store holds every image.
import type { Command } from 'commander';
import { checkImages, copyImages, openImageBlobs } from '../bank/index.js';
import { createProgress } from '../util/progress.js';
import { UserError } from '../util/errors.js';
import { parseImageStore } from '../util/store-url.js';
import { action, printJson, runStoppable } from './context.js';

const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;

function parseConcurrency(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new UserError(`--concurrency: expected an integer 1..64, got "${v}"`);
  return n;
}

export function registerImages(program: Command): void {
  const images = program.command('images').description('the image store: copy a bank\'s images to another store, check that the store holds them');
  images
    .command('copy')
    .description('copy every image of the bank from its store (--images / images.store) to --to (same keys); objects already there with their size are skipped, so a stopped copy resumes')
    .requiredOption('--to <store>', 'folder (the data dir) or s3://bucket/prefix (other S3 settings from images.s3.*)')
    .option('--concurrency <n>', 'objects in flight (default 8)')
    .option('--json', 'print the summary as JSON')
    .action(
      action(async (ctx, opts: { to: string; concurrency?: string; json?: boolean }) => {
        const sel = parseImageStore(opts.to);
        if ('error' in sel) throw new UserError(`--to: ${sel.error}`);
        const concurrency = parseConcurrency(opts.concurrency);
        const bank = await ctx.bank;
        const to = await openImageBlobs(ctx.dataDir, ctx.config.images, opts.to);
        if ((await to.identity()).key === (await bank.images.blobs.identity()).key) throw new UserError(`--to ${opts.to}: that is where the images are already (${to.location})`);
        const progress = createProgress('copy images', 0, { enabled: !opts.json && Boolean(process.stderr.isTTY) && !process.env.CI });
        try {
          const s = await runStoppable('images copy', ctx.logger, (signal) =>
            copyImages(bank, to, { concurrency, signal, onProgress: (done, total) => (progress.setTotal(total), progress.tick(1)) }),
          );
          progress.stop();
          // every image is in the target now: the bank records it as its store (runs pointed there are accepted)
          if (!s.aborted && !s.missing) await bank.images.recordStore(to);
          if (opts.json) printJson(s);
          else {
            process.stdout.write(
              `images copy: ${s.images} images from ${s.from} to ${s.to}: copied ${s.copied} (${mb(s.bytes)}), already there ${s.present}, ` +
                `missing in the source ${s.missing}${s.aborted ? ' — stopped early, run again to resume' : ''} in ${(s.ms / 1000).toFixed(1)} s\n` +
                s.missingObjects.map((o) => `  missing: ${o}\n`).join(''),
            );
          }
          return s.aborted ? 130 : s.missing ? 1 : 0;
        } finally {
          progress.stop();
          await to.close?.();
        }
      }),
    );
  images
    .command('check')
    .description('check that the bank\'s image store holds every image with its size (exit code 1 when some are missing)')
    .option('--concurrency <n>', 'objects checked at once (default 8)')
    .option('--json', 'print the summary as JSON')
    .action(
      action(async (ctx, opts: { concurrency?: string; json?: boolean }) => {
        const concurrency = parseConcurrency(opts.concurrency);
        const bank = await ctx.bank;
        const progress = createProgress('check images', 0, { enabled: !opts.json && Boolean(process.stderr.isTTY) && !process.env.CI });
        const s = await runStoppable('images check', ctx.logger, (signal) =>
          checkImages(bank, { concurrency, signal, onProgress: (done, total) => (progress.setTotal(total), progress.tick(1)) }),
        ).finally(() => progress.stop());
        if (opts.json) printJson(s);
        else {
          process.stdout.write(
            `images check: ${s.images} images in ${s.store}: ${s.present} present, ${s.missing} missing${s.aborted ? ' — stopped early' : ''} in ${(s.ms / 1000).toFixed(1)} s\n` +
              s.missingObjects.map((o) => `  missing: ${o}\n`).join(''),
          );
        }
        return s.aborted ? 130 : s.missing ? 1 : 0;
      }),
    );
}
