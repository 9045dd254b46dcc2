// `npm run bench:index` (issue 35): the image index at archive scale. Prints ONE JSON line.
//   Targets: every target of the P@1 sets (mining-flickr8k, retrieval-smvs, retrieval-scenes), padded with real
//   photos' SIFT features (bench/padding.ts: generated variations of the other photos of ../shared/data, computed
//   once and cached outside the repo) up to each scale (--scales, default 10000,100000; past what the cache holds, noisy
//   copies of the cached photos: bench/padding.ts paddingRefs, reported as noisyCopies). At each scale the index of
//   before issue 35 (bench/reference/, 8 tables, 72 bytes a keypoint) and today's one-table index are built over the
//   same targets, one after the other, in this process (both kept: the reference takes ~8 GB at 100,000), then searched
//   together, every query by each in turn (round 13: same-time CPU ratios on a machine whose load drifts; both verify
//   with today's verifyCandidate and sketch-collision kernel, round 14: the ratio compares the indexes, not two
//   versions of the code they share): index bytes (and per target image), build time (CPU), RSS
//   growth, and the plain search (votes, shortlist, verification: src/lib/image-index/searcher.ts) of every source with a
//   counterpart: query CPU p50/p95 (process CPU time, the verification's reads of padding features from the cache
//   file included, through a cache of lsh.featureCacheMB per index as a worker's: round 13) and P@1 per set (the best verified hit is a correct target).
//   --simulated N (default 0; 1000000 for the issue's figure, run alone: ~10 GB): N simulated targets, each keypoint
//   a real keypoint's RootSIFT descriptor (padding and set targets) plus Gaussian noise, projected (the projection is
//   linear: a real descriptor's projection plus a noise vector's), indexed by today's index with the real set
//   targets; index bytes, build time, peak RSS, query CPU, P@1 (and --variants' on the same build). Reference: none
//   (57 GB at 1M). A list (--simulated 100000,1000000) builds each in turn: the query CPU's growth in one run.
//   --cli N (default 0; 100000 for the issue's figure): a bank padded with N padding targets (items, features,
//   image rows without bytes: nothing reads a padding image), then `capbridge eval --set` through the CLI on each
//   P@1 set in turn (each set's targets then stay in the bank: later sets see earlier ones' targets as distractors).
//   --skip-reference: today's index only.  --queries N: at most N sources per set.
//   --probes a,b / --variants "multiprobe=48+shortlist=60,maxBucket=1200": the same build of today's index searched
//   again with other query-side settings (lsh.multiprobe, lsh.maxBucket, lsh.shortlist, lsh.voteSigma,
//   lsh.voteHamming, lsh.recollide, lsh.recollideVoters, lsh.reprobe; no re-encoding, no rebuild), query after query
//   with the others.  --per-query FILE: each query's CPU and verdict under every run, one JSON line a query (where the
//   tail of the query CPU comes from).
//   --bits b: today's index built once more at that bucket width (today-b18), searched with the same variants.
//   A miss is listed as set:source@rank (the true target's place in the shortlist, -1: not shortlisted)→top hit.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.js';
import { storable } from '../src/stages/match/index.js';
import type { Features } from '../src/lib/image-index/index.js';
import { LRUCache } from 'lru-cache';
import { CODE_BITS, LshIndex, encode, featureBytes, loadBatch, mulberry32, project, prepare, search, lshParams, searchParams } from '../src/lib/image-index/index.js';
import type { Prepared } from '../src/lib/image-index/index.js';
import * as ref from './reference/searcher.js';
import { LshIndex as RefIndex } from './reference/lsh.js';
import { lshParams as refParams } from './reference/params.js';
import { paddingRefs, readPadding, type PaddingRef } from './padding.js';
import { benchArgs, P1_SETS, p1Targets, percentile, round, sharedDataDir, type RetrievalSet } from './search-lib.js';
import { paddedBankEval } from './index-cli.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shared = sharedDataDir(repoRoot);
const { opt, flag } = benchArgs();
const { config } = loadConfig({});
const log = (m: string) => process.stderr.write(`[bench:index] ${m}\n`);
const SCALES = opt('scales', '10000,100000').split(',').filter(Boolean).map(Number).filter((n) => n > 0);
const SIMULATED = opt('simulated', '0').split(',').map(Number).filter((n) => n > 0);
const CLI = Number(opt('cli', '0'));
const MAXQ = Number(opt('queries', '100000'));
const loadAtStart = os.loadavg().map((v) => round(v, 1));
/** The process's peak resident memory so far (VmHWM): run --simulated alone for its figure. */
const peakRss = () => Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024;
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

