// Issue 35 round 14: the plain search of two versions of searcher.ts (this tree's and --base's, e.g. a worktree of
// the last commit) over the same index of a bench:index --cli bank (dev/r9-cli.ts), query after query in turn (order
// alternated): their CPU per query, and whether both give the same hits (slot, score, inliers, votes). Queries:
// retrieval-smvs's sources and mining-flickr8k's sources without counterpart. ONE JSON line on stdout.
// Usage: npx tsx dev/r14-ab.ts --dir /work/tmp-35/bank11 --base /path/to/other/tree
import os from 'node:os';
import path from 'node:path';
import { Bank } from '../src/bank/index.js';
import { search, searchParams, syncIndex } from '../src/lib/image-index/index.js';
import type { Features } from '../src/lib/sift/index.js';
import { plainFeatures, readSet, scaleScript } from '../bench/search-lib.js';

const { shared, opt, config, log } = scaleScript(import.meta.url);
const dir = opt('dir', '/work/tmp-35/bank11');
const baseTree = opt('base', '');
const other = (await import(path.join(baseTree, 'src/lib/image-index/index.ts'))) as { search: typeof search };
const smvs = readSet(path.join(shared, 'retrieval-smvs'));
const f8k = readSet(path.join(shared, 'mining-flickr8k'));
const loadavgAtStart = os.loadavg().map((x) => Math.round(x * 10) / 10);
const bank = await Bank.open(dir);
const { handle } = await syncIndex(bank, config);
const p = searchParams(config);
const featuresOf = (file: string): Promise<Features> => plainFeatures(file, config);
const queries: { id: string; f: Features }[] = [];
for (const s of smvs.sources) if (smvs.truth.has(s.id)) queries.push({ id: `smvs:${s.id}`, f: await featuresOf(path.join(smvs.dir, s.image)) });
for (const s of f8k.sources) if (!f8k.truth.has(s.id)) queries.push({ id: `null:${s.id}`, f: await featuresOf(path.join(f8k.dir, s.image)) });
log(`${queries.length} queries`);
const runs = [{ name: 'this', search }, { name: 'base', search: other.search }];
const cpu: Record<string, number[]> = { this: [], base: [] };
const differ: string[] = [];
const key = (r: Awaited<ReturnType<typeof search>>) => JSON.stringify(r.hits.map((h) => [h.slot, h.score, h.inliers, h.votes]));
for (const [qi, q] of queries.entries()) {
  const got: Record<string, string> = {};
  for (let k = 0; k < 2; k++) {
    const r = runs[(qi + k) % 2]!;
    const c0 = process.cpuUsage();
    const res = await r.search(handle.index, (s) => handle.load(s), q.f, p);
    const c = process.cpuUsage(c0);
    cpu[r.name]!.push((c.user + c.system) / 1000);
    got[r.name] = key(res);
  }
  if (got.this !== got.base) differ.push(q.id);
}
const pct = (xs: number[], f: number) => Math.round([...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(f * xs.length))]! * 10) / 10;
const stat = (xs: number[]) => ({ p50: pct(xs, 0.5), p95: pct(xs, 0.95), mean: Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 10) / 10 });
const part = (pre: string) => {
  const idx = queries.flatMap((q, i) => (q.id.startsWith(pre) ? [i] : []));
  const t = stat(idx.map((i) => cpu.this![i]!)), b = stat(idx.map((i) => cpu.base![i]!));
  return { this: t, base: b, ratio: { p50: Math.round((t.p50 / b.p50) * 100) / 100, p95: Math.round((t.p95 / b.p95) * 100) / 100, mean: Math.round((t.mean / b.mean) * 100) / 100 } };
};
process.stdout.write(JSON.stringify({ bench: 'r14-ab', date: new Date().toISOString(), machine: { nproc: os.cpus().length, loadavgAtStart, loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10) }, dir, base: baseTree, indexed: handle.index.size, queries: queries.length, sameHits: queries.length - differ.length, differ, smvs: part('smvs:'), null: part('null:') }) + '\n');
