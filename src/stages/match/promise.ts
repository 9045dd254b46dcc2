// How promising a plain search's shortlist is for the wide-baseline stages (views, archive matching), counted in the
// query's keypoints so that the gate means the same whatever the index's vote scale.
import type { DirectVotes, Hit } from '../../lib/image-index/index.js';

/**
 * How many of the query's keypoints vote for its shortlist's three most-voted images: their votes divided by the
 * weight an average keypoint of the query votes with (the votes an exact copy would get, counted in the same scan,
 * over the keypoints searched). Views and dense views of both photos find what the plain search could not verify
 * where the photos share a rigid, textured scene (a facade, a monument, a street), and such a photo shares many
 * near-identical descriptors with that place's other photos; a photo of people, animals or open landscape without a
 * counterpart shares few. A vote's weight is the index's, not the photo's: it falls as a bucket fills (ln(1 +
 * lsh.maxBucket / size)), so the same photo gets fewer votes in a larger bank (1.8 per keypoint among
 * mining-flickr8k's 420 targets, 3.3 among retrieval-scenes' ~120), and issue 35's one table gave fewer than the
 * 8-table index; counted in keypoints, the evidence does not move with them. 0 when no keypoint could vote.
 */
export function shortlistPromise(v: DirectVotes): number {
  if (!v.burst) return promiseOf(shortlistVotes(v));
  if (!(v.copy > 0) || !(v.keypoints > 0)) return 0;
  // the three most-voted images' votes with each keypoint's part divided by its burst (round 7), in keypoints
  const burst = v.burst;
  const top = v.votes.map((_, i) => i).sort((a, b) => v.votes[b]! - v.votes[a]! || a - b).slice(0, 3);
  return promiseOf(top.map((i) => (burst[i]! * v.keypoints) / v.copy));
}

/** The shortlist's three most-voted images' votes, each counted in the query's keypoints, best first (empty when no
 *  keypoint could vote). Counted in keypoints, the votes of one query on several shards of the index compare. */
export function shortlistVotes(v: DirectVotes): number[] {
  if (!(v.copy > 0) || !(v.keypoints > 0)) return [];
  return [...v.votes].sort((a, b) => b - a).slice(0, 3).map((x) => (x * v.keypoints) / v.copy);
}

/** The promise of the three most-voted images among these votes in keypoints (one shard's, or several shards'). */
export function promiseOf(votes: number[]): number {
  return [...votes].sort((a, b) => b - a).slice(0, 3).reduce((a, x) => a + x, 0);
}

/**
 * Whether a plain search that found nothing confident verified a target all the same (score > 0: a model with
 * match.minInliers inliers, under match.views.confidence, perhaps under match.minScore): the best evidence a search
 * has, whatever its votes. A low-textured copy has too few keypoints to gather a promising shortlist or to score
 * (issue 35 round 9: retrieval-smvs s0143, 110 keypoints, promise 5.8, 13 inliers of 15 re-matched, score 0.075).
 */
export function verifiedBelow(hits: readonly Pick<Hit, 'score'>[]): boolean {
  return hits.some(isVerified);
}

/** A hit that verified (a model of at least match.minInliers inliers scores above 0; an unverified shortlisted image
 *  scores 0): the one predicate of verifiedBelow and of archive matching's verified candidates (archiveCandidates). */
export function isVerified(h: Pick<Hit, 'score'>): boolean {
  return h.score > 0;
}
