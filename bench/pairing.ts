// npm run bench:pairing — what `capbridge pair` costs on a large bank, and so what re-scoring costs when the IDF
// table drifts (`pair --all`, or the automatic re-decision of pairs scored with a table 1/(1 + export.rescoreDrift)
// the size of today's). A fresh bank gets N source and N target items (one small shared image; captions from the open
// comparability file: 70 % one sentence each side, 30 % two to three sentences each side made of several rows) and
// one verified candidate per source; then the pairing stage runs once (every pair new) and once with --all.
// N = $BENCH_PAIRS (default 100000). Reports wall and CPU seconds, caption pairs per CPU second, sentence pairs stored,
// the database size. Prints ONE JSON line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { Bank, CandidatesRepo, DB_FILE, PairsRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { readPairsFile } from '../src/lib/comparability/index.js';
import { runPairing } from '../src/stages/pair/index.js';
import { mulberry32 } from '../src/util/random.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shared = process.env.CAPBRIDGE_SHARED_DATA ?? path.resolve(repoRoot, '..', 'shared', 'data');
const N = Number(process.env.BENCH_PAIRS ?? 100_000);
const { config } = loadConfig({ env: {} });

const endEn = (s: string) => (/[.!?]["”’)]?$/.test(s.trim()) ? s.trim() : `${s.trim()}.`);
const endZh = (s: string) => (/[。！？]["”’」）)]?$/.test(s.trim()) ? s.trim() : `${s.trim()}。`);

async function main(): Promise<void> {
  const rows = await readPairsFile(path.join(shared, 'comparability', 'pairs.tsv'), { requireLevel: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-bench-pairing-'));
  const bank = await Bank.open(path.join(dir, 'data'));
  try {
    const rnd = mulberry32(15);
    const pick = () => rows[Math.floor(rnd() * rows.length)]!;
    const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: { r: 90, g: 120, b: 200 } } }).png().toBuffer();
    const image = await bank.images.prepare(png);
    const at = new Date().toISOString();
    const tBuild = Date.now();
    const batch = 5000;
    for (let start = 0; start < N; start += batch) {
      await bank.transaction(async (tx) => {
        await tx.images.record(image);
        for (let i = start; i < Math.min(N, start + batch); i++) {
          let en: string;
          let zh: string;
          if (rnd() < 0.7) {
            const r = pick();
            [en, zh] = [r.en, r.zh];
          } else {
            const k = 2 + Math.floor(rnd() * 2);
            const parts = Array.from({ length: k }, pick);
            en = parts.map((p) => endEn(p.en)).join(' ');
            zh = parts.map((p) => endZh(p.zh)).join('');
          }
          const common = { lang: null, captionStatus: 'ok' as const, captionReason: null, imageSha256: image.sha256, importedAt: at };
          const s = (await tx.items.upsert({ bank: 'source', extId: `s${i}`, caption: en, ...common })).id;
          const t = (await tx.items.upsert({ bank: 'target', extId: `t${i}`, caption: zh, ...common })).id;
          await tx.repo(CandidatesRepo).replaceFor(s, [{ targetItemId: t, rank: 0, imageScore: 0.8, matches: 100, inliers: 60, homography: null, mirrored: false, pairs: null }], at);
        }
      });
    }
    const buildSeconds = (Date.now() - tBuild) / 1000;
    const timed = async (all: boolean) => {
      const cpu = process.cpuUsage();
      const t = Date.now();
      const summary = await runPairing(bank, config, { all, batchSize: 500 });
      const c = process.cpuUsage(cpu);
      return { wallSeconds: (Date.now() - t) / 1000, cpuSeconds: Math.round((c.user + c.system) / 1e4) / 100, decided: summary.decided, emitted: summary.emitted, sentencePairs: summary.sentencePairs };
    };
    const first = await timed(false);
    const again = await timed(true);
    const perSec = (r: { decided: number; cpuSeconds: number }) => Math.round(r.decided / r.cpuSeconds);
    process.stdout.write(
      JSON.stringify({
        bench: 'pairing',
        pairs: N,
        date: new Date().toISOString(),
        cpu: os.cpus()[0]?.model ?? 'unknown',
        cores: os.cpus().length,
        loadAverage: Math.round(os.loadavg()[0]! * 10) / 10,
        buildSeconds,
        firstRun: { ...first, captionPairsPerCpuSecond: perSec(first) },
        pairAll: { ...again, captionPairsPerCpuSecond: perSec(again) },
        storedPairs: (await bank.repo(PairsRepo).count(true)) + (await bank.repo(PairsRepo).count(false)),
        databaseMB: Math.round(fs.statSync(path.join(dir, 'data', DB_FILE)).size / 1e5) / 10,
      }) + '\n',
    );
  } finally {
    await bank.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  process.stderr.write(`bench:pairing: ${err.stack ?? err.message}\n`);
  process.exitCode = 1;
});
