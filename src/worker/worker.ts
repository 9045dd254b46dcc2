// `capbridge worker`: claims jobs of the scale-out mode's queue (src/bank/jobs.ts) and runs the stage of each over
// its id range, against a bank shared by any number of workers on any number of machines. A claimed job carries a
// lease renewed while it runs; a worker killed with -9 stops renewing and its job is claimed again once the lease
// runs out. The stages write idempotently (features by image hash, candidates replaced per source, pairs upserted),
// so a job done twice changes nothing. An idle worker runs a scheduling round itself (schedule.ts), so workers
// alone are enough; the daemon in scale-out mode schedules too.
import os from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import client from 'prom-client';
import { SCHEDULED_STAGES, JobsRepo, type Bank, type Job, type JobStage } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import { loadStage, warmStage, type StageExtras } from '../stages/index.js';
import { errorMessage } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { schedule } from './schedule.js';

export interface WorkerOptions {
  stages: JobStage[];
  concurrency: number;
  logger?: Logger;
  signal?: AbortSignal;
  /** Exit when no job is open or can be scheduled (tests, benchmarks, batch runs); default: wait for more. */
  drain?: boolean;
  /** This worker's name in the queue (default host:pid). */
  id?: string;
  /** SIFT threads per job (default config sift.threads). */
  threads?: number;
  metrics?: WorkerMetrics;
  /** Options of the crawl stage for crawl jobs (tests point made-up host names at loopback). */
  crawl?: StageExtras['crawl'];
}

/** The sites of a crawl job (its key: a JSON list of site names, see crawl-jobs.ts). */
export function crawlJobSites(job: Job): string[] {
  const sites: unknown = JSON.parse(job.key ?? '[]');
  if (!Array.isArray(sites) || !sites.every((s) => typeof s === 'string')) throw new Error(`crawl job ${job.id}: its key is not a list of sites`);
  return sites;
}

export interface WorkerSummary {
  id: string;
  claims: number;
  done: Record<JobStage, number>;
  failed: number;
  /** Items the finished jobs covered (their id ranges' pending rows), per stage. */
  items: Record<JobStage, number>;
  ms: number;
}

/** Prometheus metrics of one worker (served on /metrics with its /healthz). */
export class WorkerMetrics {
  readonly registry = new client.Registry();
  readonly claims: client.Counter<'stage'>;
  readonly jobs: client.Counter<'stage' | 'result'>;
  readonly items: client.Counter<'stage'>;
  readonly lag: client.Gauge<'stage'>;
  readonly open: client.Gauge<'stage' | 'state'>;

  constructor() {
    const registers = [this.registry];
    client.collectDefaultMetrics({ register: this.registry, prefix: 'capbridge_worker_process_' });
    this.claims = new client.Counter({ name: 'capbridge_worker_claims_total', help: 'Jobs claimed by this worker', labelNames: ['stage'], registers });
    this.jobs = new client.Counter({ name: 'capbridge_worker_jobs_total', help: 'Jobs finished by result (done, failed, released)', labelNames: ['stage', 'result'], registers });
    this.items = new client.Counter({ name: 'capbridge_worker_items_total', help: 'Items processed (throughput)', labelNames: ['stage'], registers });
    this.lag = new client.Gauge({ name: 'capbridge_queue_lag_seconds', help: 'Wait of the oldest unclaimed job, per stage', labelNames: ['stage'], registers });
    this.open = new client.Gauge({ name: 'capbridge_queue_jobs', help: 'Jobs in the queue by state (queued, leased)', labelNames: ['stage', 'state'], registers });
  }
}

const MAX_ATTEMPTS = 5;

/** Waits ms, or less when the signal aborts (node's timers/promises; the abort is not an error here). */
const sleep = (ms: number, signal?: AbortSignal) => delay(ms, undefined, { signal }).catch(() => undefined);

/** Live state of a worker, for /healthz. */
export interface WorkerState {
  id: string;
  stages: JobStage[];
  running: { job: number; stage: JobStage; first: number; last: number; since: string }[];
  summary: WorkerSummary;
  lastError: string | null;
}

export class Worker {
  readonly state: WorkerState;
  private readonly leaseMs: number;

  constructor(
    private bank: Bank,
    private config: Config,
    private opts: WorkerOptions,
  ) {
    const id = opts.id ?? `${os.hostname()}:${process.pid}`;
    this.leaseMs = Math.round(config.worker.leaseSeconds * 1000);
    this.state = {
      id,
      stages: opts.stages,
      running: [],
      lastError: null,
      summary: { id, claims: 0, done: { crawl: 0, features: 0, match: 0, pair: 0 }, failed: 0, items: { crawl: 0, features: 0, match: 0, pair: 0 }, ms: 0 },
    };
  }

  /** Runs `concurrency` claim loops until the signal (or, with drain, until there is no work left). */
  async run(): Promise<WorkerSummary> {
    const t0 = performance.now();
    const loops = Array.from({ length: this.opts.concurrency }, () => this.loop());
    await Promise.all(loops);
    this.state.summary.ms = Math.round(performance.now() - t0);
    return this.state.summary;
  }

