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
      action((ctx, opts: { json?: boolean }) => {
        const stats = ctx.bank.repo(StatsRepo).all();
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
        out.push(`images: ${stats.images.files} files, ${mb(stats.images.bytes)}; database: ${mb(stats.database.bytes)}`);
        process.stdout.write(out.join('\n') + '\n');
      }),
    );
}
