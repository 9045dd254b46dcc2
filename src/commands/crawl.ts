// `capbridge crawl [--site NAME] [--json]`: one harvest cycle over the site profiles.
// `capbridge crawl --list given-up|failed|retries`: what the frontier holds, without crawling.
// Exit codes: 0 every site ran its cycle (URLs that failed are re-queued or given up, see --list); 1 one or more
// sites could not run (bad profile, unexpected error: each named with its reason; the other sites ran);
// 130 stopped by a signal (the next run resumes the cycle).
import { loadStage } from '../stages/index.js';
import type { Command } from 'commander';
import { CrawlRepo, type UrlState } from '../bank/index.js';
import { UserError } from '../util/errors.js';
import { createProgress } from '../util/progress.js';
import { action, printJson, runStoppable } from './context.js';

const LISTS: Record<string, UrlState[]> = { 'given-up': ['given-up'], failed: ['failed'], retries: ['pending'] };

const counts = (rec: Record<string, number>) => Object.entries(rec).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';

export function registerCrawl(program: Command): void {
  program
    .command('crawl')
    .description(
      'harvest (image, caption) items from the news sites of config/sites into the banks (resumes an interrupted cycle); ' +
        'exit 0: every site ran, 1: a site could not run (the others did), 130: stopped',
    )
    .option('--once', 'run one cycle and exit (the default for the command; the daemon schedules cycles)')
    .option('--site <name>', 'only this site profile')
    .option('--sites <dir>', 'site profiles folder (default: crawler.sitesDir or config/sites)')
    .option('--retry-given-up', 'queue the given-up URLs again (fresh retry count) before the cycle')
    .option('--list <what>', 'list URLs instead of crawling: given-up, failed (permanent) or retries (waiting for a later cycle)')
    .option('--limit <n>', 'with --list: at most this many (newest first)', '100')
    .option('--json', 'print the summary (or the list) as JSON')
    .action(
      action(async (ctx, opts: { once?: boolean; site?: string; sites?: string; json?: boolean; retryGivenUp?: boolean; list?: string; limit: string }) => {
        if (opts.list !== undefined) {
          const states = LISTS[opts.list];
          if (!states) throw new UserError(`--list: expected given-up, failed or retries, got "${opts.list}"`);
          const rows = await (await ctx.bank).repo(CrawlRepo).list(states, { site: opts.site, limit: Math.max(1, Number(opts.limit) || 100) });
          if (opts.json) return printJson(rows.map(({ data: _d, ...r }) => r));
          for (const r of rows) {
            const when = r.state === 'pending' ? `retry in cycle ${r.retryCycle}` : r.state;
            process.stdout.write(`${r.site}\t${r.kind}\t${r.failureClass ?? '-'}\t${r.reasonCode ?? '-'}\t${r.attempts} cycle(s)\t${when}\t${r.reason ?? r.url}\n`);
          }
          return;
        }
        const progress = createProgress('crawl', 0, { enabled: !opts.json && Boolean(process.stderr.isTTY) });
        return runStoppable('crawl', ctx.logger, async (signal) => {
          // The crawler pulls in cheerio, sharp and the extractor: only the crawl command pays for loading them.
          const crawl = await loadStage('crawl');
          const { detail: s } = await crawl(await ctx.bank, ctx.config, {
            site: opts.site,
            sitesDir: opts.sites,
            retryGivenUp: opts.retryGivenUp,
            signal,
            progress,
            logger: ctx.logger,
          });
          progress.stop();
          if (opts.json) printJson(s);
          else {
            const lines = [
              `crawl${s.aborted ? ' (stopped early; the next run resumes)' : ''}: ${s.sites.length} sites, ${s.requests} requests (${s.retries} retries), ` +
                `${s.pagesFetched} pages fetched (${s.notModified} not modified, ${s.articles} articles), ${s.pairsFound} captioned photos; ` +
                `added ${s.itemsAdded.source} to source, ${s.itemsAdded.target} to target, ${s.itemsUnchanged} already stored`,
              `  transient failures: ${counts(s.failures.transient)}; permanent: ${counts(s.failures.permanent)}; ${s.deferred} deferred (host paused or robots.txt unavailable)`,
              `  given up this cycle ${s.givenUp} (${s.givenUpTotal} in all: capbridge crawl --list given-up); waiting for a later cycle ${s.pendingRetries}; ${s.queued} queued`,
            ];
            if (s.photosOverLimit) lines.push(`  ${s.photosOverLimit} captioned photos left out of pages over crawler.maxPhotosPerPage`);
            for (const f of s.failedSites) lines.push(`  site ${f.site} did not run: ${f.reason}`);
            process.stdout.write(lines.join('\n') + '\n');
          }
          return s.aborted ? 130 : s.failedSites.length ? 1 : 0;
        });
      }),
    );
}
