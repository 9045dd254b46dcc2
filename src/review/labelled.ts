// Linguists' judgements as labelled pairs for calibration (`calibrate --from-reviews`). A level the linguist set is
// the label. Otherwise the verdict implies one: rejected → inc (not a pair of the corpus); accepted → the machine's
// level when it is at least the export floor (the linguist agreed), else the floor itself (the machine under-rated
// a pair the linguist wants in the corpus).
import { LEVEL_RANK, ReviewsRepo, type Bank, type LabelledPair, type PairLevel } from '../bank/index.js';

export interface ReviewLabel extends LabelledPair {
  /** The level calibration should learn for this pair. */
  label: PairLevel;
}

export function labelOf(p: LabelledPair, minLevel: PairLevel = 'com'): PairLevel | null {
  if (p.level) return p.level;
  if (p.verdict === 'rejected') return 'inc';
  if (p.verdict === 'accepted') return p.machineLevel && LEVEL_RANK[p.machineLevel] >= LEVEL_RANK[minLevel] ? p.machineLevel : minLevel;
  return null;
}

/** Every judged pair with its label, in review order. `minLevel`: the export floor (config export.minLevel). */
export function labelledPairsFromReviews(bank: Bank, opts: { minLevel?: PairLevel } = {}): ReviewLabel[] {
  const out: ReviewLabel[] = [];
  for (const p of bank.repo(ReviewsRepo).labelled()) {
    const label = labelOf(p, opts.minLevel);
    if (label && p.en.trim() && p.zh.trim()) out.push({ ...p, label });
  }
  return out;
}
