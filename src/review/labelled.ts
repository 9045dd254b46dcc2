// Linguists' judgements as labelled pairs for calibration (`calibrate --from-reviews`): each judged pair with the
// level the linguist gave, else the level its verdict implies (rejected → inc; accepted keeps the machine's level
// when it is at least pse, else pse), and the machine's scores when the pair is decided.
import { ReviewsRepo, type Bank, type LabelledPair, type PairLevel } from '../bank/index.js';

export interface ReviewLabel extends LabelledPair {
  /** The level calibration should learn for this pair. */
  label: PairLevel;
}

export function labelOf(p: LabelledPair): PairLevel | null {
  if (p.level) return p.level;
  if (p.verdict === 'rejected') return 'inc';
  if (p.verdict === 'accepted') return p.machineLevel && p.machineLevel !== 'inc' ? p.machineLevel : 'pse';
  return null;
}

export function labelledPairsFromReviews(bank: Bank): ReviewLabel[] {
  const out: ReviewLabel[] = [];
  for (const p of bank.repo(ReviewsRepo).labelled()) {
    const label = labelOf(p);
    if (label) out.push({ ...p, label });
  }
  return out;
}
