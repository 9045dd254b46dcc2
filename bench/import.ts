// bench:import — a 100k-row manifest (over 500 distinct generated images, so the content-hash store dedupes)
// imported into a fresh data dir: rows per second and peak resident memory, then a second (no-op) import.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { Bank } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { importManifest } from '../src/import/manifest.js';

const ROWS = Number(process.env.ROWS ?? 100000);
const IMAGES = 500;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-bench-import-'));
fs.mkdirSync(path.join(work, 'images'));
for (let i = 0; i < IMAGES; i++) {
  const px = Buffer.alloc(64 * 48 * 3);
  for (let j = 0; j < px.length; j++) px[j] = (j * 31 + i * 7919 + ((j * i) % 251)) & 255;
  await sharp(px, { raw: { width: 64, height: 48, channels: 3 } }).png().toFile(path.join(work, 'images', `${i}.png`));
}
const lines = ['id\timage\tcaption\turl'];
for (let i = 0; i < ROWS; i++) lines.push(`r${i}\timages/${i % IMAGES}.png\tA crowd gathers in the square to watch the parade number ${i}.\thttps://example.org/${i}`);
const manifest = path.join(work, 'manifest.tsv');
fs.writeFileSync(manifest, lines.join('\n') + '\n');
lines.length = 0;

let peak = process.memoryUsage().rss;
const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
const { config } = loadConfig();
const bank = await Bank.open(path.join(work, 'data'));
const rssBefore = process.memoryUsage().rss;
let t = Date.now();
const first = await importManifest(bank, { bank: 'source', manifest, config });
const firstMs = Date.now() - t;
t = Date.now();
const second = await importManifest(bank, { bank: 'source', manifest, config });
const secondMs = Date.now() - t;
clearInterval(timer);
await bank.close();
console.log(JSON.stringify({
  bench: 'import', rows: ROWS, distinctImages: IMAGES, added: first.added, failed: first.failed,
  firstImportMs: firstMs, rowsPerSec: Math.round(ROWS / (firstMs / 1000)),
  reimportMs: secondMs, reimportUnchanged: second.unchanged,
  rssBeforeMB: Math.round(rssBefore / 1048576), peakRssMB: Math.round(peak / 1048576),
  date: new Date().toISOString(), cpu: os.cpus()[0]?.model, cores: os.cpus().length,
}));
fs.rmSync(work, { recursive: true, force: true });
