// `npm run bench:search`: what a user gets. Every retrieval set of ../shared/data goes through the CLI's own path,
// `import` (source, target) -> `match --top 5` -> `export --format jsonl --candidates`, called in this process:
// importManifest, the features stage, the match stage (loadStage: the code and the shipped config `capbridge match`
// runs, its budgets, windows and views included) and exportCandidatesJsonl, whose lines are scored against truth.tsv.
// Per set: P@1..5 and hit@5 of the exported candidates, stored candidates of unrelated images, and the CPU of each
// stage of the match (plain search, views, archive matching) per query that reached it, with the share of queries
// that reached it; the match's CPU beside the same run with views and archive matching off (the baseline: what the
// wide-baseline stages cost). Prints ONE JSON line.
//
// Held out: queries of a set's held-out part (search-lib heldOut: two scenes where the set names them, otherwise a
// fifth of its truth's scenes, chosen by SHA-1 of their names, never by a result) are matched like every other
// source (they share windows and budgets), but scored only with `--split all`; the default `--split dev` reports the
// rest, so a change is decided on what it was developed on.
//
// Flags: --sets a,b (default: every retrieval set found: retrieval-scenes, retrieval-landmarks, retrieval-wxbs,
//        retrieval-smvs, mining-flickr8k)  --split dev|all  --no-baseline  --fresh (rebuild the cached featured banks)
//        --queries N (the first N sources only: quick looks, not figures)  --verbose (misses and unrelated candidates
//        on stderr)  --opencv (bench/opencv_search.py's P@1 on the same queries, for reference)
//        --config FILE (a config overlay, as `capbridge --config`; CAPBRIDGE_* variables apply as for the CLI)
// The featured banks (import + features, which match would otherwise redo every run) are cached in
// bench/.cache/banks, keyed by the source of the layers they come from and the config; each match runs on a copy.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Bank, DenseViewsRepo } from '../src/bank/index.js';
import type { Config } from '../src/config/schema.js';
import { loadConfig } from '../src/config/load.js';
import { importManifest } from '../src/import/manifest.js';
import { exportCandidatesJsonl } from '../src/stages/export/index.js';
import { observeSourceCosts } from '../src/stages/match/index.js';
import { loadStage } from '../src/stages/index.js';
import { benchArgs, heldOut, metrics, percentile, readSet, round, sharedDataDir, type RetrievalSet } from './search-lib.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shared = sharedDataDir(repoRoot);
const { opt, flag } = benchArgs();
const ALL_SETS = ['retrieval-scenes', 'retrieval-landmarks', 'retrieval-wxbs', 'retrieval-smvs', 'mining-flickr8k'];
const SETS = opt('sets', ALL_SETS.filter((s) => fs.existsSync(path.join(shared, s, 'truth.tsv'))).join(',')).split(',').filter(Boolean);
const SPLIT = opt('split', 'dev');
const MAXQ = Number(opt('queries', '0'));
const CONFIG_FILE = opt('config', '');
const { config } = loadConfig(CONFIG_FILE ? { configFile: CONFIG_FILE } : {});
const log = (m: string) => process.stderr.write(`[bench:search] ${m}\n`);
const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;

/** What the featured bank depends on: the layers that import, describe and index (their source) and their config. */
function bankKey(set: RetrievalSet): string {
  const h = createHash('sha1');
  h.update(JSON.stringify({ set: set.name, queries: MAXQ, sift: config.sift, lsh: { multiprobe: config.lsh.multiprobe, seed: config.lsh.seed }, import: config.import, database: config.database }));
  const feeds = /\/(sift|bank|ingest|import|captions|config|util|features)\/|\/(lsh|store|descriptors|mean-rootsift|features|searcher)\.ts$/;
  const walk = (d: string): string[] => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
  for (const f of walk(path.join(repoRoot, 'src')).filter((f) => f.endsWith('.ts') && feeds.test(f)).sort()) h.update(f).update(fs.readFileSync(f));
  return h.digest('hex').slice(0, 16);
}

/** The set's manifests, the sources cut to the first --queries N. */
function manifests(set: RetrievalSet, dir: string): { source: string; target: string } {
  const source = path.join(set.dir, 'source.tsv');
  if (!MAXQ) return { source, target: path.join(set.dir, 'target.tsv') };
  const lines = fs.readFileSync(source, 'utf8').split('\n').filter(Boolean);
  const head = lines[0]!.split('\t');
  const imageCol = head.indexOf('image');
  // absolute image paths: the cut manifest lives elsewhere
  const rows = lines.slice(1, MAXQ + 1).map((l) => l.split('\t').map((c, i) => (i === imageCol ? path.join(set.dir, c) : c)).join('\t'));
  const cut = path.join(dir, 'source.tsv');
  fs.writeFileSync(cut, [lines[0], ...rows].join('\n') + '\n');
  return { source: cut, target: path.join(set.dir, 'target.tsv') };
}

