// The pairing decision (stage `runPairing`): for each source item with candidates, every stored candidate target
// (the match stage keeps the top `match.top`, verified by ratio test + RANSAC) is a caption pair. Its two captions
// are split into sentences (credits and datelines left out, bounded by comparability.maxCaptionChars and
// maxSentences) and aligned (src/lib/comparability/align.ts): every aligned sentence pair gets its own C and level. A
// sentence pair is emitted when
//   - both captions are usable (caption_status 'ok'; empty captions are for image search only) and within the
//     bounds (a caption whose first sentence is longer than maxCaptionChars is refused: 'caption-too-long'),
//   - the caption pair passes the optional filters export.maxSentences / export.maxChineseWords (off by default;
//     the seed paper dropped multi-sentence captions and Chinese captions of more than 20 words at harvest time),
//   - image verification passes: inliers >= match.minInliers (archive.minInliers for an archive matching hit) and
//     image_score >= match.minScore,
//   - its level is at least export.minLevel (par > com > pse > inc).
// The caption pair is emitted when one of its sentence pairs is, and carries the scores of its best sentence pair
// (with one sentence on each side, the captions' own: the decision is then exactly the caption-level one).
// One source may pair with several targets. Every decision (emitted or not, with the reason) is stored in
// `pairs`, keyed by (source, target), with the caption texts and candidate it was made on, and its sentence pairs
// in `sentence_pairs`: a re-run decides only what changed (new candidates, re-matched sources, edited captions, an
// IDF table grown by export.rescoreDrift since), so it is resumable after a crash and never duplicates a pair.
// Sources are processed in id order, one transaction per batch.
import type { Bank, IdRange, Item, PairCandidate, PairDecision, Level, SentencePairDecision, VerifiedBy } from '../../bank/index.js';
import { LEVEL_RANK, PairsRepo, SentencePairsRepo, isInfrastructureFailure, walkIds } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../util/log.js';
import { errorMessage } from '../../util/errors.js';
import type { Progress } from '../../util/progress.js';
// type-only: the comparability library (the lexicon, jieba) is loaded by the run that scores, not by importing this
import type { CaptionAlignment, CaptionScorer as Scorer, SentencePairScore } from '../../lib/comparability/index.js';
import { chooseSentencePairs } from './sentence-choice.js';

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
  minLevel?: Level;
  /** Only source items with ids in this range (a worker's job); default all. */
  idRange?: IdRange;
}

export interface PairingSummary {
  sources: number;
  decided: number;
  emitted: number;
  /** Emitted sentence pairs (an emitted caption pair holds one or more). */
  sentencePairs: number;
  notEmitted: { caption: number; image: number; level: number; filter: number };
  /** Caption pairs whose scoring threw: stored not emitted with reason 'failed: …' (the run went on); decided
   *  again when a caption or the match changes, or with pair --all. */
  failed: number;
  removed: number;
  byLevel: Record<Level, number>;
  aborted: boolean;
}

export function emptyPairingSummary(): PairingSummary {
  return {
    sources: 0, decided: 0, emitted: 0, sentencePairs: 0, notEmitted: { caption: 0, image: 0, level: 0, filter: 0 }, failed: 0, removed: 0,
    byLevel: { par: 0, com: 0, pse: 0, inc: 0 }, aborted: false,
  };
}

export interface DecisionRules {
  /** The inlier floor of each verification that stores candidates (candidates.verified_by). */
  minInliers: Record<VerifiedBy, number>;
  minImageScore: number;
  minLevel: Level;
  /** The floor of a caption pair's sentence pairs other than its best one (default minLevel). */
  minLevelMoreSentences?: Level;
  /** The ratio margin a sentence pair needs over its alternatives (sentence-choice.ts; default 1). */
  sentenceMargin?: number;
  /** Weight of the two first sentences' pair in the margin (sentence-choice.ts; default 1). */
  firstSentencePrior?: number;
  /** comparability.comMinSignificance: a sentence pair among several needs it plus ln(tests) (sentence-choice.ts). */
  minSignificance?: number;
  /** 0 = off: a caption pair with more sentences on a side is not emitted. */
  maxSentences?: number;
  /** 0 = off: a Chinese caption of more words is not emitted. */
  maxChineseWords?: number;
  /** Documents of the IDF table the scorer uses (stored with the decision). */
  idfDocs?: number;
}

export function rulesOf(config: Config, minLevel?: Level, idfDocs?: number): DecisionRules {
  const e = config.export;
  return {
    // each verification's own floor (candidates.verified_by): archive matching's hits are verified beyond chance by the
    // a-contrario test from archive.minInliers; the plain and views searches' from match.minInliers
    minInliers: { search: config.match.minInliers, archive: config.match.views.archive.minInliers }, minImageScore: config.match.minScore, minLevel: minLevel ?? e.minLevel, minLevelMoreSentences: e.minLevelMoreSentences,
    sentenceMargin: e.sentenceMargin, firstSentencePrior: e.firstSentencePrior, minSignificance: config.comparability.comMinSignificance,
    maxSentences: e.maxSentences, maxChineseWords: e.maxChineseWords, idfDocs,
  };
}

