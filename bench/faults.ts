// `npm run bench:faults` (issue 36): the scale-out mode through a bad night of its own infrastructure, longer than the
// fault suite in npm test can afford. Two `capbridge worker --drain` processes on a PostgreSQL cluster of this run's
// own (test/helpers/pg-cluster.ts) over a small generated harvest; each scenario is compared with one SQLite process
// over the same harvest:
//   restart:   pg_ctl restart -m fast while features jobs run, then five rounds of pg_terminate_backend (two in match,
//              three in pair);
//   outage:    PostgreSQL stopped (pg_ctl stop -m fast) for --outage seconds (default 60) while match jobs run, a third
//              worker started during the outage, /healthz polled throughout.
// For each: the same pairs as SQLite?, items failed, each worker's exit code, a crash in any log (an unhandled 'error'
// event), outages each worker waited through, what /healthz answered during the outage, and the seconds from the
// bank's return to the last worker's exit. Prints ONE JSON line. Options: --outage S, --scenes N (1..6, default 6).
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Bank } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { importManifest } from '../src/import/manifest.js';
import { runFeatures } from '../src/stages/features/index.js';
import { runMatch } from '../src/stages/match/index.js';
import { runPairing } from '../src/stages/pair/index.js';
import { tempDir } from '../test/helpers.js';
import { psql, startPgCluster, type PgCluster } from '../test/helpers/pg-cluster.js';
import { pgUnavailable } from '../test/helpers/postgres.js';
import { harvestManifests, pairsByExtId, startWorker, type WorkerProcess } from '../test/helpers/scale.js';

const argv = process.argv.slice(2);
const arg = (name: string, dflt: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : dflt;
};
const OUTAGE_S = Number(arg('outage', '60'));
const SCENES = Number(arg('scenes', '6'));
const log = (m: string) => process.stderr.write(`bench:faults: ${m}\n`);
const load = () => os.loadavg().map((v) => Math.round(v * 10) / 10);
const ENV = {
  CAPBRIDGE_WORKER__BATCH__FEATURES: '1', CAPBRIDGE_WORKER__BATCH__MATCH: '1', CAPBRIDGE_WORKER__BATCH__PAIR: '1',
  CAPBRIDGE_WORKER__LEASE_SECONDS: '5', CAPBRIDGE_WORKER__POLL_SECONDS: '0.2', CAPBRIDGE_SIFT__THREADS: '1',
};

const why = pgUnavailable();
if (why) throw new Error(`bench:faults needs PostgreSQL: ${why}`);
const loadAtStart = load();
const dir = tempDir('capbridge-bench-faults-');
const { config } = loadConfig({});
config.sift.threads = 1;
const manifests = await harvestManifests(dir, SCENES, 2);

async function importInto(bank: Bank): Promise<void> {
  for (const b of ['source', 'target'] as const) await importManifest(bank, { bank: b, manifest: manifests[b], config });
}

log('reference: one SQLite process');
const ref = await Bank.open(path.join(dir, 'sqlite'));
await importInto(ref);
await runFeatures(ref, config, { threads: 1 });
await runMatch(ref, config, { threads: 1 });
await runPairing(ref, config);
const reference = await pairsByExtId(ref);
await ref.close();

const cluster = await startPgCluster();
const dbOf = (url: string) => new URL(url).pathname.slice(1);
const stages = (c: PgCluster, db: string) => {
  try {
    return psql(c.port, db, `SELECT COALESCE(string_agg(DISTINCT stage, ','), '') FROM jobs WHERE state = 'queued'`);
  } catch {
    return '';
  }
};
async function until(ok: () => boolean, workers: WorkerProcess[], ms = 600_000): Promise<boolean> {
  for (const t0 = Date.now(); Date.now() - t0 < ms; await sleep(50)) {
    if (ok()) return true;
    if (workers.every((w) => w.child.exitCode !== null)) return false;
  }
  return false;
}

