// The newcomer's first run (until the full crawl-and-pair demo lands): generates a small English/Chinese
// set of its own — synthetic "photos" (random shapes) and their re-framed copies, with captions — imports
// both banks into a fresh data dir, and prints the stats.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { Bank, StatsRepo } from '../bank/index.js';
import { loadConfig } from '../config/load.js';
import { importManifest } from '../import/manifest.js';

const SCENES: Array<[string, string]> = [
  ['Rescue workers search the rubble after the earthquake in the mountain town.', '救援人员在山区小镇地震后的废墟中搜寻。'],
  ['Fans wave flags as the national team arrives at the airport.', '球迷在国家队抵达机场时挥舞旗帜。'],
  ['A farmer harvests rice in a flooded field.', '一名农民在被水淹没的稻田里收割水稻。'],
  ['The new bridge over the river opened to traffic on Monday.', '这座跨河新桥于周一通车。'],
];

function rand(seed: number): () => number {
  let a = seed >>> 0;
  return () => ((a = (a * 1664525 + 1013904223) >>> 0) / 4294967296);
}

function sceneSvg(seed: number, w = 480, h = 360): string {
  const r = rand(seed);
  const shapes: string[] = [];
  for (let i = 0; i < 60; i++) {
    const color = `rgb(${Math.floor(r() * 255)},${Math.floor(r() * 255)},${Math.floor(r() * 255)})`;
    if (r() < 0.5) shapes.push(`<rect x="${r() * w}" y="${r() * h}" width="${10 + r() * 80}" height="${10 + r() * 80}" fill="${color}" transform="rotate(${r() * 90} ${r() * w} ${r() * h})"/>`);
    else shapes.push(`<circle cx="${r() * w}" cy="${r() * h}" r="${5 + r() * 40}" fill="${color}"/>`);
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><rect width="100%" height="100%" fill="rgb(${Math.floor(r() * 255)},120,90)"/>${shapes.join('')}</svg>`;
}

export async function generateDemoSet(dir: string): Promise<{ source: string; target: string }> {
  fs.mkdirSync(path.join(dir, 'images'), { recursive: true });
  const src: string[] = ['id\timage\tcaption\turl'];
  const tgt: string[] = ['id\timage\tcaption\turl'];
  for (let i = 0; i < SCENES.length; i++) {
    const svg = Buffer.from(sceneSvg(100 + i));
    await sharp(svg).jpeg({ quality: 92 }).toFile(path.join(dir, 'images', `en-${i}.jpg`));
    // The Chinese outlet's copy: cropped, rotated, rescaled and recompressed.
    await sharp(svg).extract({ left: 40, top: 30, width: 400, height: 300 }).rotate(7, { background: '#808080' }).resize(360).jpeg({ quality: 70 }).toFile(path.join(dir, 'images', `zh-${i}.jpg`));
    src.push(`en-${i}\timages/en-${i}.jpg\t${SCENES[i]![0]}\thttps://news.example.org/story/${i}`);
    tgt.push(`zh-${i}\timages/zh-${i}.jpg\t${SCENES[i]![1]}\thttps://news.example.cn/story/${i}`);
  }
  fs.writeFileSync(path.join(dir, 'source.tsv'), src.join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'target.tsv'), tgt.join('\n') + '\n');
  return { source: path.join(dir, 'source.tsv'), target: path.join(dir, 'target.tsv') };
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-demo-'));
  const dataDir = path.join(work, 'data');
  const { source, target } = await generateDemoSet(path.join(work, 'set'));
  const { config } = loadConfig();
  const bank = await Bank.open(dataDir);
  for (const [b, manifest] of [['source', source], ['target', target]] as const) {
    const s = await importManifest(bank, { bank: b, manifest, config });
    console.log(`import ${b}: added ${s.added}, unchanged ${s.unchanged}, updated ${s.updated}, failed ${s.failed}`);
  }
  console.log(JSON.stringify(await bank.repo(StatsRepo).all(), null, 2));
  await bank.close();
  console.log(`\ndata dir: ${dataDir}\ntry: ./bin/capbridge stats --data ${dataDir}`);
}

void main();