/** A bank with the set imported and featured (the features stage: SIFT, LSH codes), from the cache or made now. */
async function featuredBank(set: RetrievalSet): Promise<{ dir: string; featuresCpuMs: number | null }> {
  const dir = path.join(repoRoot, 'bench', '.cache', 'banks', `${set.name}-${bankKey(set)}`);
  const meta = path.join(dir, 'bench.json');
  if (!flag('fresh') && fs.existsSync(meta)) return { dir, featuresCpuMs: (JSON.parse(fs.readFileSync(meta, 'utf8')) as { featuresCpuMs: number }).featuresCpuMs };
  fs.rmSync(dir, { recursive: true, force: true });
  const tmp = `${dir}.tmp${process.pid}`;
  fs.mkdirSync(tmp, { recursive: true });
  const bank = await Bank.open(tmp);
  let featuresCpuMs = 0;
  try {
    const m = manifests(set, tmp);
    for (const b of ['source', 'target'] as const) {
      const s = await importManifest(bank, { bank: b, manifest: m[b], config });
      if (s.failed) log(`${set.name}: ${s.failed} ${b} rows failed to import`);
    }
    const c0 = process.cpuUsage();
    await (await loadStage('features'))(bank, config, {});
    featuresCpuMs = cpuMs(process.cpuUsage(c0));
  } finally {
    await bank.close();
  }
  fs.writeFileSync(path.join(tmp, 'bench.json'), JSON.stringify({ featuresCpuMs }));
  fs.renameSync(tmp, dir);
  return { dir, featuresCpuMs };
}

type StageName = 'plain' | 'views' | 'archive';
interface MatchRun {
  summary: Record<string, unknown>;
  cpuMs: number;
  wallMs: number;
  /** source ext id -> exported candidates, by rank */
  cands: Map<string, { target: string; score: number; inliers: number; model: string }[]>;
  /** per stage: CPU ms of each query that reached it */
  stages: Record<StageName, number[]>;
  /** targets' dense views the run left in the bank (archive matching) */
  denseViews: { images: number; bytes: number };
}

