// `npm run bench:gate-null`: the null of the wide-baseline gate (match.views.minVotingKeypoints), measured through the
// CLI's own path. The gate lets a source whose plain search was not confident go on to archive matching (seconds of
// CPU) when its shortlist's three most-voted images gather the votes of enough of its keypoints (promise.ts). Issue 33
// sets it by a cost rule (round 3): for the wide stages to add at most half the match CPU of a harvest whose sources
// have no counterpart, at most 0.5 P / C of such sources may pass (P: plain match CPU a source; C: what a source that
// passes costs), read off the upper tail of the promise of sources without counterpart. Rounds 3-5 had 80 such photos
// (mining-flickr8k's); this is the larger null: every photo of the open sets that has no counterpart anywhere, searched
// as a source against a news-like target bank that does not hold it.
//
// The pool: the target photos in no truth row of mining-flickr8k (Flickr photos of people, animals, streets),
// retrieval-landmarks (street-video frames, town photos), retrieval-scenes (buildings, streets) and retrieval-wxbs
// (natural photos), and mining-flickr8k's sources in no truth row. Not retrieval-smvs: its distractors are DVD covers
// that share logos and lettering (a product catalogue, not news photos). Photos of one sequence or one place (a
// CamVid drive, an SfM folder) form a group; the groups go whole, by SHA-1 of their names, to two folds of about equal
// size. Fold k's sources are its photos; its target bank is the other fold's photos plus every target of those sets
// that is not in the pool (their scene photos, flickr8k's copies): no photo is searched in a bank holding it or a photo
// of its group.
//
// Run 1 (each fold): `import` -> `match --top 5` with views and archive matching off -> `export --candidates`: each
// source's promise as the match stage computed it (observeSourceCosts), P = match CPU per source, and the sources whose
// plain search stored a candidate (each an unrelated positive). Run 2 (each fold): the shipped config with the gate at
// the promise of the pool's --top-th highest source (default 12) and every source above it archived (archive.budget 1):
// C = archive matching's CPU per null source, and the candidates it stores (unrelated). Then the exponential tail of
// the promises (fitted, as in round 3, on the highest quarter: threshold u = the quarter's lowest, scale = the mean
// excess over u), the counts at or above candidate gates beside the fit, and the rule's gate u + s ln((n_tail/n) C /
// (0.5 P)). Prints ONE JSON line; --verbose lists the highest sources on stderr. Flags: --top N, --no-archive,
// --config FILE (an overlay, as `capbridge --config`), --fresh.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Config } from '../src/config/schema.js';
import { loadConfig } from '../src/config/load.js';
import { benchArgs, percentile, readSet, round, sharedDataDir, type RetrievalSet } from './search-lib.js';
import { featuredBank, matchRun, type MatchRun } from './search-run.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shared = sharedDataDir(repoRoot);
const { opt, flag } = benchArgs();
const TOP = Number(opt('top', '12'));
const CONFIG_FILE = opt('config', '');
const { config } = loadConfig(CONFIG_FILE ? { configFile: CONFIG_FILE } : {});
const log = (m: string) => process.stderr.write(`[bench:gate-null] ${m}\n`);
const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');

/** The sets the pool is drawn from, and which of them lend their sources without counterpart too. */
const POOL_SETS: { name: string; sources: boolean }[] = [
  { name: 'mining-flickr8k', sources: true },
  { name: 'retrieval-landmarks', sources: false },
  { name: 'retrieval-scenes', sources: false },
  { name: 'retrieval-wxbs', sources: false },
];
/** Collections of independent photos (classification and image-quality test sets): each of their photos is a group of
 *  its own; a photo from any other repository folder shares its group with that folder (a sequence, a place). */
const INDEPENDENT = /Intel-Image-Classifier|Zero-DCE|FBCNN/;

interface Photo {
  /** bank-wide id: set.id */
  id: string;
  image: string;
  group: string;
}

