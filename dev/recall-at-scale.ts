// Issue 35 round 6: why the one-table index's shortlist loses retrieval-smvs / retrieval-scenes targets among many
// distractors. Builds today's index over bench:index's targets (the sets' targets + padding to --n), then for every
// query of --sets with a counterpart compares the shortlist with exhaustive matching of the query and its true target:
//   ex      inliers of the true target verified with every keypoint pair whose sketches are within 24 bits (the ceiling)
//   probe   of those inlier pairs, how many have the target keypoint's bucket among the query keypoint's first
//           lsh.multiprobe probes (p24) / 48 (p48)
//   skip    ... of which the bucket is over lsh.maxBucket (skipped at query time)
//   ham     ... of which the sketch is within voteHamming (a vote) / matchHamming (the ratio test)
//   votes   the true target's votes, its rank among all images, and the votes of the last shortlisted image
//   share   mean number of images a voting inlier keypoint's vote is shared with (the vote's normalisation)
// Usage: npx tsx dev/recall-at-scale.ts --n 10000 [--sets retrieval-smvs,retrieval-scenes] [--half dev|held|all]
// --variants "sigma=0+vh=8+mb=600,probes=48": instead of the funnel (or before it, with --funnel), each query searched
// with the config and with each variant (sigma, vh, probes, mb, s: lsh.voteSigma, voteHamming, multiprobe, maxBucket,
// shortlist; rc, rh, rv: lsh.recollide, recollideHamming, recollideVoters; pc=0: no frame check in those re-matches): P@1 per set, the true target's vote rank, query CPU; ONE JSON line on stdout. The half of a query
// (dev/held) is the first bit of the SHA-1 of `set:query` (nothing looks at a result). The padding's codes are cached
// in /work/cache/capbridge-padding-codes (a 100k build from the cache takes under a minute).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { LshIndex, bucketSpan, featureBytes, prepare, type Features, lshParams, search, searchParams, sketchCollisions, targetSketches, verifyCandidate, votePass, type Prepared } from '../src/lib/image-index/index.js';
import { paddingRefs, readPadding } from '../bench/padding.js';
import { p1Targets, scaleScript } from '../bench/search-lib.js';
import { storable } from '../src/stages/match/index.js';

