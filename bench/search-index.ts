// `npm run bench:search-index`: the LSH index's own search on the retrieval sets, without the match stage around it:
// P@1..5 of the plain search (ranked, emitted, stored), hit@1/5, shortlist recall against exhaustive verification,
// query latency without feature extraction, index build time and memory, the OpenCV reference pipeline side by side
// (bench/opencv_search.py, same run), a scaling run at 1k/10k/100k indexed images, and the Oxford graf/bikes pairs
// plain and with views. Prints ONE JSON line. What a user gets (the match stage with its views, archive matching and
// budgets, through `export --candidates`) is `npm run bench:search`.
// Flags: --sets a,b (none: scaling only)  --features ours|cv2  --skip-opencv  --skip-scaling  --scales 1000,10000,100000
//        --split all|dev|holdout (sets with scene labels, retrieval-scenes: which queries run; the held-out scenes
//        are search-lib's holdoutScenes; `all` reports both parts beside the whole)
//        --queries N  --scale-queries N  --scale-set NAME (whose targets and queries, retrieval-smvs)  --verbose (on stderr: the misses of the scaling run)
//        --skip-pairs (the image-pairs section: Oxford graf/bikes pairs verified plain and with views)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.js';
import type { Features } from '../src/lib/image-index/index.js';
import { CODE_BITS, encode, LshIndex, mulberry32, project, STRIDE } from '../src/lib/image-index/index.js';
import { MEAN_ROOTSIFT } from '../src/lib/image-index/index.js';
import { prepare, search, sketchCollisions, targetSketches, type SearchParams } from '../src/lib/image-index/index.js';
import { verifyCandidate } from '../src/lib/image-index/index.js';
import { mirrorFeatures } from '../src/lib/image-index/index.js';
import { autoBits, lshParams, searchParams } from '../src/lib/image-index/index.js';
import type { Prepared } from '../src/lib/image-index/index.js';
import { decodeGrey } from '../src/lib/sift/index.js';
import { searchProgressive, viewParams } from '../src/stages/match/index.js';
import { storable, toOriginal } from '../src/stages/match/index.js';
import { extractFeatures } from '../src/lib/sift/index.js';
import { benchArgs, holdoutScenes, loadCv2Features, metrics, ourFeatures as ourFeaturesOf, percentile, readSet, round, sharedDataDir, type RetrievalSet } from './search-lib.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shared = sharedDataDir(repoRoot);
const { args, opt, flag } = benchArgs();
const SETS = opt('sets', 'retrieval-smvs,mining-flickr8k,retrieval-wxbs,retrieval-scenes').split(',').filter((s) => s && s !== 'none');
const SPLIT = opt('split', 'all');
const SCALE_SET = opt('scale-set', 'retrieval-smvs');
const FEATURES = opt('features', 'ours');
const MAXQ = Number(opt('queries', '1000000'));
const EXHAUSTIVE = Number(opt('exhaustive', '1000000'));
const SCALES = opt('scales', '1000,10000,100000').split(',').map(Number);
const { config } = loadConfig({});
const log = (m: string) => process.stderr.write(`[bench:search] ${m}\n`);

/** Our SIFT features of every image of a set, cached in bench/.cache/ours/SET (same layout as the cv2 dumps). */
const ourFeatures = (set: RetrievalSet) => ourFeaturesOf(repoRoot, set, config, log);

function cv2Features(set: RetrievalSet): Map<string, Features> {
  const dir = path.join(repoRoot, 'bench', '.cache', 'cv2', set.name);
  if (!fs.existsSync(path.join(dir, 'index.json'))) execFileSync('/usr/bin/python3', [path.join(repoRoot, 'bench', 'cv2_features.py'), set.dir, dir]);
  return loadCv2Features(dir);
}

function ensureOpenCv(): boolean {
  if (spawnSync('/usr/bin/python3', ['-c', 'import cv2']).status === 0) return true;
  log('installing python3-opencv for the side-by-side run');
  spawnSync('apt-get', ['install', '-y', 'python3-opencv'], { stdio: 'ignore' });
  return spawnSync('/usr/bin/python3', ['-c', 'import cv2']).status === 0;
}

