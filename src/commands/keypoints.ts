// `capbridge keypoints FILE... [--json] [--descriptors] [--threads N]`: SIFT keypoints and descriptors of image files,
// one JSON line per file in input order (not the features stage: that is `capbridge features`). A file that fails prints a line with `error`; the exit code is then 1.
import fs from 'node:fs';
import type { Command } from 'commander';
import { SiftPool, resolveThreads } from '../lib/sift/index.js';
import { KP_STRIDE, type Features } from '../lib/sift/index.js';
import { errorMessage, UserError } from '../util/errors.js';
import { action, printJson, type Context } from './context.js';

export interface KeypointsOptions {
  json?: boolean;
  descriptors?: boolean;
  threads?: string;
}

export function featuresLine(file: string, f: Features, ms: number, withDescriptors: boolean): Record<string, unknown> {
  const line: Record<string, unknown> = { file, width: f.width, height: f.height };
  if (withDescriptors) {
    const kps: number[][] = [];
    const round = (v: number) => Math.round(v * 1000) / 1000;
    for (let i = 0; i < f.count; i++) {
      const o = i * KP_STRIDE;
      kps.push([round(f.keypoints[o]!), round(f.keypoints[o + 1]!), round(f.keypoints[o + 2]!), round(f.keypoints[o + 3]!)]);
    }
    line.keypoints = kps;
    line.descriptors = Buffer.from(f.descriptors.buffer, f.descriptors.byteOffset, f.descriptors.byteLength).toString('base64');
  } else {
    line.keypoints = f.count;
  }
  line.ms = Math.round(ms * 10) / 10;
  return line;
}

export function parseThreads(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UserError(`--threads: expected a whole number >= 0 (0 = one per core), got "${v}"`);
  return n;
}

/** Prints the keypoints of each file as a JSON line; the exit code (1 when a file failed). */
export async function dumpKeypoints(ctx: Context, files: string[], opts: KeypointsOptions): Promise<number> {
  const threads = Math.min(resolveThreads(parseThreads(opts.threads), ctx.config.sift.threads), Math.max(1, files.length));
  const pool = new SiftPool(ctx.config.sift, threads);
  let failed = 0;
  try {
    // Start every file (the pool bounds the parallelism) and print in input order as results arrive.
    const pending = files.map(async (file) => {
      let buf: Buffer;
      try {
        const st = fs.statSync(file);
        if (!st.isFile()) throw new Error('not a regular file');
        if (st.size > ctx.config.import.maxImageBytes) throw new Error(`file too large: ${st.size} bytes > import.maxImageBytes ${ctx.config.import.maxImageBytes}`);
        buf = fs.readFileSync(file);
      } catch (err) {
        throw new Error(`cannot read file: ${errorMessage(err).replace(/^[A-Z]+: /, '')}`);
      }
      return pool.extract(buf);
    });
    // Avoid unhandled rejections while earlier files are still being awaited.
    for (const p of pending) p.catch(() => undefined);
    for (let i = 0; i < files.length; i++) {
      try {
        const r = await pending[i]!;
        printJson(featuresLine(files[i]!, r.features, r.ms, Boolean(opts.descriptors)));
      } catch (err) {
        failed++;
        printJson({ file: files[i], error: errorMessage(err) });
      }
    }
  } finally {
    await pool.close();
  }
  if (failed) process.stderr.write(`capbridge keypoints: ${failed} of ${files.length} file(s) failed\n`);
  return failed ? 1 : 0;
}

export function registerKeypoints(program: Command): void {
  program
    .command('keypoints')
    .description('SIFT keypoints and descriptors of image files; one JSON line per file, in input order')
    .argument('<files...>', 'image files (JPEG, PNG, WebP, GIF, TIFF, AVIF...)')
    .option('--json', 'JSON lines (the default and only output format; accepted for symmetry)')
    .option('--descriptors', 'include the keypoint list [[x, y, size, angle], ...] and base64 descriptors (n x 128 uint8)')
    .option('--threads <n>', 'worker threads (default: config sift.threads; 0 = one per core; 1 = in this thread, one file after another)')
    .action(action((ctx, files: string[], opts: KeypointsOptions) => dumpKeypoints(ctx, files, opts)));
}
