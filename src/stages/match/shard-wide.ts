// The wide-baseline stages of a sharded window (issue 35 round 6), once per picture as one process runs them: each
// shard's wide job only votes on its shard, for the picture's dense query (archive matching) or for its views search's
// queries (the dense query alone, the plain keypoints with the views'), with no verification and no plain search again;
// the job that completes the window's wide phase ranks every shard's votes as one index would (exact votes,
// global.ts), verifies the plain search once more from the shards' plain votes (which the decision kept), and then:
// - archive matching: takes the plain ranking and the dense one in turn and compares those candidates' dense views with
//   the query's once (archiveMatch; the targets' dense views come from the bank, no index needed);
// - the views search: verifies each pass's one shortlist and merges the hits as searchProgressive does.
// Round 5 ran both on every shard against that shard's own shortlist: one comparison per shard, other candidates than
// one index's. (Two-sided views, match.views.targetViews > 0, still run on each shard: run.ts.)
import type { CandidateInput, MatchPartial, PartialWide, ShardPass } from '../../bank/index.js';
import { FeaturesRepo, isInfrastructureFailure } from '../../bank/index.js';
import { concatFeatures, mergeHits, prepare, searchParams, shardVotePass, type Features, type Hit } from '../../lib/image-index/index.js';
import { errorMessage } from '../../util/errors.js';
import { archiveCandidates, archiveMatch, archiveParams, archiveVerifyParams, withArchiveHits } from './archive.js';
import { publishSourceCost, type MatchContext } from './context.js';
import { publishSourceRanking } from './rankings.js';
import { GlobalVerifier, globalShortlist, passKeypoints, votedEntries, type GlobalPlain } from './global.js';
import { candidatesOf, greyLoader, rescaleCandidate, searchWindow } from './rank.js';
import { viewEvidence, viewParams, viewPassParams, viewQueries } from './views.js';
import { archiveOnly } from './shards.js';

/**
 * A shard's part of a picture's archive matching: its dense query (the plain keypoints and the dense views' together,
 * as archiveRank searches them) voted on this shard, with what its keypoints did (exact votes). Null when the image
 * cannot be read at its features' size (one process then skips archive matching too).
 */
export async function denseOnShard(run: MatchContext, sha: string, q: Features, at: number | undefined): Promise<ShardPass | null> {
  const g = await greyLoader(run.config, () => run.bank.images.read(sha))();
  if (!g || g.width !== q.width || g.height !== q.height) return null;
  const qd = await run.dense.query(sha, q, g);
  const p = { ...searchParams(run.config), mirror: false, recollide: 0, window: searchWindow(run.handle, run.config, at) };
  const v = shardVotePass(run.handle.index, prepare(concatFeatures(q, [q, qd])), p, false, { maxQuery: Infinity });
  return { entries: votedEntries(run.handle, v, false), keypoints: passKeypoints(v) };
}

/** The views search's settings for the decision's choice: 'dense', the dense query alone (no tilted views), as wide.ts
 *  runs it. */
const modeParams = (run: MatchContext, views: 'full' | 'dense') => {
  const vp = viewParams(run.config);
  return views === 'full' ? vp : { ...vp, tilts: [] };
};

/** The views search's queries of a picture (the dense query, the plain keypoints with the views'), computed from its
 *  image (deterministic: each shard and the merge compute the same), under the stages' views ('dense': no tilts). */
async function viewQueriesOf(run: MatchContext, sha: string, q: Features, views: 'full' | 'dense'): Promise<{ dense: Features | null; views: Features | null } | null> {
  const g = await greyLoader(run.config, () => run.bank.images.read(sha))();
  if (!g || g.width !== q.width || g.height !== q.height) return null;
  const { dq, vf } = await viewQueries(q, g, modeParams(run, views), run.config.sift, run.views.run);
  return { dense: dq, views: vf.views.length ? concatFeatures(q, [q, concatFeatures(q, vf.views)]) : null };
}

