// Takes the README's screenshot of the pair view in headless Chromium: `npx tsx test/review-screenshot.ts DATA_DIR
// [OUT.png]` serves DATA_DIR (a bank with decided pairs, e.g. the demo's) on a free loopback port and shoots the
// best emitted pair's view. Not a test (mocha runs *.test.ts only); playwright-core is a devDependency.
import path from 'node:path';
import { chromium } from 'playwright-core';
import sharp from 'sharp';
import { Bank, ReviewsRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { createReviewServer } from '../src/review/index.js';
import { CHROMIUM, CHROMIUM_ARGS } from './review-helpers.js';

const dataDir = process.argv[2];
const out = path.resolve(process.argv[3] ?? 'docs/review-pair.png');
if (!dataDir) throw new Error('usage: tsx test/review-screenshot.ts DATA_DIR [OUT.png]');
const bank = await Bank.open(dataDir);
const { config } = loadConfig();
const best = (await bank.repo(ReviewsRepo).listPairs({ kind: 'emitted', sort: 'c', dir: 'desc' }, { limit: 1 })).rows[0];
if (!best) throw new Error(`${dataDir}: no emitted pair to show`);
const app = createReviewServer(bank, config, { host: '127.0.0.1', token: '' });
await app.listen({ host: '127.0.0.1', port: 0 });
const port = (app.server.address() as { port: number }).port;
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 }, deviceScaleFactor: 1 });
  await page.goto(`http://127.0.0.1:${port}/pair/${best.sourceItemId}/${best.targetItemId}`, { waitUntil: 'networkidle' });
  // a palette PNG: a quarter of the size, no visible loss on a page of flat colours
  await sharp(await page.screenshot({ fullPage: true })).png({ palette: true, quality: 90, effort: 8 }).toFile(out);
  console.log(`${out}: pair ${best.sourceExtId} ↔ ${best.targetExtId} (C ${best.c}, ${best.inliers} inliers)`);
} finally {
  await browser.close();
  await app.close();
  await bank.close();
}
