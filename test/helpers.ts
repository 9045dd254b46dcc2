// Shared test helpers: temp folders, generated images, running the CLI from the TypeScript sources.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { mulberry32 } from '../src/util/random.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function tempDir(prefix = 'capbridge-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A deterministic pseudo-random generator, so generated images are the same on every run. */
export const rng = mulberry32;

/** A small textured RGB image (random blocks), different for every seed. */
export async function makeImage(file: string, seed: number, opts: { width?: number; height?: number; format?: 'png' | 'jpeg' } = {}): Promise<string> {
  const width = opts.width ?? 96;
  const height = opts.height ?? 72;
  const rand = rng(seed);
  const px = Buffer.alloc(width * height * 3);
  const block = 8;
  for (let by = 0; by < height; by += block) {
    for (let bx = 0; bx < width; bx += block) {
      const c = [rand() * 255, rand() * 255, rand() * 255];
      for (let y = by; y < Math.min(by + block, height); y++) {
        for (let x = bx; x < Math.min(bx + block, width); x++) {
          const i = (y * width + x) * 3;
          px[i] = c[0]!;
          px[i + 1] = c[1]!;
          px[i + 2] = c[2]!;
        }
      }
    }
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const img = sharp(px, { raw: { width, height, channels: 3 } });
  await (opts.format === 'jpeg' ? img.jpeg({ quality: 90 }) : img.png()).toFile(file);
  return file;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `capbridge ARGS` from the sources (tsx), without a TTY. */
export function runCli(args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'src', 'cli.ts'), ...args], {
      cwd: opts.cwd ?? REPO_ROOT,
      env: { ...process.env, CI: '1', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** Writes a manifest TSV (header + rows) and returns its path. */
export function writeManifest(file: string, rows: string[][], header = ['id', 'image', 'caption', 'url']): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, [header, ...rows].map((r) => r.join('\t')).join('\n') + '\n');
  return file;
}