async function runSet(name: string) {
  const set = readSet(path.join(shared, name));
  const feats = FEATURES === 'cv2' ? cv2Features(set) : await ourFeatures(set);
  const p: SearchParams = searchParams(config);
  const heap0 = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  const t0 = performance.now();
  const index = new LshIndex(lshParams(config, set.targets.reduce((a, t) => a + feats.get(t.id)!.count, 0)));
  const prepared: Prepared[] = [];
  const ids: string[] = [];
  for (const t of set.targets) {
    const pr = prepare(feats.get(t.id)!);
    index.add(index.codes(pr.vecs, pr.f.count));
    prepared.push(pr);
    ids.push(t.id);
  }
  index.merge();
  const buildMs = performance.now() - t0;
  const heap1 = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  const ranked = new Map<string, string[]>();
  const emitted = new Map<string, string[]>();
  const lat: number[] = [];
  const cpu: number[] = []; // CPU time of the query (the wall time is inflated on a shared machine)
  let inShort = 0;
  let truthPairs = 0;
  let exhaustiveFound = 0;
  let exhaustiveInShort = 0;
  let exhaustiveQueries = 0;
  let negNonZero = 0;
  let negVerified = 0;
  // Sets with scene labels: the held-out scenes' queries run only with --split holdout or all.
  const held = holdoutScenes(set);
  const part = (id: string) => (set.scenes.size ? (held.has(set.scenes.get(id) ?? '') ? 'holdout' : 'dev') : 'all');
  const sources = set.sources.filter((s) => SPLIT === 'all' || !set.scenes.size || part(s.id) === SPLIT).slice(0, MAXQ);
  // Stored: what `match` keeps (the match stage's own bar, storable).
  const keeps = (h: Parameters<typeof storable>[1]) => storable(config, h);
  const stored = new Map<string, string[]>();
  const models = { homography: 0, fundamental: 0 };
  for (const s of sources) {
    const q = feats.get(s.id)!;
    const t = performance.now();
    const c0 = process.cpuUsage();
    const r = await search(index, (slot) => prepared[slot], q, p);
    lat.push(performance.now() - t);
    const c1 = process.cpuUsage(c0);
    cpu.push((c1.user + c1.system) / 1000);
    // Ranked = the verified shortlist in score order (then inliers, votes), as the OpenCV run ranks its
    // shortlist by inliers; emitted = only images with a positive score (what match stores).
    ranked.set(s.id, r.hits.map((h) => ids[h.slot]!));
    emitted.set(s.id, r.hits.filter((h) => h.score > 0).map((h) => ids[h.slot]!));
    stored.set(s.id, r.hits.filter(keeps).map((h) => ids[h.slot]!));
    const top = r.hits.find(keeps);
    if (top?.model) models[top.model]++;
    const rel = set.truth.get(s.id) ?? new Set<string>();
    for (const h of r.hits) if (!rel.has(ids[h.slot]!)) (negVerified++, h.score > 0 && negNonZero++);
    if (!rel.size) continue;
    const short = new Set(r.shortlist.map((sl) => ids[sl]!));
    for (const tid of rel) {
      truthPairs++;
      if (short.has(tid)) inShort++;
    }
    // Exhaustive matching, without the index: every correct target of the query is matched keypoint against
    // keypoint (pairs within Hamming 20 of 64 sketch bits, loose enough to hold the true nearest and second
    // nearest neighbours, then the exact ratio test, RANSAC and score). Which correct targets does it verify,
    // and did the shortlist hold them? (All sources with a counterpart unless --exhaustive N.)
    if (exhaustiveQueries++ >= EXHAUSTIVE) continue;
    const nq = Math.min(q.count, 2048);
    const variants = [prepare(q), prepare(mirrorFeatures(q))].map((v) => ({ v, sketches: index.probe(v.vecs, nq).sketches }));
    for (const tid of rel) {
      const slot = ids.indexOf(tid);
      const verified = variants.some(({ v, sketches }) => verifyCandidate(v, prepared[slot]!, sketchCollisions(sketches, nq, targetSketches(index, prepared[slot]!), 20), p).score > 0);
      if (verified) {
        exhaustiveFound++;
        if (short.has(tid)) exhaustiveInShort++;
      }
    }
  }
  const sub = { ...set, truth: new Map([...set.truth].filter(([k]) => sources.some((s) => s.id === k))) };
  const m = metrics(sub, ranked);
  const me = metrics(sub, emitted);
  const ms = metrics(sub, stored);
  // P@1 of each part (dev, held-out) of a set with scene labels: ranked, emitted (score > 0) and stored.
  const parts = (lists: Record<string, Map<string, string[]>>) => {
    if (!set.scenes.size) return undefined;
    const out: Record<string, Record<string, number>> = {};
    for (const pt of ['dev', 'holdout']) {
      const truth = new Map([...sub.truth].filter(([k]) => part(k) === pt));
      if (!truth.size) continue;
      out[pt] = { queries: truth.size, ...Object.fromEntries(Object.entries(lists).map(([k, v]) => [k, metrics({ ...sub, truth }, v).p[0]!])) };
    }
    return out;
  };
  const kp = set.targets.reduce((a, t) => a + feats.get(t.id)!.count, 0) / set.targets.length;
  const out: Record<string, unknown> = {
    queries: sources.length,
    p: m.p,
    hit1: m.hit1,
    hit5: m.hit5,
    emitted: { p: me.p, hit1: me.hit1 },
    stored: { p: ms.p, hit1: ms.hit1 },
    parts: parts({ p1: ranked, emittedP1: emitted, storedP1: stored }),
    topModels: models,
    shortlistRecall: round(inShort / Math.max(1, truthPairs)),
    shortlistRecallVsExhaustive: round(exhaustiveInShort / Math.max(1, exhaustiveFound)),
    exhaustiveVerified: exhaustiveFound,
    unrelatedNonZero: round(negNonZero / Math.max(1, negVerified), 4),
    unrelatedPositive: { count: negNonZero, of: negVerified },
    queryMs: { median: round(percentile(lat, 0.5), 1), p95: round(percentile(lat, 0.95), 1) },
    queryCpuMs: { median: round(percentile(cpu, 0.5), 1), p95: round(percentile(cpu, 0.95), 1) },
    buildMs: Math.round(buildMs),
    indexBytes: index.memoryBytes(),
    indexBytesPerImage: Math.round(index.memoryBytes() / set.targets.length),
    heapDeltaBytes: heap1 - heap0,
    targetKeypointsMean: Math.round(kp),
  };
  if (!flag('skip-opencv') && ensureOpenCv()) {
    log(`${name}: OpenCV reference run`);
    const res = spawnSync('/usr/bin/python3', [path.join(repoRoot, 'bench', 'opencv_search.py'), set.dir, String(MAXQ), sources.map((s) => s.id).join(',')], {
      maxBuffer: 256 * 1024 * 1024,
      encoding: 'utf8',
    });
    if (res.status === 0) {
      const o = JSON.parse(res.stdout) as { ranked: Record<string, string[]>; latency_ms: number[]; sift_ms: number[]; build_ms: number };
      const om = metrics({ ...set, truth: new Map([...set.truth].filter(([k]) => k in o.ranked)) }, new Map(Object.entries(o.ranked)));
      out.opencv = {
        p: om.p, hit1: om.hit1, hit5: om.hit5,
        parts: parts({ p1: new Map(Object.entries(o.ranked)) }),
        queryMs: { median: round(percentile(o.latency_ms, 0.5), 1), p95: round(percentile(o.latency_ms, 0.95), 1) },
        siftMs: round(percentile(o.sift_ms, 0.5), 1),
        buildMs: Math.round(o.build_ms),
      };
    } else out.opencv = { error: res.stderr.slice(-300) };
  }
  return out;
}