  /** Queue counts for /healthz and the lag gauges. */
  async queue() {
    const counts = await this.bank.repo(JobsRepo).counts();
    for (const c of counts) {
      this.opts.metrics?.lag.set({ stage: c.stage }, c.oldestWaitingS);
      this.opts.metrics?.open.set({ stage: c.stage, state: 'queued' }, c.queued);
      this.opts.metrics?.open.set({ stage: c.stage, state: 'leased' }, c.leased);
    }
    return counts;
  }

  private async loop(): Promise<void> {
    const { signal, logger } = this.opts;
    const jobs = this.bank.repo(JobsRepo);
    let warmed: JobStage | null = null; // the stage warmed since this loop's last job
    while (!signal?.aborted) {
      const job = await jobs.claim(this.opts.stages, this.state.id, this.leaseMs);
      if (!job) {
        const round = await schedule(this.bank, this.config);
        if (round.jobs) {
          logger?.info(`worker: queued ${round.jobs} ${round.stage} job(s)`);
          continue;
        }
        if (this.opts.drain && round.scheduled && round.waitingFor === null && !this.state.running.length) break;
        // Other workers still hold the last jobs of a stage: meanwhile, do what the next stage starts with (load
        // the index, count new captions), so that the wait at each stage's end is not lost.
        const next = round.waitingFor ? SCHEDULED_STAGES[SCHEDULED_STAGES.indexOf(round.waitingFor) + 1] : undefined;
        if (next && next !== warmed && this.opts.stages.includes(next)) {
          warmed = next;
          const t0 = performance.now();
          try {
            await warmStage(next, this.bank, this.config, { signal });
            logger?.info(`worker: ready for ${next} (${Math.round(performance.now() - t0)} ms, while ${round.waitingFor} finishes)`);
          } catch (err) {
            logger?.warn(`worker: could not prepare ${next}: ${errorMessage(err)}`);
          }
          continue;
        }
        await sleep(this.config.worker.pollSeconds * 1000, signal);
        continue;
      }
      warmed = null;
      await this.runJob(job);
    }
  }

  private async runJob(job: Job): Promise<void> {
    const { logger, metrics } = this.opts;
    const jobs = this.bank.repo(JobsRepo);
    const s = this.state.summary;
    s.claims++;
    metrics?.claims.inc({ stage: job.stage });
    const entry = { job: job.id, stage: job.stage, first: job.first, last: job.last, since: new Date().toISOString() };
    this.state.running.push(entry);
    // The stage stops between batches when this worker is stopped, or when its lease was lost.
    const ac = new AbortController();
    const onStop = () => ac.abort();
    this.opts.signal?.addEventListener('abort', onStop, { once: true });
    const beat = setInterval(() => {
      jobs.extend(job.id, this.state.id, this.leaseMs).then(
        (mine) => {
          if (!mine) {
            logger?.warn(`worker: lost the lease of job ${job.id} (${job.stage} ${job.first}..${job.last}); another worker has it`);
            ac.abort();
          }
        },
        (err) => logger?.warn(`worker: could not renew the lease of job ${job.id}: ${errorMessage(err)}`),
      );
    }, Math.max(250, Math.floor(this.leaseMs / 3)));
    try {
      logger?.info(`worker: ${job.stage} ${job.key ?? `${job.first}..${job.last}`} (job ${job.id}, attempt ${job.attempts})`);
      const common = { signal: ac.signal, logger, threads: this.opts.threads };
      const r =
        job.stage === 'crawl'
          ? await (await loadStage('crawl'))(this.bank, this.config, { ...common, sites: crawlJobSites(job), ...this.opts.crawl })
          : await (await loadStage(job.stage))(this.bank, this.config, { ...common, idRange: job });
      if (r.aborted) {
        await jobs.release(job.id, this.state.id);
        metrics?.jobs.inc({ stage: job.stage, result: 'released' });
      } else {
        await jobs.finish(job.id);
        s.done[job.stage]++;
        s.items[job.stage] += r.items;
        metrics?.jobs.inc({ stage: job.stage, result: 'done' });
        metrics?.items.inc({ stage: job.stage }, r.items);
      }
    } catch (err) {
      s.failed++;
      this.state.lastError = `${job.stage} ${job.first}..${job.last}: ${errorMessage(err)}`;
      logger?.error(`worker: job ${job.id} failed: ${this.state.lastError}`);
      metrics?.jobs.inc({ stage: job.stage, result: 'failed' });
      // Given back at once: another attempt (here or elsewhere) may succeed (the stages record per-item failures
      // themselves; what fails a whole job is the bank or the machine). A job that failed MAX_ATTEMPTS times is
      // closed, so it cannot hold the later stages back for ever; its rows are queued again by the next round.
      if (job.attempts >= MAX_ATTEMPTS) await jobs.finish(job.id).catch(() => undefined);
      else await jobs.release(job.id, this.state.id).catch(() => undefined);
      await sleep(this.config.worker.pollSeconds * 1000, this.opts.signal);
    } finally {
      clearInterval(beat);
      this.opts.signal?.removeEventListener('abort', onStop);
      this.state.running.splice(this.state.running.indexOf(entry), 1);
    }
  }
}
