import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { REPO_ROOT, tempDir, runCli } from './helpers.js';
import { acquireLock, LOCK_FILE } from '../src/daemon/lock.js';

interface Running {
  child: ChildProcess;
  port: number;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

/** Spawns `capbridge daemon --port 0` and resolves once it prints its bound port. */
/** No site profiles: the crawl stage has nothing to fetch (tests use no network). */
export function noSitesEnv(): Record<string, string> {
  const dir = tempDir('capbridge-nosites-');
  return { CAPBRIDGE_CRAWLER__SITES_DIR: dir };
}

function startDaemon(data: string, extra: string[] = []): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'src', 'cli.ts'), '--data', data, 'daemon', '--port', '0', ...extra], {
    cwd: REPO_ROOT,
    env: { ...process.env, CI: '1', ...noSitesEnv() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d) => (err += d));
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]), stdout: () => out, stderr: () => err, exit });
    });
    void exit.then((code) => reject(new Error(`daemon exited (${code}) before listening: ${err}`)));
  });
}

describe('daemon lifecycle', function () {
  this.timeout(60000);
  let dir: string;
  beforeEach(() => (dir = tempDir()));

  it('serves /healthz and /metrics on loopback, refuses a second instance, and exits 0 on SIGTERM', async () => {
    const data = path.join(dir, 'data');
    const d = await startDaemon(data);
    try {
      const lock = JSON.parse(fs.readFileSync(path.join(data, LOCK_FILE), 'utf8'));
      expect(lock.pid).to.equal(d.child.pid);
      // wait for the first cycle to be recorded
      let health: Record<string, unknown> = {};
      for (let i = 0; i < 500; i++) {
        health = (await (await fetch(`http://127.0.0.1:${d.port}/healthz`)).json()) as Record<string, unknown>;
        if (health.cycles) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(health.status).to.equal('ok');
      expect(health.pid).to.equal(d.child.pid);
      expect(health.cycles).to.equal(1);
      expect(health.lastCycle).to.have.property('finishedAt');
      const metrics = await fetch(`http://127.0.0.1:${d.port}/metrics`);
      expect(metrics.headers.get('content-type')).to.match(/text\/plain/);
      const text = await metrics.text();
      for (const name of ['capbridge_items', 'capbridge_candidates', 'capbridge_pairs{level="par"}', 'capbridge_errors_total', 'capbridge_pages_fetched_total', 'capbridge_stage_duration_seconds_bucket', 'capbridge_cycles_total{result="ok"} 1']) {
        expect(text, name).to.include(name);
      }
      expect((await fetch(`http://127.0.0.1:${d.port}/nope`)).status).to.equal(404);
      // a second daemon on the same data dir is refused with a clear message
      const second = await runCli(['--data', data, 'daemon', '--once']);
      expect(second.code).to.not.equal(0);
      expect(second.stderr).to.match(new RegExp(`already running on this data dir \\(pid ${d.child.pid}`));
      // graceful stop
      d.child.kill('SIGTERM');
      expect(await d.exit).to.equal(0);
      expect(fs.existsSync(path.join(data, LOCK_FILE))).to.equal(false);
    } finally {
      if (d.child.exitCode === null) d.child.kill('SIGKILL');
    }
  });

  it('takes over a stale lock left by a killed process', async () => {
    const data = path.join(dir, 'data');
    fs.mkdirSync(data, { recursive: true });
    // a pid that is certainly not running: a child that has exited
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('exit', r));
    fs.writeFileSync(path.join(data, LOCK_FILE), JSON.stringify({ pid: dead.pid, host: (await import('node:os')).hostname(), startedAt: 'then' }));
    const lock = acquireLock(data);
    expect(lock.tookOverFrom?.pid).to.equal(dead.pid);
    expect(() => acquireLock(data)).to.not.throw(); // same pid: our own lock
    lock.release();
    expect(fs.existsSync(path.join(data, LOCK_FILE))).to.equal(false);
    // a live holder is refused
    fs.writeFileSync(path.join(data, LOCK_FILE), JSON.stringify({ pid: process.ppid, host: (await import('node:os')).hostname(), startedAt: 'now' }));
    expect(() => acquireLock(data)).to.throw(/already running/);
  });
});