async function prepared(name: string): Promise<{ url: string; db: string; data: string }> {
  const url = (await cluster.createDatabase()).replace('capbridge@', 'capbridge:BENCH-SECRET@');
  const data = path.join(dir, name);
  const bank = await Bank.open(data, { url });
  await importInto(bank);
  await bank.close();
  return { url, db: dbOf(url), data };
}

async function outcome(workers: WorkerProcess[], url: string, data: string, t0: number) {
  const ends = await Promise.all(workers.map((w) => w.out));
  const finishedS = Math.round((Date.now() - t0) / 100) / 10;
  const bank = await Bank.open(data, { url });
  const pairs = await pairsByExtId(bank);
  const failed = await bank.items.countByStatus(null, 'failed');
  await bank.close();
  const summaries = ends.map((e) => {
    try {
      return JSON.parse(e.stdout.trim().split('\n').pop()!) as { claims: number; interrupted: number; bankOutages: number; gaveUp: number };
    } catch {
      return null;
    }
  });
  return {
    samePairs: JSON.stringify(pairs) === JSON.stringify(reference),
    pairs: pairs.filter((p) => / emitted$/.test(p)).length,
    itemsFailed: failed,
    exitCodes: ends.map((e) => e.code),
    crashed: ends.some((e) => /Unhandled 'error' event|node:events/.test(e.stderr)),
    passwordInLogs: ends.some((e) => e.stderr.includes('BENCH-SECRET')),
    interrupted: summaries.map((s) => s?.interrupted ?? null),
    outagesWaited: summaries.map((s) => s?.bankOutages ?? null),
    secondsFromBankBackToLastExit: finishedS,
  };
}

log('restart: pg_ctl restart -m fast, then five rounds of pg_terminate_backend');
const r = await prepared('restart');
let workers = [startWorker(r.data, r.url, ENV), startWorker(r.data, r.url, ENV)];
await until(() => stages(cluster, r.db).includes('features'), workers);
cluster.restart('fast');
const rounds: string[] = [];
for (const stage of ['match', 'match', 'pair', 'pair', 'pair']) {
  if (!(await until(() => stages(cluster, r.db).includes(stage), workers))) break;
  if (await until(() => cluster.terminate(r.db) > 0, workers, 5000)) rounds.push(stage);
  await sleep(300);
}
const restart = { rounds, ...(await outcome(workers, r.url, r.data, Date.now())) };
log(JSON.stringify(restart));

log(`outage: PostgreSQL stopped for ${OUTAGE_S} s during match`);
const o = await prepared('outage');
workers = [startWorker(o.data, o.url, ENV, ['--port', '0']), startWorker(o.data, o.url, ENV)];
await until(() => stages(cluster, o.db).includes('match'), workers);
cluster.stop('fast');
const stoppedAt = Date.now();
workers.push(startWorker(o.data, o.url, ENV));
const health = new Map<string, number>();
const listening = /listening on (http:\/\/\S+)/.exec(workers[0]!.stderr())?.[1];
let exitedDuringOutage = 0;
while (Date.now() - stoppedAt < OUTAGE_S * 1000) {
  if (listening) {
    const h = await fetch(`${listening}/healthz`).then(async (res) => `${res.status} ${((await res.json()) as { status: string }).status}`, (e: Error) => `error ${e.message}`);
    health.set(h, (health.get(h) ?? 0) + 1);
  }
  await sleep(1000);
}
exitedDuringOutage = workers.filter((w) => w.child.exitCode !== null).length;
cluster.start();
const outage = { seconds: OUTAGE_S, exitedDuringOutage, healthzDuringOutage: Object.fromEntries(health), ...(await outcome(workers, o.url, o.data, Date.now())) };
log(JSON.stringify(outage));
cluster.close();

process.stdout.write(
  JSON.stringify({
    bench: 'faults', date: new Date().toISOString(), host: os.hostname(), cpus: os.cpus().length, loadAtStart, loadAtEnd: load(),
    harvest: { sources: SCENES, targets: SCENES + 2 }, referencePairs: reference.filter((p) => / emitted$/.test(p)).length,
    restart, outage,
  }) + '\n',
);
