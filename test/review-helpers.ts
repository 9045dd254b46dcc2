// A bank for the review tests: items imported from manifests with real sharp images (the import command's own
// code path), and pairing decisions stored through PairsRepo.upsert as the pairing stage stores them.
import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { Bank, PairsRepo, SentencePairsRepo, type PairDecision } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { importManifest } from '../src/import/manifest.js';
import { createScorer } from '../src/lib/comparability/index.js';
import { runPairing } from '../src/stages/pair/pairing.js';
import { computeMissingFeatures } from '../src/stages/features/stage.js';
import { retakeJpeg, sceneJpeg, type Retake } from '../src/demo/scenes.js';
import { testLexicon, testLexiconDir } from './helpers/comparability.js';
import { makeImage, REPO_ROOT, tempDir, writeManifest } from './helpers.js';
import { featuresThenMatch } from './helpers/stages.js';

export const SCENES: Array<{ en: string; zh: string; explain: PairDecision['explain']; level: 'par' | 'com' | 'pse' | 'inc'; c: number; emitted: boolean; imageScore: number; inliers: number }> = [
  {
    en: 'Rescue workers search the rubble after the earthquake in Sichuan.',
    zh: '救援人员在四川地震后的废墟中搜寻。',
    explain: {
      matches: [
        { en: 'rescue', zh: '救援', gloss: 'rescue', weight: 0.21 },
        { en: 'search', zh: '搜寻', gloss: 'to search', weight: 0.18 },
        { en: 'rubble', zh: '废墟', gloss: 'ruins; rubble', weight: 0.2 },
        { en: 'earthquake', zh: '地震', gloss: 'earthquake', weight: 0.25 },
      ],
      entities: [{ en: 'Sichuan', zh: '四川', kind: 'name' }],
      enTokens: ['rescue', 'worker', 'search', 'rubble', 'earthquake'],
      zhTokens: ['救援', '人员', '四川', '地震', '废墟', '搜寻'],
    },
    level: 'par', c: 0.71, emitted: true, imageScore: 0.82, inliers: 57,
  },
  {
    en: 'Fans wave flags as the national team arrives at the airport.',
    zh: '球迷在国家队抵达机场时挥舞旗帜。',
    explain: {
      matches: [
        { en: 'fan', zh: '球迷', gloss: 'fan (of a ball game)', weight: 0.2 },
        { en: 'flag', zh: '旗帜', gloss: 'banner; flag', weight: 0.19 },
        { en: 'airport', zh: '机场', gloss: 'airport', weight: 0.22 },
      ],
      entities: [],
      enTokens: ['fan', 'wave', 'flag', 'national', 'team', 'arrive', 'airport'],
      zhTokens: ['球迷', '国家队', '抵达', '机场', '挥舞', '旗帜'],
    },
    level: 'com', c: 0.55, emitted: true, imageScore: 0.41, inliers: 23,
  },
  {
    en: 'A farmer harvests rice in a flooded field.',
    zh: '这座跨河新桥于周一通车。',
    explain: { matches: [], entities: [], enTokens: ['farmer', 'harvest', 'rice', 'flood', 'field'], zhTokens: ['跨河', '新桥', '周一', '通车'] },
    level: 'inc', c: 0.05, emitted: false, imageScore: 0.3, inliers: 14,
  },
];

export interface ReviewFixture {
  dir: string;
  dataDir: string;
  bank: Bank;
  pairs: Array<{ sourceItemId: number; targetItemId: number }>;
}

/**
 * A bank whose pairs come out of the real pipeline: photos rendered by the demo's scene generator, the Chinese
 * outlet's copies re-taken (cropped, rescaled, rotated); imported from manifests; SIFT features, the LSH match
 * (candidates with their inlier points) and the pairing stage with the real C-measure.
 */
export async function buildPipelineReviewBank(): Promise<ReviewFixture & { summary: Record<string, unknown> }> {
  const dir = tempDir('capbridge-review-');
  const dataDir = path.join(dir, 'data');
  const { config } = loadConfig();
  const retakes: Retake[] = ['crop', 'scale', 'rotate'];
  const src: string[][] = [];
  const tgt: string[][] = [];
  fs.mkdirSync(path.join(dir, 'set'), { recursive: true });
  for (let i = 0; i < SCENES.length; i++) {
    fs.writeFileSync(path.join(dir, 'set', `en-${i}.jpg`), await sceneJpeg(301 + i));
    fs.writeFileSync(path.join(dir, 'set', `zh-${i}.jpg`), await retakeJpeg(301 + i, retakes[i % retakes.length]!));
    src.push([`en-${i}`, `en-${i}.jpg`, SCENES[i]!.en, `https://news.example.org/story/${i}`]);
    tgt.push([`zh-${i}`, `zh-${i}.jpg`, SCENES[i]!.zh, `https://news.example.cn/story/${i}`]);
  }
  writeManifest(path.join(dir, 'set', 'source.tsv'), src);
  writeManifest(path.join(dir, 'set', 'target.tsv'), tgt);
  const bank = await Bank.open(dataDir);
  await importManifest(bank, { bank: 'source', manifest: path.join(dir, 'set', 'source.tsv'), config });
  await importManifest(bank, { bank: 'target', manifest: path.join(dir, 'set', 'target.tsv'), config });
  testLexicon();
  fs.cpSync(testLexiconDir(), path.join(dataDir, 'lexicon'), { recursive: true });
  const features = await computeMissingFeatures(bank, config, { threads: 1 });
  const match = await featuresThenMatch(bank, config, {});
  const scorer = await createScorer(config, { bank, cacheDir: testLexiconDir() });
  const pairing = await runPairing(bank, config, { scorer });
  const pairs: { sourceItemId: number; targetItemId: number }[] = [];
  for (let i = 0; i < SCENES.length; i++) {
    pairs.push({ sourceItemId: (await bank.items.get('source', `en-${i}`))!.id, targetItemId: (await bank.items.get('target', `zh-${i}`))!.id });
  }
  return { dir, dataDir, bank, pairs, summary: { features, match, pairing } };
}

