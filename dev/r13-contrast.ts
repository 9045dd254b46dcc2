// Issue 35 round 13: do the retrieval-smvs copies lost among 100,000 targets come back when the QUERY's SIFT keeps
// weaker extrema (a lower contrast threshold, for every source or only for one with few keypoints)? The index and
// the targets stay as stored; only the query's features change. Reads a bench:index --cli bank (dev/r9-cli.ts)
// read-only: every retrieval-smvs source with its true targets, and mining-flickr8k's sources without counterpart
// (from the set's files) as the null: storable hits, confident ones, query CPU. ONE JSON line on stdout.
// Search variants (joined to a features variant by '+'): rp=N (lsh.reprobe), rv=N (lsh.recollideVoters),
// mh=N (lsh.matchHamming).
// Usage: npx tsx dev/r13-contrast.ts --dir /work/tmp-35/bank11 [--variants ct=0.02,min=600:0.02,rp=0]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Bank } from '../src/bank/index.js';
import { search, searchParams, syncIndex } from '../src/lib/image-index/index.js';
import { decodeGrey, detectAndDescribe, siftParams, type Features } from '../src/lib/sift/index.js';
import { storable } from '../src/stages/match/index.js';
import { readSet, scaleScript } from '../bench/search-lib.js';

const { shared, opt, config, log } = scaleScript(import.meta.url);
const dir = opt('dir', '/work/tmp-35/bank11');
const smvs = readSet(path.join(shared, 'retrieval-smvs'));
const f8k = readSet(path.join(shared, 'mining-flickr8k'));
const loadavgAtStart = os.loadavg().map((x) => Math.round(x * 10) / 10);
const bank = await Bank.open(dir);
const { handle } = await syncIndex(bank, config);
log(`index: ${handle.index.size} images`);
const p = searchParams(config);
const slotOfItem = new Map<number, number>();
for (let s = 0; s < handle.index.slots; s++) {
  const info = handle.slot(s);
  if (info) slotOfItem.set(info.itemId, s);
}
const slotOfExt = new Map<string, number>();
for (const rel of smvs.truth.values())
  for (const tid of rel) {
    const t = await bank.items.get('target', tid);
    const s = t ? slotOfItem.get(t.id) : undefined;
    if (s !== undefined) slotOfExt.set(tid, s);
  }
log(`smvs truth targets in the index: ${slotOfExt.size}`);
const base = siftParams(config.sift);
// variant spec: 'base' | 'ct=X' (every query) | 'min=N:X' (threshold X only when the base keeps fewer than N keypoints)
const VARIANTS = ['base', ...opt('variants', 'ct=0.02,min=600:0.02').split(',').filter(Boolean)];
async function featuresOf(file: string, spec: string): Promise<Features> {
  const c = config.sift;
  const g = await decodeGrey(fs.readFileSync(file), { maxSide: c.maxSide, maxPixels: c.maxPixels, minSide: c.minSide });
  const at = (ct: number) => { const f = detectAndDescribe(g.grey, g.width, g.height, { ...base, contrastThreshold: ct }); f.scale = g.scale; return f; };
  const f0 = at(base.contrastThreshold);
  const fs0 = spec.split('+').find((t) => t.startsWith('ct=') || t.startsWith('min='));
  if (!fs0) return f0;
  const [k, v] = fs0.split('=') as [string, string];
  if (k === 'ct') return at(Number(v));
  const [n, ct] = v.split(':').map(Number) as [number, number];
  return f0.count < n ? at(ct) : f0;
}
const pct = (xs: number[], f: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(f * xs.length))]!;
const out: Record<string, unknown> = {};
const nullIds = f8k.sources.filter((s) => !f8k.truth.has(s.id));
const paramsOf = (spec: string) => {
  let o = { ...p };
  for (const t of spec.split('+')) {
    const [k, v] = t.split('=');
    if (k === 'rp') o = { ...o, reprobe: Number(v) };
    if (k === 'rv') o = { ...o, recollideVoters: Number(v) };
    if (k === 'mh') o = { ...o, matchHamming: Number(v) };
  }
  return o;
};
for (const spec of VARIANTS) {
  const p = paramsOf(spec);
  let found = 0;
  const lost: string[] = [];
  const cpu: number[] = [];
  const kps: number[] = [];
  const tm = { probeMs: 0, voteMs: 0, verifyMs: 0 };
  const ntm = { probeMs: 0, voteMs: 0, verifyMs: 0 };
  const add = (a: typeof tm, b: typeof tm) => { a.probeMs += b.probeMs; a.voteMs += b.voteMs; a.verifyMs += b.verifyMs; };
  const per = (a: typeof tm, n: number) => ({ probeMs: Math.round(a.probeMs / n), voteMs: Math.round(a.voteMs / n), verifyMs: Math.round(a.verifyMs / n) });
  for (const src of smvs.sources) {
    const rel = smvs.truth.get(src.id);
    if (!rel) continue;
    const f = await featuresOf(path.join(smvs.dir, src.image), spec);
    kps.push(f.count);
    const c0 = process.cpuUsage();
    const r = await search(handle.index, (s) => handle.load(s), f, p);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    add(tm, r.timings);
    const slots = new Set([...rel].map((t) => slotOfExt.get(t)).filter((s): s is number => s !== undefined));
    const cand = r.hits.find((h) => storable(config, h));
    if (cand && slots.has(cand.slot)) found++;
    else lost.push(`${src.id}(${f.count}kp)`);
  }
  const ncpu: number[] = [];
  let confident = 0;
  let storableHits = 0;
  for (const src of nullIds) {
    const f = await featuresOf(path.join(f8k.dir, src.image), spec);
    const c0 = process.cpuUsage();
    const r = await search(handle.index, (s) => handle.load(s), f, p);
    const c = process.cpuUsage(c0);
    ncpu.push((c.user + c.system) / 1000);
    add(ntm, r.timings);
    if (r.hits.some((h) => h.score >= p.confidentScore)) confident++;
    if (r.hits.some((h) => storable(config, h))) storableHits++;
  }
  out[spec] = { smvs: { p1: Math.round((found / cpu.length) * 1000) / 1000, found, of: cpu.length, lost, keypoints: { p10: pct(kps, 0.1), p50: pct(kps, 0.5) }, cpuMs: { p50: pct(cpu, 0.5), p95: pct(cpu, 0.95) }, meanMs: per(tm, cpu.length) }, null: { sources: nullIds.length, confident, storableHits, cpuMs: { p50: pct(ncpu, 0.5), p95: pct(ncpu, 0.95) }, meanMs: per(ntm, ncpu.length) } };
  log(`${spec}: ${JSON.stringify(out[spec])}`);
}
process.stdout.write(JSON.stringify({ bench: 'r13-contrast', date: new Date().toISOString(), machine: { nproc: os.cpus().length, loadavgAtStart, loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10) }, dir, indexed: handle.index.size, variants: out }) + '\n');
