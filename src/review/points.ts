// The verified keypoint matches of a pair, for the lines of the pair view: the inlier point pairs the match
// stage stores with each candidate (CandidatesRepo, migration 3: float32 xs, ys, xt, yt in original, EXIF-oriented
// pixels of each image). Ratio-test matches that RANSAC rejected are not stored, so only inliers are drawn.
import { CandidatesRepo, type Bank } from '../bank/index.js';
import type { MatchPoints } from './svg.js';

export async function matchPointsOf(bank: Bank, sourceItemId: number, targetItemId: number): Promise<{ points: MatchPoints | null; note: string }> {
  const cand = (await bank.repo(CandidatesRepo).listFor(sourceItemId)).find((c) => c.targetItemId === targetItemId);
  if (!cand) return { points: null, note: 'the image-matching candidate of this pair is no longer stored (the source was matched again since).' };
  if (!cand.pairs || cand.pairs.length < 4) return { points: null, note: 'no inlier points are stored for this candidate.' };
  const inliers: MatchPoints['inliers'] = [];
  for (let i = 0; i + 3 < cand.pairs.length; i += 4) inliers.push([cand.pairs[i]!, cand.pairs[i + 1]!, cand.pairs[i + 2]!, cand.pairs[i + 3]!]);
  return { points: { inliers }, note: '' };
}