// --- the sets ------------------------------------------------------------------------------------------------------
const SETS = P1_SETS;
/** The real targets (every target of the sets), prepared once. */
const { sets, feats, real } = await p1Targets(repoRoot, shared, config, log);
const slotOfReal = new Map(real.map((r, i) => [r.key, i]));
interface Query {
  set: RetrievalSet;
  id: string;
  f: Features;
  truth: Set<number>;
}
const queries: Query[] = [];
for (const s of sets) {
  let k = 0;
  for (const [sid, rel] of s.truth) if (k++ < MAXQ) queries.push({ set: s, id: sid, f: feats.get(s.name)!.get(sid)!, truth: new Set([...rel].map((t) => slotOfReal.get(`${s.name}:${t}`)!)) });
}
log(`${real.length} real targets, ${queries.length} queries (${SETS.map((n) => `${n} ${queries.filter((q) => q.set.name === n).length}`).join(', ')})`);

/** Query-side settings searched again on one build: --probes 32,48 (multiprobe) and --variants
 *  "multiprobe=48+shortlist=60,maxBucket=1200" (named today-p48-s60, today-mb1200). */
interface QueryVariant {
  multiprobe?: number;
  maxBucket?: number;
  shortlist?: number;
  voteSigma?: number;
  voteHamming?: number;
  recollide?: number;
  recollideVoters?: number;
  reprobe?: number;
}
const VARIANT_KEYS = { multiprobe: 'p', maxBucket: 'mb', shortlist: 's', voteSigma: 'sg', voteHamming: 'vh', recollide: 'rc', recollideVoters: 'rv', reprobe: 'rp' } as const;
const VARIANTS: QueryVariant[] = [
  ...opt('probes', '').split(',').filter(Boolean).map((n): QueryVariant => ({ multiprobe: Number(n) })),
  ...opt('variants', '').split(',').filter(Boolean).map((spec) => {
    const v: QueryVariant = {};
    for (const kv of spec.split('+')) {
      const [k, val] = kv.split('=');
      if (!(k! in VARIANT_KEYS) || !(Number(val) >= 0)) throw new Error(`--variants: "${kv}" is not one of ${Object.keys(VARIANT_KEYS).join(', ')}=N`);
      v[k as keyof QueryVariant] = Number(val);
    }
    return v;
  }),
];
const variantName = (v: QueryVariant) => Object.entries(v).map(([k, n]) => `${VARIANT_KEYS[k as keyof QueryVariant]}${n}`).join('-');

