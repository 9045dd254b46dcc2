// `capbridge import --bank source|target --manifest FILE.tsv`
import type { Command } from 'commander';
import { Option } from 'commander';
import { importManifest, countManifestRows } from '../import/manifest.js';
import { createProgress } from '../util/progress.js';
import { action, printJson } from './context.js';
import type { BankName } from '../bank/index.js';

export function registerImport(program: Command): void {
  program
    .command('import')
    .description('import (image, caption) items from a TSV manifest (columns id, image, caption[, url][, credit]) into a bank')
    .addOption(new Option('--bank <bank>', 'which bank: source (English) or target (Chinese)').choices(['source', 'target']).makeOptionMandatory())
    .requiredOption('--manifest <file>', 'TSV manifest; image paths relative to its folder, or absolute')
    .option('--json', 'print the summary as JSON')
    .action(
      action(async (ctx, opts: { bank: BankName; manifest: string; json?: boolean }) => {
        // The bar's total costs a pass over the manifest: only pay it when a bar is shown.
        const showBar = !opts.json && Boolean(process.stderr.isTTY) && !process.env.CI;
        const total = showBar ? await countManifestRows(opts.manifest, ctx.config.import.maxManifestBytes).catch(() => 0) : 0;
        const progress = createProgress(`import ${opts.bank}`, total, { enabled: showBar });
        const summary = await importManifest(await ctx.bank, {
          bank: opts.bank,
          manifest: opts.manifest,
          config: ctx.config,
          progress,
          onProblem: (p) => process.stderr.write(`${p.file}:${p.line}: ${p.reason}\n`),
        }).finally(() => progress.stop());
        if (opts.json) printJson(summary);
        else {
          process.stdout.write(
            `import ${opts.bank}: ${summary.rows} rows — added ${summary.added}, unchanged ${summary.unchanged}, ` +
              `updated ${summary.updated}, failed ${summary.failed}` +
              (summary.languageMismatches ? `; ${summary.languageMismatches} captions not in the bank's language (kept out of pairing)` : '') +
              (summary.emptyCaptions ? `; ${summary.emptyCaptions} empty captions (image search only)` : '') +
              '\n',
          );
        }
        return summary.failed ? 1 : 0;
      }),
    );
}
