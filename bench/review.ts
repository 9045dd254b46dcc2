// bench:review — the review page's pair list on a bank of 100k pairs: time of the first page and of a deep page
// (keyset cursor near the end) for the list orders and filters the page offers, through the same ReviewsRepo
// queries the server runs, and the end-to-end time of GET / (HTML) through fastify.inject.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { Bank, PairsRepo, ReviewsRepo, LEVELS, type PairListFilter } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { createReviewServer } from '../src/review/index.js';

const PAIRS = Number(process.env.PAIRS ?? 100000);
const SOURCES = Math.ceil(PAIRS / 200);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-bench-review-'));
const bank = await Bank.open(path.join(work, 'data'));
const rec = await bank.images.prepare(await sharp({ create: { width: 64, height: 48, channels: 3, background: '#468' } }).png().toBuffer());
const items = { source: [] as number[], target: [] as number[] };
await bank.transaction(async (tx) => {
  await tx.images.record(rec);
  for (const b of ['source', 'target'] as const) {
    for (let i = 0; i < (b === 'source' ? SOURCES : 200); i++) {
      items[b].push((await tx.items.upsert({
        bank: b, extId: `${b}-${i}`, caption: b === 'source' ? `Caption number ${i} of the English bank.` : `中文图片说明第${i}号。`,
        lang: b === 'source' ? 'eng' : 'cmn', captionStatus: 'ok', captionReason: null, imageSha256: rec.sha256,
        site: `site${i % 7}.example`, pageUrl: `https://site${i % 7}.example/${i}`, importedAt: '2026-11-01T00:00:00Z',
      })).id);
    }
  }
});
let seed = 1;
const rand = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 4294967296);
let t = Date.now();
await bank.transaction(async (tx) => {
  const pairs = tx.repo(PairsRepo);
  let n = 0;
  for (const s of items.source) {
    for (const tg of items.target) {
      if (n++ >= PAIRS) return;
      const c = rand();
      const level = LEVELS[Math.floor(rand() * 4)]!;
      await pairs.upsert({
        sourceItemId: s, targetItemId: tg, emitted: rand() < 0.6, reason: null, en: `Caption ${s}`, zh: `说明${tg}`, level, c, fc: c, fe: 0, fl: 1,
        imageScore: rand(), inliers: Math.floor(rand() * 200), candidateRank: 0, matchedAt: null, explain: null,
      }, new Date(Date.parse('2026-10-01T00:00:00Z') + n * 60_000).toISOString());
    }
  }
});
const fillMs = Date.now() - t;
const reviews = bank.repo(ReviewsRepo);
await bank.transaction(async (tx) => {
  for (let i = 0; i < 1000; i++) {
    await tx.repo(ReviewsRepo).set({ sourceItemId: items.source[i % SOURCES]!, targetItemId: items.target[(i * 7) % 200]!, verdict: i % 3 ? 'accepted' : 'rejected', en: 'x', zh: 'y' });
  }
});

async function time(f: PairListFilter): Promise<{ firstMs: number; deepMs: number; rows: number }> {
  const reps = 5;
  let t0 = process.hrtime.bigint();
  let page = await reviews.listPairs(f, { limit: 50 });
  for (let i = 1; i < reps; i++) page = await reviews.listPairs(f, { limit: 50 });
  const firstMs = Number(process.hrtime.bigint() - t0) / 1e6 / reps;
  // a deep page: the cursor of a row near the end of the whole list (walk backwards one row from the end)
  const last = (await reviews.listPairs(f, { limit: 1, reverse: true, after: undefined })).rows[0];
  const deepCursor = last ? ReviewsRepo.cursorOf(last, f.sort) : undefined;
  const back = deepCursor ? (await reviews.listPairs(f, { limit: 60, reverse: true, after: deepCursor })).rows : [];
  const at = back.length ? ReviewsRepo.cursorOf(back[back.length - 1]!, f.sort) : undefined;
  t0 = process.hrtime.bigint();
  for (let i = 0; i < reps; i++) await reviews.listPairs(f, { limit: 50, after: at });
  const deepMs = Number(process.hrtime.bigint() - t0) / 1e6 / reps;
  return { firstMs: +firstMs.toFixed(2), deepMs: +deepMs.toFixed(2), rows: page.rows.length };
}

const cases: Record<string, PairListFilter> = {
  emittedByC: { kind: 'emitted', sort: 'c', dir: 'desc' },
  emittedByImage: { kind: 'emitted', sort: 'image', dir: 'asc' },
  allByDate: { kind: 'all', sort: 'date', dir: 'desc' },
  levelCom: { kind: 'emitted', sort: 'c', dir: 'desc', level: 'com' },
  cRange: { kind: 'all', sort: 'c', dir: 'desc', cMin: 0.4, cMax: 0.5 },
  siteFilter: { kind: 'emitted', sort: 'c', dir: 'desc', site: 'site3.example' },
  unreviewed: { kind: 'emitted', sort: 'c', dir: 'desc', review: 'unreviewed' },
  accepted: { kind: 'all', sort: 'c', dir: 'desc', review: 'accepted' },
};
const results: Record<string, unknown> = {};
for (const [name, f] of Object.entries(cases)) results[name] = await time(f);

const { config } = loadConfig();
const app = createReviewServer(bank, config, { host: '127.0.0.1', token: '' });
await app.ready();
t = Date.now();
for (let i = 0; i < 5; i++) {
  const res = await app.inject({ method: 'GET', url: '/?kind=all&sort=image' });
  if (res.statusCode !== 200) throw new Error(`GET / → ${res.statusCode}`);
}
const pageMs = (Date.now() - t) / 5;
await app.close();
const cpu = (fs.readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) ?? [])[1];
await bank.close();
fs.rmSync(work, { recursive: true, force: true });
console.log(JSON.stringify({ bench: 'review', pairs: PAIRS, reviews: 1000, fillMs, listMs: results, htmlPageMs: pageMs, date: new Date().toISOString(), cpu, cores: os.cpus().length }));