// --- one index over real + padding targets, searched by every query ------------------------------------------------
/** The two indexes behind one face: codes, batch add, bytes, search. */
interface Kind {
  name: string;
  /** Bucket width instead of lsh.bits: auto (--bits). */
  bits?: number;
  make(keypoints: number): {
    codes(p: Prepared): Uint32Array;
    addBatch(list: Uint32Array[]): void;
    finish(): void;
    bytes(): number;
    bits: number;
    search(q: Features, load: (slot: number) => Prepared | undefined): Promise<{ hits: { slot: number; score: number; inliers: number }[]; shortlist: number[]; timings?: { probeMs: number; voteMs: number; verifyMs: number }; scan?: { scanned: number } }>;
    /** Query-side settings of a one-table index (the reference has none): lsh.multiprobe, lsh.maxBucket, lsh.shortlist. */
    setQuery?(v: QueryVariant): void;
  };
}
const KINDS: Kind[] = [
  {
    name: 'reference',
    make(kp) {
      const index = new RefIndex(refParams(config, kp));
      const p = { ...searchParams(config) };
      return {
        codes: (pr) => index.codes(pr.vecs, pr.f.count),
        addBatch: (l) => void index.addBatch(l),
        finish: () => index.merge(),
        bytes: () => index.memoryBytes(),
        bits: index.params.bits,
        search: (q, load) => ref.search(index, load, q, p),
      };
    },
  },
  // today's index at the config's settings, and at --bits b (another build: today-b18); --probes a,b and --variants
  // search the same index again with other query-side settings (today-p32, today-mb1200-s60): one build serves them
  ...[undefined, ...opt('bits', '').split(',').filter(Boolean).map(Number)].map((bits) => ({
    name: bits === undefined ? 'today' : `today-b${bits}`,
    bits,
    make(kp: number) {
      const index = new LshIndex({ ...lshParams(config, kp), ...(bits !== undefined ? { bits } : {}) });
      const knobs = queryKnobs(index);
      return {
        codes: (pr: Prepared) => index.codes(pr.vecs, pr.f.count),
        addBatch: (l: Uint32Array[]) => void index.addBatch(l),
        finish: () => index.compact(), // as a bank's load ends (IndexHandle.refresh)
        bytes: () => index.memoryBytes(),
        bits: index.params.bits,
        setQuery: knobs.set,
        search: (q: Features, load: (slot: number) => Prepared | undefined) => search(index, load, q, knobs.params()),
      };
    },
  })),
];

/** A one-table index's query-side settings (the config's, or a variant's on the same build). */
function queryKnobs(index: LshIndex) {
  const base = { probes: index.params.probes, maxBucket: index.params.maxBucket };
  const p0 = searchParams(config);
  let p = { ...p0 };
  return {
    set: (v: QueryVariant) => {
      index.params.probes = v.multiprobe ?? base.probes;
      index.params.maxBucket = v.maxBucket ?? base.maxBucket;
      p = { ...p0, shortlist: v.shortlist ?? p0.shortlist, voteSigma: v.voteSigma ?? p0.voteSigma, voteHamming: v.voteHamming ?? p0.voteHamming, recollide: v.recollide ?? p0.recollide, recollideVoters: v.recollideVoters ?? p0.recollideVoters, reprobe: v.reprobe ?? p0.reprobe };
    },
    params: () => p,
  };
}

/** Loads the index in batches as a bank is loaded (IndexHandle.refresh: loadBatch). */
async function build(kind: Kind, pads: PaddingRef[]) {
  const kp = real.reduce((a, r) => a + r.p.f.count, 0) + pads.reduce((a, r) => a + r.count, 0);
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  const c0 = cpuMs();
  const ix = kind.make(kp);
  ix.addBatch(real.map((r) => ix.codes(r.p)));
  let batch: Uint32Array[] = [];
  let loaded = real.length;
  for (const [i, r] of pads.entries()) {
    batch.push(ix.codes(prepare(readPadding(r).features)));
    if (batch.length >= loadBatch(loaded) || i === pads.length - 1) {
      ix.addBatch(batch);
      loaded += batch.length;
      batch = [];
      log(`${kind.name}: ${loaded} targets indexed`);
    }
  }
  ix.finish();
  const buildCpuS = round((cpuMs() - c0) / 1000, 1);
  global.gc?.();
  return { ix, kp, buildCpuS, rssGrowth: process.memoryUsage().rss - rss0 };
}


/** One searcher of the run: an index at its settings, or the same index at a variant's (--probes, --variants). */
interface Run {
  name: string;
  ix: ReturnType<Kind['make']>;
  v?: QueryVariant;
}

/** Every query searched by every run, the runs taken in turn query after query (their order rotated), so that a
 *  machine's load drifting over the minutes of a run weighs on each alike: the CPU ratios are same-time ratios. */
