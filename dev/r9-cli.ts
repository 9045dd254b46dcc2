// Issue 35 round 9: bench:index --cli in two steps on a bank kept on disk, so that its match stage can be run again
// and looked into (dev/r9-bank.ts) without padding and indexing 100,000 targets each time.
//   --phase build: a bank at --dir padded with --n padding targets (bench/index-cli.ts's padBank), then `capbridge
//                  features` (the index); one JSON line.
//   --phase eval:  `capbridge eval --set` on each of --sets in turn (bench:index --cli's order), one JSON line with
//                  bench:index --cli's per-set figures.
// Usage: npx tsx dev/r9-cli.ts --phase build --dir /work/tmp-35/bank --n 100000
//        npx tsx dev/r9-cli.ts --phase eval --dir /work/tmp-35/bank [--sets mining-flickr8k,retrieval-smvs,retrieval-scenes]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cli, padBank } from '../bench/index-cli.js';
import { scaleScript } from '../bench/search-lib.js';

const { repoRoot, shared, opt, config, log } = scaleScript(import.meta.url);
const dir = opt('dir', '/work/tmp-35/bank');
const phase = opt('phase', 'build');
const head = { bench: 'r9-cli', phase, date: new Date().toISOString(), machine: { nproc: os.cpus().length, loadavgAtStart: os.loadavg().map((x) => Math.round(x * 10) / 10) } };
const out: Record<string, unknown> = {};
if (phase === 'build') {
  const n = Number(opt('n', '100000'));
  fs.mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  await padBank(dir, config, shared, n, log);
  out.padding = { n, wallS: Math.round((performance.now() - t0) / 1000) };
  const idx = cli(repoRoot, ['--data', dir, 'features', '--json']);
  out.index = { cpuS: idx.cpuS, wallS: Math.round(idx.wallS), maxRssMB: Math.round(idx.maxRssKB / 1024) };
} else {
  for (const set of opt('sets', 'mining-flickr8k,retrieval-smvs,retrieval-scenes').split(',')) {
    const extra = opt('config', '') ? ['--config', opt('config', '')] : [];
    const r = cli(repoRoot, ['--data', dir, ...extra, 'eval', '--set', path.join(shared, set), '--json']);
    const e = JSON.parse(r.stdout) as { pAt: Record<string, number>; hitAt5: number; emittedPrecision: number | null; coverage: number; falseEmissionRate: number | null; stages: { match: { indexedImages: number; indexMemoryBytes: number } } };
    out[set] = { p1: e.pAt['1'], hit5: e.hitAt5, emittedPrecision: e.emittedPrecision, coverage: e.coverage, falseEmissionRate: e.falseEmissionRate, indexedImages: e.stages.match.indexedImages, bytesPerImage: Math.round(e.stages.match.indexMemoryBytes / Math.max(1, e.stages.match.indexedImages)), cpuS: r.cpuS, wallS: Math.round(r.wallS), maxRssMB: Math.round(r.maxRssKB / 1024) };
    log(`${set} ${JSON.stringify(out[set])}`);
  }
}
process.stdout.write(JSON.stringify({ ...head, loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10), ...out }) + '\n');
