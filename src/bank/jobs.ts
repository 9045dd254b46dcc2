// The work queue of the scale-out mode (migration 15): jobs are one stage over one range of item ids. Workers
// claim the oldest open job of their stages with a lease: on PostgreSQL the claim is one UPDATE over a
// `FOR UPDATE SKIP LOCKED` sub-select, so concurrent claimers never take the same job and never wait for each other;
// on SQLite the write lock serialises claims. Leases are measured on the database's clock.
import type { Sql } from './sql.js';

/** The stages the scheduler queues by id range, in pipeline order. */
export const SCHEDULED_STAGES = ['features', 'match', 'pair'] as const;
export type ScheduledStage = (typeof SCHEDULED_STAGES)[number];
/** Every stage a worker can run: crawl jobs (one host group each, keyed by its sites) are queued by the daemon. */
export const JOB_STAGES = ['crawl', ...SCHEDULED_STAGES] as const;
export type JobStage = (typeof JOB_STAGES)[number];

/** Item ids first..last (inclusive): what a stage run is restricted to. */
export interface IdRange {
  first: number;
  last: number;
}

export interface Job extends IdRange {
  id: number;
  stage: JobStage;
  attempts: number;
  /** What a keyed job runs over (a crawl job: the JSON list of its sites); null for an id range. */
  key: string | null;
}

export interface JobCounts {
  stage: JobStage;
  queued: number;
  leased: number;
  done: number;
  /** Seconds the oldest unclaimed job has waited (0 when none): the queue's lag. */
  oldestWaitingS: number;
}

export class JobsRepo {
  constructor(private db: Sql) {}

  /** Now in epoch milliseconds on the database's clock. */
  private get now(): string {
    return this.db.dialect === 'postgres'
      ? `(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT`
      : `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`;
  }

  /** Queues one job per range (call inside the scheduler's transaction). */
  async enqueue(stage: JobStage, ranges: readonly IdRange[], now = new Date().toISOString()): Promise<number> {
    return this.db.copyRows('jobs', ['stage', 'first_id', 'last_id', 'enqueued_at'], ranges.map((r) => [stage, r.first, r.last, now]));
  }

  /** Queues jobs over id ranges that also carry a key (match jobs of a sharded index: the shard). */
  async enqueueKeyedRanges(stage: JobStage, jobs: readonly { range: IdRange; key: string }[], now = new Date().toISOString()): Promise<number> {
    return this.db.copyRows('jobs', ['stage', 'first_id', 'last_id', 'key', 'enqueued_at'], jobs.map((j) => [stage, j.range.first, j.range.last, j.key, now]));
  }

  /** Queues one keyed job per key (crawl jobs: first_id = last_id = 0). */
  async enqueueKeyed(stage: JobStage, keys: readonly string[], now = new Date().toISOString()): Promise<number> {
    return this.db.copyRows('jobs', ['stage', 'first_id', 'last_id', 'key', 'enqueued_at'], keys.map((k) => [stage, 0, 0, k, now]));
  }

  /** The keys of a stage's open (queued or leased) keyed jobs. */
  async openKeys(stage: JobStage): Promise<Set<string>> {
    const rows = await this.db.all<{ key: string }>(`SELECT key FROM jobs WHERE state = 'queued' AND stage = ? AND key IS NOT NULL`, [stage]);
    return new Set(rows.map((r) => r.key));
  }

  /** Claims the oldest open job of these stages whose lease is free (never claimed, or run out): null when none. With
   *  `prefer` (key prefixes: the shards this worker holds), the oldest such job whose key starts with one of them
   *  first (locality: a shard's jobs go to the workers that have it loaded), else the oldest of any. */
  async claim(stages: readonly JobStage[], worker: string, leaseMs: number, prefer: readonly string[] = []): Promise<Job | null> {
    if (prefer.length) {
      const job = await this.claimWhere(stages, worker, leaseMs, ` AND (${prefer.map(() => 'key LIKE ?').join(' OR ')})`, prefer.map((p) => `${p}%`));
      if (job) return job;
    }
    return this.claimWhere(stages, worker, leaseMs, '', []);
  }

  private async claimWhere(stages: readonly JobStage[], worker: string, leaseMs: number, cond: string, args: string[]): Promise<Job | null> {
    const pg = this.db.dialect === 'postgres';
    const marks = stages.map(() => '?').join(', ');
    const row = await this.db.get<Job>(
      `UPDATE jobs SET worker = ?, lease_until = ${this.now} + ?, attempts = attempts + 1
       WHERE id = (SELECT id FROM jobs WHERE state = 'queued' AND stage IN (${marks}) AND (lease_until IS NULL OR lease_until < ${this.now})${cond}
                   ORDER BY id LIMIT 1${pg ? ' FOR UPDATE SKIP LOCKED' : ''})
       RETURNING id, stage, first_id AS "first", last_id AS "last", attempts, key`,
      [worker, leaseMs, ...stages, ...args],
    );
    return row ? { ...row, id: Number(row.id), first: Number(row.first), last: Number(row.last), attempts: Number(row.attempts), key: row.key ?? null } : null;
  }