/**
 * Scaling: the real SMVS targets plus synthetic distractor images up to N. A synthetic keypoint is a mosaic
 * of real RootSIFT descriptors: each of its four 2x2-cell quadrants comes from a different random descriptor
 * of a pool drawn from the real targets of every set, so every quadrant has real gradient statistics but the
 * whole is no copy of a real keypoint (an earlier model flipped 3% of a real keypoint's bits: at 100k images
 * every real keypoint then had ~375 near-copies, which no bank of unrelated photos has). Projection is
 * linear, so the projections of the quadrant parts are computed once per pool descriptor and summed; the
 * codes are signs, so the mosaic needs no renormalisation. Queries are real SMVS queries; latency, memory, P@1.
 */
async function scaling(featsBySet: Map<string, Map<string, Features>>) {
  // --scale-set: whose real targets and queries (retrieval-scenes: the same-scene case at scale; its held-out
  // scenes' queries only with --split holdout or all).
  const set = readSet(path.join(shared, SCALE_SET));
  const feats = featsBySet.get(SCALE_SET)!;
  const held = holdoutScenes(set);
  const realTargets = set.targets.map((t) => prepare(feats.get(t.id)!));
  // The pool: every 4th keypoint of the real targets of all cached sets.
  const poolVecs: Float32Array[] = [];
  for (const [name, fs2] of featsBySet) {
    const st = readSet(path.join(shared, name));
    for (const t of st.targets) {
      const pr = prepare(fs2.get(t.id)!);
      for (let i = 0; i < pr.f.count; i += 4) poolVecs.push(pr.vecs.subarray(i * 128, i * 128 + 128));
    }
  }
  const P = Math.min(poolVecs.length, 20000);
  const rndPool = mulberry32(99);
  // Part k holds the descriptor on quadrant k and the mean descriptor elsewhere: project() subtracts the
  // mean from each part, so the four parts' projections sum to the projection of the mosaic.
  const parts = new Float32Array(P * 4 * 128);
  for (let i = 0; i < P * 4; i++) parts.set(MEAN_ROOTSIFT, i * 128);
  for (let i = 0; i < P; i++) {
    const v = poolVecs[Math.floor(rndPool() * poolVecs.length)]!;
    for (let q = 0; q < 4; q++) {
      const r0 = (q >> 1) * 2;
      const c0 = (q & 1) * 2;
      for (let r = r0; r < r0 + 2; r++)
        for (let c = c0; c < c0 + 2; c++)
          for (let o = 0; o < 8; o++) parts[(i * 4 + q) * 128 + (r * 4 + c) * 8 + o] = v[(r * 4 + c) * 8 + o]!;
    }
  }
  log(`scaling: mosaic pool of ${P} descriptors from ${poolVecs.length} real target keypoints`);
  const res: Record<string, unknown>[] = [];
  for (const N of SCALES) {
    // The width `lsh.bits: auto` gives a bank of this many keypoints (synthetic images hold 750 on average).
    const realKp = realTargets.reduce((a, t) => a + t.f.count, 0);
    const bits = autoBits(realKp + (N - realTargets.length) * 750);
    const params = { ...lshParams(config), bits };
    const index = new LshIndex(params);
    const nproj = index.proj.length;
    const partProj = project(parts, P * 4, index.proj);
    const used = CODE_BITS + 64;
    const acc = new Float32Array(used);
    const rnd = mulberry32(N);
    const t0 = performance.now();
    const mem0 = process.memoryUsage().rss;
    index.addBatch(realTargets.map((pr) => index.codes(pr.vecs, pr.f.count)));
    let chunk: Uint32Array[] = [];
    for (let i = realTargets.length; i < N; i++) {
      const n = 500 + Math.floor(rnd() * 500);
      const packed = new Uint32Array(n * STRIDE);
      for (let k = 0; k < n; k++) {
        acc.fill(0);
        for (let q = 0; q < 4; q++) {
          const o = (Math.floor(rnd() * P) * 4 + q) * nproj;
          for (let j = 0; j < used; j++) acc[j]! += partProj[o + j]!;
        }
        packed.set(encode(acc, 1, used), k * STRIDE);
      }
      // Loaded as a bank is loaded on start (IndexHandle.refresh): batches of max(5,000, half the loaded) images.
      if (chunk.push(packed) >= Math.max(5000, index.size / 2) || i === N - 1) (index.addBatch(chunk), (chunk = []));
      if (i % 10000 === 0) log(`scaling ${N}: ${i} images`);
    }
    index.merge();
    const buildMs = performance.now() - t0;
    const mem = index.memoryBytes();
    const lat: number[] = [];
    const cpu: number[] = [];
    const parts2 = { probeMs: [] as number[], voteMs: [] as number[], verifyMs: [] as number[] };
    let p1 = 0;
    let storedP1 = 0;
    let mirrorPasses = 0;
    const qs = set.sources
      .filter((s) => set.truth.has(s.id) && (SPLIT === 'all' || !set.scenes.size || held.has(set.scenes.get(s.id) ?? '') === (SPLIT === 'holdout')))
      .slice(0, Number(opt('scale-queries', '50')));
    const p = searchParams(config);
    // Synthetic slots have no keypoint positions, so they are not verified (the loader has nothing to give,
    // as for an image removed meanwhile): they still take shortlist places from the real targets, which is
    // what the scaling run measures; the real targets verify for real.
    const scanSum: Record<string, number> = {};
    for (const s of qs) {
      const t = performance.now();
      const c0 = process.cpuUsage();
      const r = await search(index, (slot) => (slot < realTargets.length ? realTargets[slot] : undefined), feats.get(s.id)!, p);
      lat.push(performance.now() - t);
      const c1 = process.cpuUsage(c0);
      cpu.push((c1.user + c1.system) / 1000);
      if (r.mirrorPass) mirrorPasses++;
      for (const [k, v] of Object.entries(r.scan)) scanSum[k] = (scanSum[k] ?? 0) + v;
      for (const k of Object.keys(parts2) as (keyof typeof parts2)[]) parts2[k].push(r.timings[k]);
      const top = r.hits[0];
      const right = (h: typeof top | undefined) => !!h && h.slot < realTargets.length && !!set.truth.get(s.id)?.has(set.targets[h.slot]!.id);
      if (right(r.hits.find((h) => storable(config, h)))) storedP1++;
      if (top && top.score > 0 && right(top)) p1++;
      else if (flag('verbose')) {
        const tIdx = set.targets.findIndex((t) => set.truth.get(s.id)?.has(t.id));
        log(`miss ${s.id}: truth slot ${tIdx} shortlist rank ${r.shortlist.indexOf(tIdx)} hit ${JSON.stringify(r.hits.find((h) => h.slot === tIdx) ? { s: r.hits.find((h) => h.slot === tIdx)!.score, v: r.hits.find((h) => h.slot === tIdx)!.votes } : null)} top votes ${r.hits.slice(0, 3).map((h) => h.votes).join(',')}`);
      }
    }
    res.push({
      images: N, bits, buildMs: Math.round(buildMs), indexBytes: mem, bytesPerImage: Math.round(mem / N),
      rssDeltaBytes: process.memoryUsage().rss - mem0,
      queries: qs.length,
      queryMs: { median: round(percentile(lat, 0.5), 1), p95: round(percentile(lat, 0.95), 1) },
      queryCpuMs: { median: round(percentile(cpu, 0.5), 1), p95: round(percentile(cpu, 0.95), 1) },
      medianPartsMs: Object.fromEntries(Object.entries(parts2).map(([k, v]) => [k, round(percentile(v, 0.5), 1)])),
      mirrorPasses, scanPerQuery: Object.fromEntries(Object.entries(scanSum).map(([k, v]) => [k, Math.round(v / qs.length)])),
      p1: round(p1 / qs.length),
      storedP1: round(storedP1 / qs.length),
    });
    log(`scaling ${N}: ${JSON.stringify(res[res.length - 1])}`);
  }
  return res;
}

