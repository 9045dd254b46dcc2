// A PostgreSQL cluster of its own for the fault suite, driven by pg_ctl the way an operator drives one: stopped,
// started, restarted with `-m fast`, its backends terminated. (The shared server of ./postgres.ts serves every other
// suite of the test process and is never restarted.) A watchdog shell stops the cluster and removes its files when
// the test process is gone, even after kill -9.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { findPgBin, freePort } from './postgres.js';

export interface PgCluster {
  port: number;
  /** A URL of a new, empty database. */
  createDatabase(): Promise<string>;
  /** pg_ctl stop -m MODE (fast: sessions terminated, a clean shutdown). */
  stop(mode?: 'fast' | 'immediate'): void;
  /** pg_ctl start (waits until it accepts connections). */
  start(): void;
  /** pg_ctl restart -m MODE. */
  restart(mode?: 'fast' | 'immediate'): void;
  /** pg_terminate_backend of every session of a database (synchronous: psql); returns how many. */
  terminate(database: string): number;
  close(): void;
}

/** psql -c SQL against a database of a server on 127.0.0.1 (synchronous: no event loop turn happens meanwhile). */
export function psql(port: number, database: string, sql: string): string {
  const bin = findPgBin();
  const r = spawnSync(path.join(bin!, 'psql'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'capbridge', '-d', database, '-At', '-c', sql], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`psql failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** Terminates every session of `database` but the caller's (synchronously). */
export function terminateSessions(port: number, database: string): number {
  return Number(psql(port, 'postgres', `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '${database}' AND pid <> pg_backend_pid()`));
}

export async function startPgCluster(): Promise<PgCluster> {
  const bin = findPgBin();
  if (!bin) throw new Error('PostgreSQL is not installed');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-pgc-'));
  const data = path.join(root, 'data');
  let ids: { uid: number; gid: number } | undefined;
  if (process.getuid?.() === 0) {
    const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
    ids = { uid: id('-u'), gid: id('-g') };
    fs.chmodSync(root, 0o755);
    fs.chownSync(root, ids.uid, ids.gid);
  }
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(path.join(bin, cmd), args, { encoding: 'utf8', ...ids, cwd: root });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
  };
  run('initdb', ['-D', data, '-U', 'capbridge', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
  const port = await freePort();
  const opts = [
    `-p ${port}`, `-k ${root}`, '-c listen_addresses=127.0.0.1', '-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off',
    '-c shared_buffers=32MB', '-c max_connections=100', '-c log_min_messages=fatal',
  ].join(' ');
  const log = path.join(root, 'log');
  const ctl = (...args: string[]) => run('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '60', ...args]);
  ctl('-o', opts, 'start');
  // the watchdog: once the test process is gone, stop the cluster and remove its files
  const watchdog = 'while [ -d /proc/$WATCH ]; do sleep 1; done; "$CTL" -D "$DATA" stop -m immediate >/dev/null 2>&1; rm -rf "$ROOT"';
  const dog = spawn('sh', ['-c', watchdog], {
    stdio: 'ignore',
    detached: true,
    env: { ...process.env, WATCH: String(process.pid), CTL: path.join(bin, 'pg_ctl'), DATA: data, ROOT: root },
    ...ids,
  });
  dog.unref();
  let n = 0;
  let closed = false;
  const cluster: PgCluster = {
    port,
    async createDatabase() {
      const name = `f${process.pid}_${++n}`;
      const c = new pg.Client({ connectionString: `postgres://capbridge@127.0.0.1:${port}/postgres` });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      return `postgres://capbridge@127.0.0.1:${port}/${name}`;
    },
    stop: (mode = 'fast') => ctl('-m', mode, 'stop'),
    start: () => ctl('-o', opts, 'start'),
    restart: (mode = 'fast') => ctl('-m', mode, '-o', opts, 'restart'),
    terminate: (database) => terminateSessions(port, database),
    close() {
      if (closed) return;
      closed = true;
      spawnSync(path.join(bin, 'pg_ctl'), ['-D', data, 'stop', '-m', 'immediate'], { ...ids });
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
  process.once('exit', () => cluster.close());
  return cluster;
}
