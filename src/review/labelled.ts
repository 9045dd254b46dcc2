// Linguists' judgements as labelled pairs for calibration (`calibrate --from-reviews`): only a level the linguist
// set is a label. A verdict alone is not evidence of the level: an accept says "keep this pair", not "this is com
// rather than par", and a reject may mean a bad image match or a bad caption as well as an unrelated text; learning
// thresholds from them would feed the machine's own levels back into its fit.
import { ReviewsRepo, type Bank, type LabelledPair, type Level } from '../bank/index.js';

export interface ReviewLabel extends LabelledPair {
  /** The level calibration should learn for this pair. */
  label: Level;
}

export function labelOf(p: LabelledPair): Level | null {
  return p.level ?? null;
}

/** Every judgement that set a level, with that level as its label, in review order. */
export async function labelledPairsFromReviews(bank: Bank): Promise<ReviewLabel[]> {
  const out: ReviewLabel[] = [];
  for await (const p of bank.repo(ReviewsRepo).labelled()) {
    const label = labelOf(p);
    if (label && p.en.trim() && p.zh.trim()) out.push({ ...p, label });
  }
  return out;
}
