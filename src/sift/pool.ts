// A small worker_threads pool for feature extraction. With threads = 1 it runs in the calling thread (no worker).
// The worker file is resolved next to this module: worker.js when running from dist/, worker.ts when running the
// TypeScript sources through tsx (tests, `node --import tsx src/cli.ts`), in which case the worker is started with
// tsx's loader too.
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { DecodeError, type DecodeErrorCode } from './decode.js';
import { extractFeatures, type SiftConfig } from './extract.js';
import type { Features } from './types.js';

export interface WorkerRequest {
  id: number;
  buf: Uint8Array;
  sift: SiftConfig;
}

export type WorkerReply =
  | { id: number; ok: true; features: Features; ms: number }
  | { id: number; ok: false; error: { name: string; code: string; message: string }; ms: number };

export interface ExtractResult {
  features: Features;
  ms: number;
}

export function resolveThreads(requested: number | undefined, configured: number): number {
  const n = requested ?? configured;
  if (!n || n <= 0) return Math.max(1, typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length);
  return Math.floor(n);
}

/**
 * Starts one worker. From dist/ the worker is worker.js next to this file. From TypeScript sources (tsx) the
 * worker is worker.ts, loaded through a small eval bootstrap that registers tsx's ESM loader first (passing
 * `--import tsx` in execArgv is not enough on Node 20: the entry is resolved before the hook is active).
 */
function spawnWorker(): Worker {
  const self = import.meta.url;
  if (self.endsWith('.ts')) {
    const url = new URL('./worker.ts', self).href;
    const boot = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(url)}); })`;
    return new Worker(boot, { eval: true });
  }
  return new Worker(new URL('./worker.js', self));
}

interface Job {
  id: number;
  buf: Uint8Array;
  resolve: (r: ExtractResult) => void;
  reject: (e: Error) => void;
}

export class SiftPool {
  readonly threads: number;
  private workers: Worker[] = [];
  private idle: Worker[] = [];
  private queue: Job[] = [];
  private running = new Map<Worker, Job>();
  private nextId = 1;
  private closed = false;
  private crashes = 0;

  constructor(private sift: SiftConfig, threads: number) {
    this.threads = Math.max(1, threads);
    if (this.threads > 1) {
      for (let i = 0; i < this.threads; i++) this.addWorker();
    }
  }

  /** Features of one image. Rejects with DecodeError (code, message) or another Error. */
  extract(buf: Uint8Array): Promise<ExtractResult> {
    if (this.closed) return Promise.reject(new Error('sift pool is closed'));
    if (this.threads === 1) {
      const t0 = performance.now();
      return extractFeatures(buf, { sift: this.sift }).then((features) => ({ features, ms: performance.now() - t0 }));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, buf, resolve, reject });
      if (!this.workers.length) this.queue.pop()!.reject(new Error('sift workers are not available'));
      this.pump();
    });
  }

  private pump(): void {
    while (this.idle.length && this.queue.length) {
      const w = this.idle.pop()!;
      const job = this.queue.shift()!;
      this.running.set(w, job);
      // Copy into a transferable buffer (the caller may keep its own).
      const copy = new Uint8Array(job.buf.byteLength);
      copy.set(job.buf);
      w.ref();
      w.postMessage({ id: job.id, buf: copy, sift: this.sift } satisfies WorkerRequest, [copy.buffer]);
    }
  }

  private onReply(w: Worker, msg: WorkerReply): void {
    const job = this.running.get(w);
    this.running.delete(w);
    w.unref();
    this.idle.push(w);
    if (job) {
      if (msg.ok) job.resolve({ features: msg.features, ms: msg.ms });
      else {
        const err = msg.error.name === 'DecodeError' ? new DecodeError(msg.error.code as DecodeErrorCode, msg.error.message) : new Error(msg.error.message);
        job.reject(err);
      }
    }
    this.pump();
  }

  private onWorkerError(w: Worker, err: Error): void {
    // A crashed worker fails its job and is replaced so the run goes on.
    const job = this.running.get(w);
    this.running.delete(w);
    this.workers = this.workers.filter((x) => x !== w);
    this.idle = this.idle.filter((x) => x !== w);
    job?.reject(new Error(`sift worker crashed: ${err.message}`));
    if (this.closed) return;
    if (++this.crashes > 3 * this.threads) {
      // Workers keep dying (e.g. cannot load): fail what is queued instead of respawning forever.
      for (const q of this.queue) q.reject(new Error(`sift worker crashed: ${err.message}`));
      this.queue = [];
      return;
    }
    this.addWorker();
    this.pump();
  }

  private addWorker(): void {
    const w = spawnWorker();
    w.on('message', (msg: WorkerReply) => this.onReply(w, msg));
    w.on('error', (err) => this.onWorkerError(w, err));
    w.unref();
    this.workers.push(w);
    this.idle.push(w);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue) job.reject(new Error('sift pool closed'));
    this.queue = [];
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers = [];
    this.idle = [];
  }
}