const { repoRoot, shared, opt, config, log, n: N } = scaleScript(import.meta.url);
const HALF = opt('half', 'all');
const loadavgAtStart = os.loadavg().map((x) => Math.round(x * 10) / 10);
const SETS = opt('sets', 'retrieval-smvs,retrieval-scenes').split(',');
const { sets: all, feats, real } = await p1Targets(repoRoot, shared, config, () => undefined);
const pads = paddingRefs(config, shared, Math.max(0, N - real.length), true);
const kp = real.reduce((a, r) => a + r.p.f.count, 0) + pads.reduce((a, r) => a + r.count, 0);
const index = new LshIndex({ ...lshParams(config, kp), ...(opt('bits', '') ? { bits: Number(opt('bits', '')) } : {}) });
const t0 = performance.now();
index.addBatch(real.map((r) => index.codes(r.p.vecs, r.p.f.count)));
// The padding's codes are cached (/work/cache/capbridge-padding-codes: depend on the seed only; the noisy copies'
// descriptors cost most of a build): a 100k build then takes about a minute.
const cacheFile = `/work/cache/capbridge-padding-codes/seed${config.lsh.seed}-n${pads.length}-nosources.bin`;
if (fs.existsSync(cacheFile)) {
  const all = new Uint32Array(fs.readFileSync(cacheFile).buffer.slice(0));
  let o = 0;
  const list = pads.map((r) => {
    const c = all.subarray(o, o + Math.min(r.count, 2048) * 3);
    o += c.length;
    return c;
  });
  for (let i = 0; i < list.length; i += 20000) index.addBatch(list.slice(i, i + 20000));
} else {
  const parts: Uint32Array[] = [];
  for (let i = 0; i < pads.length; i += 20000) {
    const list = pads.slice(i, i + 20000).map((r) => index.codes(prepare(readPadding(r).features).vecs, r.count));
    parts.push(...list);
    index.addBatch(list);
    log(`${i + list.length} padding targets coded`);
  }
  fs.mkdirSync(path.dirname(cacheFile), { recursive: true });
  const fd = fs.openSync(cacheFile + '.tmp', 'w');
  for (const c of parts) fs.writeSync(fd, new Uint8Array(c.buffer, c.byteOffset, c.byteLength));
  fs.closeSync(fd);
  fs.renameSync(cacheFile + '.tmp', cacheFile);
}
index.merge();
log(`${real.length + pads.length} targets, bits ${index.params.bits}, built in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
const p = searchParams(config);
const mask = (1 << index.params.bits) - 1;
const { segments } = index.buckets;
const bucketSize = (c: number) => segments.reduce((a, s) => a + s.offsets[c + 1]! - s.offsets[c]!, 0);
const ham = (a: Uint32Array, i: number, b: Uint32Array, j: number) => popc(a[2 * i]! ^ b[2 * j]!) + popc(a[2 * i + 1]! ^ b[2 * j + 1]!);
function popc(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
}
/** Distinct images within voteHamming of a query keypoint in its probed, not skipped buckets (its vote's divisor). */
function reached(probes: Uint32Array, at: number, per: number, qs: Uint32Array, q: number): number {
  const seen = new Set<number>();
  for (let k = 0; k < per; k++) {
    const c = probes[at + k]!;
    if (bucketSize(c) > index.params.maxBucket) continue;
    for (const s of segments) {
      const { data, from, to, ids } = bucketSpan(s, c);
      for (let j = from; j < to; j++) {
        const d = popc(qs[2 * q]! ^ data[2 * j]!) + popc(qs[2 * q + 1]! ^ data[2 * j + 1]!);
        if (d <= p.voteHamming) seen.add(data[ids + j]! >>> 11);
      }
    }
  }
  return seen.size;
}
const inHalf = (id: string) => HALF === 'all' || (createHash('sha1').update(id).digest()[0]! < 128) === (HALF === 'dev');
const VARIANTS = opt('variants', '').split(',').filter(Boolean);
if (VARIANTS.length) {
  const keys: Record<string, (v: number, o: { p: typeof p; probes: number; maxBucket: number; sl: number }) => void> = {
    sigma: (v, o) => (o.p = { ...o.p, voteSigma: v }),
    vh: (v, o) => (o.p = { ...o.p, voteHamming: v }),
    probes: (v, o) => (o.probes = v),
    mb: (v, o) => (o.maxBucket = v),
    s: (v, o) => (o.sl = v),
    rc: (v, o) => (o.p = { ...o.p, recollide: v }),
    rh: (v, o) => (o.p = { ...o.p, recollideHamming: v }),
    rv: (v, o) => (o.p = { ...o.p, recollideVoters: v }),
    pc: (v, o) => (o.p = { ...o.p, recollidePoseCheck: v ? o.p.recollidePoseCheck : undefined }),
  };
  const ranks: Record<string, number[]> = {};
  const cpu: Record<string, number[]> = {};
  const hit1: Record<string, boolean[]> = {};
  /** Per variant: wall ms summed over the queries in probing, voting and verification, and the queries left unconfident. */
  const parts: Record<string, { probe: number; vote: number; verify: number; unconfident: number }> = {};
  // Padding targets' features held as the match stage's handle holds them (store.ts IndexHandle.load): the prepared
  // features of the last 256 images, and the stored features within lsh.featureCacheMB; a miss costs the padding's
  // read (its noisy copy made again) as a miss costs a bank read there. One cache per variant, so that no variant
  // finds the targets another just read.
  const loaders = new Map<string, (slot: number) => Prepared>();
  const loaderOf = (spec: string) => {
    let l = loaders.get(spec);
    if (l) return l;
    const stored = new LRUCache<number, Features>({ maxSize: config.lsh.featureCacheMB * 1024 * 1024, sizeCalculation: featureBytes });
    const prepared = new LRUCache<number, Prepared>({ max: 256 });
    l = (slot: number) => {
      if (slot < real.length) return real[slot]!.p;
      let pr = prepared.get(slot);
      if (pr) return pr;
      let f = stored.get(slot);
      if (!f) stored.set(slot, (f = readPadding(pads[slot - real.length]!).features));
      prepared.set(slot, (pr = prepare(f)));
      return pr;
    };
    loaders.set(spec, l);
    return l;
  };
  const pct = (xs: number[], f: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(f * xs.length))]!;
  /** A variant's query-side settings, set on the index (probes, maxBucket) and returned (search params, shortlist). */
  const settings = (spec: string) => {
    const o = { p: { ...p }, probes: config.lsh.multiprobe, maxBucket: config.lsh.maxBucket, sl: p.shortlist };
    if (spec !== 'base') for (const kv of spec.split('+')) keys[kv.split('=')[0]!]!(Number(kv.split('=')[1]), o);
    index.params.probes = o.probes;
    index.params.maxBucket = o.maxBucket;
    return o;
  };
  const qs: string[] = [];
  for (const s of all.filter((x) => SETS.includes(x.name)))
    for (const [sid, rel] of s.truth) {
      if (!inHalf(`${s.name}:${sid}`)) continue;
      qs.push(`${s.name.replace('retrieval-', '')}:${sid}`);
      const q = prepare(feats.get(s.name)!.get(sid)!);
      const slots = [...rel].map((t) => real.findIndex((x) => x.key === `${s.name}:${t}`));
      for (const spec of ['base', ...VARIANTS]) {
        const o = settings(spec);
        const v = votePass(index, q, { ...o.p, shortlist: 300 }, false);
        (ranks[spec] ??= []).push(v.shortlist.findIndex((x) => slots.includes(x)));
        const c0 = process.cpuUsage();
        const r = await search(index, loaderOf(spec), q.f, { ...o.p, shortlist: o.sl });
        const c = process.cpuUsage(c0);
        (cpu[spec] ??= []).push((c.user + c.system) / 1000);
        const tm = (parts[spec] ??= { probe: 0, vote: 0, verify: 0, unconfident: 0 });
        tm.probe += r.timings.probeMs;
        tm.vote += r.timings.voteMs;
        tm.verify += r.timings.verifyMs;
        if (r.mirrorPass) tm.unconfident++;
        // the first hit the match stage would store (candidatesOf's bar), as the CLI counts P@1 (issue 35 round 9)
        const best = r.hits.find((h) => storable(config, h));
        (hit1[spec] ??= []).push(!!best && slots.includes(best.slot));
      }
    }
  // --null: mining-flickr8k's sources with a counterpart (of the half), searched after their counterparts were removed
  // from the index (the padding holds no variation of them): what a search costs a source that finds nothing (most of
  // a harvest's) and how many get an unrelated hit at match.minScore / minInliers
  const nullCpu: Record<string, number[]> = {};
  const nullPos: Record<string, string[]> = {};
  if (process.argv.includes('--null')) {
    const f8 = all.find((x) => x.name === 'mining-flickr8k')!;
    const ids = [...f8.truth.keys()].filter((id) => inHalf(`${f8.name}:${id}`));
    for (const id of ids) for (const t of f8.truth.get(id)!) index.remove(real.findIndex((x) => x.key === `${f8.name}:${t}`));
    for (const id of ids) {
      const q = feats.get(f8.name)!.get(id)!;
      for (const spec of ['base', ...VARIANTS]) {
        const o = settings(spec);
        const c0 = process.cpuUsage();
        const r = await search(index, loaderOf(spec), q, { ...o.p, shortlist: o.sl });
        const c = process.cpuUsage(c0);
        (nullCpu[spec] ??= []).push((c.user + c.system) / 1000);
        const best = r.hits.find((h) => storable(config, h));
        nullPos[spec] ??= [];
        if (best) nullPos[spec].push(`${id}→${best.slot < real.length ? real[best.slot]!.key : 'pad'}`);
      }
    }
    for (const [spec, c] of Object.entries(nullCpu)) log(`${spec.padEnd(28)} null ${c.length}: cpu p50 ${pct(c, 0.5).toFixed(1)} p95 ${pct(c, 0.95).toFixed(1)} mean ${(c.reduce((a, b) => a + b, 0) / c.length).toFixed(1)} ms; unrelated hits ${nullPos[spec]!.join(' ') || 'none'}`);
  }
  for (const [spec, r] of Object.entries(ranks)) {
    const in30 = r.filter((x) => x >= 0 && x < 30).length;
    const h = hit1[spec]!;
    const tm = parts[spec]!;
    log(`${spec.padEnd(28)} mean probe ${(tm.probe / h.length).toFixed(1)} vote ${(tm.vote / h.length).toFixed(1)} verify ${(tm.verify / h.length).toFixed(1)} ms, unconfident ${tm.unconfident}`);
    log(`${spec.padEnd(28)} P@1 ${h.filter(Boolean).length}/${h.length} top30 ${in30}/${r.length} cpu p50 ${pct(cpu[spec]!, 0.5).toFixed(1)} p95 ${pct(cpu[spec]!, 0.95).toFixed(1)} mean ${(cpu[spec]!.reduce((a, b) => a + b, 0) / h.length).toFixed(1)} ms; wrong: ${h.map((x, i) => (x ? '' : `${qs[i]}@${r[i]}`)).filter(Boolean).join(' ')}`);
  }
  // one JSON line (stdout): per variant P@1 per set, shortlist recall, query CPU (process CPU of the whole search)
  const perSet = (h: boolean[]) => Object.fromEntries(SETS.map((n) => {
    const k = n.replace('retrieval-', '');
    const mine = h.filter((_, i) => qs[i]!.startsWith(`${k}:`));
    return [n, mine.length ? Math.round((mine.filter(Boolean).length / mine.length) * 1000) / 1000 : null];
  }));
  const out = Object.fromEntries(Object.keys(ranks).map((spec) => {
    const c = cpu[spec]!;
    return [spec, { p1: perSet(hit1[spec]!), hits: hit1[spec]!.filter(Boolean).length, queries: c.length, top30: ranks[spec]!.filter((x) => x >= 0 && x < 30).length, queryCpuMs: { p50: pct(c, 0.5), p95: pct(c, 0.95), mean: Math.round(c.reduce((a, b) => a + b, 0) / c.length) }, wrong: hit1[spec]!.map((x, i) => (x ? '' : `${qs[i]}@${ranks[spec]![i]}`)).filter(Boolean), ...(nullCpu[spec] ? { null: { queries: nullCpu[spec].length, queryCpuMs: { p50: pct(nullCpu[spec], 0.5), p95: pct(nullCpu[spec], 0.95) }, unrelatedHits: nullPos[spec]!.length } } : {}) }];
  }));
  process.stdout.write(JSON.stringify({ bench: 'recall-at-scale', date: new Date().toISOString(), machine: { nproc: os.cpus().length, cpu: os.cpus()[0]?.model.split(' ').slice(0, 2).join(' '), loadavgAtStart, loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10) }, targets: real.length + pads.length, bits: index.params.bits, half: HALF, config: { multiprobe: config.lsh.multiprobe, maxBucket: config.lsh.maxBucket, voteHamming: config.lsh.voteHamming, voteSigma: config.lsh.voteSigma, shortlist: config.lsh.shortlist }, variants: out }) + '\n');
  if (!process.argv.includes('--funnel')) process.exit(0);
  index.params.probes = config.lsh.multiprobe;
  index.params.maxBucket = config.lsh.maxBucket;
}
const rows: Record<string, number | string>[] = [];
for (const s of all.filter((x) => SETS.includes(x.name))) {
  for (const [sid, rel] of s.truth) {
    if (!inHalf(`${s.name}:${sid}`)) continue;
    const q = prepare(feats.get(s.name)!.get(sid)!);
    const slots = [...rel].map((t) => real.findIndex((x) => x.key === `${s.name}:${t}`));
    const slot = slots[0]!;
    const t = real[slot]!.p;
    const qs = index.sketches(q.vecs, q.f.count);
    const ts = targetSketches(index, t);
    const ex = verifyCandidate(q, t, sketchCollisions(qs, q.f.count, ts, 24), p);
    // inlier pairs back to keypoint numbers
    const key = (x: number, y: number) => `${Math.round(x * 4)},${Math.round(y * 4)}`;
    const kpAt = (f: Prepared['f']) => {
      const m = new Map<string, number>();
      for (let i = 0; i < f.count; i++) m.set(key(f.keypoints[i * 6]!, f.keypoints[i * 6 + 1]!), i);
      return m;
    };
    const qm = kpAt(q.f);
    const tm = kpAt(t.f);
    const tcodes = index.codes(t.vecs, t.f.count);
    index.params.probes = 48;
    const pr48 = index.probe(q.vecs, q.f.count).probes;
    index.params.probes = config.lsh.multiprobe;
    const st = { inl: 0, p24: 0, p48: 0, skip24: 0, vote24: 0, match24: 0, shares: 0 };
    const sharesOf: number[] = [];
    for (let k = 0; k < ex.pairs.length / 4; k++) {
      const qi = qm.get(key(ex.pairs[4 * k]!, ex.pairs[4 * k + 1]!));
      const ti = tm.get(key(ex.pairs[4 * k + 2]!, ex.pairs[4 * k + 3]!));
      if (qi === undefined || ti === undefined) continue;
      st.inl++;
      const c = tcodes[ti * 3]! & mask;
      const pos = pr48.subarray(qi * 48, qi * 48 + 48).indexOf(c);
      if (pos < 0) continue;
      st.p48++;
      if (pos >= config.lsh.multiprobe) continue;
      st.p24++;
      if (bucketSize(c) > index.params.maxBucket) {
        st.skip24++;
        continue;
      }
      const h = ham(qs, qi, ts, ti);
      if (h <= p.matchHamming) st.match24++;
      if (h <= p.voteHamming) {
        st.vote24++;
        sharesOf.push(reached(pr48, qi * 48, config.lsh.multiprobe, qs, qi));
      }
    }
    const v = votePass(index, q, { ...p, shortlist: 5000 }, false);
    const rank = v.shortlist.findIndex((x) => slots.includes(x));
    const row = {
      q: `${s.name.replace('retrieval-', '')}:${sid}`,
      ex: ex.inliers,
      exScore: Math.round(ex.score * 100) / 100,
      ...st,
      share: sharesOf.length ? Math.round(sharesOf.reduce((a, b) => a + b, 0) / sharesOf.length) : 0,
      rank,
      votes: rank >= 0 ? Math.round(v.votes[rank]! * 10) / 10 : 0,
      v30: Math.round((v.votes[p.shortlist - 1] ?? 0) * 10) / 10,
    };
    rows.push(row);
    log(JSON.stringify(row));
  }
}
const miss = rows.filter((r) => (r.rank as number) < 0 || (r.rank as number) >= p.shortlist);
log(`shortlisted ${rows.length - miss.length}/${rows.length}; missed: ${miss.map((r) => `${r.q}@${r.rank}`).join(' ')}`);
