// A small worker_threads pool for feature extraction. With threads = 1 it runs in the calling thread (no worker).
// The worker file is resolved next to this module: worker.js when running from dist/, worker.ts when running the
// TypeScript sources through tsx (tests, `node --import tsx src/cli.ts`), in which case the worker is started with
// tsx's loader too.
//
// Two kinds of job: a whole image (bytes -> Features) and the synthesised views of a query (a decoded grey image
// + view specs -> one Features per view, mapped back to the original frame, see views.ts). A query's views are
// queued one job per view, so the pool's workers share them and the calling thread's event loop stays free.
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { DecodeError, type DecodeErrorCode } from './decode.js';
import { extractFeatures, type SiftConfig } from './extract.js';
import type { Features, SiftParams } from './types.js';
import { viewFeatures, type ViewFeaturesResult, type ViewSpec } from './views.js';

/** What a views job needs: the query's grey image at detection size and how to synthesise and describe its views. */
export interface ViewsInput {
  grey: Uint8Array;
  width: number;
  height: number;
  /** Detection px per original px (copied into every view's Features). */
  scale?: number;
}

export interface ViewsOptions {
  sift: SiftParams;
  keypointsPerView: number;
  /** Longest side of a synthesised view (Infinity: no limit). */
  maxSide?: number;
}

export type WorkerRequest =
  | { id: number; kind: 'image'; buf: Uint8Array; sift: SiftConfig }
  | {
      id: number;
      kind: 'views';
      grey: Uint8Array;
      width: number;
      height: number;
      scale: number;
      specs: ViewSpec[];
      params: SiftParams;
      keypointsPerView: number;
      maxSide: number;
    };

export type WorkerReply =
  | { id: number; ok: true; kind: 'image'; features: Features; ms: number }
  | { id: number; ok: true; kind: 'views'; views: Features[]; synthMs: number; extractMs: number; ms: number }
  | { id: number; ok: false; error: { name: string; code: string; message: string }; ms: number };

type OkReply = Extract<WorkerReply, { ok: true }>;

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
  /** Builds the message at dispatch time (copies are made then, not while the job waits in the queue). */
  message: (id: number) => { req: WorkerRequest; transfer: ArrayBuffer[] };
  resolve: (r: OkReply) => void;
  reject: (e: Error) => void;
}

/** A copy of bytes in its own ArrayBuffer, to transfer (the caller keeps its own). */
function copyBytes(b: Uint8Array): Uint8Array {
  const copy = new Uint8Array(b.byteLength);
  copy.set(b);
  return copy;
}

function replyError(e: { name: string; code: string; message: string }): Error {
  if (e.name === 'DecodeError') return new DecodeError(e.code as DecodeErrorCode, e.message);
  const err = e.name === 'RangeError' ? new RangeError(e.message) : new Error(e.message);
  return err;
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
    return this.submit((id) => {
      const copy = copyBytes(buf);
      return { req: { id, kind: 'image', buf: copy, sift: this.sift }, transfer: [copy.buffer as ArrayBuffer] };
    }).then((r) => {
      if (r.kind !== 'image') throw new Error('sift worker answered an image job with views');
      return { features: r.features, ms: r.ms };
    });
  }

  /**
   * The synthesised views of a grey image, described with SIFT and mapped back to its frame: the same Features,
   * in the same order, as views.ts's viewFeatures in the calling thread (which is what runs with threads = 1).
   * With workers, each view is one job, so the views of one query spread over all workers. synthMs and
   * extractMs are summed over the views (CPU time, not wall time). Rejects with a RangeError for bad input
   * (see checkViewInput) or an Error when a worker fails.
   */
  views(d: ViewsInput, specs: ViewSpec[], o: ViewsOptions): Promise<ViewFeaturesResult> {
    if (this.closed) return Promise.reject(new Error('sift pool is closed'));
    const maxSide = o.maxSide ?? Infinity;
    if (this.threads === 1) {
      // Synchronously, as the caller would: the result is the same function's.
      try {
        return Promise.resolve(viewFeatures(d, specs, o.sift, o.keypointsPerView, maxSide));
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    const jobs = specs.map((spec) =>
      this.submit((id) => {
        const grey = copyBytes(d.grey);
        const req: WorkerRequest = {
          id, kind: 'views', grey, width: d.width, height: d.height, scale: d.scale ?? 1,
          specs: [spec], params: o.sift, keypointsPerView: o.keypointsPerView, maxSide,
        };
        return { req, transfer: [grey.buffer as ArrayBuffer] };
      }),
    );
    return Promise.all(jobs).then((replies) => {
      const out: ViewFeaturesResult = { views: [], synthMs: 0, extractMs: 0 };
      for (const r of replies) {
        if (r.kind !== 'views') throw new Error('sift worker answered a views job with an image');
        out.views.push(...r.views);
        out.synthMs += r.synthMs;
        out.extractMs += r.extractMs;
      }
      return out;
    });
  }

  private submit(message: Job['message']): Promise<OkReply> {
    return new Promise((resolve, reject) => {
      if (!this.workers.length) {
        reject(new Error('sift workers are not available'));
        return;
      }
      this.queue.push({ id: this.nextId++, message, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.idle.length && this.queue.length) {
      const w = this.idle.pop()!;
      const job = this.queue.shift()!;
      let msg: ReturnType<Job['message']>;
      try {
        msg = job.message(job.id);
      } catch (err) {
        this.idle.push(w);
        job.reject(err as Error);
        continue;
      }
      this.running.set(w, job);
      w.ref();
      w.postMessage(msg.req, msg.transfer);
    }
  }

  private onReply(w: Worker, msg: WorkerReply): void {
    const job = this.running.get(w);
    this.running.delete(w);
    w.unref();
    this.idle.push(w);
    if (job) {
      if (msg.ok) job.resolve(msg);
      else job.reject(replyError(msg.error));
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

  /** Stops the workers. Queued jobs and jobs still running on a worker reject (none is left pending). */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue) job.reject(new Error('sift pool closed'));
    this.queue = [];
    for (const job of this.running.values()) job.reject(new Error('sift pool closed'));
    this.running.clear();
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers = [];
    this.idle = [];
  }
}
