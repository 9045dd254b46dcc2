// Issue 35 round 15: one search setting at several values (--param, default lsh.matchHamming: the sketch distance
// within which a colliding entry goes to the ratio test; or reprobe, recollideVoters, ...) on a bench:index --cli bank
// (dev/r9-cli.ts): retrieval-smvs's sources and mining-flickr8k's sources without counterpart, each query searched once
// to warm the caches (features read from the bank, compiled code), then at every value in turn (order alternated per
// query): CPU per query, whether the true target is the first storable hit (smvs), confident or storable hits (the
// null), the hits' ratio-test matches. ONE JSON line on stdout. (dev/r13-contrast.ts searched its variants one after
// another, the first cold: a warm-up it counted as the first variant's cost.)
// Usage: npx tsx dev/r15-alternate.ts --dir /work/tmp-35/bank11 [--param matchHamming --values 12,13,14]
import os from 'node:os';
import path from 'node:path';
import { Bank } from '../src/bank/index.js';
import { search, searchParams, syncIndex } from '../src/lib/image-index/index.js';
import type { Features } from '../src/lib/sift/index.js';
import { storable } from '../src/stages/match/index.js';
import { plainFeatures, readSet, scaleScript } from '../bench/search-lib.js';

const { shared, opt, config, log } = scaleScript(import.meta.url);
const dir = opt('dir', '/work/tmp-35/bank11');
const param = opt('param', 'matchHamming') as keyof typeof p;
const bounds = opt('values', '12,13,14').split(',').map(Number);
const loadavgAtStart = os.loadavg().map((x) => Math.round(x * 10) / 10);
const smvs = readSet(path.join(shared, 'retrieval-smvs'));
const f8k = readSet(path.join(shared, 'mining-flickr8k'));
const bank = await Bank.open(dir);
const { handle } = await syncIndex(bank, config);
const p = searchParams(config);
const slotOfItem = new Map<number, number>();
for (let s = 0; s < handle.index.slots; s++) {
  const info = handle.slot(s);
  if (info) slotOfItem.set(info.itemId, s);
}
async function slotsOf(ids: Set<string>): Promise<Set<number>> {
  const out = new Set<number>();
  for (const tid of ids) {
    const t = await bank.items.get('target', tid);
    const s = t ? slotOfItem.get(t.id) : undefined;
    if (s !== undefined) out.add(s);
  }
  return out;
}
const featuresOf = (file: string): Promise<Features> => plainFeatures(file, config);
const queries: { set: 'smvs' | 'null'; id: string; f: Features; truth?: Set<number> }[] = [];
for (const s of smvs.sources) {
  const rel = smvs.truth.get(s.id);
  if (rel) queries.push({ set: 'smvs', id: s.id, f: await featuresOf(path.join(smvs.dir, s.image)), truth: await slotsOf(rel) });
}
for (const s of f8k.sources) if (!f8k.truth.has(s.id)) queries.push({ set: 'null', id: s.id, f: await featuresOf(path.join(f8k.dir, s.image)) });
log(`${queries.length} queries, ${String(param)} ${bounds.join(', ')}`);
type Acc = { cpu: number[]; found: number; confident: number; storable: number; matches: number; hits: number; differ: string[] };
const acc = new Map<string, Acc>();
const at = (set: string, b: number) => {
  const k = `${set}:${b}`;
  if (!acc.has(k)) acc.set(k, { cpu: [], found: 0, confident: 0, storable: 0, matches: 0, hits: 0, differ: [] });
  return acc.get(k)!;
};
for (const [qi, q] of queries.entries()) {
  await search(handle.index, (s) => handle.load(s), q.f, p); // warm: features read, JIT, caches
  const order = qi % 2 ? [...bounds].reverse() : bounds;
  const first = new Map<number, number | undefined>();
  for (const b of order) {
    const c0 = process.cpuUsage();
    const r = await search(handle.index, (s) => handle.load(s), q.f, { ...p, [param]: b });
    const c = process.cpuUsage(c0);
    const a = at(q.set, b);
    a.cpu.push((c.user + c.system) / 1000);
    const top = r.hits.find((h) => storable(config, h));
    first.set(b, top?.slot);
    if (q.truth && top && q.truth.has(top.slot)) a.found++;
    if (r.hits.some((h) => h.score >= p.confidentScore)) a.confident++;
    if (top) a.storable++;
    for (const h of r.hits) {
      a.hits++;
      a.matches += h.matches;
    }
  }
  for (const b of bounds) if (first.get(b) !== first.get(bounds[0]!)) at(q.set, b).differ.push(q.id);
}
const pct = (xs: number[], f: number) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(f * xs.length))]!;
const r1 = (x: number) => Math.round(x * 10) / 10;
const out: Record<string, unknown> = {};
for (const [k, a] of acc) out[k] = { queries: a.cpu.length, cpuMs: { p50: r1(pct(a.cpu, 0.5)), p95: r1(pct(a.cpu, 0.95)), mean: r1(a.cpu.reduce((x, y) => x + y, 0) / a.cpu.length) }, found: a.found, confident: a.confident, storable: a.storable, matchesPerHit: r1(a.matches / a.hits), firstStorableDiffers: a.differ };
process.stdout.write(JSON.stringify({ bench: 'r15-alternate', param, date: new Date().toISOString(), machine: { nproc: os.cpus().length, loadavgAtStart, loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10) }, dir, indexed: handle.index.size, values: bounds, out }) + '\n');
process.exit(0);
