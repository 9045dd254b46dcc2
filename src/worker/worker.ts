// `capbridge worker`: claims jobs of the scale-out mode's queue (src/bank/jobs.ts) and runs the stage of each over
// its id range, against a bank shared by any number of workers on any number of machines. A claimed job carries a
// lease renewed while it runs; a worker killed with -9 stops renewing and its job is claimed again once the lease
// runs out. The stages write idempotently (features by image hash, candidates replaced per source, pairs upserted),
// so a job done twice changes nothing. An idle worker runs a scheduling round itself (schedule.ts), so workers
// alone are enough; the daemon in scale-out mode schedules too.
import os from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import client from 'prom-client';
import { SCHEDULED_STAGES, JobsRepo, isBankUnavailable, isInfrastructureFailure, type Bank, type Job, type JobStage } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import { loadStage, warmStage, type StageExtras } from '../stages/index.js';
import { errorMessage } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { BankWait } from './bank-wait.js';
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
  /** Back-off while waiting for the bank (default 1 s doubling to 30 s; tests shorten it). */
  backoff?: { firstMs: number; maxMs: number };
}

/** The sites of a crawl job (its key: a JSON list of site names, see crawl-jobs.ts). */
export function crawlJobSites(job: Job): string[] {
  const sites: unknown = JSON.parse(job.key ?? '[]');
  if (!Array.isArray(sites) || !sites.every((s) => typeof s === 'string')) throw new Error(`crawl job ${job.id}: its key is not a list of sites`);
  return sites;
}

/** The shard of a match job and its phase (its key: "first-last@plan", "first-last@plan/wide", see
 *  src/stages/match/shards.ts). */
export function matchShard(job: Job): { plan: string; range: { first: number; last: number }; phase: 'plain' | 'wide' } {
  const m = /^(\d+)-(\d+)@([0-9a-f]+)(\/wide)?$/.exec(job.key ?? '');
  if (!m) throw new Error(`match job ${job.id}: its key is not a shard ("${job.key}")`);
  return { plan: m[3]!, range: { first: Number(m[1]), last: Number(m[2]) }, phase: m[4] ? 'wide' : 'plain' };
}

export interface WorkerSummary {
  id: string;
  claims: number;
  done: Record<JobStage, number>;
  /** Attempts that failed (a job given back to be tried again counts here too). */
  failed: number;
  /** Jobs this worker closed after MAX_ATTEMPTS failed attempts (their rows are queued again by a later round):
   *  the one outcome that makes `worker --drain` exit 1. */
  gaveUp: number;
  /** Jobs stopped by a bank or image store outage and given back (not failed: nobody's fault). */
  interrupted: number;
  /** Bank outages this worker waited through. */
  bankOutages: number;
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
  readonly bankUp: client.Gauge;
  readonly bankOutages: client.Counter;

