// A small harvest for the stage and worker tests: generated scenes (English sources) and transformed copies of
// them (Chinese targets) plus unrelated targets, as two TSV manifests; and the pairs a bank ends with, by ext ids.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Bank } from '../../src/bank/index.js';
import { REPO_ROOT, writeManifest } from '../helpers.js';
import { TRANSFORMS, scene, write } from '../lsh-helpers.js';
import { lexiconCacheFile } from '../../src/lib/comparability/index.js';
import { testLexicon, testLexiconDir } from './comparability.js';

export const EN = ['Firefighters spray water on a burning warehouse in the harbour district.', 'Crowds gather in the square as the president speaks about the economy.',
  'A train crosses the new bridge over the river after the opening ceremony.', 'Farmers harvest rice in the fields near the village on Monday.',
  'Children play football in the park during the summer holiday.', 'Police officers stand guard outside the court building.'];
export const ZH = ['消防员向港区一座燃烧的仓库喷水。', '总统就经济发表讲话时，人群聚集在广场上。', '开通仪式后，一列火车驶过河上的新桥。', '周一，农民在村庄附近的田里收割水稻。',
  '暑假期间，孩子们在公园里踢足球。', '警察在法院大楼外站岗。'];

/** Writes `n` scenes with a transformed copy each (n <= 6) and `distractors` unrelated targets; returns the manifests. */
export async function harvestManifests(dir: string, n: number, distractors = 1): Promise<{ source: string; target: string }> {
  const names = Object.keys(TRANSFORMS);
  const src: string[][] = [];
  const tgt: string[][] = [];
  for (let i = 0; i < n; i++) {
    const png = await scene(500 + i);
    src.push([`s${i + 1}`, write(dir, `s${i + 1}.png`, png), EN[i]!, `https://example.org/en/s${i + 1}`]);
    tgt.push([`t${i + 1}`, write(dir, `t${i + 1}.jpg`, await TRANSFORMS[names[i % names.length]!]!(png)), ZH[i]!, `https://example.org/zh/t${i + 1}`]);
  }
  for (let k = 0; k < distractors; k++) tgt.push([`d${k + 1}`, write(dir, `d${k + 1}.png`, await scene(900 + k)), `无关的照片${k + 1}`, `https://example.org/zh/d${k + 1}`]);
  return { source: writeManifest(path.join(dir, 'source.tsv'), src), target: writeManifest(path.join(dir, 'target.tsv'), tgt) };
}

/** Every decided caption pair as "source ext id → target ext id level emitted", sorted. */
export async function pairsByExtId(bank: Bank): Promise<string[]> {
  const { PairsRepo } = await import('../../src/bank/index.js');
  const out: string[] = [];
  const rows = [...(await bank.repo(PairsRepo).list({ limit: 10_000 })), ...(await bank.repo(PairsRepo).list({ limit: 10_000, emitted: false }))];
  for (const p of rows) {
    const s = await bank.items.byId(p.sourceItemId);
    const t = await bank.items.byId(p.targetItemId);
    out.push(`${s?.extId}→${t?.extId} ${p.level} c=${p.c === null ? '-' : p.c.toFixed(4)} ${p.emitted ? 'emitted' : 'not emitted'}`);
  }
  return out.sort();
}

export interface WorkerProcess {
  child: ChildProcess;
  stderr: () => string;
  out: Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>;
}

/** Small jobs (one item each), short leases and polls: a test sees several claims per worker and a quick retake. */
export const SMALL_JOBS_ENV: Readonly<Record<string, string>> = {
  CAPBRIDGE_WORKER__BATCH__FEATURES: '1',
  CAPBRIDGE_WORKER__BATCH__MATCH: '1',
  CAPBRIDGE_WORKER__BATCH__PAIR: '1',
  CAPBRIDGE_WORKER__LEASE_SECONDS: '3',
  CAPBRIDGE_WORKER__POLL_SECONDS: '0.2',
  CAPBRIDGE_SIFT__THREADS: '1',
};

/** Starts `capbridge worker --drain --json` on a PostgreSQL database (a real process: what systemd runs). */
export function startWorker(data: string, url: string, env: Record<string, string>, extra: string[] = []): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'src', 'cli.ts'), '--data', data, '--db', url, 'worker', '--drain', '--json', ...extra], {
    cwd: REPO_ROOT,
    env: { ...process.env, CI: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const out = new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, out, stderr: () => stderr };
}

/** Gives a data dir the lexicon cache a deployed worker has after its first night (built once per test process), so
 *  that each run does not build it again: the pair stage then only reads it. */
export function seedLexicon(dataDir: string): void {
  testLexicon();
  const dir = path.join(dataDir, 'lexicon');
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(lexiconCacheFile(testLexiconDir()), lexiconCacheFile(dir));
}
