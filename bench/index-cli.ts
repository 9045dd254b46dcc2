// bench:index --cli N: P@1 through the CLI with N padding targets in the bank (see bench/index.ts).
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { Bank, FeaturesRepo } from '../src/bank/index.js';
import type { Config } from '../src/config/schema.js';
import { builtCli } from './built-cli.js';
import { paddingImages } from './padding.js';

/** Chinese captions of mining-flickr8k's targets, for the padding items (pairing needs a caption; P@1 does not). */
function zhCaptions(shared: string): string[] {
  const lines = fs.readFileSync(path.join(shared, 'mining-flickr8k', 'target.tsv'), 'utf8').split('\n').slice(1).filter(Boolean);
  return lines.map((l) => l.split('\t')[2] ?? '').filter(Boolean);
}

/** A bank at `dir` with `count` padding targets: image rows (no bytes: nothing reads a padding image), items already
 *  featured, their features. */
export async function padBank(dir: string, config: Config, shared: string, count: number, log: (s: string) => void): Promise<void> {
  const bank = await Bank.open(dir);
  const captions = zhCaptions(shared);
  try {
    let batch: ReturnType<typeof paddingImages> extends Generator<infer T> ? T[] : never = [];
    const flush = async () => {
      await bank.transaction(async (tx) => {
        for (const im of batch) {
          await tx.images.record({ sha256: im.sha256, path: `images/${im.sha256.slice(0, 2)}/${im.sha256}.jpg`, bytes: 0, format: 'jpeg', width: im.features.width, height: im.features.height });
          const { id } = await tx.items.upsert({ bank: 'target', extId: `pad:${im.index}${im.copy ? `~${im.copy}` : ''}`, caption: captions[im.index % captions.length]!, lang: 'cmn', captionStatus: 'ok', captionReason: null, imageSha256: im.sha256, importedAt: new Date().toISOString() });
          await tx.repo(FeaturesRepo).put(im.sha256, im.features, 0);
          await tx.items.setStatus(id, 'featured');
        }
      });
      batch = [];
    };
    let n = 0;
    for (const im of paddingImages(config, shared, count, true)) {
      batch.push(im);
      if (batch.length >= 500) await flush();
      if (++n % 10000 === 0) log(`cli: ${n} padding targets in the bank`);
    }
    await flush();
  } finally {
    await bank.close();
  }
}

/** Runs the CLI (compiled dist/cli.js when built and current, else the sources through tsx; a stale build is
 *  refused, builtCli); returns stdout, CPU and peak RSS. */
export function cli(repoRoot: string, args: string[]): { stdout: string; maxRssKB: number; cpuS: number; wallS: number } {
  const built = builtCli(repoRoot);
  const cmd = built ? [process.execPath, built] : [process.execPath, '--import', 'tsx', path.join(repoRoot, 'src', 'cli.ts')];
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'TIME %M %U %S', ...cmd, ...args], { cwd: repoRoot, encoding: 'utf8', maxBuffer: 1 << 28, env: { ...process.env, CI: '1' } });
  if (r.status !== 0) throw new Error(`capbridge ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-3000)}`);
  const m = /TIME (\d+) ([\d.]+) ([\d.]+)/.exec(r.stderr);
  return { stdout: r.stdout, maxRssKB: Number(m?.[1] ?? 0), cpuS: Number(m?.[2] ?? 0) + Number(m?.[3] ?? 0), wallS: (performance.now() - t0) / 1000 };
}

export async function paddedBankEval(o: { repoRoot: string; shared: string; config: Config; count: number; sets: string[]; log: (s: string) => void }) {
  const root = process.env.CAPBRIDGE_PADDING_CACHE ?? '/work/cache/capbridge-padding';
  const dir = path.join(path.dirname(root), `bench-index-bank-${process.pid}`);
  fs.mkdirSync(dir, { recursive: true });
  try {
    o.log(`cli: padding a bank with ${o.count} targets in ${dir}`);
    await padBank(dir, o.config, o.shared, o.count, o.log);
    const idx = cli(o.repoRoot, ['--data', dir, 'features', '--json']);
    o.log(`cli: index ${idx.wallS.toFixed(0)} s, peak RSS ${(idx.maxRssKB / 1024).toFixed(0)} MB`);
    const out: Record<string, unknown> = { padding: o.count, index: { cpuS: idx.cpuS, maxRssMB: Math.round(idx.maxRssKB / 1024) } };
    for (const set of o.sets) {
      const r = cli(o.repoRoot, ['--data', dir, 'eval', '--set', path.join(o.shared, set), '--json']);
      const e = JSON.parse(r.stdout) as { pAt: Record<string, number>; hitAt1: number; hitAt5: number; emittedPrecision: number | null; coverage: number; stages: { match: { indexedImages: number; indexMemoryBytes: number } } };
      out[set] = { p1: e.pAt['1'], hit5: e.hitAt5, emittedPrecision: e.emittedPrecision, coverage: e.coverage, indexedImages: e.stages.match.indexedImages, indexMemoryBytes: e.stages.match.indexMemoryBytes, bytesPerImage: Math.round(e.stages.match.indexMemoryBytes / Math.max(1, e.stages.match.indexedImages)), cpuS: r.cpuS, maxRssMB: Math.round(r.maxRssKB / 1024) };
      o.log(`cli: ${set} ${JSON.stringify(out[set])}`);
    }
    return out;
  } finally {
    if (!process.argv.includes('--keep-bank')) fs.rmSync(dir, { recursive: true, force: true });
  }
}
