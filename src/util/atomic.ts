// Atomic file writes: write a temporary file in the same folder, fsync it, then rename over the target,
// so a reader (or a crash) never sees a half-written file.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

export function tempPathFor(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`);
}

/** Errors that say the disk (not the file) failed: full, over quota, read-only, I/O. */
export const DISK_ERRORS: Record<string, string> = {
  ENOSPC: 'no space left on the disk',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EIO: 'an input/output error of the disk',
};

/** Writes the file whole or not at all: a temporary file in the same folder, fsync, rename. When any step fails (a
 *  full disk: ENOSPC), the temporary file is removed before the error is thrown, so nothing is left behind. */
export function writeFileAtomic(target: string, data: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const tmp = tempPathFor(target);
  const fd = fs.openSync(tmp, 'w');
  try {
    try {
      const buf = typeof data === 'string' ? Buffer.from(data) : data;
      // writeSync may write less than asked (a signal, a nearly full disk): loop until all is written
      for (let off = 0; off < buf.length; ) off += fs.writeSync(fd, buf, off, buf.length - off);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, target);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

/** A streaming atomic writer for large exports: write(), then commit() renames, abort() removes. */
export class AtomicWriter {
  private fd: number;
  readonly tmp: string;
  private done = false;
  constructor(readonly target: string) {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    this.tmp = tempPathFor(target);
    this.fd = fs.openSync(this.tmp, 'w');
  }
  write(chunk: string): void {
    fs.writeSync(this.fd, chunk);
  }
  commit(): void {
    if (this.done) return;
    fs.fsyncSync(this.fd);
    fs.closeSync(this.fd);
    fs.renameSync(this.tmp, this.target);
    this.done = true;
  }
  abort(): void {
    if (this.done) return;
    try {
      fs.closeSync(this.fd);
    } catch {
      /* already closed */
    }
    fs.rmSync(this.tmp, { force: true });
    this.done = true;
  }
}