/**
 * A shard's part of a picture's views search: each pass's query voted on this shard (with the collisions the merge
 * verifies). Null when the image cannot be read at its features' size (one process then runs no views either).
 */
export async function viewsOnShard(run: MatchContext, sha: string, q: Features, at: number | undefined, views: 'full' | 'dense'): Promise<NonNullable<PartialWide['views']> | null> {
  const qs = await viewQueriesOf(run, sha, q, views);
  if (!qs) return null;
  const p = { ...searchParams(run.config), window: searchWindow(run.handle, run.config, at) };
  const vp = viewParams(run.config);
  const vote = (f: Features, pass: 'dense' | 'views', max?: number) => {
    const v = shardVotePass(run.handle.index, prepare(f), viewPassParams(p, vp, pass), false, { maxQuery: max });
    return { entries: votedEntries(run.handle, v), keypoints: passKeypoints(v) };
  };
  return { dense: qs.dense ? vote(qs.dense, 'dense') : undefined, views: qs.views ? vote(qs.views, 'views', Infinity) : undefined };
}

/**
 * The candidates of a window's sources given archive matching or the views search alone, whose every shard has voted
 * (`bySource`: each one's parts), in source id order: the searched source's picture matched once, the others showing it
 * taking its candidates in their own pixels (as wide.ts's replace). Undefined for a source whose parts lack what it
 * takes (a partial of before round 6): the merge then takes the shards' candidates as they are.
 */
export async function wideOnce(run: MatchContext, bySource: Map<number, MatchPartial[]>): Promise<Map<number, CandidateInput[] | undefined>> {
  const verifier = new GlobalVerifier(run.bank, run.config, run.top, (id, c) => run.inWindow(id, c));
  const pictures = new Map<string, { cand: CandidateInput[]; width: number; failed?: string }>();
  const out = new Map<number, CandidateInput[] | undefined>();
  for (const id of [...bySource.keys()].sort((a, b) => a - b)) {
    const parts = bySource.get(id)!;
    const w = parts[0]!.wide!;
    const q = await run.bank.repo(FeaturesRepo).get(parts[0]!.imageSha256);
    if (!q) {
      out.set(id, undefined);
      continue;
    }
    const width = q.width / q.scale;
    const seen = pictures.get(w.picture);
    if (!w.searched || seen) {
      if (seen?.failed) await failed(run, id, seen.failed);
      out.set(id, seen ? await run.inWindow(id, seen.cand.map((c) => rescaleCandidate(c, width / seen.width, 1))) : undefined);
      continue;
    }
    const plain = await verifier.verify(id, parts[0]!.imageSha256, parts);
    if (!plain?.hits || !plain.raw) {
      out.set(id, undefined);
      continue;
    }
    const r = archiveOnly(w.stages) ? await matchPicture(run, verifier, id, parts, q, plain) : await viewPicture(run, verifier, id, parts, q, plain);
    if (r.failed) await failed(run, id, r.failed);
    pictures.set(w.picture, { ...r, width });
    out.set(id, await run.inWindow(id, r.cand));
  }
  return out;
}

/** One picture's archive matching over every shard's dense votes; its candidates (before lsh.window): the plain
 *  search's where archive matching verified nothing or could not run, and where it failed (with the reason: its
 *  sources are marked failed, as wide.ts marks them). */