async function runQueries(runs: Run[], pads: PaddingRef[]) {
  // Each run reads padding features as a match worker reads targets' (IndexHandle.load): through its own cache of
  // lsh.featureCacheMB of stored features, least recently used dropped, so that a target met again keeps the sketches
  // a re-match computed beside its features (searcher.ts targetSketches); the set targets stay prepared.
  // The CPU of reading a padding image from the cache file is counted apart (readMs): a noisy copy's descriptors are
  // generated again at each read (~4 ms of Gaussian noise for 770 keypoints), more than a worker's read of stored
  // features from the bank (round 14: 4.8 ms a query for today's index, 3.4 for the old one).
  let readMs = 0;
  const loaders = runs.map(() => {
    const held = new LRUCache<number, Features>({ maxSize: Math.max(1, config.lsh.featureCacheMB * 2 ** 20), sizeCalculation: featureBytes });
    return (slot: number): Prepared | undefined => {
      if (slot < real.length) return real[slot]!.p;
      let f = held.get(slot);
      if (!f) {
        const c0 = cpuMs();
        held.set(slot, (f = readPadding(pads[slot - real.length]!).features));
        readMs += cpuMs() - c0;
      }
      return prepare(f);
    };
  });
  const acc = runs.map(() => ({ cpu: [] as number[], lessReads: [] as number[], p1: Object.fromEntries(SETS.map((n) => [n, 0])) as Record<string, number>, wrong: [] as string[] }));
  const perQuery = opt('per-query', '');
  if (perQuery) fs.writeFileSync(perQuery, '');
  for (const [qi, q] of queries.entries()) {
    const row: Record<string, { cpuMs: number; readMs: number; found: boolean; voteMs?: number; verifyMs?: number; scanned?: number }> = {};
    for (let k = 0; k < runs.length; k++) {
      const i = (qi + k) % runs.length;
      const { ix, v } = runs[i]!;
      const a = acc[i]!;
      ix.setQuery?.(v ?? {});
      const c0 = cpuMs();
      const read0 = readMs;
      const r = await ix.search(q.f, loaders[i]!);
      const cpu = cpuMs() - c0;
      const read = readMs - read0;
      a.cpu.push(cpu);
      a.lessReads.push(cpu - read);
      // the first hit the match stage would store (candidatesOf: match.minScore, match.minInliers), as the CLI counts P@1
      // (issue 35 round 9: a hit verified below match.minScore counted here and was no candidate through the CLI)
      const best = r.hits.find((h) => storable(config, h));
      const tm = r.timings;
      row[runs[i]!.name] = { cpuMs: round(cpu, 1), readMs: round(read, 1), found: !!best && q.truth.has(best.slot), ...(tm ? { voteMs: round(tm.probeMs + tm.voteMs, 1), verifyMs: round(tm.verifyMs, 1) } : {}), scanned: r.scan?.scanned ?? (runs[i]!.name === 'reference' ? ref.scanStats.scanned : undefined) };
      if (best && q.truth.has(best.slot)) a.p1[q.set.name]!++;
      else a.wrong.push(`${q.set.name}:${q.id}@${r.shortlist.findIndex((s) => q.truth.has(s))}${best ? `→${best.slot < real.length ? real[best.slot]!.key : `pad:${pads[best.slot - real.length]?.index}~${pads[best.slot - real.length]?.copy}`}` : ''}`);
    }
    if (perQuery) fs.appendFileSync(perQuery, JSON.stringify({ set: q.set.name, id: q.id, keypoints: q.f.count, runs: row }) + '\n');
  }
  const stats = (xs: number[]) => ({ p50: round(percentile(xs, 0.5), 1), p95: round(percentile(xs, 0.95), 1), mean: round(xs.reduce((a, b) => a + b, 0) / xs.length, 1) });
  return acc.map(({ cpu, lessReads, p1, wrong }) => {
    const per = Object.fromEntries(SETS.map((n) => [n, round(p1[n]! / queries.filter((q) => q.set.name === n).length)]));
    return { queryCpuMs: stats(cpu), queryCpuMsLessPaddingReads: stats(lessReads), p1: per, misses: wrong };
  });
}

