// `capbridge crawl [--once] [--site NAME] [--json]`: one harvest cycle over the site profiles.
import type { CrawlSummary } from '../crawler/stage.js';
import type { Command } from 'commander';
import { createProgress } from '../util/progress.js';
import { action, printJson, runStoppable } from './context.js';

export function registerCrawl(program: Command): void {
  program
    .command('crawl')
    .description('harvest (image, caption) items from the news sites of config/sites into the banks (resumes an interrupted cycle)')
    .option('--once', 'run one cycle and exit (the default for the command; the daemon schedules cycles)')
    .option('--site <name>', 'only this site profile')
    .option('--sites <dir>', 'site profiles folder (default: crawler.sitesDir or config/sites)')
    .option('--json', 'print the summary as JSON')
    .action(
      action(async (ctx, opts: { once?: boolean; site?: string; sites?: string; json?: boolean }) => {
        const progress = createProgress('crawl', 0, { enabled: !opts.json && Boolean(process.stderr.isTTY) });
        return runStoppable('crawl', ctx.logger, async (signal) => {
          // crawlee is heavy to load: only the crawl command pays for it, not every CLI start.
          const { runCrawl } = await import('../crawler/stage.js');
          const s: CrawlSummary = await runCrawl(ctx.bank, ctx.config, { once: opts.once ?? true, site: opts.site, sitesDir: opts.sites, signal, progress, logger: ctx.logger });
          progress.stop();
          if (opts.json) printJson(s);
          else {
            const rej = Object.entries(s.rejections).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
            const ref = Object.entries(s.refused).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
            process.stdout.write(
              `crawl${s.aborted ? ' (stopped early; the next run resumes)' : ''}: ${s.sites.length} sites, ${s.pagesFetched} pages fetched ` +
                `(${s.notModified} not modified, ${s.articles} articles), ${s.pairsFound} captioned photos; ` +
                `added ${s.itemsAdded.source} to source, ${s.itemsAdded.target} to target, ${s.itemsUnchanged} already stored; ` +
                `rejected: ${rej}; refused: ${ref}; errors ${s.errors}; ${s.queued} requests queued\n`,
            );
          }
          return s.aborted ? 130 : 0;
        });
      }),
    );
}