async function matchPicture(run: MatchContext, verifier: GlobalVerifier, id: number, parts: MatchPartial[], q: Features, plain: GlobalPlain): Promise<{ cand: CandidateInput[]; failed?: string }> {
  const dense = parts.map((p) => p.wide?.dense);
  const sha = parts[0]!.imageSha256;
  const kept = { cand: plain.raw! };
  if (!plain.hits!.length || dense.some((d) => !d)) return kept;
  const c = run.config;
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  try {
    const g = await greyLoader(c, () => run.bank.images.read(sha))();
    if (!g || g.width !== q.width || g.height !== q.height) return kept;
    const qd = await run.dense.query(sha, q, g);
    const a = archiveParams(c);
    const ranked = globalShortlist(dense.map((d) => d!.entries), dense.map((d) => d!.keypoints), searchParams(c).shortlist, searchParams(c).voteSigma);
    const cands = archiveCandidates(plain.hits!, plain.ranking!, ranked.entries.map((e) => verifier.slotOf(e)), Math.max(a.candidates, a.preselect), c.match.views.archive.verified);
    const targetDense = async (slot: number) => {
      const t = verifier.target(slot);
      const f = t && (await verifier.load(slot));
      return t && f ? run.dense.get(t.sha, f.f) : undefined;
    };
    const targetPlain = async (slot: number) => (verifier.target(slot) ? (await verifier.load(slot))?.f : undefined);
    const archive = await archiveMatch(qd, cands, a, archiveVerifyParams(searchParams(c), a, c.match.views.poolRadius), targetDense, c.match.views.confidence, targetPlain);
    publishSourceRanking(id, 'archive', () => archive.compared.map((x) => [verifier.target(x.slot)?.itemId ?? -1, x.votes]));
    run.summary.archived++;
    const cand = archive.hits.length ? await candidatesOf(verifier.hitTargets(), c, q, withArchiveHits(plain.hits!, archive.hits), run.top) : kept.cand;
    publishSourceCost(id, 'archive', c0, w0, cand.length);
    return { cand };
  } catch (err) {
    if (isInfrastructureFailure(err)) throw err;
    return { ...kept, failed: `archive: ${errorMessage(err)}` };
  }
}

/**
 * One picture's views search over every shard's votes (searchProgressive's passes: each pass's one shortlist verified,
 * the hits merged with the plain search's, views counting only through verified evidence); its candidates (before
 * lsh.window): the plain search's where the views could not run.
 */
async function viewPicture(run: MatchContext, verifier: GlobalVerifier, id: number, parts: MatchPartial[], q: Features, plain: GlobalPlain): Promise<{ cand: CandidateInput[]; failed?: string }> {
  const c = run.config;
  const mode = parts[0]!.wide!.stages!.views!;
  const vp = modeParams(run, mode);
  const kept = { cand: plain.raw! };
  const onShards = parts.map((p) => p.wide?.views);
  if (onShards.some((v) => !v) || viewEvidence({ hits: plain.hits! }, vp) === null) return kept;
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  try {
    const qs = await viewQueriesOf(run, parts[0]!.imageSha256, q, mode);
    if (!qs) return kept;
    const p = searchParams(c);
    let hits: Hit[] = plain.hits!;
    for (const pass of ['dense', 'views'] as const) {
      const f = qs[pass];
      if (!f) continue;
      const lists = onShards.map((v) => v![pass]);
      if (lists.some((l) => !l)) continue;
      const ranked = globalShortlist(lists.map((l) => l!.entries), lists.map((l) => l!.keypoints), p.shortlist, p.voteSigma);
      const verified = await verifier.verifyPass(prepare(f), ranked, false, viewPassParams(p, vp, pass), pass === 'views' ? Infinity : undefined);
      hits = mergeHits(hits, mergeHits(verified, [], false), true);
    }
    run.summary.viewed++;
    const cand = await candidatesOf(verifier.hitTargets(), c, q, hits, run.top);
    publishSourceCost(id, 'views', c0, w0, cand.length);
    return { cand };
  } catch (err) {
    if (isInfrastructureFailure(err)) throw err;
    return { ...kept, failed: `views: ${errorMessage(err)}` };
  }
}

/** A source whose picture's archive matching or views search threw: marked failed with the reason (its candidates so far kept). */
async function failed(run: MatchContext, id: number, reason: string): Promise<void> {
  run.opts.logger?.warn(`match: source item ${id} failed: ${reason}`);
  await run.bank.transaction((tx) => tx.items.setStatus(id, 'failed', reason));
  run.summary.failed++;
}