async function atScale(n: number) {
  const pads = paddingRefs(config, shared, Math.max(0, n - real.length), true);
  const copies = pads.filter((r) => r.copy).length;
  const out: Record<string, unknown> = { targets: real.length + pads.length, padding: pads.length, realPadding: pads.length - copies, noisyCopies: copies };
  // every index built first (today's, then the reference), then searched together, query after query
  const runs: Run[] = [];
  const built = new Map<string, { bits: number; keypointsPerImage: number; indexBytes: number; bytesPerImage: number; rssGrowthBytes: number; buildCpuS: number }>();
  for (const kind of [...KINDS.slice(1), KINDS[0]!]) {
    if (kind.name === 'reference' && flag('skip-reference')) continue;
    const { ix, kp, buildCpuS, rssGrowth } = await build(kind, pads);
    const bytes = ix.bytes();
    built.set(kind.name, { bits: ix.bits, keypointsPerImage: round(kp / (real.length + pads.length), 1), indexBytes: bytes, bytesPerImage: Math.round(bytes / (real.length + pads.length)), rssGrowthBytes: rssGrowth, buildCpuS });
    runs.push({ name: kind.name, ix }, ...(ix.setQuery ? VARIANTS.map((v): Run => ({ name: `${kind.name}-${variantName(v)}`, ix, v })) : []));
  }
  const results = await runQueries(runs, pads);
  runs.forEach((r, i) => {
    const kindName = r.v ? r.name.slice(0, r.name.length - variantName(r.v).length - 1) : r.name;
    out[r.name] = { ...built.get(kindName)!, ...(r.v ? { query: r.v, sameIndexAs: kindName } : {}), ...results[i]! };
    log(`${n} ${r.name}: ${JSON.stringify(out[r.name])} (load ${os.loadavg().map((x) => round(x, 1)).join(' ')})`);
  });
  type Cpu = { p50: number; p95: number; mean: number };
  const r = out.reference as { queryCpuMs: Cpu; queryCpuMsLessPaddingReads: Cpu } | undefined;
  if (r)
    for (const name of Object.keys(out).filter((k) => k.startsWith('today'))) {
      const t = out[name] as { queryCpuMs: Cpu; queryCpuMsLessPaddingReads: Cpu };
      out[name === 'today' ? 'queryCpuRatio' : `queryCpuRatio-${name}`] = { p50: round(t.queryCpuMs.p50 / r.queryCpuMs.p50, 2), p95: round(t.queryCpuMs.p95 / r.queryCpuMs.p95, 2), mean: round(t.queryCpuMs.mean / r.queryCpuMs.mean, 2) };
      const tl = t.queryCpuMsLessPaddingReads, rl = r.queryCpuMsLessPaddingReads;
      out[name === 'today' ? 'queryCpuRatioLessPaddingReads' : `queryCpuRatioLessPaddingReads-${name}`] = { p50: round(tl.p50 / rl.p50, 2), p95: round(tl.p95 / rl.p95, 2), mean: round(tl.mean / rl.mean, 2) };
    }
  return out;
}