  /** Extends the lease of a job this worker holds; false when it is no longer its own (the lease ran out and
   *  another worker took the job: the work is still idempotent, the other worker will finish it). */
  async extend(jobId: number, worker: string, leaseMs: number): Promise<boolean> {
    return (await this.db.run(`UPDATE jobs SET lease_until = ${this.now} + ? WHERE id = ? AND worker = ? AND state = 'queued'`, [leaseMs, jobId, worker])) > 0;
  }

  /** Who holds a job now and its state (what a worker that lost a lease says about it). */
  async holder(jobId: number): Promise<{ state: 'queued' | 'done'; worker: string | null } | undefined> {
    return this.db.get(
      `SELECT state, CASE WHEN state = 'queued' AND lease_until >= ${this.now} THEN worker ELSE NULL END AS worker FROM jobs WHERE id = ?`,
      [jobId],
    );
  }

  /** Marks a job done (by whoever holds it; a job done twice stays done). */
  async finish(jobId: number, now = new Date().toISOString()): Promise<void> {
    await this.db.run(`UPDATE jobs SET state = 'done', done_at = ?, lease_until = NULL WHERE id = ? AND state = 'queued'`, [now, jobId]);
  }

  /** Gives a job back at once (a worker stopping cleanly, or a job that failed: another attempt may succeed). */
  async release(jobId: number, worker: string): Promise<void> {
    await this.db.run(`UPDATE jobs SET lease_until = NULL, worker = NULL WHERE id = ? AND worker = ? AND state = 'queued'`, [jobId, worker]);
  }

  /** Open (queued or leased) jobs of a stage. */
  async open(stage: JobStage): Promise<number> {
    return Number((await this.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM jobs WHERE state = 'queued' AND stage = ?`, [stage]))!.n);
  }

  /** On PostgreSQL, takes the scheduler's lock for the rest of the transaction if no one holds it (false: another
   *  process is scheduling now). SQLite: always true (the transaction's write lock serialises schedulers). */
  async tryLockScheduler(): Promise<boolean> {
    if (this.db.dialect !== 'postgres') return true;
    return (await this.db.get<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock(7216020) AS ok'))!.ok;
  }

  /** Jobs in id order (after `afterId`): who holds or held each, its state and attempts. */
  async list(afterId = 0, limit = 1000): Promise<(Job & { state: 'queued' | 'done'; worker: string | null; leased: boolean })[]> {
    const rows = await this.db.all<Job & { state: 'queued' | 'done'; worker: string | null; leased: boolean | number }>(
      `SELECT id, stage, first_id AS "first", last_id AS "last", attempts, key, state, worker,
              CASE WHEN state = 'queued' AND lease_until >= ${this.now} THEN 1 ELSE 0 END AS leased
       FROM jobs WHERE id > ? ORDER BY id LIMIT ?`,
      [afterId, limit],
    );
    return rows.map((r) => ({ ...r, id: Number(r.id), first: Number(r.first), last: Number(r.last), attempts: Number(r.attempts), key: r.key ?? null, leased: Number(r.leased) === 1 }));
  }

  /** Per stage: seconds from its first job's queuing to its last job's end (null while one is open): where a run's
   *  time went (the stages run one after the other). */
  async spans(): Promise<Record<string, number | null>> {
    const rows = await this.db.all<{ stage: JobStage; first: string; last: string | null; open: number }>(
      `SELECT stage, MIN(enqueued_at) AS first, MAX(done_at) AS last, SUM(CASE WHEN state = 'queued' THEN 1 ELSE 0 END) AS open
       FROM jobs GROUP BY stage ORDER BY stage`,
    );
    return Object.fromEntries(rows.map((r) => [r.stage, Number(r.open) || !r.last ? null : Math.round((Date.parse(r.last) - Date.parse(r.first)) / 100) / 10]));
  }

  /** Per stage: queued (free), leased, done, and the wait of the oldest free job. */
  async counts(): Promise<JobCounts[]> {
    const rows = await this.db.all<{ stage: JobStage; queued: number; leased: number; done: number; oldest: string | null }>(
      `SELECT stage,
              SUM(CASE WHEN state = 'queued' AND (lease_until IS NULL OR lease_until < ${this.now}) THEN 1 ELSE 0 END) AS queued,
              SUM(CASE WHEN state = 'queued' AND lease_until >= ${this.now} THEN 1 ELSE 0 END) AS leased,
              SUM(CASE WHEN state = 'done' THEN 1 ELSE 0 END) AS done,
              MIN(CASE WHEN state = 'queued' AND (lease_until IS NULL OR lease_until < ${this.now}) THEN enqueued_at END) AS oldest
       FROM jobs GROUP BY stage ORDER BY stage`,
    );
    const now = Date.now();
    return rows.map((r) => ({
      stage: r.stage,
      queued: Number(r.queued),
      leased: Number(r.leased),
      done: Number(r.done),
      oldestWaitingS: r.oldest ? Math.max(0, Math.round((now - Date.parse(r.oldest)) / 1000)) : 0,
    }));
  }
}
