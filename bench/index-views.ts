// Experiment (issue 19): what retrieval reaches when the TARGETS' views are in the index too. Two-sided views today
// (match.views.targetViews) verify a few candidates of the query's views search; on retrieval-wxbs the EVD pairs'
// targets are mostly not among them (bench/RESULTS.md). Here every target is indexed with its plain keypoints and
// its views' (mapped back to its frame), every query searches with its plain keypoints and its views', and every
// candidate is verified with both sides pooled (VerifyParams.pooled): the shortlist itself is two-sided.
// Not a product mode (the index holds ~8x the keypoints); it says whether building one could pay.
// Usage: tsx bench/index-views.ts [--set retrieval-wxbs] [--view-tilts 2.83,5.66] [--view-rotations 6] [--view-keypoints 500]
// Prints one JSON line (emitted P@1, unrelated positives, times); --verbose: the misses on stderr.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.js';
import type { Features } from '../src/lib/image-index/index.js';
import { LshIndex } from '../src/lib/image-index/index.js';
import { prepare, search, type SearchParams } from '../src/lib/image-index/index.js';
import { lshParams, searchParams } from '../src/lib/image-index/index.js';
import type { Prepared } from '../src/lib/image-index/index.js';
import { viewParams } from '../src/stages/match/index.js';
import { viewSpecs } from '../src/lib/sift/index.js';
import { benchArgs, metrics, ourFeatures, percentile, pooledFromFile, readSet, round, sharedDataDir } from './search-lib.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shared = sharedDataDir(repoRoot); // before loadConfig: it takes CAPBRIDGE_SHARED_DATA out of the environment
const { opt, flag } = benchArgs();
const log = (m: string) => process.stderr.write(`[bench:index-views] ${m}\n`);
const { config } = loadConfig({});
const vp = viewParams(config);
vp.tilts = opt('view-tilts', vp.tilts.join(',')).split(',').map(Number);
vp.rotations = Number(opt('view-rotations', String(vp.rotations)));
vp.keypointsPerView = Number(opt('view-keypoints', String(vp.keypointsPerView)));
const specs = viewSpecs(vp.tilts, vp.rotations);
const set = readSet(path.join(shared, opt('set', 'retrieval-wxbs')));
const plain = await ourFeatures(repoRoot, set, config, log);

/** An image's plain features with its views' appended (the pooled features both sides use). */
async function pooledOf(id: string, file: string): Promise<{ f: Features; ms: number }> {
  const t = performance.now();
  const f = await pooledFromFile(path.join(set.dir, file), plain.get(id)!, config, specs, vp.keypointsPerView, vp.maxSide);
  return { f, ms: performance.now() - t };
}

const t0 = performance.now();
const targets: Features[] = [];
const viewMs: number[] = [];
for (const [i, t] of set.targets.entries()) {
  const r = await pooledOf(t.id, t.image);
  targets.push(r.f);
  viewMs.push(r.ms);
  if (i % 20 === 19) log(`target views ${i + 1}/${set.targets.length}`);
}
const index = new LshIndex(lshParams(config, targets.reduce((a, f) => a + f.count, 0)));
const prepared: Prepared[] = targets.map((f) => {
  const pr = prepare(f);
  index.add(index.codes(pr.vecs, pr.f.count));
  return pr;
});
index.merge();
const buildMs = performance.now() - t0;
const ids = set.targets.map((t) => t.id);
const p: SearchParams = { ...searchParams(config), pooled: vp.poolRadius, mirror: false };
const emitted = new Map<string, string[]>();
const lat: number[] = [];
let neg = 0;
let negPositive = 0;
for (const s of set.sources) {
  const q = await pooledOf(s.id, s.image);
  const t = performance.now();
  const r = await search(index, (slot) => prepared[slot], q.f, p);
  lat.push(performance.now() - t + q.ms);
  emitted.set(s.id, r.hits.filter((h) => h.score > 0).map((h) => ids[h.slot]!));
  const rel = set.truth.get(s.id) ?? new Set<string>();
  for (const h of r.hits) if (!rel.has(ids[h.slot]!)) (neg++, h.score > 0 && negPositive++);
  if (flag('verbose') && rel.size && !rel.has(emitted.get(s.id)![0] ?? '')) {
    log(`miss ${s.id}: ${r.hits.slice(0, 4).map((h) => `${ids[h.slot]}${rel.has(ids[h.slot]!) ? '*' : ''} ${h.model ?? ''} s${round(h.score)} i${h.inliers} v${h.votes}`).join(' | ')}`);
  }
}
const m = metrics(set, emitted);
console.log(JSON.stringify({
  bench: 'index-views', date: new Date().toISOString(), machine: { nproc: os.cpus().length, loadavg: os.loadavg().map((x) => round(x)) },
  set: set.name, views: { tilts: vp.tilts, rotations: vp.rotations, keypointsPerView: vp.keypointsPerView, count: specs.length, poolRadius: vp.poolRadius },
  queries: set.sources.length, emitted: { p: m.p, hit1: m.hit1 }, hitQueries: set.sources.filter((s) => set.truth.get(s.id)?.has(emitted.get(s.id)?.[0] ?? '')).map((s) => s.id),
  unrelatedPositive: { count: negPositive, of: neg },
  indexKeypointsPerImage: Math.round(targets.reduce((a, f) => a + f.count, 0) / targets.length), buildMs: Math.round(buildMs),
  viewsMsPerImage: round(percentile(viewMs, 0.5)), queryMs: { median: round(percentile(lat, 0.5)), p95: round(percentile(lat, 0.95)) },
}));
