// A real PostgreSQL for the tests: Debian's `postgresql` package (.ci/run installs it), a fresh cluster in a temp
// dir on a free loopback port, started once per test process and stopped when it exits. As root, the server runs
// as the `postgres` user (initdb refuses root). No PostgreSQL on the machine: the suites that need it say so and
// are skipped (CI always has it).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface PgServer {
  /** A URL of a new, empty database on the server. */
  createDatabase(): Promise<string>;
  port: number;
}

/** The newest Debian PostgreSQL bin dir (/usr/lib/postgresql/N/bin), else initdb/postgres on PATH. */
export function findPgBin(): string | null {
  const base = '/usr/lib/postgresql';
  if (fs.existsSync(base)) {
    const versions = fs.readdirSync(base).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (fs.existsSync(path.join(base, v, 'bin', 'postgres'))) return path.join(base, v, 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  return which.status === 0 && which.stdout.trim() ? path.dirname(which.stdout.trim()) : null;
}

/** A TCP port free on 127.0.0.1 now (the OS picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

let started: Promise<PgServer> | null = null;
let child: ChildProcess | null = null;
let root: string | null = null;
let dbCounter = 0;

function stop(): void {
  if (child?.pid && child.exitCode === null) {
    try {
      process.kill(-child.pid, 'SIGQUIT'); // the watchdog shell and the server: immediate shutdown, nothing to keep
    } catch {
      /* gone */
    }
  }
  child = null;
  if (root) fs.rmSync(root, { recursive: true, force: true });
  root = null;
}
process.once('exit', stop);

/** Why PostgreSQL tests cannot run here, or null when they can. */
export function pgUnavailable(): string | null {
  if (process.env.CAPBRIDGE_TEST_PG === '0') return 'CAPBRIDGE_TEST_PG=0';
  if (!findPgBin()) return 'PostgreSQL is not installed (apt-get install -y postgresql; .ci/run installs it)';
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0) {
    return 'running as root and there is no `postgres` user to run the server as (initdb refuses root; Debian\'s postgresql package creates the user)';
  }
  return null;
}

/** Starts (once per process) a throwaway PostgreSQL cluster. */
export function startPg(): Promise<PgServer> {
  started ??= boot();
  return started;
}

async function boot(): Promise<PgServer> {
  const bin = findPgBin();
  if (!bin) throw new Error('PostgreSQL is not installed');
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-pg-'));
  const data = path.join(root, 'data');
  const asRoot = process.getuid?.() === 0;
  let ids: { uid: number; gid: number } | undefined;
  if (asRoot) {
    const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
    ids = { uid: id('-u'), gid: id('-g') };
    if (!Number.isInteger(ids.uid) || ids.uid <= 0) throw new Error('running as root, but there is no `postgres` user to run PostgreSQL as');
    fs.chmodSync(root, 0o755);
    fs.chownSync(root, ids.uid, ids.gid);
  }
  const init = spawnSync(path.join(bin, 'initdb'), ['-D', data, '-U', 'capbridge', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
    encoding: 'utf8',
    ...ids,
  });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  const port = await freePort();
  const args = [
    '-D', data, '-p', String(port), '-k', root, '-c', 'listen_addresses=127.0.0.1',
    // a test cluster: durability off (the tests kill workers, not the server), small memory
    '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'shared_buffers=32MB',
    '-c', 'max_connections=200', '-c', 'log_min_messages=fatal',
  ];
  let log = '';
  // Behind a watchdog shell (its own process group): a test process killed with -9 cannot run its exit hook, and
  // the server then stops within a second of it instead of staying behind (and the watchdog removes its files).
  const watchdog = 'pg="$1"; shift; "$pg" "$@" & p=$!; while [ -d /proc/$WATCH ] && kill -0 $p 2>/dev/null; do sleep 1; done; kill -QUIT $p 2>/dev/null; wait $p; [ -d /proc/$WATCH ] || rm -rf "$ROOT"';
  child = spawn('sh', ['-c', watchdog, 'pg-watchdog', path.join(bin, 'postgres'), ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
    env: { ...process.env, WATCH: String(process.pid), ROOT: root },
    ...ids,
  });
  child.unref();
  child.stderr!.on('data', (d) => (log = (log + d).slice(-4000)));
  const admin = `postgres://capbridge@127.0.0.1:${port}/postgres`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`postgres exited (${child.exitCode}): ${log}`);
    const c = new pg.Client({ connectionString: admin });
    try {
      await c.connect();
      await c.end();
      break;
    } catch {
      await c.end().catch(() => undefined);
      if (i > 300) throw new Error(`postgres did not accept connections within 30 s: ${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    port,
    async createDatabase() {
      const name = `t${process.pid}_${++dbCounter}`;
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      return `postgres://capbridge@127.0.0.1:${port}/${name}`;
    },
  };
}
