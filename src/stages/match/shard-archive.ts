// Archive matching of a sharded window (issue 35 round 6), once per picture as one process does it: each shard's wide
// job only votes for the picture's dense query on its shard (votes, no verification: the dense views of the query are
// computed once and kept in the bank, DenseViewsSource.query); the job that completes the window's wide phase ranks
// every shard's dense votes as one index would (exact votes, global.ts), fuses that ranking with the plain search's
// (verified once more over every shard's plain votes, which the decision kept), and compares the fused candidates'
// dense views with the query's once (archiveMatch; the targets' dense views come from the bank, no index needed).
// Round 5 ran archive matching on every shard against that shard's candidates: one comparison per shard, and other
// candidates than one index's.
import type { CandidateInput, MatchPartial, ShardPass } from '../../bank/index.js';
import { FeaturesRepo, isInfrastructureFailure } from '../../bank/index.js';
import { concatFeatures, prepare, searchParams, shardVotePass, type Features } from '../../lib/image-index/index.js';
import { errorMessage } from '../../util/errors.js';
import { archiveCandidates, archiveMatch, archiveParams, archiveVerifyParams, withArchiveHits } from './archive.js';
import { publishSourceCost, type MatchContext } from './context.js';
import { publishSourceRanking } from './rankings.js';
import { GlobalVerifier, globalShortlist, passKeypoints, votedEntries, type GlobalPlain } from './global.js';
import { candidatesOf, greyLoader, rescaleCandidate, searchWindow } from './rank.js';

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
  const v = shardVotePass(run.handle.index, prepare(concatFeatures(q, [q, qd])), p, false, Infinity);
  return { entries: votedEntries(run.handle, v, false), keypoints: passKeypoints(v) };
}

/**
 * The candidates of a window's archive-only sources whose every shard has voted (`bySource`: each one's parts), in
 * source id order: the searched source's picture matched once, the others showing it taking its candidates in their
 * own pixels (as wide.ts's replace). Undefined for a source whose parts lack what it takes (a partial of before round 6):
 * the merge then takes the shards' candidates as they are.
 */
export async function archiveOnce(run: MatchContext, bySource: Map<number, MatchPartial[]>): Promise<Map<number, CandidateInput[] | undefined>> {
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
    const r = await matchPicture(run, verifier, id, parts, q, plain);
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
    const cands = archiveCandidates(plain.hits!, plain.ranking!, ranked.entries.map((e) => verifier.slotOf(e)), a.candidates);
    publishSourceRanking(id, 'archive', () => cands.map((x) => [verifier.target(x.slot)?.itemId ?? -1, x.votes]));
    const targetDense = async (slot: number) => {
      const t = verifier.target(slot);
      const f = t && (await verifier.load(slot));
      return t && f ? run.dense.get(t.sha, f.f) : undefined;
    };
    const archive = await archiveMatch(qd, cands, a, archiveVerifyParams(searchParams(c), a, c.match.views.poolRadius), targetDense, c.match.views.confidence);
    run.summary.archived++;
    const cand = archive.hits.length ? await candidatesOf(verifier.hitTargets(), c, q, withArchiveHits(plain.hits!, archive.hits), run.top) : kept.cand;
    publishSourceCost(id, 'archive', c0, w0, cand.length);
    return { cand };
  } catch (err) {
    if (isInfrastructureFailure(err)) throw err;
    return { ...kept, failed: `archive: ${errorMessage(err)}` };
  }
}

/** A source whose picture's archive matching threw: marked failed with the reason (its candidates so far kept). */
async function failed(run: MatchContext, id: number, reason: string): Promise<void> {
  run.opts.logger?.warn(`match: source item ${id} failed: ${reason}`);
  await run.bank.transaction((tx) => tx.items.setStatus(id, 'failed', reason));
  run.summary.failed++;
}
