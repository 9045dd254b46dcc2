// `capbridge stats [--json]`
import type { Command } from 'commander';
import { StatsRepo, BANKS } from '../bank/index.js';
import { action, printJson } from './context.js';

const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;

export function registerStats(program: Command): void {
  program
    .command('stats')
    .description('counts per bank and status, failures by reason, database and image-store size')
    .option('--json', 'print as JSON')
    .action(
      action(async (ctx, opts: { json?: boolean }) => {
        const bank = await ctx.bank;
        const stats = await bank.repo(StatsRepo).all();
        if (opts.json) return printJson(stats);
        const out: string[] = [`data dir ${stats.dataDir} (schema v${stats.schemaVersion})`];
        for (const b of BANKS) {
          const c = stats.banks[b];
          const statuses = Object.entries(c.byStatus).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
          const caps = Object.entries(c.captions).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
          out.push(`${b}: ${c.items} items — status: ${statuses}; captions: ${caps}`);
          for (const [reason, n] of Object.entries(c.failures)) out.push(`  failed ${n}: ${reason}`);
          for (const [reason, n] of Object.entries(c.captionProblems)) out.push(`  caption ${n}: ${reason}`);
        }
        if (stats.pairs.failed) out.push(`pairs: ${stats.pairs.failed} failed (scoring threw; decided again when a caption changes, or pair --all)`);
        for (const [reason, n] of Object.entries(stats.pairs.failures)) out.push(`  failed ${n}: ${reason}`);
        out.push(`images: ${stats.images.files} files, ${mb(stats.images.bytes)} in ${bank.images.blobs.location}; database: ${mb(stats.database.bytes)}`);
        const cr = stats.crawl;
        if (Object.keys(cr.urls).length) {
          const kinds = Object.entries(cr.urls).map(([k, by]) => `${k} ${Object.entries(by).map(([st, n]) => `${st} ${n}`).join('/')}`).join('; ');
          out.push(`crawl: ${kinds}`);
          out.push(`  pending retries ${cr.pendingRetries}, given up ${cr.givenUp} (capbridge crawl --list given-up), failed ${cr.failed}`);
          for (const cls of ['transient', 'permanent'] as const) {
            const by = Object.entries(cr.failures[cls]).map(([k, n]) => `${k} ${n}`).join(', ');
            if (by) out.push(`  ${cls} failures: ${by}`);
          }
        }
        process.stdout.write(out.join('\n') + '\n');
      }),
    );
}
