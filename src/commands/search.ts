// `capbridge search --image FILE [--top N] [--json]`: the target items showing the same scene, best first.
import fs from 'node:fs';
import type { Command } from 'commander';
import { loadStage } from '../stages/index.js';
import { searchImage } from '../stages/match/index.js';
import { UserError } from '../util/errors.js';
import { action, printJson } from './context.js';

export function parseTop(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UserError(`--top: expected a positive integer, got "${v}"`);
  return n;
}

export function registerSearch(program: Command): void {
  program
    .command('search')
    .description('rank the target bank against one image: verified matches (score, matches, inliers) with caption and provenance')
    .requiredOption('--image <file>', 'the query image (any format sharp reads)')
    .option('--top <n>', 'how many results (default: config match.top)')
    .option('--json', 'print one JSON document')
    .action(
      action(async (ctx, opts: { image: string; top?: string; json?: boolean }) => {
        const top = parseTop(opts.top);
        let buf: Buffer;
        try {
          buf = fs.readFileSync(opts.image);
        } catch (err) {
          throw new UserError(`${opts.image}: cannot read: ${(err as Error).message}`);
        }
        await (await loadStage('features'))(await ctx.bank, ctx.config, { logger: ctx.logger });
        let hits;
        try {
          hits = await searchImage(await ctx.bank, ctx.config, buf, { top, logger: ctx.logger });
        } catch (err) {
          throw new UserError(`${opts.image}: ${(err as Error).message}`);
        }
        const rows = hits.map((h) => ({
          rank: h.rank,
          target_id: h.item.extId,
          image_score: h.imageScore,
          model: h.model,
          matches: h.matches,
          inliers: h.inliers,
          mirrored: h.mirrored,
          caption: h.item.caption,
          provenance: { pageUrl: h.item.pageUrl, imageUrl: h.item.imageUrl, site: h.item.site, importedAt: h.item.importedAt, fetchedAt: h.item.fetchedAt },
        }));
        if (opts.json) printJson({ image: opts.image, results: rows });
        else if (!rows.length) process.stdout.write('no matching target image\n');
        else
          for (const r of rows)
            process.stdout.write(
              `${r.rank}. ${r.target_id}  score ${r.image_score.toFixed(3)} (${r.model === 'fundamental' ? 'same scene' : 'same plane'})  ${r.inliers}/${r.matches} inliers${r.mirrored ? ' (mirrored)' : ''}  ${r.caption}` +
                `${r.provenance.pageUrl ? `  <${r.provenance.pageUrl}>` : ''}\n`,
            );
        return 0;
      }),
    );
}
