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
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Config } from '../src/config/schema.js';
import { loadConfig } from '../src/config/load.js';
import { benchArgs, heldOut, metrics, percentile, readSet, round, sharedDataDir, type RetrievalSet } from './search-lib.js';
import { featuredBank, matchRun, type MatchRun, type StageName } from './search-run.js';

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
const bankOptions = { repoRoot, config, queries: MAXQ, fresh: flag('fresh'), log };

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
  const base = await featuredBank(set, bankOptions);
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
      const wide = (['views', 'archive'] as const).filter((k) => run.bySource[k].has(s.id)).map((k) => `${k} ${Math.round(run.bySource[k].get(s.id)!)} ms`);
      if (wide.length) log(`wide ${name} ${s.id}: promise ${round(run.promises.get(s.id) ?? NaN, 2)}, ${wide.join(', ')}, top ${l[0] ? fmt(l[0]) : 'none'}`);
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