/** The decision for one candidate (pure, given the item rows, the candidate and a scorer). */
export async function decide(src: Item, tgt: Item, cand: PairCandidate, scorer: Scorer, t: DecisionRules): Promise<PairDecision> {
  const base = {
    sourceItemId: src.id, targetItemId: tgt.id, en: src.caption, zh: tgt.caption,
    imageScore: cand.imageScore, inliers: cand.inliers, candidateRank: cand.rank, matchedAt: cand.matchedAt, idfDocs: t.idfDocs ?? null,
  };
  const unscored = { level: null, c: null, fc: null, fe: null, fl: null, fcov: null, explain: null, sentencePairs: [] };
  if (src.captionStatus !== 'ok' || tgt.captionStatus !== 'ok' || !src.caption.trim() || !tgt.caption.trim()) {
    return { ...base, ...unscored, emitted: false, reason: 'caption-status' };
  }
  const al = await scorer.align(src.caption, tgt.caption);
  const counts = { enSentences: al.en.sentences.length, zhSentences: al.zh.sentences.length };
  if (al.refused) return { ...base, ...unscored, ...counts, emitted: false, reason: 'caption-too-long' };
  if (!al.pairs.length) return { ...base, ...unscored, ...counts, emitted: false, reason: 'no-sentences' };
  const imageOk = cand.inliers >= t.minInliers[cand.verifiedBy] && cand.imageScore >= t.minImageScore;
  // the Chinese length filter counts the words of the caption's sentences (credits and datelines are not text)
  const filter = filterReason(al, () => scorer.chineseWordCount(al.zh.sentences.map((x) => x.text).join('')), t);
  const choice = chooseSentencePairs(al, t);
  const sentencePairs: SentencePairDecision[] = choice.pairs.map((p, k) => ({
    enFirst: p.enSpan[0], enLast: p.enSpan[1], zhFirst: p.zhSpan[0], zhLast: p.zhSpan[1], en: p.en, zh: p.zh,
    emitted: imageOk && !filter && choice.emitted[k]!,
    level: p.level, c: p.c, fc: p.fc, fe: p.fe, fl: p.fl, fcov: p.fcov,
  }));
  const emitted = sentencePairs.some((p) => p.emitted);
  // the caption pair carries its emitted pair's scores (the best one), else its best aligned pair's
  const best = bestOf(choice.pairs.filter((_, k) => choice.emitted[k])) ?? bestOf(al.pairs)!;
  return {
    ...base,
    ...counts,
    emitted,
    reason: emitted ? null : !imageOk ? 'image' : filter ?? (choice.refused === 'margin' ? 'level:margin' : 'level'),
    level: best.level, c: best.c, fc: best.fc, fe: best.fe, fl: best.fl, fcov: best.fcov, explain: best.explain,
    sentencePairs,
  };
}

/**
 * The decision for a caption pair whose scoring threw (a caption the segmenter or the lexicon cannot take): not
 * emitted, with the reason, so the run goes on and the pair is shown (review page, metrics) instead of stopping
 * the stage. Stored with the run's IDF size, so it is decided again only when its input changes (or pair --all).
 */
export function failedDecision(src: Item, tgt: Item, cand: PairCandidate, t: DecisionRules, err: unknown, logger?: Logger): PairDecision {
  // the bank or the store failing is not this pair's fault: the stage stops, the next run decides the pair
  if (isInfrastructureFailure(err)) throw err;
  const reason = `failed: scoring: ${errorMessage(err).split('\n')[0]!.slice(0, 300)}`;
  logger?.warn(`pair: source item ${src.id} / target item ${tgt.id}: ${reason}`);
  return {
    sourceItemId: src.id, targetItemId: tgt.id, en: src.caption, zh: tgt.caption,
    imageScore: cand.imageScore, inliers: cand.inliers, candidateRank: cand.rank, matchedAt: cand.matchedAt, idfDocs: t.idfDocs ?? null,
    level: null, c: null, fc: null, fe: null, fl: null, fcov: null, explain: null, sentencePairs: [],
    emitted: false, reason,
  };
}

const bestOf = (pairs: SentencePairScore[]): SentencePairScore | undefined => (pairs.length ? pairs.reduce((a, b) => (b.c > a.c ? b : a)) : undefined);

