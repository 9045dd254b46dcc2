// `capbridge daemon`: the pipeline on node-cron schedules.
//   daemon.crawlSchedule  → one cycle: crawl, then features, match and pair on what is in the bank
//   daemon.exportSchedule → the pairs never exported before, as dated files in <data>/<export.folder>/
// A cycle also runs at start-up (a restart after a crash resumes at once: every stage resumes from bank rows).
// One instance per data dir (lock file); SIGTERM/SIGINT abort the current stage, wait for it to finish or
// checkpoint (stages commit per batch and stop between batches) up to daemon.shutdownTimeoutSecs, then exit 0.
import cron, { type ScheduledTask } from 'node-cron';
import type { Bank } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../util/log.js';
import { errorMessage, UserError } from '../util/errors.js';
import { acquireLock, type DaemonLock } from './lock.js';
import { DaemonMetrics } from './metrics.js';
import { runCycle, runScheduledExport, type CycleReport, type StageName } from './cycle.js';
import { startServer } from './server.js';

export interface DaemonOptions {
  bank: Bank;
  config: Config;
  logger: Logger;
  /** Run one full cycle and return (no schedules). */
  once?: boolean;
  /** With once: also run the scheduled export after the cycle. */
  exportAfter?: boolean;
  /** Listener address (default config.daemon.host/port); with once the listener starts only when port is given. */
  host?: string;
  port?: number;
  stages?: StageName[];
  /** Called with the bound port once the listener is up. */
  onListening?: (port: number, host: string) => void;
  /** Signals to handle (tests pass none and call stop()). */
  handleSignals?: boolean;
  /** The time the scheduled export names its dated files by (default: the system clock). */
  now?: () => Date;
}

export interface DaemonResult {
  cycles: number;
  lastCycle: CycleReport | null;
  exitCode: number;
}

export class Daemon {
  private lock: DaemonLock | null = null;
  private controller = new AbortController();
  private current: Promise<CycleReport> | null = null;
  private tasks: ScheduledTask[] = [];
  private stopResolve: (() => void) | null = null;
  private stopped = false;
  private closeServer: (() => Promise<void>) | null = null;
  readonly metrics: DaemonMetrics;
  readonly startedAt = new Date().toISOString();
  cycles = 0;
  lastCycle: CycleReport | null = null;

  constructor(private opts: DaemonOptions) {
    this.metrics = new DaemonMetrics(opts.bank);
  }

  async health(): Promise<Record<string, unknown>> {
    const { bank } = this.opts;
    // the bank's state first: while it is down, /healthz says so (HTTP 503) instead of failing or saying "ok"
    const b = await bank.health(2000);
    const stored = b.up ? await bank.meta.getJson<CycleReport>('daemon.lastSuccessfulCycle').catch(() => undefined) : undefined;
    const lastSuccess = this.lastCycle?.ok ? this.lastCycle : (stored ?? null);
    return {
      status: this.stopped ? 'stopping' : b.up ? 'ok' : 'bank-unavailable',
      bank: b,
      pid: process.pid,
      startedAt: this.startedAt,
      dataDir: bank.dataDir,
      cycleRunning: Boolean(this.current),
      cycles: this.cycles,
      lastCycle: this.lastCycle ? { startedAt: this.lastCycle.startedAt, finishedAt: this.lastCycle.finishedAt, ok: this.lastCycle.ok } : null,
      lastSuccessfulCycle: lastSuccess ? { startedAt: lastSuccess.startedAt, finishedAt: lastSuccess.finishedAt } : null,
    };
  }

  /** Runs one cycle unless one is running (schedules never overlap). */
  async cycle(): Promise<CycleReport | null> {
    if (this.current || this.stopped) return null;
    const { bank, config, logger } = this.opts;
    this.current = runCycle(bank, config, { logger, signal: this.controller.signal, metrics: this.metrics, stages: this.opts.stages });
    try {
      const rep = await this.current;
      this.cycles++;
      this.lastCycle = rep;
      logger.info(`cycle ${rep.ok ? 'done' : rep.aborted ? 'aborted' : 'done with errors'}`, {
        stages: rep.stages.map((s) => `${s.stage}:${s.result}`).join(' '),
      });
      return rep;
    } finally {
      this.current = null;
    }
  }

