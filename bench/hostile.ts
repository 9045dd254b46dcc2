// bench:hostile — issue 18's done-when: a bank with about 1 % hostile items of mixed kinds (a 1x1 PNG, a 2000x3
// WebP strip, a 1x1 GIF frame, a PNG decompression bomb, a truncated JPEG, an image gone from the store, and a 1 MB
// caption), stored as an older bank or a crawl may hold them, runs one full daemon cycle (features, match, pair):
// every stage ends ok, every other item is processed (featured, matched to its retake, its pair decided), every
// hostile image is failed with a reason (the 1 MB caption's pair is decided on its first 2000 characters, never
// emitted as par), and the peak RSS of the process
// (worker threads included: getrusage maxrss) stays under 1 GB. PAIRS=N good scene pairs (default 250).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Bank, CandidatesRepo, type BankName } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { runCycle } from '../src/daemon/cycle.js';
import { retakeJpeg, sceneJpeg } from '../src/demo/scenes.js';
import { createLogger } from '../src/util/log.js';
import { degenerate, gifWithTinyFrame, pngBomb, storeItem } from '../test/helpers/hostile-images.js';

const PAIRS = Number(process.env.PAIRS ?? 250);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-bench-hostile-'));
const data = path.join(work, 'data');
const { config } = loadConfig();
const bank = await Bank.open(data);
const add = (b: BankName, extId: string, buf: Buffer, caption: string) => storeItem(bank, b, extId, buf, caption);
const EN = 'Rescue workers search the rubble after the earthquake in Sichuan.';
const ZH = '救援人员在四川地震后的废墟中搜寻。';
const retakes = ['crop', 'scale', 'rotate'] as const;
const tGen = Date.now();
for (let i = 0; i < PAIRS; i++) {
  await add('source', `en-${i}`, await sceneJpeg(1000 + i), EN);
  await add('target', `zh-${i}`, await retakeJpeg(1000 + i, retakes[i % 3]!), ZH);
  if (i % 50 === 0) process.stderr.write(`bench:hostile: ${i}/${PAIRS} scene pairs generated\n`);
}
const cut = await sceneJpeg(999);
const hostile: Array<[BankName, string, Buffer, string]> = [
  ['source', 'h-dot', await degenerate('png', 1, 1), EN],
  ['source', 'h-strip', await degenerate('webp', 2000, 3), EN],
  ['target', 'h-frame', await gifWithTinyFrame(), ZH],
  ['source', 'h-bomb', pngBomb(), EN],
  ['target', 'h-cut', cut.subarray(0, cut.length >> 2), ZH],
];
for (const [b, id, buf, caption] of hostile) await add(b, id, buf, caption);
const gone = await add('source', 'h-gone', await sceneJpeg(998), EN);
fs.rmSync(path.join(data, gone.path));
// a 1 MB caption on an image that matches (its pair is refused as caption-too-long, not scored)
await add('source', 'h-caption', await sceneJpeg(1000), 'A dog runs on the beach. '.repeat(42_000));
const hostileIds = [...hostile.map(([b, id]) => [b, id] as const), ['source', 'h-gone'] as const];
const genMs = Date.now() - tGen;

const t0 = Date.now();
const report = await runCycle(bank, config, { logger: createLogger('warn'), stages: ['features', 'match', 'pair'] });
const cycleMs = Date.now() - t0;

let processed = 0;
for (let i = 0; i < PAIRS; i++) {
  const s = (await bank.items.get('source', `en-${i}`))!;
  const t = (await bank.items.get('target', `zh-${i}`))!;
  const top = (await bank.repo(CandidatesRepo).listFor(s.id))[0];
  const decided = await bank.sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM pairs WHERE source_item_id = ? AND target_item_id = ?', [s.id, t.id]);
  if (s.status === 'featured' && t.status === 'featured' && top?.targetItemId === t.id && Number(decided!.n) === 1) processed++;
}
let failedWithReason = 0;
const reasons: Record<string, string> = {};
for (const [b, id] of hostileIds) {
  const it = (await bank.items.get(b, id))!;
  if (it.status === 'failed' && it.statusReason) failedWithReason++;
  reasons[id] = `${it.status}: ${(it.statusReason ?? '').slice(0, 80)}`;
}
const capItem = (await bank.items.get('source', 'h-caption'))!;
const cap = await bank.sql.all<{ reason: string | null; emitted: number; level: string | null }>('SELECT reason, emitted, level FROM pairs WHERE source_item_id = ?', [capItem.id]);
reasons['h-caption'] = cap.map((r) => `${r.emitted ? 'emitted' : 'not emitted'} ${r.level ?? ''} ${r.reason ?? ''}`).join('; ');
// decided (the stage did not choke on it) and never emitted as par: read up to maxCaptionChars, cut at a sentence end
const captionDecidedNotPar = cap.length > 0 && cap.every((r) => !(r.emitted && r.level === 'par'));
await bank.close();
const items = 2 * PAIRS + hostileIds.length + 1;
const peakRssMB = Math.round(process.resourceUsage().maxRSS / 1024);
console.log(JSON.stringify({
  bench: 'hostile', items, hostileItems: hostileIds.length + 1, hostileShare: Number(((hostileIds.length + 1) / items).toFixed(4)),
  stages: report.stages.map((s) => `${s.stage}:${s.result}`).join(','), cycleOk: report.ok,
  goodPairs: PAIRS, goodPairsProcessed: processed, hostileFailedWithReason: failedWithReason, hostileImages: hostileIds.length, captionDecidedNotPar,
  reasons, peakRssMB, peakRssUnder1GB: peakRssMB < 1024, cycleMs, generateMs: genMs,
  date: new Date().toISOString(), load: os.loadavg().map((x) => Number(x.toFixed(2))), cpu: os.cpus()[0]?.model, cores: os.cpus().length,
}));
fs.rmSync(work, { recursive: true, force: true });
