// `capbridge worker [--stages features,match,pair] [--concurrency N] [--drain] [--port N]`: the scale-out mode's
// worker process (src/worker/); any number of them, on any machines, share one PostgreSQL bank.
import type { Command } from 'commander';
import { JOB_STAGES, type JobStage } from '../bank/index.js';
import { startServer } from '../daemon/server.js';
import { UserError } from '../util/errors.js';
import { Worker, WorkerMetrics } from '../worker/worker.js';
import { action, printJson, runStoppable } from './context.js';

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description(
      'claim jobs (features, match, pair over ranges of items) from the bank\'s queue and run them; run any number on any ' +
        'machines against one PostgreSQL database (--db postgres://…); SIGTERM/SIGINT give the current jobs back and exit',
    )
    .option('--stages <list>', 'stages to claim, comma-separated (default: config worker.stages)')
    .option('--concurrency <n>', 'jobs run at once in this process (default: config worker.concurrency)')
    .option('--drain', 'exit when no job is open and none can be scheduled (batch runs) instead of waiting for more')
    .option('--host <host>', 'address of /healthz and /metrics (default 127.0.0.1)')
    .option('--port <port>', 'serve /healthz and /metrics on this port (0: any free port; default: no listener)')
    .option('--json', 'print the summary as JSON when the worker exits')
    .action(
      action(async (ctx, opts: { stages?: string; concurrency?: string; drain?: boolean; host?: string; port?: string; json?: boolean }) => {
        const stages = (opts.stages ? opts.stages.split(',').map((s) => s.trim()) : ctx.config.worker.stages) as JobStage[];
        for (const s of stages) if (!JOB_STAGES.includes(s)) throw new UserError(`--stages: "${s}" is not one of ${JOB_STAGES.join(', ')}`);
        const concurrency = opts.concurrency === undefined ? ctx.config.worker.concurrency : Number(opts.concurrency);
        if (!Number.isInteger(concurrency) || concurrency < 1) throw new UserError(`--concurrency: expected a whole number >= 1, got "${opts.concurrency}"`);
        // PostgreSQL down when the worker starts (a restart, a failover, the machine booting before the database):
        // wait for it as a running worker does, instead of exiting into systemd's start limit
        const bank = await ctx.bankWaiting(ctx.config.worker.bankWaitSeconds * 1000);
        if (bank.dialect !== 'postgres') {
          ctx.logger.warn('worker: this database is the embedded SQLite file; workers share work only through a PostgreSQL database (--db postgres://…)');
        }
        const metrics = new WorkerMetrics();
        return runStoppable('worker', ctx.logger, async (signal) => {
          const worker = new Worker(bank, ctx.config, { stages, concurrency, logger: ctx.logger, signal, drain: opts.drain, metrics });
          let server: Awaited<ReturnType<typeof startServer>> | null = null;
          if (opts.port !== undefined) {
            const port = Number(opts.port);
            if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UserError(`--port: expected 0..65535, got "${opts.port}"`);
            server = await startServer(opts.host ?? '127.0.0.1', port, metrics, {
              health: async () => {
                const b = await bank.health(2000);
                const queue = b.up ? await worker.queue().catch(() => null) : null;
                return { status: b.up ? 'ok' : 'bank-unavailable', alive: true, pid: process.pid, ...worker.state, bank: b, queue };
              },
            });
            process.stderr.write(`worker ${worker.state.id} listening on http://${opts.host ?? '127.0.0.1'}:${server.port}\n`);
          }
          try {
            const summary = await worker.run();
            if (opts.json) printJson(summary);
            else {
              process.stdout.write(
                `worker ${summary.id}: ${summary.claims} job(s) claimed, done ${JSON.stringify(summary.done)}; ${summary.failed} failed attempt(s), ` +
                  `${summary.gaveUp} job(s) given up after repeated failures, ${summary.interrupted} interrupted by an outage, ${summary.bankOutages} bank outage(s) waited out\n`,
              );
            }
            // 0 when every job this worker took ended done (or was given back to be done elsewhere): failed attempts
            // that a later attempt made good, and outages waited out, are not failures of the run
            return summary.gaveUp ? 1 : 0;
          } finally {
            await server?.close();
          }
        });
      }),
    );
}