  async exportNow(): Promise<void> {
    const { bank, config, logger } = this.opts;
    try {
      await runScheduledExport(bank, config, { logger, metrics: this.metrics, ...(this.opts.now ? { now: this.opts.now() } : {}) });
    } catch (err) {
      logger.error(`export: failed — ${errorMessage(err)}`);
    }
  }

  async run(): Promise<DaemonResult> {
    const { bank, config, logger } = this.opts;
    this.lock = acquireLock(bank.dataDir);
    if (this.lock.tookOverFrom) logger.warn(`daemon: took over a stale lock of pid ${this.lock.tookOverFrom.pid} (that process is gone); resuming`);
    const onSignal = (sig: NodeJS.Signals) => {
      if (this.stopped) {
        logger.warn(`daemon: ${sig} again — exiting now (committed work is kept)`);
        this.lock?.release();
        process.exit(0);
      }
      logger.info(`daemon: ${sig} — stopping (finishing the current batch, at most ${config.daemon.shutdownTimeoutSecs}s)`);
      void this.stop().then((timedOut) => {
        if (!timedOut) return;
        // the stage did not reach a checkpoint in time: committed batches are safe, leave now
        void this.closeServer?.();
        this.lock?.release();
        process.exit(0);
      });
    };
    if (this.opts.handleSignals !== false) {
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    }
    try {
      const wantServer = !this.opts.once || this.opts.port !== undefined;
      if (wantServer) {
        const host = this.opts.host ?? config.daemon.host;
        const srv = await startServer(host, this.opts.port ?? config.daemon.port, this.metrics, this).catch((err: Error) => {
          throw new UserError(`daemon: cannot listen on ${host}:${this.opts.port ?? config.daemon.port}: ${err.message}`);
        });
        this.closeServer = srv.close;
        logger.info(`daemon: listening on http://${host}:${srv.port} (/healthz, /metrics)`);
        this.opts.onListening?.(srv.port, host);
      }
      if (this.opts.once) {
        const rep = await this.cycle();
        if (this.opts.exportAfter && rep && !rep.aborted) await this.exportNow();
        await this.shutdown();
        return { cycles: this.cycles, lastCycle: this.lastCycle, exitCode: rep && rep.ok ? 0 : rep?.aborted ? 0 : 1 };
      }
      for (const [name, expr] of [['crawl', config.daemon.crawlSchedule], ['export', config.daemon.exportSchedule]] as const) {
        if (!cron.validate(expr)) throw new UserError(`config daemon.${name}Schedule: invalid cron expression "${expr}"`);
      }
      this.tasks.push(
        cron.schedule(config.daemon.crawlSchedule, () => void this.cycle(), { name: 'cycle', noOverlap: true }),
        cron.schedule(config.daemon.exportSchedule, () => this.exportNow(), { name: 'export', noOverlap: true }),
      );
      logger.info(`daemon: cycle on "${config.daemon.crawlSchedule}", export on "${config.daemon.exportSchedule}"; first cycle now`);
      const stoppedP = new Promise<void>((resolve) => (this.stopResolve = resolve));
      void this.cycle();
      await stoppedP;
      return { cycles: this.cycles, lastCycle: this.lastCycle, exitCode: 0 };
    } finally {
      await this.shutdown();
      if (this.opts.handleSignals !== false) {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
      }
    }
  }

  /** Graceful stop: no new cycles, abort the current stage, wait for it up to the timeout. */
  async stop(): Promise<boolean> {
    if (this.stopped) return false;
    this.stopped = true;
    for (const t of this.tasks) await t.stop();
    this.controller.abort();
    const { config, logger } = this.opts;
    let timedOut = false;
    if (this.current) {
      let timer: NodeJS.Timeout | undefined;
      timedOut = await Promise.race([
        this.current.then(() => false, () => false),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(true), config.daemon.shutdownTimeoutSecs * 1000))),
      ]);
      clearTimeout(timer);
      if (timedOut) logger.warn(`daemon: the current stage did not stop within ${config.daemon.shutdownTimeoutSecs}s; exiting (committed batches are kept, the rest resumes on restart)`);
    }
    this.stopResolve?.();
    return timedOut;
  }

  private async shutdown(): Promise<void> {
    for (const t of this.tasks) await t.destroy();
    this.tasks = [];
    if (this.closeServer) {
      await this.closeServer();
      this.closeServer = null;
    }
    this.lock?.release();
  }
}