/** The seed paper's caption filters, as options of the decision (src/stages/crawl stores every caption). */
function filterReason(al: CaptionAlignment, zhWords: () => number, t: DecisionRules): string | null {
  const count = (s: CaptionAlignment['en']) => s.sentences.length + s.dropped + (s.truncated ? 1 : 0);
  if (t.maxSentences && (count(al.en) > t.maxSentences || count(al.zh) > t.maxSentences)) return 'filter:sentences';
  if (t.maxChineseWords && zhWords() > t.maxChineseWords) return 'filter:chinese-words';
  return null;
}

/** One source's caption pairs, decided: the targets it still has candidates for, and each decision. */
interface SourceDecisions {
  sourceId: number;
  keep: number[];
  decisions: PairDecision[];
}

/** Decides every candidate of one source (null when the source is gone); a decision that throws is a failed pair. */
async function decideSource(bank: Bank, sid: number, scorer: Scorer, t: DecisionRules, logger?: Logger): Promise<SourceDecisions | null> {
  const src = await bank.items.byId(sid);
  if (!src) return null;
  const pairs = bank.repo(PairsRepo);
  const decisions: PairDecision[] = [];
  const keep: number[] = [];
  for (const cand of await pairs.candidatesOf(sid)) {
    const tgt = await bank.items.byId(cand.targetItemId);
    if (!tgt) continue;
    keep.push(tgt.id);
    decisions.push(await decide(src, tgt, cand, scorer, t).catch((err: unknown) => failedDecision(src, tgt, cand, t, err, logger)));
  }
  return { sourceId: sid, keep, decisions };
}

/** Stores a batch of decisions in one transaction (a source's other pairs removed); returns the pairs removed. */
async function commitDecisions(bank: Bank, batch: SourceDecisions[]): Promise<number> {
  const now = new Date().toISOString();
  let removed = 0;
  await bank.transaction(async (tx) => {
    const p = tx.repo(PairsRepo);
    const sp = tx.repo(SentencePairsRepo);
    for (const b of batch) {
      removed += await p.removeOthers(b.sourceId, b.keep);
      for (const d of b.decisions) await sp.replace(await p.upsert(d, now), d.sourceItemId, d.targetItemId, d.sentencePairs ?? []);
    }
  });
  return removed;
}

/** Counts one source's decisions into the summary. */
function tally(summary: PairingSummary, b: SourceDecisions): void {
  summary.sources++;
  for (const d of b.decisions) {
    summary.decided++;
    if (d.emitted) {
      summary.emitted++;
      summary.byLevel[d.level!]++;
      summary.sentencePairs += (d.sentencePairs ?? []).filter((x) => x.emitted).length;
    } else if (d.reason?.startsWith('failed:')) summary.failed++;
    else if (d.reason === 'caption-status' || d.reason === 'caption-too-long' || d.reason === 'no-sentences') summary.notEmitted.caption++;
    else if (d.reason === 'image') summary.notEmitted.image++;
    else if (d.reason?.startsWith('filter:')) summary.notEmitted.filter++;
    else summary.notEmitted.level++;
  }
}

export async function runPairing(bank: Bank, config: Config, opts: PairingOptions = {}): Promise<PairingSummary> {
  const summary = emptyPairingSummary();
  const pairs = bank.repo(PairsRepo);
  let scorer = opts.scorer;
  if (!scorer) {
    // the IDF weights learn from every caption that arrived since the last run, before scoring
    const { createScorer, updateIdf } = await import('../../lib/comparability/index.js');
    await updateIdf(bank, config, { signal: opts.signal });
    scorer = await createScorer(config, { bank, dataDir: bank.dataDir });
  }
  const idfDocs = scorer.idfDocs ?? 0;
  const t = rulesOf(config, opts.minLevel, idfDocs);
  // pairs scored with an IDF table this much smaller are re-decided (their C may have moved across a threshold)
  const staleBelow = idfDocs / (1 + config.export.rescoreDrift);
  const batchSize = opts.batchSize ?? 200;
  for await (const ids of walkIds((after) => pairs.pendingSources(after, batchSize, opts.all, staleBelow), opts)) {
    // score outside the write transaction, then commit the batch at once
    const batch: SourceDecisions[] = [];
    for (const sid of ids) {
      const decided = await decideSource(bank, sid, scorer, t, opts.logger);
      if (decided) batch.push(decided);
    }
    summary.removed += await commitDecisions(bank, batch);
    for (const b of batch) tally(summary, b);
    opts.progress?.tick(batch.length);
  }
  summary.aborted = opts.signal?.aborted === true;
  if (!summary.aborted && !opts.idRange) summary.removed += await bank.transaction((tx) => tx.repo(PairsRepo).sweepOrphans());
  opts.logger?.info(
    `pair: ${summary.sources} sources, ${summary.decided} candidates decided, ${summary.emitted} caption pairs emitted ` +
      `(par ${summary.byLevel.par}, com ${summary.byLevel.com}, pse ${summary.byLevel.pse}) holding ${summary.sentencePairs} sentence pairs`,
  );
  return summary;
}
