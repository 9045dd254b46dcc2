// Dev loop (not part of the product): index one set from cached features (bench/.cache/{cv2,ours}), query every
// source, print metrics, timings and score statistics. Env knobs: T B P MB VH MH R TH MI FD S M Q ALL FEAT V.
// Dev loop: index a set's OpenCV features, query every source, print metrics and score statistics.
import path from 'node:path';
import { readSet, loadCv2Features, metrics, percentile, round } from '../bench/search-lib.js';
import { LshIndex } from '../src/lib/image-index/lsh.js';
import { search, prepare } from '../src/lib/image-index/searcher.js';
import type { Prepared } from '../src/lib/image-index/verify.js';

const setName = process.argv[2] ?? 'mining-flickr8k';
const set = readSet(path.join('/work/shared/data', setName));
const feats = loadCv2Features(path.join('bench/.cache', process.env.FEAT ?? 'cv2', setName));
const env = (k: string, d: number) => (process.env[k] ? Number(process.env[k]) : d);
const idx = new LshIndex({ tables: env('T', 8), bits: env("B", 16), probes: env("P", 2), maxBucket: env("MB", 300), seed: 1 });
const slotIds: string[] = [];
const prepared: Prepared[] = [];
let t0 = performance.now();
for (const t of set.targets) {
  const f = feats.get(t.id)!;
  const p = prepare(f);
  idx.add(idx.codes(p.vecs, f.count));
  slotIds.push(t.id);
  prepared.push(p);
}
idx.merge();
const buildMs = performance.now() - t0;
const params = {
  ratio: env('R', 0.8), ransacThreshold: env('TH', 8), ransacIterations: 2000, minInliers: env('MI', 12),
  voteHamming: env("VH", 10), matchHamming: env("MH", 16), farDistance: env("FD", 0.6), shortlist: env('S', 30), mirror: env('M', 1) === 1,
};
const ranked = new Map<string, string[]>();
const lat: number[] = []; const tim = { p: 0, v: 0, x: 0 };
let inShort = 0, nTruth = 0;
const pos: string[] = [], neg: number[] = [];
let negMaxScore = 0, negNonZero = 0, negCount = 0;
const misses: string[] = [];
for (const s of set.sources.slice(0, env("Q", 1e9))) {
  const f = feats.get(s.id)!;
  t0 = performance.now();
  const r = search(idx, (slot) => prepared[slot], f, params);
  lat.push(performance.now() - t0); tim.p += r.timings.probeMs; tim.v += r.timings.voteMs; tim.x += r.timings.verifyMs;
  const list = r.hits.filter((h) => process.env.ALL || h.score > 0).map((h) => slotIds[h.slot]!);
  ranked.set(s.id, list);
  const rel = set.truth.get(s.id);
  for (const h of r.hits) {
    const tid = slotIds[h.slot]!;
    if (rel?.has(tid)) pos.push(`${h.inliers}/${h.matches} sp${round(h.spread, 2)} e${round(h.meanError, 1)} s${round(h.score, 2)}${h.mirrored ? 'M' : ''}`);
    else {
      negCount++;
      if (h.score > 0) negNonZero++;
      negMaxScore = Math.max(negMaxScore, h.score);
      neg.push(h.inliers);
    }
  }
  if (rel) {
    for (const t of rel) {
      nTruth++;
      if (r.shortlist.some((sl) => slotIds[sl] === t)) inShort++;
    }
    if (!list.length || !rel.has(list[0]!)) {
      const th = r.hits.find((h) => rel.has(slotIds[h.slot]!));
      misses.push(`${s.id}: top=${list[0] ?? '-'} ${r.hits[0] ? `${r.hits[0].inliers}/${r.hits[0].matches} s${round(r.hits[0].score, 2)}` : ''} truth=${th ? `${th.inliers}/${th.matches} s${round(th.score, 2)} ${th.reason ?? ''}` : 'not in shortlist'}`);
    }
  }
}
console.log(JSON.stringify({ set: setName, ...metrics(set, ranked), shortlistRecall: round(inShort / nTruth), medMs: round(percentile(lat, 0.5), 1), p95: round(percentile(lat, 0.95), 1), buildMs: round(buildMs), mem: idx.memoryBytes(), negNonZero, negCount, negMaxScore: round(negMaxScore), negInlP99: percentile(neg, 0.99), tim }));
if (process.env.V) { console.log(misses.join('\n')); console.log(pos.slice(0, 40).join(' | ')); }