export async function buildReviewBank(opts: { width?: number; height?: number; decisions?: boolean } = {}): Promise<ReviewFixture> {
  const dir = tempDir('capbridge-review-');
  const dataDir = path.join(dir, 'data');
  const { config } = loadConfig();
  const src: string[][] = [];
  const tgt: string[][] = [];
  for (let i = 0; i < SCENES.length; i++) {
    await makeImage(path.join(dir, 'set', `en-${i}.png`), 10 + i, { width: opts.width ?? 160, height: opts.height ?? 120 });
    await makeImage(path.join(dir, 'set', `zh-${i}.jpg`), 20 + i, { width: (opts.width ?? 160) - 16, height: (opts.height ?? 120) - 8, format: 'jpeg' });
    src.push([`en-${i}`, `en-${i}.png`, SCENES[i]!.en, `https://news.example.org/story/${i}`]);
    tgt.push([`zh-${i}`, `zh-${i}.jpg`, SCENES[i]!.zh, `https://news.example.cn/story/${i}`]);
  }
  writeManifest(path.join(dir, 'set', 'source.tsv'), src);
  writeManifest(path.join(dir, 'set', 'target.tsv'), tgt);
  const bank = await Bank.open(dataDir);
  await importManifest(bank, { bank: 'source', manifest: path.join(dir, 'set', 'source.tsv'), config });
  await importManifest(bank, { bank: 'target', manifest: path.join(dir, 'set', 'target.tsv'), config });
  const pairs: ReviewFixture['pairs'] = [];
  await bank.transaction(async (tx) => {
    const repo = tx.repo(PairsRepo);
    for (const [i, s] of SCENES.entries()) {
      if (opts.decisions === false) {
        pairs.push({ sourceItemId: (await tx.items.get('source', `en-${i}`))!.id, targetItemId: (await tx.items.get('target', `zh-${i}`))!.id });
        continue;
      }
      const sourceItemId = (await tx.items.get('source', `en-${i}`))!.id;
      const targetItemId = (await tx.items.get('target', `zh-${i}`))!.id;
      const pairId = await repo.upsert({
        sourceItemId, targetItemId, emitted: s.emitted, reason: s.emitted ? null : 'level', en: s.en, zh: s.zh, level: s.level, c: s.c,
        fc: s.c, fe: s.level === 'par' ? 1 : 0, fl: 0.9, imageScore: s.imageScore, inliers: s.inliers, candidateRank: 0,
        matchedAt: '2026-11-20T10:00:00.000Z', explain: s.explain,
      }, `2026-11-2${i}T12:00:00.000Z`);
      // one sentence on each side: the caption pair is its one sentence pair
      await tx.repo(SentencePairsRepo).replace(pairId, sourceItemId, targetItemId, [
        { enFirst: 0, enLast: 0, zhFirst: 0, zhLast: 0, en: s.en, zh: s.zh, emitted: s.emitted, level: s.level, c: s.c, fc: s.c, fe: s.level === 'par' ? 1 : 0, fl: 0.9, fcov: s.c },
      ]);
      pairs.push({ sourceItemId, targetItemId });
    }
  });
  return { dir, dataDir, bank, pairs };
}

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];

/** Starts `capbridge serve --port 0 --json` and resolves with its URL once it listens. */
export function startServe(dataDir: string, extra: string[] = []): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'src', 'cli.ts'), 'serve', '--data', dataDir, '--port', '0', '--json', ...extra], {
      cwd: REPO_ROOT,
      env: { ...process.env, CI: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ url: (JSON.parse(line) as { url: string }).url, child });
    });
    child.stderr!.on('data', (d) => (err += d));
    child.on('exit', (code) => reject(new Error(`serve exited (${code}) before listening: ${err}`)));
  });
}


/**
 * Runs `capbridge ARGS` in this process (buildProgram(command).parseAsync), capturing stdout/stderr and the exit code:
 * the same command code as the spawned CLI without a second tsx start-up (the machine is shared).
 */
export async function runInProcess(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { buildProgram, commandNameIn } = await import('../src/cli.js');
  let stdout = '';
  let stderr = '';
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  const saved = process.exitCode;
  process.exitCode = 0;
  process.stdout.write = ((chunk: string | Uint8Array) => ((stdout += String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((stderr += String(chunk)), true)) as typeof process.stderr.write;
  try {
    await (await buildProgram(commandNameIn(args))).exitOverride().parseAsync(['node', 'capbridge', ...args]);
  } catch (e) {
    stderr += String((e as Error).message);
    if (!process.exitCode) process.exitCode = 1;
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = saved;
  return { code, stdout, stderr };
}
