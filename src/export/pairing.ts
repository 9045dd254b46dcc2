// The pairing decision (stage `runPairing`): for each source item with candidates, every stored candidate target
// (the lsh-index layer keeps the top `match.top`, verified by ratio test + RANSAC) is scored with the C-measure,
// and the pair is emitted when
//   - both captions are usable (caption_status 'ok'; empty captions are for image search only),
//   - image verification passes: inliers >= export.minInliers and image_score >= export.minImageScore,
//   - the comparability level is at least export.minLevel (par > com > pse > inc).
// One source may pair with several targets. Every decision (emitted or not, with the reason) is stored in
// `pairs`, keyed by (source, target), with the caption texts and candidate it was made on: a re-run decides only
// what changed (new candidates, re-matched sources, edited captions), so it is resumable after a crash and never
// duplicates a pair. Sources are processed in id order, one transaction per batch.
import type { Bank, Item, PairCandidate, PairDecision, PairLevel } from '../bank/index.js';
import { LEVEL_RANK, PairsRepo } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../util/log.js';
import type { Progress } from '../util/progress.js';
import { loadCreateScorer, loadUpdateIdf, type Scorer } from './layers.js';

export interface PairingOptions {
  logger?: Logger;
  progress?: Progress;
  signal?: AbortSignal;
  /** Sources per transaction. */
  batchSize?: number;
  /** Re-decide every source with candidates (after changing thresholds). */
  all?: boolean;
  /** A scorer to use instead of the comparability layer's (tests of other layers may pass one). */
  scorer?: Scorer;
  /** Override of config.export thresholds. */
  minLevel?: PairLevel;
}

export interface PairingSummary {
  sources: number;
  decided: number;
  emitted: number;
  notEmitted: { caption: number; image: number; level: number };
  removed: number;
  byLevel: Record<PairLevel, number>;
  aborted: boolean;
}

export function emptyPairingSummary(): PairingSummary {
  return {
    sources: 0, decided: 0, emitted: 0, notEmitted: { caption: 0, image: 0, level: 0 }, removed: 0,
    byLevel: { par: 0, com: 0, pse: 0, inc: 0 }, aborted: false,
  };
}

/** The decision for one candidate (pure, given the item rows, the candidate and a scorer). */
export async function decide(
  src: Item,
  tgt: Item,
  cand: PairCandidate,
  scorer: Scorer,
  t: { minInliers: number; minImageScore: number; minLevel: PairLevel },
): Promise<PairDecision> {
  const base = {
    sourceItemId: src.id, targetItemId: tgt.id, en: src.caption, zh: tgt.caption,
    imageScore: cand.imageScore, inliers: cand.inliers, candidateRank: cand.rank, matchedAt: cand.matchedAt,
  };
  if (src.captionStatus !== 'ok' || tgt.captionStatus !== 'ok' || !src.caption.trim() || !tgt.caption.trim()) {
    return { ...base, emitted: false, reason: 'caption-status', level: null, c: null, fc: null, fe: null, fl: null, explain: null };
  }
  const s = await scorer.score(src.caption, tgt.caption);
  const imageOk = cand.inliers >= t.minInliers && cand.imageScore >= t.minImageScore;
  const levelOk = LEVEL_RANK[s.level] >= LEVEL_RANK[t.minLevel];
  return {
    ...base,
    emitted: imageOk && levelOk,
    reason: !imageOk ? 'image' : !levelOk ? 'level' : null,
    level: s.level, c: s.c, fc: s.fc, fe: s.fe, fl: s.fl, explain: s.explain,
  };
}

export async function runPairing(bank: Bank, config: Config, opts: PairingOptions = {}): Promise<PairingSummary> {
  const summary = emptyPairingSummary();
  const pairs = bank.repo(PairsRepo);
  let scorer = opts.scorer;
  if (!scorer) {
    const createScorer = await loadCreateScorer();
    // the IDF weights learn from every caption that arrived since the last run, before scoring
    await (await loadUpdateIdf())(bank, config, { signal: opts.signal });
    scorer = await createScorer(config, { bank, dataDir: bank.dataDir });
  }
  const t = {
    minInliers: config.export.minInliers,
    minImageScore: config.export.minImageScore,
    minLevel: opts.minLevel ?? config.export.minLevel,
  };
  const batchSize = opts.batchSize ?? 200;
  let afterId = 0;
  for (;;) {
    if (opts.signal?.aborted) {
      summary.aborted = true;
      break;
    }
    const ids = pairs.pendingSources(afterId, batchSize, opts.all);
    if (!ids.length) break;
    afterId = ids[ids.length - 1]!;
    // score outside the write transaction, then commit the batch at once
    const batch: { sourceId: number; keep: number[]; decisions: PairDecision[] }[] = [];
    for (const sid of ids) {
      const src = bank.items.byId(sid);
      if (!src) continue;
      const decisions: PairDecision[] = [];
      const keep: number[] = [];
      for (const cand of pairs.candidatesOf(sid)) {
        const tgt = bank.items.byId(cand.targetItemId);
        if (!tgt) continue;
        keep.push(tgt.id);
        decisions.push(await decide(src, tgt, cand, scorer, t));
      }
      batch.push({ sourceId: sid, keep, decisions });
    }
    const now = new Date().toISOString();
    bank.transaction(() => {
      for (const b of batch) {
        summary.removed += pairs.removeOthers(b.sourceId, b.keep);
        for (const d of b.decisions) pairs.upsert(d, now);
      }
    });
    for (const b of batch) {
      summary.sources++;
      opts.progress?.tick(1);
      for (const d of b.decisions) {
        summary.decided++;
        if (d.emitted) {
          summary.emitted++;
          summary.byLevel[d.level!]++;
        } else if (d.reason === 'caption-status') summary.notEmitted.caption++;
        else if (d.reason === 'image') summary.notEmitted.image++;
        else summary.notEmitted.level++;
      }
    }
  }
  if (!summary.aborted) summary.removed += bank.transaction(() => pairs.sweepOrphans());
  opts.logger?.info(
    `pair: ${summary.sources} sources, ${summary.decided} candidates decided, ${summary.emitted} pairs emitted ` +
      `(par ${summary.byLevel.par}, com ${summary.byLevel.com}, pse ${summary.byLevel.pse})`,
  );
  return summary;
}