/** The repository folder a photo came from, where the set's origin.tsv names one (CamVid frames: their drive). */
function originGroups(set: RetrievalSet): Map<string, string> {
  const file = path.join(set.dir, 'origin.tsv');
  const out = new Map<string, string>();
  if (!fs.existsSync(file)) return out;
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const head = lines[0]!.split('\t');
  const repoCol = head.findIndex((h) => h === 'repository' || h === 'repo');
  const pathCol = head.indexOf('path');
  for (const l of lines.slice(1)) {
    const c = l.split('\t');
    const repo = c[repoCol] ?? '';
    const p = c[pathCol] ?? '';
    const camvid = /CamVid\/\w+\/(\w+?)_/.exec(p);
    if (camvid) out.set(c[0]!, `${repo}:${camvid[1]}`);
    else if (!INDEPENDENT.test(repo)) out.set(c[0]!, `${repo}:${path.dirname(p)}`);
  }
  return out;
}

/** Every photo without counterpart of the pool's sets, and every other target of theirs (the bank's fixed part). */
function readPool(): { pool: Photo[]; others: Photo[]; bySet: Record<string, number> } {
  const pool: Photo[] = [];
  const others: Photo[] = [];
  const bySet: Record<string, number> = {};
  for (const { name, sources } of POOL_SETS) {
    const set = readSet(path.join(shared, name));
    const groups = originGroups(set);
    const related = new Set([...set.truth.values()].flatMap((t) => [...t]));
    const photo = (r: { id: string; image: string }): Photo => ({ id: `${name}.${r.id}`, image: path.resolve(set.dir, r.image), group: `${name}:${groups.get(r.id) ?? r.id}` });
    const before = pool.length;
    for (const t of set.targets) (related.has(t.id) ? others : pool).push(photo(t));
    if (sources) for (const s of set.sources) if (!set.truth.has(s.id)) pool.push(photo(s));
    bySet[name] = pool.length - before;
  }
  return { pool, others, bySet };
}

/** Groups whole to two folds of about equal size, in SHA-1 order of their names, each to the smaller fold so far. */
function folds(pool: Photo[]): Photo[][] {
  const groups = new Map<string, Photo[]>();
  for (const p of pool) groups.set(p.group, [...(groups.get(p.group) ?? []), p]);
  const out: Photo[][] = [[], []];
  const order = [...groups.keys()].sort((a, b) => (sha1(a) < sha1(b) ? -1 : 1));
  for (const g of order) {
    const k = out[0]!.length <= out[1]!.length ? 0 : 1;
    out[k]!.push(...groups.get(g)!);
  }
  return out;
}

/** Fold k as a retrieval set folder (absolute image paths, no truth), named by its manifests' content. */
function foldSet(k: number, sources: Photo[], targets: Photo[]): RetrievalSet {
  const rows = (l: Photo[]) => ['id\timage\tcaption', ...l.map((p) => `${p.id}\t${p.image}\t`)].join('\n') + '\n';
  const src = rows(sources);
  const tgt = rows(targets);
  const name = `gate-null-${sha1(src + tgt).slice(0, 10)}-fold${k}`;
  const dir = path.join(repoRoot, 'bench', '.cache', 'gate-null', name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'source.tsv'), src);
  fs.writeFileSync(path.join(dir, 'target.tsv'), tgt);
  fs.writeFileSync(path.join(dir, 'truth.tsv'), 'source_id\ttarget_id\n');
  return readSet(dir);
}

/** The config with views and archive matching off (run 1), and with every source at or above `gate` archived (run 2). */
function plainOnly(c: Config): Config {
  return { ...c, match: { ...c.match, views: { ...c.match.views, enabled: false, archive: { ...c.match.views.archive, candidates: 0 } } } };
}
function archiveFrom(c: Config, gate: number): Config {
  return { ...c, match: { ...c.match, views: { ...c.match.views, minVotingKeypoints: gate, archive: { ...c.match.views.archive, budget: 1 } } } };
}

