// Which pictures of a window get the wide-baseline stages (wide.ts runs them): the choices of one process's window,
// and the same decision for a sharded window, taken once over every shard's plain search (shards.ts).
import type { PartialWide } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';

/** What the choice of a picture for the wide-baseline stages reads of its plain search. */
interface Hopeful {
  id: number;
  evidence: number | null;
  promise: number;
  /** Its plain search verified a target without being confident (verifiedBelow). */
  verified?: boolean;
}

/** The most promising shortlist first; equal promise by source id (the window's order, the same in every process). */
const byPromise = (a: Hopeful, b: Hopeful) => b.promise - a.promise || a.id - b.id;

/**
 * Views only where they can pay: of the pictures whose plain search was not confident (`list`), those that found a
 * plausible candidate (viewEvidence) and a promising shortlist (promise.ts: at least match.views.minVotingKeypoints);
 * match.views.budget of the window's `count` (at least one) get the views search, the most promising first; the next
 * match.views.denseBudget get the dense query alone (about two plain searches, not fifteen).
 */
export function chooseViews<T extends Hopeful>(list: T[], count: number, v: Config['match']['views']): { u: T; dense: boolean }[] {
  const hopeful = list.filter((u) => u.evidence !== null && u.promise >= v.minVotingKeypoints).sort(byPromise);
  const budget = hopeful.length ? Math.max(1, Math.floor(v.budget * count)) : 0;
  const denseBudget = hopeful.length && v.denseKeypoints ? Math.floor(v.denseBudget * count) : 0;
  return hopeful.slice(0, Math.max(budget, denseBudget)).map((u, k) => ({ u, dense: k >= budget }));
}

/**
 * Archive matching where it can pay: of the pictures still unconfident (`list`), those whose shortlist was promising
 * (at least match.views.minVotingKeypoints) or, with match.views.archive.verified, whose plain search verified a target
 * (verifiedBelow: the target it compares first, archiveCandidates); match.views.archive.budget of the window's `count`
 * (at least one), the most promising first.
 */
export function chooseArchive<T extends Hopeful>(list: T[], count: number, c: Config): T[] {
  if (!c.match.views.archive.candidates) return [];
  const a = c.match.views.archive;
  const left = list.filter((u) => u.promise >= c.match.views.minVotingKeypoints || (a.verified && u.verified)).sort(byPromise);
  return left.slice(0, left.length ? Math.max(1, Math.floor(c.match.views.archive.budget * count)) : 0);
}

/**
 * The wide-baseline decision of a sharded window (issue 35), over each source's one search verified over every
 * shard's votes (global.ts): the pictures searched and not confident, with their evidence and promise (votes counted in
 * keypoints compare across shards); then the same choices as one process's window (chooseViews, chooseArchive). One
 * difference: one process offers archive matching to the pictures the views search left unconfident, which a shard
 * cannot know of the others: here archive matching is chosen on the plain searches (a shard whose own views search
 * turned confident skips it; with archive.views `none`, the default, a picture chosen for archive matching gets no
 * views). The stages of each chosen picture, by picture.
 */
export function decideWide(config: Config, bySource: Map<number, (Omit<Hopeful, 'id'> & { picture: string; searched: boolean; sure: boolean }) | null>, count: number): Map<string, NonNullable<PartialWide['stages']>> {
  const list: (Hopeful & { picture: string })[] = [];
  for (const [id, g] of bySource) if (g && g.searched && !g.sure) list.push({ id, picture: g.picture, evidence: g.evidence, promise: g.promise, verified: g.verified });
  const out = new Map<string, NonNullable<PartialWide['stages']>>();
  const archive = chooseArchive(list, count, config);
  const subsumed = new Set(config.match.views.archive.views === 'none' ? archive.map((u) => u.picture) : []);
  for (const { u, dense } of chooseViews(list.filter((u) => !subsumed.has(u.picture)), count, config.match.views)) out.set(u.picture, { views: dense ? 'dense' : 'full' });
  for (const u of archive) out.set(u.picture, { ...out.get(u.picture), archive: true });
  return out;
}
