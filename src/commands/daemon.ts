// `capbridge daemon [--once] [--export] [--retry-failed] [--host H] [--port N] [--json]`
import type { Command } from 'commander';
import { Daemon } from '../daemon/daemon.js';
import { UserError } from '../util/errors.js';
import { action, printJson } from './context.js';

export function registerDaemon(program: Command): void {
  program
    .command('daemon')
    .description(
      'run the pipeline on the schedules of config daemon.* (crawl → features → match → pair; nightly export of new pairs), ' +
        'with /healthz and /metrics on a loopback port; one instance per data dir; SIGTERM/SIGINT stop it cleanly',
    )
    .option('--once', 'run one full cycle now and exit (no schedules; no listener unless --port is given)')
    .option('--export', 'with --once: also write the scheduled export (new pairs, dated files in the export folder)')
    .option('--host <host>', 'listener address (default: config daemon.host)')
    .option('--port <port>', 'listener port, 0 for any free port (default: config daemon.port)')
    .option('--json', 'with --once: print the cycle report as JSON')
    .option('--retry-failed', 'before the first cycle, send the items that failed before back to be tried again (by default a failed item waits for a new image)')
    .action(
      action(async (ctx, opts: { once?: boolean; export?: boolean; host?: string; port?: string; json?: boolean; retryFailed?: boolean }) => {
        let port: number | undefined;
        if (opts.port !== undefined) {
          port = Number(opts.port);
          if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UserError(`--port: expected 0..65535, got "${opts.port}"`);
        }
        if (opts.retryFailed) ctx.logger.info(`daemon: ${await (await ctx.bank).items.retryFailed()} failed item(s) sent back to be tried again`);
        const daemon = new Daemon({
          bank: await ctx.bank,
          config: ctx.config,
          logger: ctx.logger,
          once: opts.once,
          exportAfter: opts.export,
          host: opts.host,
          port,
          onListening: (p, h) => {
            if (!opts.json) process.stdout.write(`daemon listening on http://${h}:${p}\n`);
          },
        });
        const res = await daemon.run();
        if (opts.once) {
          if (opts.json) printJson(res.lastCycle);
          else if (res.lastCycle) {
            for (const s of res.lastCycle.stages) {
              process.stdout.write(`${s.stage.padEnd(8)} ${s.result.padEnd(7)} ${(s.ms / 1000).toFixed(1)}s${s.error ? ` — ${s.error}` : ''}\n`);
            }
          }
        }
        return res.exitCode;
      }),
    );
}
