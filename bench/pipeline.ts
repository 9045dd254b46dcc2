// `npm run bench:pipeline`: the cost of a harvest-shaped run, end to end, against the same run built on OpenCV.
//   Target bank: the real targets of mining-flickr8k (its 180 counterparts), retrieval-smvs (300 covers) and
//     retrieval-scenes (118), plus generated distractor photos (bench/gen-photos.ts: drawn scenes, described from
//     their pixels) up to --targets (default 10,000).
//   Sources: about 10 % with a counterpart (30 flickr8k copies, 14 smvs phone photos, 10 scenes photos from other
//     positions) and 90 % real photos with none (flickr8k's 80 unmatched sources and 240 distractors, which are
//     not in this target bank, and the 164 images of retrieval-wxbs, none of which is).
//   Ours: the daemon's stages as it runs them (features, then the match stage with its index, then pairing), on
//     a fresh bank, with sift.threads workers; CPU of the whole process (worker threads included) and wall time
//     per stage, per target and per source, per source with and without a counterpart (the match stage reports
//     each source's search), peak RSS.
//   OpenCV: bench/pipeline-opencv.py on the same images in the same run (SIFT, FLANN votes, BFMatcher ratio +
//     RANSAC), beside ours, in as many one-thread processes as our sift workers; CPU summed over them.
// Prints ONE JSON line. Options: --targets N, --skip-opencv, --threads N, --sequential (OpenCV after ours instead
// of beside it), --sources N (every k-th source, to check the bench itself quickly). Generated photos are kept in
// bench/out/pipeline/photos between runs.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bank, CandidatesRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { loadStage } from '../src/stages/index.js';
import { runPairing } from '../src/stages/pair/index.js';
import { observeSourceCosts } from '../src/stages/match/index.js';
import { importManifest } from '../src/import/manifest.js';
import { syncIndex } from '../src/lib/image-index/index.js';
import { readTsvObjects } from '../src/util/tsv.js';
import { resolveThreads } from '../src/lib/sift/index.js';
import { ensurePhotos } from './gen-photos.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const data = path.resolve(repoRoot, '..', 'shared', 'data');
const argv = process.argv.slice(2);
const arg = (name: string, dflt: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const TARGETS = arg('targets', 10_000);
const loadavgAtStart = os.loadavg().map((v) => Math.round(v * 10) / 10);
const SKIP_OPENCV = argv.includes('--skip-opencv');
const { config } = loadConfig({});
config.captions.checkLanguage = false; // captions are borrowed (below): nothing to check
const threads = arg('threads', 0);
if (threads) config.sift.threads = threads;
const log = (m: string) => process.stderr.write(`bench:pipeline: ${m}\n`);

interface Row { id: string; image: string; caption: string }
const rowsOf = async (set: string, file: string): Promise<Row[]> =>
  ((await readTsvObjects(path.join(data, set, file))) as Array<Record<string, string>>).map((r) => ({ id: r.id!, image: path.join(data, set, r.image!), caption: r.caption ?? '' }));
const truthOf = async (set: string) => {
  const m = new Map<string, string[]>();
  for (const r of (await readTsvObjects(path.join(data, set, 'truth.tsv'))) as Array<Record<string, string>>) m.set(r.source_id!, [...(m.get(r.source_id!) ?? []), r.target_id!]);
  return m;
};

// --- the sets ---------------------------------------------------------------------------------------------------
const f8 = { s: await rowsOf('mining-flickr8k', 'source.tsv'), t: await rowsOf('mining-flickr8k', 'target.tsv'), truth: await truthOf('mining-flickr8k') };
const smvs = { s: await rowsOf('retrieval-smvs', 'source.tsv'), t: await rowsOf('retrieval-smvs', 'target.tsv'), truth: await truthOf('retrieval-smvs') };
const scenes = { s: await rowsOf('retrieval-scenes', 'source.tsv'), t: await rowsOf('retrieval-scenes', 'target.tsv'), truth: await truthOf('retrieval-scenes') };
const wxbs = { s: await rowsOf('retrieval-wxbs', 'source.tsv'), t: await rowsOf('retrieval-wxbs', 'target.tsv') };
const f8counterparts = new Set([...f8.truth.values()].flat());
const enCaptions = f8.s.map((r) => r.caption).filter(Boolean);
const zhCaptions = f8.t.map((r) => r.caption).filter(Boolean);

interface Item { id: string; image: string; caption: string }
const targets: Item[] = [];
const truth = new Map<string, Set<string>>(); // source id -> target ids
const addTargets = (prefix: string, rows: Row[]) => rows.forEach((r, i) => targets.push({ id: `${prefix}:${r.id}`, image: r.image, caption: r.caption || zhCaptions[i % zhCaptions.length]! }));
addTargets('f8', f8.t.filter((t) => f8counterparts.has(t.id)));
addTargets('smvs', smvs.t);
addTargets('scenes', scenes.t);
const real = targets.length;
const sources: Array<Item & { kind: 'matched' | 'unmatched' }> = [];
const addSources = (prefix: string, rows: Row[], kind: 'matched' | 'unmatched', tr?: Map<string, string[]>) =>
  rows.forEach((r, i) => {
    sources.push({ id: `${prefix}:${r.id}`, image: r.image, caption: r.caption || enCaptions[(i * 7) % enCaptions.length]!, kind });
    if (tr) truth.set(`${prefix}:${r.id}`, new Set(tr.get(r.id)!.map((t) => `${prefix}:${t}`)));
  });
addSources('f8', f8.s.filter((s) => f8.truth.has(s.id)).slice(0, 30), 'matched', f8.truth);
addSources('smvs', smvs.s.filter((s) => smvs.truth.has(s.id)).slice(0, 14), 'matched', smvs.truth);
addSources('scenes', scenes.s.filter((s) => scenes.truth.has(s.id)).slice(0, 10), 'matched', scenes.truth);
addSources('f8', f8.s.filter((s) => !f8.truth.has(s.id)), 'unmatched');
addSources('f8d', f8.t.filter((t) => !f8counterparts.has(t.id)), 'unmatched');
addSources('wxbs', [...wxbs.s, ...wxbs.t.map((t) => ({ ...t, id: `t-${t.id}` }))], 'unmatched');

const genDir = path.join(repoRoot, 'bench', 'out', 'pipeline', 'photos');
log(`generating ${Math.max(0, TARGETS - real)} distractor photos (kept in ${genDir})`);
const gen = await ensurePhotos(genDir, 1, Math.max(0, TARGETS - real), (d) => log(`  ${d} generated`));
gen.forEach((f, i) => targets.push({ id: `gen:${i + 1}`, image: f, caption: zhCaptions[i % zhCaptions.length]! }));
// --sources N (a quick check of the bench itself): every k-th source, which keeps the share with a counterpart.
const SOURCES = arg('sources', 0);
if (SOURCES > 0 && SOURCES < sources.length) {
  const keep = sources.filter((_, i) => i % Math.ceil(sources.length / SOURCES) === 0);
  sources.splice(0, sources.length, ...keep);
}
const matched = sources.filter((s) => s.kind === 'matched').length;
log(`${targets.length} targets (${real} real), ${sources.length} sources (${matched} with a counterpart)`);

// --- OpenCV -------------------------------------------------------------------------------------------------------
// Started before ours and run beside it (its own process, one thread): CPU time is counted per process, so the
// two sides' CPU figures hold; a sequential run (--sequential) takes twice the wall time at 10k targets.
const SEQUENTIAL = argv.includes('--sequential');
interface CvOut {
  opencv: string; stages: Record<string, Cost>; descriptors: number; peakRssMB: number; workers: number;
  sources: Array<{ id: string; kind: 'matched' | 'unmatched'; featCpuMs: number; matchCpuMs: number; matchWallMs: number; ranked: Array<[string, number]> }>;
}
function runOpencv(): Promise<CvOut> {
  log('OpenCV pipeline (one thread)...');
  const job = JSON.stringify({
    targets: targets.map((t) => ({ id: t.id, path: t.image })),
    sources: sources.map((s) => ({ id: s.id, path: s.image, kind: s.kind })),
    max_side: config.sift.maxSide,
    min_inliers: config.match.minInliers,
    workers: resolveThreads(undefined, config.sift.threads), // as many one-thread processes as our sift workers
  });
  const py = spawn('/usr/bin/python3', [path.join(repoRoot, 'bench', 'pipeline-opencv.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  py.stdout.on('data', (d) => (out += d));
  py.stdin.end(job);
  return new Promise((res, rej) => py.on('close', (code) => (code === 0 ? res(JSON.parse(out) as CvOut) : rej(new Error(`pipeline-opencv.py exited with ${code}`)))));
}
const cvRun = SKIP_OPENCV || SEQUENTIAL ? null : runOpencv();
cvRun?.catch(() => undefined); // awaited below; keeps an early failure from being unhandled meanwhile

// --- ours ---------------------------------------------------------------------------------------------------------
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-pipeline-'));
const manifest = (name: string, items: Item[]) => {
  const f = path.join(tmp, `${name}.tsv`);
  fs.writeFileSync(f, ['id\timage\tcaption', ...items.map((i) => `${i.id}\t${i.image}\t${i.caption}`)].join('\n') + '\n');
  return f;
};
interface Cost { cpuS: number; wallS: number }
const stages: Record<string, Cost & { summary?: unknown }> = {};
async function stage<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  const r = await fn();
  const c = process.cpuUsage(c0);
  stages[name] = { cpuS: round((c.user + c.system) / 1e6, 2), wallS: round((performance.now() - w0) / 1000, 2) };
  log(`${name}: ${JSON.stringify(stages[name])}`);
  return r;
}
const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
const perSourceSearch = new Map<number, { cpuMs: number; wallMs: number; viewed: boolean; candidates: number }>();
let ours: Record<string, unknown>;
const bank = await Bank.open(path.join(tmp, 'data'));
try {
  const t0 = performance.now();
  await importManifest(bank, { bank: 'target', manifest: manifest('target', targets), config });
  log(`target import ${Math.round(performance.now() - t0)} ms`);
  const features = await loadStage('features');
  const match = await loadStage('match');
  const tf = await stage('targetFeatures', async () => (await features(bank, config)).detail);
  const ix = await stage('index', async () => (await syncIndex(bank, config)).summary);
  await importManifest(bank, { bank: 'source', manifest: manifest('source', sources), config });
  const sf = await stage('sourceFeatures', async () => (await features(bank, config)).detail);
  // A source that gets views is reported twice (plain search, then views): its cost is the sum.
  const stop = observeSourceCosts((s) => {
    const p = perSourceSearch.get(s.itemId);
    perSourceSearch.set(s.itemId, p ? { cpuMs: p.cpuMs + s.cpuMs, wallMs: p.wallMs + s.wallMs, viewed: p.viewed || s.viewed, candidates: s.candidates } : s);
  });
  const ms = await stage('match', async () => (await match(bank, config, {}).finally(stop)).detail);
  const ps = await stage('pair', () => runPairing(bank, config, {}));
  // Quality: the first candidate of each source with a counterpart; any candidate of a source without one.
  const cands = bank.repo(CandidatesRepo);
  let p1 = 0;
  let falseSources = 0;
  const kinds = { matched: [] as number[], unmatched: [] as number[] };
  const viewed = { matched: 0, unmatched: 0 };
  let withCandidates = 0;
  for (const s of sources) {
    const item = (await bank.items.get('source', s.id))!;
    const list = await cands.listFor(item.id);
    if (list.length) withCandidates++;
    const top = list[0] ? (await bank.items.byId(list[0].targetItemId))!.extId : null;
    if (s.kind === 'matched' && top && truth.get(s.id)!.has(top)) p1++;
    if (s.kind === 'unmatched' && list.length) falseSources++;
    const q = perSourceSearch.get(item.id);
    if (q) {
      kinds[s.kind].push(q.cpuMs);
      if (q.viewed) viewed[s.kind]++;
    }
  }
  const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / Math.max(1, a.length);
  const featPerSource = (stages.sourceFeatures!.cpuS * 1000) / sources.length;
  const pairPerCandidateSource = (stages.pair!.cpuS * 1000) / Math.max(1, withCandidates);
  const n = { targets: targets.length, sources: sources.length };
  const per = (names: string[], count: number) => {
    const cpu = names.reduce((s, k) => s + stages[k]!.cpuS, 0);
    const wall = names.reduce((s, k) => s + stages[k]!.wallS, 0);
    return { cpuMs: round((cpu * 1000) / count, 1), wallMs: round((wall * 1000) / count, 1) };
  };
  ours = {
    threads: resolveThreads(undefined, config.sift.threads),
    stages,
    summaries: { targetFeatures: tf, index: ix, sourceFeatures: sf, match: ms, pair: ps },
    perTarget: { ...per(['targetFeatures', 'index'], n.targets), features: per(['targetFeatures'], n.targets), index: per(['index'], n.targets) },
    perSource: {
      ...per(['sourceFeatures', 'match', 'pair'], n.sources),
      features: per(['sourceFeatures'], n.sources),
      match: per(['match'], n.sources),
      pair: per(['pair'], n.sources),
      // CPU per source by kind: its features (stage mean), its own search, and pairing for sources with candidates.
      matchedCpuMs: round(featPerSource + mean(kinds.matched) + pairPerCandidateSource * (p1 / Math.max(1, matched)), 1),
      unmatchedCpuMs: round(featPerSource + mean(kinds.unmatched), 1),
      searchCpuMs: { matched: round(mean(kinds.matched), 1), unmatched: round(mean(kinds.unmatched), 1) },
      viewed,
    },
    quality: { p1: round(p1 / matched), unmatchedWithCandidates: falseSources },
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
  };
} finally {
  await bank.close();
}

// --- OpenCV's figures -----------------------------------------------------------------------------------------------
let opencv: Record<string, unknown> | null = null;
if (!SKIP_OPENCV) {
  const r = await (cvRun ?? runOpencv());

  const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / Math.max(1, a.length);
  const cpu = (k: 'matched' | 'unmatched') => round(mean(r.sources.filter((s) => s.kind === k).map((s) => s.featCpuMs + s.matchCpuMs)), 1);
  const st = r.stages;
  let p1 = 0;
  for (const s of r.sources) if (s.kind === 'matched' && s.ranked[0] && truth.get(s.id)!.has(s.ranked[0][0])) p1++;
  opencv = {
    version: r.opencv,
    workers: r.workers,
    stages: st,
    perTarget: { cpuMs: round(((st.targetFeatures!.cpuS + st.index!.cpuS) * 1000) / targets.length, 1), wallMs: round(((st.targetFeatures!.wallS + st.index!.wallS) * 1000) / targets.length, 1) },
    perSource: {
      cpuMs: round(((st.sourceFeatures!.cpuS + st.match!.cpuS) * 1000) / sources.length, 1),
      wallMs: round(((st.sourceFeatures!.wallS + st.match!.wallS) * 1000) / sources.length, 1),
      matchedCpuMs: cpu('matched'),
      unmatchedCpuMs: cpu('unmatched'),
    },
    quality: { p1: round(p1 / matched), unmatchedWithCandidates: r.sources.filter((s) => s.kind === 'unmatched' && s.ranked.length).length },
    peakRssMB: r.peakRssMB,
  };
}
fs.rmSync(tmp, { recursive: true, force: true });

const o = ours as { perSource: { cpuMs: number; matchedCpuMs: number; unmatchedCpuMs: number } };
const cv = opencv as { perSource: { cpuMs: number } } | null;
process.stdout.write(
  JSON.stringify({
    bench: 'pipeline',
    date: new Date().toISOString(),
    machine: { nproc: os.cpus().length, cpu: os.cpus()[0]?.model, loadavg: os.loadavg().map((v) => round(v, 1)), loadavgAtStart },
    opencvBeside: !SKIP_OPENCV && !SEQUENTIAL,
    targets: { total: targets.length, real, generated: targets.length - real },
    sources: { total: sources.length, matched, unmatched: sources.length - matched },
    ours,
    opencv,
    ratios: {
      unmatchedOverMatchedCpu: round(o.perSource.unmatchedCpuMs / o.perSource.matchedCpuMs),
      oursOverOpencvCpuPerSource: cv ? round(o.perSource.cpuMs / cv.perSource.cpuMs) : null,
      sourcesPerCoreHour: Math.round(3600_000 / o.perSource.cpuMs),
    },
  }) + '\n',
);
