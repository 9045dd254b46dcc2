// `npm run bench:views`: wall time of a query's synthesised views (config match.views: tilts x rotations, SIFT per
// view, keypoints mapped back) in the calling thread vs on a SiftPool of 2 worker threads, in the same process,
// on real wide-baseline queries (retrieval-wxbs sources). Also checks that both give the same bytes and reports
// the longest event-loop stall of each way (the longest gap between turns of a 2 ms interval timer, counting the
// gaps up to the start and the end of the call). Machine load (loadavg) is in the line: on a machine whose other
// core is busy the pool has nothing to gain in wall time. Prints ONE JSON line.
// Env: CAPBRIDGE_SHARED_DATA (default ../shared/data), BENCH_VIEWS_N (queries, spread over source.tsv; 6),
//      BENCH_VIEWS_REPEAT (runs per query and way, best kept; 2), BENCH_VIEWS_THREADS (pool size; 2).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.js';
import { decodeGrey } from '../src/lib/sift/index.js';
import { siftParams } from '../src/lib/sift/index.js';
import { SiftPool } from '../src/lib/sift/index.js';
import type { Features } from '../src/lib/sift/index.js';
import { viewFeatures, viewSpecs } from '../src/lib/sift/index.js';
import { readTsvObjects } from '../src/util/tsv.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const data = process.env.CAPBRIDGE_SHARED_DATA ?? path.resolve(repoRoot, '..', 'shared', 'data');
const N = Number(process.env.BENCH_VIEWS_N ?? 6);
const REPEAT = Number(process.env.BENCH_VIEWS_REPEAT ?? 2);
const THREADS = Number(process.env.BENCH_VIEWS_THREADS ?? 2);

const { config } = loadConfig({});
const vc = config.match.views;
const specs = viewSpecs(vc.tilts, vc.rotations);
const params = siftParams(config.sift);
const set = path.join(data, 'retrieval-wxbs');
const rows = (await readTsvObjects(path.join(set, 'source.tsv'))) as Array<Record<string, string>>;
const picked = Array.from({ length: Math.min(N, rows.length) }, (_, i) => rows[Math.floor((i * rows.length) / Math.min(N, rows.length))]!);

const same = (a: Features[], b: Features[]) =>
  a.length === b.length &&
  a.every((f, i) => {
    const g = b[i]!;
    const kb = (x: Float32Array) => Buffer.from(x.buffer, x.byteOffset, x.byteLength);
    return f.count === g.count && f.scale === g.scale && kb(f.keypoints).equals(kb(g.keypoints)) && Buffer.from(f.descriptors).equals(Buffer.from(g.descriptors));
  });

/** Longest time the event loop went without turning, from now until stop(). */
function stallMeter(): { stop: () => number } {
  let last = performance.now();
  let max = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    max = Math.max(max, now - last);
    last = now;
  }, 2);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(max, performance.now() - last);
    },
  };
}

const pool = new SiftPool(config.sift, THREADS);
const perQuery: { id: string; size: string; inThreadMs: number; poolMs: number; ratio: number; stallInThreadMs: number; stallPoolMs: number }[] = [];
let identical = true;
let poolCpuMs = 0; // CPU time / wall time of the pool calls: about `threads` when the cores are free, 1 when the others are busy
let poolWallMs = 0;
try {
  // Warm-up: start the workers and compile on both sides (not timed).
  const g0 = await decodeGrey(fs.readFileSync(path.join(set, picked[0]!.image!)), { maxSide: config.sift.maxSide, maxPixels: config.sift.maxPixels });
  await pool.views(g0, specs.slice(0, THREADS), { sift: params, keypointsPerView: vc.keypointsPerView, maxSide: vc.maxSide });
  viewFeatures(g0, specs.slice(0, 1), params, vc.keypointsPerView, vc.maxSide);
  for (const row of picked) {
    const g = await decodeGrey(fs.readFileSync(path.join(set, row.image!)), { maxSide: config.sift.maxSide, maxPixels: config.sift.maxPixels });
    let best = { here: Infinity, pool: Infinity, stallHere: 0, stallPool: 0 };
    for (let r = 0; r < REPEAT; r++) {
      let m = stallMeter();
      let t = performance.now();
      const a = viewFeatures(g, specs, params, vc.keypointsPerView, vc.maxSide);
      const here = performance.now() - t;
      const stallHere = m.stop();
      m = stallMeter();
      t = performance.now();
      const c0 = process.cpuUsage(); // process-wide: includes the workers' threads
      const b = await pool.views(g, specs, { sift: params, keypointsPerView: vc.keypointsPerView, maxSide: vc.maxSide });
      const onPool = performance.now() - t;
      const c1 = process.cpuUsage(c0);
      const stallPool = m.stop();
      poolCpuMs += (c1.user + c1.system) / 1000;
      poolWallMs += onPool;
      identical &&= same(a.views, b.views);
      if (here < best.here) best = { ...best, here, stallHere };
      if (onPool < best.pool) best = { ...best, pool: onPool, stallPool };
    }
    perQuery.push({
      id: row.id!, size: `${g.width}x${g.height}`, inThreadMs: Math.round(best.here), poolMs: Math.round(best.pool),
      ratio: Number((best.pool / best.here).toFixed(3)), stallInThreadMs: Math.round(best.stallHere), stallPoolMs: Math.round(best.stallPool),
    });
    process.stderr.write(`bench:views ${row.id} ${g.width}x${g.height}: in-thread ${best.here.toFixed(0)} ms, pool ${best.pool.toFixed(0)} ms\n`);
  }
} finally {
  await pool.close();
}
const sum = (k: 'inThreadMs' | 'poolMs') => perQuery.reduce((s, q) => s + q[k], 0);
console.log(
  JSON.stringify({
    bench: 'views',
    date: new Date().toISOString(),
    machine: { nproc: os.availableParallelism?.() ?? os.cpus().length, cpu: os.cpus()[0]?.model ?? '?', loadavg: os.loadavg().map((x) => Number(x.toFixed(2))) },
    set: 'retrieval-wxbs',
    queries: perQuery.length,
    views: specs.length,
    threads: THREADS,
    repeat: REPEAT,
    identical,
    inThreadMs: sum('inThreadMs'),
    poolMs: sum('poolMs'),
    ratio: Number((sum('poolMs') / sum('inThreadMs')).toFixed(3)),
    poolParallelism: Number((poolCpuMs / poolWallMs).toFixed(2)),
    maxStallInThreadMs: Math.max(...perQuery.map((q) => q.stallInThreadMs)),
    maxStallPoolMs: Math.max(...perQuery.map((q) => q.stallPoolMs)),
    perQuery,
  }),
);