/** `match --top 5` then `export --format jsonl --candidates` on a copy of the featured bank. */
async function matchRun(set: RetrievalSet, base: string, cfg: Config): Promise<MatchRun> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `capbridge-bench-search-${set.name}-`));
  fs.cpSync(base, dir, { recursive: true });
  const bank = await Bank.open(dir);
  const stages: Record<StageName, number[]> = { plain: [], views: [], archive: [] };
  try {
    const stop = observeSourceCosts((s) => stages[s.stage].push(s.cpuMs));
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    const r = await (await loadStage('match'))(bank, cfg, { top: 5 }).finally(stop);
    const cpu = cpuMs(process.cpuUsage(c0));
    const wallMs = performance.now() - w0;
    const out = path.join(dir, 'candidates.jsonl');
    await exportCandidatesJsonl(bank, out);
    const cands = new Map<string, { target: string; score: number; inliers: number; model: string; rank: number }[]>();
    for (const line of fs.readFileSync(out, 'utf8').split('\n').filter(Boolean)) {
      const c = JSON.parse(line) as { source_id: string; target_id: string; rank: number; image_score: number; inliers: number; model: string };
      if (!cands.has(c.source_id)) cands.set(c.source_id, []);
      cands.get(c.source_id)!.push({ target: c.target_id, score: c.image_score, inliers: c.inliers, model: c.model, rank: c.rank });
    }
    for (const l of cands.values()) l.sort((a, b) => a.rank - b.rank);
    const denseViews = await bank.repo(DenseViewsRepo).size();
    return { summary: r.detail as unknown as Record<string, unknown>, cpuMs: cpu, wallMs, cands, stages, denseViews };
  } finally {
    await bank.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const stats = (xs: number[]) =>
  xs.length ? { median: round(percentile(xs, 0.5), 0), p95: round(percentile(xs, 0.95), 0), mean: round(xs.reduce((a, b) => a + b, 0) / xs.length, 0) } : null;

/** The figures of one run over the chosen queries (ext ids). */
function score(set: RetrievalSet, run: MatchRun, queries: Set<string>) {
  const truth = new Map([...set.truth].filter(([s]) => queries.has(s)));
  const ranked = new Map([...run.cands].filter(([s]) => queries.has(s)).map(([s, l]) => [s, l.map((c) => c.target)]));
  const m = metrics({ ...set, truth }, ranked);
  let unrelated = 0;
  const unrelatedSources = new Set<string>();
  for (const [s, l] of run.cands) {
    if (!queries.has(s)) continue;
    for (const c of l) if (!set.truth.get(s)?.has(c.target)) (unrelated++, unrelatedSources.add(s));
  }
  return { queries: truth.size, p1: m.p[0]!, p: m.p, hit5: m.hit5, hits1: Math.round(m.p[0]! * truth.size * (truth.size ? 1 : 0)), unrelated: { candidates: unrelated, sources: unrelatedSources.size } };
}

async function runSet(name: string): Promise<Record<string, unknown>> {
  const set = readSet(path.join(shared, name));
  const t0 = performance.now();
  const base = await featuredBank(set);
  log(`${name}: featured bank ready (${round((performance.now() - t0) / 1000, 0)} s)`);
  const run = await matchRun(set, base.dir, config);
  const sources = MAXQ ? set.sources.slice(0, MAXQ) : set.sources;
  const held = heldOut(set);
  const dev = new Set(sources.map((s) => s.id).filter((s) => !held.has(s)));
  const all = new Set(sources.map((s) => s.id));
  const searched = run.stages.plain.length;
  const stage = (k: StageName) => ({ share: round(run.stages[k].length / Math.max(1, searched)), queries: run.stages[k].length, cpuMs: stats(run.stages[k]) });
  const out: Record<string, unknown> = {
    ...(SPLIT === 'all' ? { all: score(set, run, all), holdout: score(set, run, new Set([...all].filter((s) => held.has(s)))) } : {}),
    dev: score(set, run, dev),
    sources: sources.length,
    match: { cpuMs: Math.round(run.cpuMs), wallMs: Math.round(run.wallMs), viewed: run.summary.viewed, archived: run.summary.archived ?? null, denseComputed: run.summary.denseComputed ?? null, failed: run.summary.failed },
    denseViews: { images: run.denseViews.images, mbPerImage: run.denseViews.images ? round(run.denseViews.bytes / run.denseViews.images / 1048576, 2) : null },
    stages: { plain: stage('plain'), views: stage('views'), archive: stage('archive') },
    featuresCpuMs: base.featuresCpuMs === null ? null : Math.round(base.featuresCpuMs),
  };
  if (!flag('no-baseline')) {
    const off: Config = { ...config, match: { ...config.match, views: { ...config.match.views, enabled: false, archive: { ...config.match.views.archive, candidates: 0 } } } };
    const b = await matchRun(set, base.dir, off);
    out.baseline = { what: 'views and archive matching off', cpuMs: Math.round(b.cpuMs), dev: score(set, b, dev), ...(SPLIT === 'all' ? { all: score(set, b, all) } : {}) };
    out.cpuRatio = round(run.cpuMs / Math.max(1, b.cpuMs), 2);
  }
  if (flag('verbose')) {
    for (const s of sources) {
      if (SPLIT !== 'all' && held.has(s.id)) continue;
      const rel = set.truth.get(s.id);
      const l = run.cands.get(s.id) ?? [];
      const fmt = (c: (typeof l)[number]) => `${c.target}${rel?.has(c.target) ? '*' : ''} ${c.model} s${c.score} i${c.inliers}`;
      if (rel && !rel.has(l[0]?.target ?? '')) log(`miss ${name} ${s.id}: ${l.slice(0, 3).map(fmt).join(' | ') || 'no candidate'}`);
      for (const c of l) if (!rel?.has(c.target)) log(`unrelated ${name} ${s.id} -> ${fmt(c)}`);
    }
  }
  if (flag('opencv')) out.opencv = opencv(set, sources.map((s) => s.id), dev);
  return out;
}

/** The OpenCV reference pipeline's P@1 on the same queries (bench/opencv_search.py), for reference. */
function opencv(set: RetrievalSet, ids: string[], dev: Set<string>): unknown {
  if (spawnSync('/usr/bin/python3', ['-c', 'import cv2']).status !== 0) return { error: 'python3-opencv missing (apt-get install python3-opencv)' };
  const res = spawnSync('/usr/bin/python3', [path.join(repoRoot, 'bench', 'opencv_search.py'), set.dir, String(ids.length), ids.join(',')], { maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' });
  if (res.status !== 0) return { error: res.stderr.slice(-300) };
  const o = JSON.parse(res.stdout) as { ranked: Record<string, string[]> };
  const ranked = new Map(Object.entries(o.ranked));
  const p1 = (q: Set<string>) => metrics({ ...set, truth: new Map([...set.truth].filter(([s]) => q.has(s))) }, ranked).p[0];
  return { dev: p1(dev), ...(SPLIT === 'all' ? { all: p1(new Set(ids)) } : {}) };
}

async function main() {
  const commit = (() => {
    try {
      return execFileSync('git', ['-C', repoRoot, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    } catch {
      return null;
    }
  })();
  const out: Record<string, unknown> = {
    bench: 'search', path: 'import -> match --top 5 -> export --candidates', date: new Date().toISOString(), commit,
    machine: { nproc: os.cpus().length, cpu: os.cpus()[0]?.model, loadavg: os.loadavg().map((x) => round(x, 1)) },
    split: SPLIT, ...(MAXQ ? { queries: MAXQ } : {}), config: { lsh: config.lsh, match: config.match },
  };
  const sets: Record<string, unknown> = {};
  for (const name of SETS) {
    log(`${name} (load ${os.loadavg().map((x) => round(x, 1)).join(' ')})`);
    sets[name] = await runSet(name);
    log(`${name}: ${JSON.stringify(sets[name])}`);
  }
  out.sets = sets;
  out.loadavgEnd = os.loadavg().map((x) => round(x, 1));
  out.maxRssMB = Math.round(process.resourceUsage().maxRSS / 1024);
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((err) => {
  process.stderr.write(`bench:search: ${(err as Error).stack}\n`);
  process.exit(1);
});
