// Helpers for export/daemon tests: a bank with items (real sharp images) and pairing decisions stored through
// the PairsRepo, as the pairing stage stores them.
import path from 'node:path';
import fs from 'node:fs';
import { Bank, PairsRepo, type PairDecision, type PairLevel } from '../src/bank/index.js';
import { makeImage } from './helpers.js';

export async function addItem(
  bank: Bank,
  dir: string,
  b: 'source' | 'target',
  extId: string,
  caption: string,
  seed: number,
  extra: { pageUrl?: string; captionStatus?: 'ok' | 'empty' | 'lang-mismatch' | 'rejected' } = {},
): Promise<number> {
  const file = await makeImage(path.join(dir, 'img', `${b}-${extId}.png`), seed);
  const rec = await bank.images.prepare(fs.readFileSync(file));
  return bank.transaction(() => {
    bank.images.record(rec);
    return bank.items.upsert({
      bank: b, extId, caption, lang: b === 'source' ? 'eng' : 'cmn', captionStatus: extra.captionStatus ?? (caption ? 'ok' : 'empty'),
      captionReason: null, imageSha256: rec.sha256, pageUrl: extra.pageUrl ?? `https://${b}.example/${extId}`,
      imageUrl: `https://${b}.example/img/${extId}.jpg`, site: b, importedAt: '2026-11-01T00:00:00.000Z',
    }).id;
  });
}

export function decision(sourceItemId: number, targetItemId: number, en: string, zh: string, level: PairLevel, c: number, emitted = true): PairDecision {
  return {
    sourceItemId, targetItemId, emitted, reason: emitted ? null : 'level', en, zh, level, c, fc: c, fe: 0.5, fl: 0.9,
    imageScore: 0.6, inliers: 40, candidateRank: 0, matchedAt: '2026-11-02T00:00:00.000Z', explain: { test: true },
  };
}

export function storeDecisions(bank: Bank, ds: PairDecision[]): void {
  const repo = bank.repo(PairsRepo);
  bank.transaction(() => ds.forEach((d) => repo.upsert(d)));
}