  constructor() {
    const registers = [this.registry];
    client.collectDefaultMetrics({ register: this.registry, prefix: 'capbridge_worker_process_' });
    this.claims = new client.Counter({ name: 'capbridge_worker_claims_total', help: 'Jobs claimed by this worker', labelNames: ['stage'], registers });
    this.jobs = new client.Counter({ name: 'capbridge_worker_jobs_total', help: 'Jobs finished by result (done, failed, released, interrupted, gave-up)', labelNames: ['stage', 'result'], registers });
    this.items = new client.Counter({ name: 'capbridge_worker_items_total', help: 'Items processed (throughput)', labelNames: ['stage'], registers });
    this.lag = new client.Gauge({ name: 'capbridge_queue_lag_seconds', help: 'Wait of the oldest unclaimed job, per stage', labelNames: ['stage'], registers });
    this.open = new client.Gauge({ name: 'capbridge_queue_jobs', help: 'Jobs in the queue by state (queued, leased)', labelNames: ['stage', 'state'], registers });
    this.bankUp = new client.Gauge({ name: 'capbridge_bank_up', help: '1 while the bank (PostgreSQL) answers this worker, 0 during an outage', registers });
    this.bankUp.set(1);
    this.bankOutages = new client.Counter({ name: 'capbridge_bank_outages_total', help: 'Bank outages this worker waited through', registers });
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
  /** The index shards this worker holds (target item id ranges), after its last match job. */
  shards: string[];
  summary: WorkerSummary;
  lastError: string | null;
  /** The bank as this worker sees it: up, or down since when and why (it is waiting for it). */
  bank: { up: boolean; since: string | null; lastError: string | null };
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
      shards: [],
      lastError: null,
      bank: { up: true, since: null, lastError: null },
      summary: {
        id, claims: 0, done: { crawl: 0, features: 0, match: 0, pair: 0 }, failed: 0, gaveUp: 0, interrupted: 0, bankOutages: 0,
        items: { crawl: 0, features: 0, match: 0, pair: 0 }, ms: 0,
      },
    };
    this.bankWait = new BankWait(bank, config.worker.bankWaitSeconds * 1000, opts.logger, opts.signal, {
      onChange: (down) => {
        this.state.bank = { up: !down, since: this.bankWait.state.since, lastError: down ? this.bankWait.state.lastError : null };
        opts.metrics?.bankUp.set(down ? 0 : 1);
        if (down) {
          this.state.summary.bankOutages++;
          opts.metrics?.bankOutages.inc();
        }
      },
    }, opts.backoff);
  }

  private readonly bankWait: BankWait;

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

  /** One claim loop: claim, run, repeat; a bank outage anywhere in it is waited out (BankWait), not an exit. */
  private async loop(): Promise<void> {
    const idle = { warmed: null as JobStage | null }; // the stage warmed since this loop's last job
    while (!this.opts.signal?.aborted) {
      try {
        if ((await this.step(idle)) === 'drained') break;
      } catch (err) {
        if (!isBankUnavailable(err)) throw err;
        this.state.lastError = errorMessage(err);
        await this.bankWait.until(err);
      }
    }
  }

  /** Claims and runs one job, or (none open) schedules a round, warms the next stage or sleeps. */
  private async step(idle: { warmed: JobStage | null }): Promise<'drained' | 'more'> {
    const { signal, logger } = this.opts;
    const job = await this.bank.repo(JobsRepo).claim(this.opts.stages, this.state.id, this.leaseMs, await this.heldShardKeys());
    if (job) {
      idle.warmed = null;
      await this.runJob(job);
      return 'more';
    }
    const round = await schedule(this.bank, this.config);
    if (round.jobs) {
      logger?.info(`worker: queued ${round.jobs} ${round.stage} job(s)`);
      return 'more';
    }
    if (this.opts.drain && round.scheduled && round.waitingFor === null && !this.state.running.length) return 'drained';
    // Other workers still hold the last jobs of a stage: meanwhile, do what the next stage starts with (load
    // the index, count new captions), so that the wait at each stage's end is not lost.
    const next = round.waitingFor ? SCHEDULED_STAGES[SCHEDULED_STAGES.indexOf(round.waitingFor) + 1] : undefined;
    if (next && next !== idle.warmed && this.opts.stages.includes(next)) {
      idle.warmed = next;
      const t0 = performance.now();
      try {
        await warmStage(next, this.bank, this.config, { signal });
        logger?.info(`worker: ready for ${next} (${Math.round(performance.now() - t0)} ms, while ${round.waitingFor} finishes)`);
      } catch (err) {
        if (isBankUnavailable(err)) throw err;
        logger?.warn(`worker: could not prepare ${next}: ${errorMessage(err)}`);
      }
      return 'more';
    }
    await sleep(this.config.worker.pollSeconds * 1000, signal);
    return 'more';
  }

  /** Renews the job's lease every third of it while the stage runs; when the lease is no longer this worker's,
   *  says why (from the job's row) and stops the stage. Returns the function that stops the renewal. */
  private heartbeat(job: Job, ac: AbortController): () => void {
    const jobs = this.bank.repo(JobsRepo);
    const { logger } = this.opts;
    let stopped = false;
    const what = `job ${job.id} (${job.stage} ${job.key ?? `${job.first}..${job.last}`})`;
    const beat = setInterval(() => {
      jobs.extend(job.id, this.state.id, this.leaseMs).then(
        async (mine) => {
          if (mine || stopped) return;
          const now = await jobs.holder(job.id).catch(() => undefined);
          if (stopped) return;
          const why = !now
            ? 'its row is gone'
            : now.state === 'done'
              ? 'it was marked done meanwhile'
              : now.worker
                ? `its lease ran out and worker ${now.worker} has it now`
                : 'its lease ran out and it was given back to the queue';
          logger?.warn(`worker: lost the lease of ${what}: ${why}; stopping it here`);
          ac.abort();
        },
        (err) => {
          if (!stopped) logger?.warn(`worker: could not renew the lease of ${what}: ${errorMessage(err)}`);
        },
      );
    }, Math.max(250, Math.floor(this.leaseMs / 3)));
    return () => {
      stopped = true;
      clearInterval(beat);
    };
  }

  /** Key prefixes of the index shards this process holds (match jobs of those shards are claimed first). */
  private async heldShardKeys(): Promise<string[]> {
    if (!this.opts.stages.includes('match')) return [];
    const { heldRanges } = await import('../lib/image-index/index.js');
    return heldRanges(this.bank).map((r) => `${r.first}-${r.last}@`);
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
    const stopBeat = this.heartbeat(job, ac);
    try {
      logger?.info(`worker: ${job.stage} ${job.key ?? `${job.first}..${job.last}`} (job ${job.id}, attempt ${job.attempts})`);
      const common = { signal: ac.signal, logger, threads: this.opts.threads };
      const r =
        job.stage === 'crawl'
          ? await (await loadStage('crawl'))(this.bank, this.config, { ...common, sites: crawlJobSites(job), ...this.opts.crawl })
          : job.stage === 'match' && job.key
            ? await (await loadStage('match'))(this.bank, this.config, { ...common, idRange: job, shard: matchShard(job) })
            : await (await loadStage(job.stage))(this.bank, this.config, { ...common, idRange: job });
      stopBeat();
      if (job.stage === 'match') this.state.shards = (await this.heldShardKeys()).map((k) => k.slice(0, -1));
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
      stopBeat(); // no renewal (nor a message about it) while the job is given back and the worker pauses
      await this.jobFailed(job, err);
    } finally {
      stopBeat();
      this.opts.signal?.removeEventListener('abort', onStop);
      this.state.running.splice(this.state.running.indexOf(entry), 1);
    }
  }

  /** A job that threw. The bank or the image store failing is nobody's fault: the job is given back once the bank
   *  answers (its attempts do not count against it) and the worker goes on. Anything else is a failed attempt: given
   *  back at once (another attempt, here or elsewhere, may succeed; the stages record per-item failures themselves),
   *  and a job that failed MAX_ATTEMPTS times is closed, so it cannot hold the later stages back for ever (its rows
   *  are queued again by the next round). */
  private async jobFailed(job: Job, err: unknown): Promise<void> {
    const { logger, metrics } = this.opts;
    const jobs = this.bank.repo(JobsRepo);
    const s = this.state.summary;
    const where = `${job.stage} ${job.key ?? `${job.first}..${job.last}`}`;
    this.state.lastError = `${where}: ${errorMessage(err)}`;
    if (isInfrastructureFailure(err)) {
      s.interrupted++;
      metrics?.jobs.inc({ stage: job.stage, result: 'interrupted' });
      logger?.warn(`worker: job ${job.id} (${where}) stopped, no item failed: ${errorMessage(err)}`);
      if (isBankUnavailable(err)) await this.bankWait.until(err);
      await jobs.release(job.id, this.state.id).catch(() => undefined); // else its lease runs out
      if (!isBankUnavailable(err)) await sleep(this.config.worker.pollSeconds * 1000, this.opts.signal);
      return;
    }
    s.failed++;
    logger?.error(`worker: job ${job.id} failed: ${this.state.lastError}`);
    metrics?.jobs.inc({ stage: job.stage, result: 'failed' });
    if (job.attempts >= MAX_ATTEMPTS) {
      s.gaveUp++;
      metrics?.jobs.inc({ stage: job.stage, result: 'gave-up' });
      logger?.error(`worker: job ${job.id} (${where}) failed ${job.attempts} times: closed; its rows are queued again by a later round`);
      await jobs.finish(job.id).catch(() => undefined);
    } else await jobs.release(job.id, this.state.id).catch(() => undefined);
    await sleep(this.config.worker.pollSeconds * 1000, this.opts.signal);
  }
}