/** Sources that stored a candidate (every one unrelated: the pool has no counterpart in the bank). */
function unrelatedOf(run: MatchRun): { sources: number; candidates: number; list: string[] } {
  const list = [...run.cands].filter(([, l]) => l.length).map(([s, l]) => `${s} -> ${l[0]!.target} ${l[0]!.model} s${l[0]!.score} i${l[0]!.inliers}`);
  return { sources: list.length, candidates: [...run.cands.values()].reduce((a, l) => a + l.length, 0), list };
}

/** The exponential tail of `xs` over its highest quarter: u = the quarter's lowest value, s = the mean excess over u. */
function expTail(xs: number[]): { n: number; k: number; u: number; s: number; at: (g: number) => number } {
  const sorted = [...xs].sort((a, b) => b - a);
  const k = Math.max(2, Math.floor(sorted.length / 4));
  const u = sorted[k - 1]!;
  const s = sorted.slice(0, k - 1).reduce((a, x) => a + (x - u), 0) / (k - 1);
  return { n: sorted.length, k, u, s, at: (g: number) => (k / sorted.length) * Math.exp(-(g - u) / s) };
}

const stats = (xs: number[]) => (xs.length ? { n: xs.length, median: round(percentile(xs, 0.5), 0), p95: round(percentile(xs, 0.95), 0), mean: round(xs.reduce((a, b) => a + b, 0) / xs.length, 0) } : null);

interface FoldRuns {
  set: RetrievalSet;
  base: string;
  plain: MatchRun;
}

async function plainRuns(sets: RetrievalSet[]): Promise<FoldRuns[]> {
  const out: FoldRuns[] = [];
  for (const set of sets) {
    const t0 = performance.now();
    const base = await featuredBank(set, { repoRoot, config, queries: 0, fresh: flag('fresh'), log });
    log(`${set.name}: featured bank ready (${round((performance.now() - t0) / 1000, 0)} s), ${set.sources.length} sources, ${set.targets.length} targets`);
    out.push({ set, base: base.dir, plain: await matchRun(set, base.dir, plainOnly(config)) });
  }
  return out;
}

/** Run 2: archive matching for every source at or above `gate`: C per source and what it stored. */
async function archiveRuns(runs: FoldRuns[], gate: number) {
  const cpu: number[] = [];
  const per: { id: string; promise: number; archiveMs: number }[] = [];
  let matchCpuMs = 0;
  const unrelated = { sources: 0, candidates: 0, list: [] as string[] };
  for (const r of runs) {
    const a = await matchRun(r.set, r.base, archiveFrom(config, gate));
    matchCpuMs += a.cpuMs - r.plain.cpuMs;
    for (const [id, ms] of a.bySource.archive) (cpu.push(ms), per.push({ id, promise: round(r.plain.promises.get(id) ?? NaN, 2), archiveMs: Math.round(ms) }));
    const u = unrelatedOf(a);
    unrelated.sources += u.sources;
    unrelated.candidates += u.candidates;
    unrelated.list.push(...u.list);
  }
  return { gate: round(gate, 2), archived: cpu.length, cpuMs: stats(cpu), addedMatchCpuMs: Math.round(matchCpuMs), unrelated, sources: per.sort((a, b) => b.promise - a.promise) };
}

