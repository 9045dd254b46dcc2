// Issue 19: capbridge's own features and verifier against the retrieval-wxbs ceiling (bench/wxbs_ceiling.py), pairwise:
// every query of the chosen kinds against its partner(s) and negatives (every other query's partners and 12 seeded
// unrelated targets), both photos described with ASIFT's dense views (src/lib/sift/views.ts asiftSpecs), descriptors
// paired by a kd-forest (src/lib/image-index/kdforest.ts), verified by verifyCandidate with both sides pooled. Says
// whether the archive mode's matcher (match.views.archive) separates what the ceiling says is separable.
// Usage: npm run bench:two-sided -- [--kinds EVD|all|WGABS,..] (defaults: match.views.archive and match.views.poolRadius)
//        [--max-tilt 5] [--keypoints 1000] [--checks 64] [--k 8] [--max-side 1024] [--pool-radius 8] [--min-inliers 12]
//        [--rival place|anywhere] (Lowe's rival: only another place, or any keypoint: VerifyParams.rivalAnywhere)
//        [--epipolar] (also the fundamental-matrix model, which archive matching leaves out)
//        [--angle-tolerance 30] [--scale-tolerance 1] [--no-frames] (inliers checked by position only)
//        [--shard i/n] (every n-th query from the i-th: one run split over processes; the JSON lines add up)
// Prints a line per query on stderr and one JSON line. Dense features are cached under $TMPDIR/capbridge-two-sided.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.js';
import type { Features } from '../src/lib/image-index/index.js';
import { concatFeatures } from '../src/lib/image-index/index.js';
import { prepare } from '../src/lib/image-index/index.js';
import { searchParams } from '../src/lib/image-index/index.js';
import type { Prepared } from '../src/lib/image-index/index.js';
import { decodeGrey } from '../src/lib/sift/index.js';
import { siftParams } from '../src/lib/sift/index.js';
import { SiftPool } from '../src/lib/sift/index.js';
import { asiftSpecs } from '../src/lib/sift/index.js';
import { archiveCompare, archiveParams, archiveVerifyParams } from '../src/stages/match/index.js';
import { benchArgs, percentile, readSet, round, sharedDataDir } from './search-lib.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shared = sharedDataDir(repoRoot);
const { opt, flag } = benchArgs();
const log = (m: string) => process.stderr.write(`[bench:two-sided] ${m}\n`);
const { config } = loadConfig({});
const ar = config.match.views.archive;
const maxTilt = Number(opt('max-tilt', String(ar.maxTilt)));
const kpv = Number(opt('keypoints', String(ar.keypointsPerView)));
const checks = Number(opt('checks', String(ar.checks)));
const k = Number(opt('k', String(ar.neighbours)));
const maxSide = Number(opt('max-side', String(ar.maxSide)));
const pool = Number(opt('pool-radius', String(config.match.views.poolRadius)));
const rivalAnywhere = opt('rival', 'place') === 'anywhere';
const minInliers = Math.max(config.match.minInliers, Number(opt('min-inliers', String(ar.minInliers))));
const angleTolerance = Number(opt('angle-tolerance', String(ar.angleTolerance)));
const scaleTolerance = Number(opt('scale-tolerance', String(ar.scaleTolerance)));
const [shard, shards] = opt('shard', '1/1').split('/').map(Number) as [number, number];
const kinds = opt('kinds', 'EVD');
const set = readSet(path.join(shared, 'retrieval-wxbs'));
const readme = fs.readFileSync(path.join(set.dir, 'README.md'), 'utf8');
const kindOf = new Map<string, string>();
for (const m of readme.matchAll(/^\|\s*(s\d+)\s*\|\s*(\S+)/gm)) kindOf.set(m[1]!, m[2]!.includes('/EVD/') ? 'EVD' : (/\/v1\.1\/([A-Z]+)\//.exec(m[2]!)?.[1] ?? '?'));
const want = kinds === 'all' ? null : new Set(kinds.split(','));
const kindQueries = [...set.truth.keys()].sort().filter((s) => !want || want.has(kindOf.get(s) ?? '?'));
// --shard i/n: every n-th query from the i-th (negatives as for the whole run), for runs split over processes
const queries = kindQueries.filter((_, i) => i % shards === shard - 1);
const partners = [...new Set(kindQueries.flatMap((s) => [...set.truth.get(s)!]))].sort();
// 12 unrelated targets, seeded (not the ceiling's Python draw: the same kind of draw)
const unrelatedAll = set.targets.map((t) => t.id).filter((t) => ![...set.truth.values()].some((v) => v.has(t))).sort();
let seed = 2;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31);
const unrelated = [...unrelatedAll].sort(() => rnd() - 0.5).slice(0, 12);
const specs = asiftSpecs(maxTilt);
const sp = siftParams(config.sift);
const cacheDir = path.join(os.tmpdir(), 'capbridge-two-sided');
fs.mkdirSync(cacheDir, { recursive: true });
const siftPool = new SiftPool(config.sift, 2);
const imageOf = new Map([...set.sources, ...set.targets].map((r) => [r.id, path.join(set.dir, r.image)]));

async function dense(id: string): Promise<Features> {
  const file = imageOf.get(id)!;
  const key = createHash('sha1').update(`${file}|${maxTilt}|${kpv}|${maxSide}|${JSON.stringify(sp)}|v2`).digest('hex').slice(0, 16);
  const cf = path.join(cacheDir, key + '.json');
  if (fs.existsSync(cf)) {
    const j = JSON.parse(fs.readFileSync(cf, 'utf8'));
    return { ...j, keypoints: new Float32Array(Buffer.from(j.keypoints, 'base64').buffer.slice(0)), descriptors: new Uint8Array(Buffer.from(j.descriptors, 'base64')) };
  }
  const g = await decodeGrey(fs.readFileSync(file), { maxSide: config.sift.maxSide, maxPixels: config.sift.maxPixels });
  const vf = await siftPool.views(g, specs, { sift: sp, keypointsPerView: kpv, maxSide });
  const f = concatFeatures({ width: g.width, height: g.height, scale: g.scale }, vf.views);
  fs.writeFileSync(cf + `.${process.pid}`, JSON.stringify({ ...f, keypoints: Buffer.from(f.keypoints.buffer, f.keypoints.byteOffset, f.keypoints.byteLength).toString('base64'), descriptors: Buffer.from(f.descriptors).toString('base64') }));
  fs.renameSync(cf + `.${process.pid}`, cf); // shards may describe the same image
  return f;
}

const t0 = performance.now();
const ids = [...new Set([...queries, ...partners, ...unrelated])];
const feats = new Map<string, { f: Features; pr: Prepared }>();
let n = 0;
await Promise.all(ids.map(async (id) => {
  const f = await dense(id);
  feats.set(id, { f, pr: prepare(f) });
  if (++n % 10 === 0) log(`features ${n}/${ids.length} (${round((performance.now() - t0) / 1000, 0)} s)`);
}));
await siftPool.close();
const featMs = performance.now() - t0;
const a = { ...archiveParams(config), minInliers, angleTolerance, scaleTolerance };
const p = { ...archiveVerifyParams(searchParams(config), a, pool), rivalAnywhere, ...(flag('epipolar') ? { epipolar: config.match.epipolar } : {}), ...(flag('no-frames') ? { frames: undefined } : {}) };
let matchMs = 0;
/** The product's comparison (its forest built once per target, as while archive matching's cache holds it). */
function judge(q: { pr: Prepared }, t: { f: Features }) {
  const a = performance.now();
  const r = archiveCompare(q.pr, t.f, { checks, neighbours: k }, p);
  matchMs += performance.now() - a;
  return r;
}
const per: unknown[] = [];
let emitted = 0, negPositives = 0, negJudged = 0;
const negInliers: number[] = []; // each query's most inliers among its negatives (what the bar must stay above)
for (const s of queries) {
  const q = feats.get(s)!;
  const pos = [...set.truth.get(s)!].map((t) => judge(q, feats.get(t)!));
  const negs = [...partners, ...unrelated].filter((t) => !set.truth.get(s)!.has(t)).map((t) => ({ t, r: judge(q, feats.get(t)!) }));
  const bestPos = Math.max(...pos.map((r) => r.score));
  const bestNeg = negs.reduce((a, b) => (b.r.score > a.r.score || (b.r.score === a.r.score && b.r.inliers > a.r.inliers) ? b : a));
  negInliers.push(Math.max(...negs.map((x) => x.r.inliers)));
  const hit = bestPos > 0 && bestPos > bestNeg.r.score;
  emitted += +hit;
  negJudged += negs.length;
  negPositives += negs.filter((x) => x.r.score > 0).length;
  const fmt = (r: { score: number; inliers: number; model: string | null; matches: number }) => `${round(r.score)}/${r.inliers}/${r.matches}${r.model?.[0] ?? '-'}`;
  log(`${s} ${kindOf.get(s)} kp ${q.f.count} pos ${pos.map(fmt).join(' ')} best negative ${fmt(bestNeg.r)} ${bestNeg.t} ${hit ? 'HIT' : '-'} (${round((performance.now() - t0) / 1000, 0)} s)`);
  per.push({ query: s, kind: kindOf.get(s), pos: pos.map((r) => [round(r.score), r.inliers, r.model]), bestNeg: [round(bestNeg.r.score), bestNeg.r.inliers, bestNeg.r.model], hit });
}
console.log(JSON.stringify({ bench: 'two-sided', date: new Date().toISOString(), machine: { nproc: os.cpus().length, loadavg: os.loadavg().map((x) => round(x, 1)) }, kinds, maxTilt, views: specs.length, keypointsPerView: kpv, checks, k, maxSide, poolRadius: pool, rival: rivalAnywhere ? 'anywhere' : 'place', minInliers, frames: p.frames ?? null, shard: `${shard}/${shards}`, epipolar: !!p.epipolar, queries: queries.length, hits: emitted, negatives: negJudged, negativePositives: negPositives, negativeInliersMax: Math.max(0, ...negInliers), negativeInliersP90: percentile(negInliers, 0.9), featureS: round(featMs / 1000, 0), matchMsPerPair: round(matchMs / (negJudged + queries.length), 0), perQuery: per }));
