// `capbridge export --format tsv|jsonl|tmx|moses --out PATH [--min-level par|com|pse] [--new] [--json]`
// and `capbridge pair [--all] [--json]` (the pairing stage on its own; the daemon runs it after each match).
import path from 'node:path';
import type { Command } from 'commander';
import { Option } from 'commander';
import type { Level } from '../bank/index.js';
import { loadStage } from '../stages/index.js';
import { EXPORT_FORMATS, exportCandidatesJsonl, type ExportFormat } from '../stages/export/index.js';
import { UserError } from '../util/errors.js';
import { createProgress } from '../util/progress.js';
import { action, printJson } from './context.js';

export function registerExport(program: Command): void {
  program
    .command('export')
    .description('write the emitted pairs as a corpus: TSV, JSONL, TMX 1.4b, or Moses (PATH.en + PATH.zh); atomic writes')
    .addOption(new Option('--format <format>', 'output format').choices(EXPORT_FORMATS).makeOptionMandatory())
    .requiredOption('--out <path>', 'output file (Moses: the prefix of PATH.en and PATH.zh)')
    .addOption(new Option('--min-level <level>', 'lowest comparability level exported (default: config export.minLevel)').choices(['par', 'com', 'pse']))
    .option('--new', 'only pairs never exported before (the export watermark in the bank)')
    .addOption(new Option('--reviewed <which>', 'the pairs judged on the review page instead of the emitted pairs (at the linguist\'s level when set)').choices(['accepted', 'rejected', 'all']))
    .option('--candidates', 'with --format jsonl: export the image-matching candidates instead of pairs')
    .option('--json', 'print the summary as JSON')
    .action(
      action(async (ctx, opts: { format: ExportFormat; out: string; minLevel?: Level; new?: boolean; reviewed?: 'accepted' | 'rejected' | 'all'; candidates?: boolean; json?: boolean }) => {
        const out = path.resolve(opts.out);
        if (opts.candidates) {
          if (opts.format !== 'jsonl') throw new UserError('export --candidates: only --format jsonl is supported');
          const res = await exportCandidatesJsonl(await ctx.bank, out);
          if (opts.json) printJson(res);
          else process.stdout.write(`export candidates → ${out}\n`);
          return 0;
        }
        const { detail: summary } = await (await loadStage('export'))(await ctx.bank, ctx.config, {
          format: opts.format, out, minLevel: opts.minLevel, onlyNew: Boolean(opts.new), reviewed: opts.reviewed, logger: ctx.logger,
        });
        if (opts.json) printJson(summary);
        else {
          const lv = summary.byLevel;
          process.stdout.write(
            `export ${summary.formats.join(', ')}: ${summary.records} sentence pairs (${summary.pairs} with the item pairs they repeat in; par ${lv.par}, com ${lv.com}, pse ${lv.pse})` +
              `${summary.onlyNew ? ', new only' : ''}, min level ${summary.minLevel}\n` +
              summary.files.map((f) => `  ${f}\n`).join(''),
          );
          if (summary.skipped) {
            process.stderr.write(
              `export: ${summary.skipped} record${summary.skipped > 1 ? 's' : ''} could not be written and ${summary.skipped > 1 ? 'were' : 'was'} left out of every file (not marked exported):\n` +
                summary.skippedRecords.map((r) => `  sentence pairs ${r.sentencePairIds.join(', ')} (caption pair ${r.pairIds.join(', ')}; items ${r.sourceIds.join(', ')} / ${r.targetIds.join(', ')}): ${r.reason}\n`).join('') +
                (summary.skipped > summary.skippedRecords.length ? `  … and ${summary.skipped - summary.skippedRecords.length} more (see the log)\n` : ''),
            );
          }
        }
        return 0;
      }),
    );

  program
    .command('pair')
    .description('decide pairs: score the verified image candidates of each source with the C-measure and emit those that pass')
    .option('--all', 're-decide every source (after changing export thresholds), not only what changed')
    .option('--json', 'print the summary as JSON')
    .action(
      action(async (ctx, opts: { all?: boolean; json?: boolean }) => {
        const progress = createProgress('pair', 0, { enabled: !opts.json && Boolean(process.stderr.isTTY) });
        const pair = await loadStage('pair');
        const { detail: summary } = await pair(await ctx.bank, ctx.config, { logger: ctx.logger, all: opts.all, progress }).finally(() => progress.stop());
        if (opts.json) printJson(summary);
        else {
          const n = summary.notEmitted;
          process.stdout.write(
            `pair: ${summary.sources} sources, ${summary.decided} candidates decided, ${summary.emitted} pairs emitted ` +
              `(par ${summary.byLevel.par}, com ${summary.byLevel.com}, pse ${summary.byLevel.pse}); not emitted: ` +
              `${n.caption} caption, ${n.image} image, ${n.level} level; ${summary.removed} stale decisions removed\n`,
          );
        }
        return 0;
      }),
    );
}
