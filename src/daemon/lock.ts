// One daemon per data dir: a lock file (<data>/daemon.lock) created exclusively (O_EXCL) holding the pid.
// A lock whose process is gone (kill -9, power loss) is stale: it is detected by pid and taken over.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../util/errors.js';

export const LOCK_FILE = 'daemon.lock';

export interface LockInfo {
  pid: number;
  host: string;
  startedAt: string;
}

export class DaemonLockedError extends UserError {
  constructor(readonly lockPath: string, readonly holder: LockInfo) {
    super(
      `another capbridge daemon is already running on this data dir (pid ${holder.pid} on ${holder.host}, started ${holder.startedAt}); ` +
        `stop it first (kill ${holder.pid}) or use another --data. Lock file: ${lockPath}`,
      3,
    );
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function readLock(lockPath: string): LockInfo | null {
  try {
    const info = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as LockInfo;
    return typeof info.pid === 'number' ? info : null;
  } catch {
    return null;
  }
}

export interface DaemonLock {
  path: string;
  info: LockInfo;
  /** Set when a stale lock of a dead process was taken over. */
  tookOverFrom: LockInfo | null;
  release(): void;
}

export function acquireLock(dataDir: string): DaemonLock {
  const lockPath = path.join(dataDir, LOCK_FILE);
  fs.mkdirSync(dataDir, { recursive: true });
  const info: LockInfo = { pid: process.pid, host: os.hostname(), startedAt: new Date().toISOString() };
  let tookOverFrom: LockInfo | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(lockPath, 'wx', 0o644);
      fs.writeSync(fd, JSON.stringify(info) + '\n');
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      let released = false;
      return {
        path: lockPath,
        info,
        tookOverFrom,
        release() {
          if (released) return;
          released = true;
          // only remove our own lock
          if (readLock(lockPath)?.pid === process.pid) fs.rmSync(lockPath, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readLock(lockPath);
    if (holder && holder.pid !== process.pid && (holder.host !== os.hostname() || alive(holder.pid))) {
      throw new DaemonLockedError(lockPath, holder);
    }
    // stale (its process is gone) or unreadable (a crash while writing it): take it over
    tookOverFrom = holder ?? { pid: 0, host: '?', startedAt: '?' };
    fs.rmSync(lockPath, { force: true });
  }
  throw new UserError(`cannot take the daemon lock ${lockPath}: it keeps reappearing (another daemon starting at the same time?)`);
}