function commit(): string | null {
  try {
    return execFileSync('git', ['-C', repoRoot, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

/** The tail fit beside the counts, and the rule's gate for cost C (ms) against P (ms a source). */
function tailReport(promises: { id: string; promise: number }[], P: number, C: number | null) {
  const xs = promises.map((p) => p.promise);
  const t = expTail(xs);
  const gates = [12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 35, 40];
  const at = Object.fromEntries(gates.map((g) => [g, { observed: xs.filter((x) => x >= g).length, fitted: round(t.at(g) * xs.length, 2), ...(C ? { predictedCpuRatio: round(1 + (t.at(g) * C) / P, 2) } : {}) }]));
  const rule = C ? round(t.u + t.s * Math.log(((t.k / t.n) * C) / (0.5 * P)), 2) : null;
  return { tail: { n: t.n, k: t.k, u: round(t.u, 2), s: round(t.s, 2) }, at, rule: { P: round(P, 1), C: C === null ? null : Math.round(C), maxShare: C ? round((0.5 * P) / C, 5) : null, gate: rule } };
}

/** tailReport of a part, shortened to what compares across parts. */
function partReport(part: { id: string; promise: number }[], P: number, C: number | null) {
  const r = tailReport(part, P, C);
  return { n: r.tail.n, u: r.tail.u, s: r.tail.s, gate: r.rule.gate, atOrAbove: Object.fromEntries(Object.entries(r.at).map(([g, v]) => [g, v.observed])) };
}

async function main() {
  const { pool, others, bySet } = readPool();
  const [f0, f1] = folds(pool);
  const sets = [foldSet(0, f0!, [...f1!, ...others]), foldSet(1, f1!, [...f0!, ...others])];
  log(`pool ${pool.length} photos (${JSON.stringify(bySet)}) in ${new Set(pool.map((p) => p.group)).size} groups; folds ${f0!.length} / ${f1!.length}; ${others.length} other targets (load ${os.loadavg().map((x) => round(x, 1)).join(' ')})`);
  const runs = await plainRuns(sets);
  const promises = runs.flatMap((r) => [...r.plain.promises].map(([id, promise]) => ({ id, promise })));
  const sources = runs.reduce((a, r) => a + r.set.sources.length, 0);
  const P = runs.reduce((a, r) => a + r.plain.cpuMs, 0) / sources;
  const sorted = [...promises].sort((a, b) => b.promise - a.promise);
  const gate = sorted[Math.min(TOP, sorted.length) - 1]?.promise ?? Infinity;
  const archive = flag('no-archive') ? null : await archiveRuns(runs, gate);
  const C = archive?.cpuMs ? archive.cpuMs.median : null;
  const out = {
    bench: 'gate-null', date: new Date().toISOString(), commit: commit(),
    machine: { nproc: os.cpus().length, cpu: os.cpus()[0]?.model, loadavg: os.loadavg().map((x) => round(x, 1)) },
    config: { minVotingKeypoints: config.match.views.minVotingKeypoints, archive: config.match.views.archive },
    pool: { photos: pool.length, bySet, groups: new Set(pool.map((p) => p.group)).size, folds: [f0!.length, f1!.length], bankTargets: sets.map((s) => s.targets.length) },
    plain: { sources, unconfident: promises.length, cpuMsPerSource: round(P, 1), unrelated: runs.map((r) => unrelatedOf(r.plain)) },
    promise: { quantiles: Object.fromEntries([0.5, 0.75, 0.9, 0.95, 0.99].map((q) => [q, round(percentile(promises.map((p) => p.promise), q), 2)])), highest: sorted.slice(0, 15).map((p) => ({ ...p, promise: round(p.promise, 2) })) },
    ...tailReport(promises, P, C),
    // the same rule on parts of the null (P and C of the whole): each fold alone (a split-half check), each set's photos
    parts: Object.fromEntries([
      ...runs.map((r, k) => [`fold${k}`, r.plain.promises] as const),
      ...POOL_SETS.map(({ name }) => [name, new Map(promises.filter((p) => p.id.startsWith(`${name}.`)).map((p) => [p.id, p.promise]))] as const),
    ].map(([k, m]) => [k, partReport([...m].map(([id, promise]) => ({ id, promise })), P, C)])),
    archive,
    loadavgEnd: os.loadavg().map((x) => round(x, 1)),
    maxRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
  };
  if (flag('verbose')) for (const p of sorted.slice(0, 30)) log(`promise ${round(p.promise, 2)} ${p.id}`);
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((err) => {
  process.stderr.write(`bench:gate-null: ${(err as Error).stack}\n`);
  process.exit(1);
});