/**
 * The image-pairs set (Oxford graf 1->2..6: viewpoint 20-60 degrees; bikes: blur) through search against a
 * one-image index, plain and progressive with views (forced, confidence 2), with the inliers checked against
 * the set's true homography: median distance between H_true(query point) and the matched target point, in
 * original pixels. Says how far the viewpoint can turn before a planar scene stops verifying.
 */
async function imagePairs() {
  const dir = path.join(shared, 'image-pairs');
  const rows = fs.readFileSync(path.join(dir, 'pairs.tsv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
  const out: Record<string, unknown>[] = [];
  // Image 1 of a sequence is the query of every pair: read and described once.
  const cache = new Map<string, { buf: Buffer; f: Features }>();
  const load = async (rel: string) => {
    if (!cache.has(rel)) {
      const buf = fs.readFileSync(path.join(dir, rel));
      cache.set(rel, { buf, f: await extractFeatures(buf, config) });
    }
    return cache.get(rel)!;
  };
  for (const [id, a, b, hfile] of rows) {
    if (!id || !a || !b || !hfile) continue;
    const { buf: bufA, f: fa } = await load(a);
    const { f: fb } = await load(b);
    const Ht = fs.readFileSync(path.join(dir, hfile), 'utf8').trim().split(/\s+/).map(Number);
    const index = new LshIndex(lshParams(config, 0));
    const pb = prepare(fb);
    index.add(index.codes(pb.vecs, fb.count));
    const p = searchParams(config);
    const grey = await decodeGrey(bufA, { maxSide: config.sift.maxSide, maxPixels: config.sift.maxPixels });
    const runs = {
      plain: (await search(index, () => pb, fa, p)).hits[0],
      views: (await searchProgressive(index, () => pb, fa, p, { ...viewParams(config), enabled: true, confidence: 2 }, config.sift, () => grey)).hits[0],
    };
    const row: Record<string, unknown> = { id };
    for (const [k, h] of Object.entries(runs)) {
      if (!h) {
        row[k] = null;
        continue;
      }
      const { pairs } = toOriginal(h, fa, fb);
      const err: number[] = [];
      for (let i = 0; i < pairs.length; i += 4) {
        const x = pairs[i]!, y = pairs[i + 1]!;
        const w = Ht[6]! * x + Ht[7]! * y + Ht[8]!;
        err.push(Math.hypot((Ht[0]! * x + Ht[1]! * y + Ht[2]!) / w - pairs[i + 2]!, (Ht[3]! * x + Ht[4]! * y + Ht[5]!) / w - pairs[i + 3]!));
      }
      row[k] = { score: round(h.score, 3), matches: h.matches, inliers: h.inliers, inlierErrPx: err.length ? round(percentile(err, 0.5), 2) : null, ...(h.reason ? { reason: h.reason } : {}) };
    }
    log(`image-pairs ${JSON.stringify(row)}`);
    out.push(row);
  }
  return out;
}

async function main() {
  const started = new Date().toISOString();
  const out: Record<string, unknown> = {
    bench: 'search', date: started, machine: { nproc: os.cpus().length, cpu: os.cpus()[0]?.model, loadavg: os.loadavg().map((x) => round(x, 1)) },
    features: FEATURES, config: { lsh: config.lsh, match: config.match },
  };
  const featsBySet = new Map<string, Map<string, Features>>();
  const sets: Record<string, unknown> = {};
  for (const name of SETS) {
    log(`${name}`);
    sets[name] = await runSet(name);
    log(`${name}: ${JSON.stringify(sets[name])}`);
    fs.mkdirSync(path.join(repoRoot, 'bench', 'out'), { recursive: true });
    fs.writeFileSync(path.join(repoRoot, 'bench', 'out', 'search-partial.json'), JSON.stringify({ ...out, sets }) + '\n');
  }
  out.sets = sets;
  if (!flag('skip-pairs') && fs.existsSync(path.join(shared, 'image-pairs', 'pairs.tsv'))) out.imagePairs = await imagePairs();
  if (!flag('skip-scaling')) {
    for (const name of new Set(['retrieval-smvs', 'mining-flickr8k', 'retrieval-wxbs', SCALE_SET])) {
      const set = readSet(path.join(shared, name));
      featsBySet.set(name, FEATURES === 'cv2' ? cv2Features(set) : await ourFeatures(set));
    }
    out.scaling = await scaling(featsBySet);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((err) => {
  process.stderr.write(`bench:search: ${(err as Error).stack}\n`);
  process.exit(1);
});
