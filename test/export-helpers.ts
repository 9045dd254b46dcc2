// Helpers for export/daemon tests: a bank with items (real sharp images) and pairing decisions stored through
// the PairsRepo, as the pairing stage stores them.
import path from 'node:path';
import fs from 'node:fs';
import { Bank, PairsRepo, SentencePairsRepo, type PairDecision, type Level } from '../src/bank/index.js';
import { makeImage } from './helpers.js';
import type { CaptionScorer as Scorer, ScoreResult } from '../src/lib/comparability/index.js';

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
  return bank.transaction(async (tx) => {
    await tx.images.record(rec);
    const { id } = await tx.items.upsert({
      bank: b, extId, caption, lang: b === 'source' ? 'eng' : 'cmn', captionStatus: extra.captionStatus ?? (caption ? 'ok' : 'empty'),
      captionReason: null, imageSha256: rec.sha256, pageUrl: extra.pageUrl ?? `https://${b}.example/${extId}`,
      imageUrl: `https://${b}.example/img/${extId}.jpg`, site: b, importedAt: '2026-11-01T00:00:00.000Z',
    });
    return id;
  });
}

export function decision(sourceItemId: number, targetItemId: number, en: string, zh: string, level: Level, c: number, emitted = true): PairDecision {
  return {
    sourceItemId, targetItemId, emitted, reason: emitted ? null : 'level', en, zh, level, c, fc: c, fe: 0.5, fl: 0.9,
    imageScore: 0.6, inliers: 40, candidateRank: 0, matchedAt: '2026-11-02T00:00:00.000Z', explain: { test: true },
  };
}

/** Stores decisions as the pairing stage does; a scored decision without sentence pairs is one sentence on each side. */
export async function storeDecisions(bank: Bank, ds: PairDecision[]): Promise<void> {
  await bank.transaction(async (tx) => {
    const repo = tx.repo(PairsRepo);
    const sentences = tx.repo(SentencePairsRepo);
    for (const d of ds) {
      const id = await repo.upsert(d);
      const whole =
        d.level && d.c !== null
          ? [{ enFirst: 0, enLast: 0, zhFirst: 0, zhLast: 0, en: d.en, zh: d.zh, emitted: d.emitted, level: d.level, c: d.c, fc: d.fc ?? 0, fe: d.fe ?? 0, fl: d.fl ?? 0, fcov: d.fcov ?? 0 }]
          : [];
      await sentences.replace(id, d.sourceItemId, d.targetItemId, d.sentencePairs ?? whole);
    }
  });
}

/**
 * A scorer for decision-rule tests of other layers: each caption is one sentence, the level is read from a
 * "[par]"-style tag in the Chinese caption.
 */
export function taggedScorer(): Scorer {
  const score = (_en: string, zh: string): ScoreResult => {
    const level = (/\[(par|com|pse|inc)\]/.exec(zh)?.[1] ?? 'inc') as Level;
    const c = { par: 0.8, com: 0.55, pse: 0.42, inc: 0.1 }[level];
    return { fc: c, fe: 0, fl: 1, fcov: c, fs: 0, c, cPar: c, level, explain: { rule: 'test' } as never };
  };
  const one = (text: string) => ({ sentences: [{ text, start: 0, end: text.length }], truncated: false, refused: false, dropped: 0 });
  return {
    score,
    align: (en, zh) => ({ en: one(en), zh: one(zh), pairs: [{ ...score(en, zh), en, zh, enSpan: [0, 0], zhSpan: [0, 0] }], grid: [], whole: null, refused: null }),
    chineseWordCount: (text) => text.length,
  };
}