// --- simulated targets: real keypoints plus noise ----------------------------------------------------------------
async function simulated(n: number) {
  const index = new LshIndex(lshParams(config, n * 770));
  const nproj = index.proj.length;
  // Pool: every 4th keypoint of the real targets and of 2,000 padding images, projected (the CODE_BITS + 64 used
  // projections kept); and noise vectors of the spread of true matches' descriptors (RootSIFT, sigma 0.02 a dimension:
  // the distance of a near copy's match).
  // (one array: a worker holds nothing of the kind, and half a million small arrays cost their headers again)
  const used = CODE_BITS + 64;
  const pads2k = paddingRefs(config, shared, 2000);
  const poolCap = [...real.map((r) => r.p.f.count), ...pads2k.map((r) => r.count)].reduce((a, c) => a + Math.ceil(c / 4), 0);
  const pool = new Float32Array(poolCap * used);
  let poolSize = 0;
  const addPool = (p: Prepared) => {
    const pr = project(p.vecs, p.f.count, index.proj);
    for (let i = 0; i < p.f.count; i += 4) pool.set(pr.subarray(i * nproj, i * nproj + used), poolSize++ * used);
  };
  for (const r of real) addPool(r.p);
  for (const r of pads2k) addPool(prepare(readPadding(r).features));
  const rnd = mulberry32(35);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const NOISE = 4096;
  const noiseVecs = new Float32Array(NOISE * 128);
  for (let i = 0; i < noiseVecs.length; i++) noiseVecs[i] = 0.02 * gauss();
  const noise = project(noiseVecs.map((v, i) => v + (MEAN[i % 128] ?? 0)), NOISE, index.proj); // centred: MEAN cancels the centring
  log(`simulated: pool of ${poolSize} real keypoints, ${NOISE} noise vectors`);
  const c0 = cpuMs();
  index.addBatch(real.map((r) => index.codes(r.p.vecs, r.p.f.count)));
  const acc = new Float32Array(1040 * used); // one image's projections (at most 1,039 keypoints)
  let batch: Uint32Array[] = [];
  let kpTotal = real.reduce((a, r) => a + r.p.f.count, 0);
  for (let i = real.length; i < n; i++) {
    const count = 500 + Math.floor(rnd() * 540); // 770 on average, as the padding's photos
    for (let k = 0; k < count; k++) {
      const a = Math.floor(rnd() * poolSize) * used;
      const o = Math.floor(rnd() * NOISE) * nproj;
      for (let j = 0, b = k * used; j < used; j++) acc[b + j] = pool[a + j]! + noise[o + j]!;
    }
    const codes = encode(acc, count, used);
    kpTotal += count;
    batch.push(codes);
    if (batch.length >= loadBatch(index.size) || i === n - 1) {
      index.addBatch(batch);
      batch = [];
      log(`simulated: ${index.size} targets indexed, rss ${(process.memoryUsage().rss / 2 ** 30).toFixed(2)} GB`);
    }
  }
  index.compact(); // as a bank's load ends (IndexHandle.refresh)
  const buildCpuS = round((cpuMs() - c0) / 1000, 1);
  const peakRssBytes = peakRss(); // the build's peak (the queries add their own arrays)
  const knobs = queryKnobs(index);
  const ix = { codes: () => new Uint32Array(0), addBatch: () => undefined, finish: () => undefined, bytes: () => index.memoryBytes(), bits: index.params.bits, setQuery: knobs.set, search: (f: Features, load: (slot: number) => Prepared | undefined) => search(index, (s) => (s < real.length ? load(s) : undefined), f, knobs.params()) };
  const [base, ...others] = await runQueries([{ name: 'today', ix }, ...VARIANTS.map((v): Run => ({ name: variantName(v), ix, v }))], []);
  const out: Record<string, unknown> = { targets: n, bits: index.params.bits, keypointsPerImage: round(kpTotal / n, 1), indexBytes: index.memoryBytes(), bytesPerImage: Math.round(index.memoryBytes() / n), segments: index.buckets.segments.length, parts: index.buckets.segments.map((s) => s.parts.length), buildCpuS, peakRssBytesBuild: peakRssBytes, ...base! };
  VARIANTS.forEach((v, i) => {
    out[variantName(v)] = others[i];
    log(`simulated ${n} ${variantName(v)}: ${JSON.stringify(others[i])}`);
  });
  return { ...out, peakRssBytes: peakRss() };
}
const MEAN = (await import('../src/lib/image-index/index.js')).MEAN_ROOTSIFT;

// --- run ----------------------------------------------------------------------------------------------------------
const result: Record<string, unknown> = {
  bench: 'index',
  date: new Date().toISOString(),
  machine: { nproc: os.cpus().length, cpu: os.cpus()[0]?.model.split(' ').slice(0, 2).join(' '), loadavgAtStart: loadAtStart },
  config: { lsh: config.lsh },
  sets: Object.fromEntries(sets.map((s) => [s.name, { targets: s.targets.length, queries: queries.filter((q) => q.set === s).length }])),
};
const scales: Record<string, unknown>[] = [];
for (const n of SCALES) scales.push(await atScale(n));
result.scales = scales;
// --simulated 100000,1000000: each in turn (the index of one dropped before the next is built; peak RSS is the
// process's so far, so the largest last)
if (SIMULATED.length === 1) result.simulated = await simulated(SIMULATED[0]!);
else if (SIMULATED.length) {
  const list = [];
  for (const n of SIMULATED) list.push(await simulated(n));
  result.simulated = list;
}
if (CLI) result.cli = await paddedBankEval({ repoRoot, shared, config, count: CLI, sets: SETS, log });
(result.machine as Record<string, unknown>).loadavg = os.loadavg().map((v) => round(v, 1));
process.stdout.write(JSON.stringify(result) + '\n');
