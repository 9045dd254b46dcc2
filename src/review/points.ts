// The verified keypoint matches of a pair, for the lines of the pair view: read from the lsh-index layer's
// candidates (migration 3) when it stores them. Until then no line is drawn and the page says why.
import type { Bank } from '../bank/index.js';
import type { MatchPoints } from './svg.js';

export function matchPointsOf(bank: Bank, sourceItemId: number, targetItemId: number): { points: MatchPoints | null; note: string } {
  void bank;
  void sourceItemId;
  void targetItemId;
  return { points: null, note: 'this build has no stored keypoint matches (the lsh-index candidates table is not part of it).' };
}
