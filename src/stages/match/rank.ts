// Ranking one query against the index, as `match` and `search` store and show it: the verified hits turned into
// candidates in original pixels (toOriginal, every target item showing the picture), the search with the synthesised
// views where they run, archive matching of a search that stayed unconfident, and the views' threads (ViewPool).
import type { Bank, BankScope } from '../../bank/index.js';
import { TwinsRepo, asStored, isInfrastructureFailure, type CandidateInput } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import { decodeGrey } from '../../lib/sift/index.js';
import { siftParams } from '../../lib/sift/index.js';
import { SiftPool, resolveThreads } from '../../lib/sift/index.js';
import type { Logger } from '../../util/log.js';
import type { Features } from '../../lib/image-index/index.js';
import { search, type DirectVotes, type Hit, type SearchParams } from '../../lib/image-index/index.js';
import { searchParams, type IndexHandle } from '../../lib/image-index/index.js';
import { errorMessage } from '../../util/errors.js';
import { inThreadViews, searchProgressive, viewParams, viewsKey, withOwnViews, type GreyImage, type TargetViews, type ViewRunner } from './views.js';
import { DenseViewsSource, archiveCandidates, archiveMatch, denseSiftParams, archiveParams, archiveVerifyParams, denseViews, inlierFloor, verifiedBy, withArchiveHits, type ArchiveResult } from './archive.js';

/**
 * One SiftPool for the synthesised views of a whole run (match) or search, started the first time a query needs
 * views (a run whose queries are all confident starts no worker), stopped by close(). With one thread (config
 * sift.threads: 1, or one core) the views run in the calling thread, as the pool does.
 */
export class ViewPool {
  private pool: SiftPool | undefined;
  private closed = false;
  constructor(private config: Config, private threads?: number, private logger?: Logger) {}

  /**
   * The views on the pool; should the workers fail (a crash, not bad input), in this thread: the same features.
   * After close(), in this thread (no new workers).
   */
  readonly run: ViewRunner = async (g, specs, sift, keypointsPerView, maxSide) => {
    if (this.closed) return inThreadViews(g, specs, sift, keypointsPerView, maxSide);
    this.pool ??= new SiftPool(this.config.sift, resolveThreads(this.threads, this.config.sift.threads));
    try {
      return await this.pool.views(g, specs, { sift, keypointsPerView, maxSide });
    } catch (err) {
      if (err instanceof RangeError) throw err;
      this.logger?.warn(`match: views on worker threads failed (${errorMessage(err)}), computing them in this thread`);
      return inThreadViews(g, specs, sift, keypointsPerView, maxSide);
    }
  };

  /** Whether workers were started (a query needed views). */
  get started(): boolean {
    return this.pool !== undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    const p = this.pool;
    this.pool = undefined;
    await p?.close();
  }
}

/** A hit in original pixels of both images: homography (source px -> target px), fundamental matrix
 *  (x_targetᵀ F x_source = 0) and inlier pairs. */
export function toOriginal(h: Hit, q: Features, t: Features): { homography: number[] | null; fundamental: number[] | null; pairs: Float32Array } {
  const pairs = new Float32Array(h.pairs.length);
  for (let i = 0; i < h.pairs.length; i += 4) {
    const qx = h.mirrored ? q.width - 1 - h.pairs[i]! : h.pairs[i]!;
    pairs[i] = qx / q.scale;
    pairs[i + 1] = h.pairs[i + 1]! / q.scale;
    pairs[i + 2] = h.pairs[i + 2]! / t.scale;
    pairs[i + 3] = h.pairs[i + 3]! / t.scale;
  }
  const mul = (a: number[], b: number[]) =>
    Array.from({ length: 9 }, (_, k) => {
      const i = Math.floor(k / 3);
      const j = k % 3;
      return a[i * 3]! * b[j]! + a[i * 3 + 1]! * b[3 + j]! + a[i * 3 + 2]! * b[6 + j]!;
    });
  // M: the mirror in detection pixels (identity when not mirrored); Sq, St: original -> detection pixels.
  const M = h.mirrored ? [-1, 0, q.width - 1, 0, 1, 0, 0, 0, 1] : [1, 0, 0, 0, 1, 0, 0, 0, 1];
  const Sq = [q.scale, 0, 0, 0, q.scale, 0, 0, 0, 1];
  const St = [t.scale, 0, 0, 0, t.scale, 0, 0, 0, 1];
  const StInv = [1 / t.scale, 0, 0, 0, 1 / t.scale, 0, 0, 0, 1];
  let homography: number[] | null = null;
  if (h.H) {
    // H_orig = St^-1 * H * M * Sq
    const R = mul(mul(mul(StInv, Array.from(h.H)), M), Sq);
    const s = R[8]!;
    homography = R.map((v) => Number((v / s).toPrecision(8)));
  }
  let fundamental: number[] | null = null;
  if (h.model === 'fundamental' && h.F) {
    // x_t,det = St x_t, x_q,det = M Sq x_q: F_orig = Stᵀ F M Sq (St is diagonal), scaled to unit norm.
    const R = mul(mul(mul(St, Array.from(h.F)), M), Sq);
    const n = Math.hypot(...R) || 1;
    fundamental = R.map((v) => Number((v / n).toPrecision(8)));
  }
  return { homography, fundamental, pairs };
}

/**
 * A candidate moved to other pixels of the same pictures: source px multiplied by ks, target px by kt (a
 * near-identical copy of either picture at another size).
 */
export function rescaleCandidate(c: CandidateInput, ks: number, kt: number): CandidateInput {
  let homography = c.homography;
  if (homography) {
    // H' = diag(kt, kt, 1) H diag(1/ks, 1/ks, 1), normalised as toOriginal does.
    const H = homography.map((v, i) => v * (i < 6 ? kt : 1) / (i % 3 < 2 ? ks : 1));
    homography = H.map((v) => Number((v / H[8]!).toPrecision(8)));
  }
  let fundamental = c.fundamental;
  if (fundamental) {
    // x_t'ᵀ F' x_s' = 0 with x' = k x: F' = diag(1/kt, 1/kt, 1) F diag(1/ks, 1/ks, 1), unit norm as toOriginal.
    const F = fundamental.map((v, i) => (v * (i < 6 ? 1 / kt : 1)) * (i % 3 < 2 ? 1 / ks : 1));
    const n = Math.hypot(...F) || 1;
    fundamental = F.map((v) => Number((v / n).toPrecision(8)));
  }
  let pairs = c.pairs;
  if (pairs) {
    pairs = new Float32Array(pairs);
    for (let i = 0; i < pairs.length; i += 4) {
      pairs[i] *= ks;
      pairs[i + 1] *= ks;
      pairs[i + 2] *= kt;
      pairs[i + 3] *= kt;
    }
  }
  return { ...c, homography, fundamental, pairs };
}

/** What candidatesOf reads of a hit's target: its item and image (by the hit's slot), its features, and the items
 *  showing the same picture (the bank's twins). An index handle, or the sharded search's one shortlist (global.ts). */
export interface HitTargets {
  slot(s: number): { itemId: number; sha: string } | undefined;
  load(s: number): Promise<{ f: Features } | undefined>;
  bank: Pick<BankScope, 'repo'>;
}

/** Whether the match stage stores a verified hit as a candidate: a score of at least match.minScore with its
 *  verification's inlier floor (match.minInliers; archive hits archive.minInliers, inlierFloor). The benchmarks count
 *  P@1 by it, as the CLI does. */
export function storable(config: Config, h: Pick<Hit, 'score' | 'inliers' | 'logNfa'>): boolean {
  return h.score > 0 && h.score >= config.match.minScore && h.inliers >= inlierFloor(config, h);
}

/**
 * The stored candidates of verified hits: those scoring at least match.minScore with match.minInliers inliers (an
 * archive hit: archive.minInliers, inlierFloor), best
 * first, at most `top` pictures, in original pixels; every other target item showing the same picture (the same
 * image, or a near-identical copy at another size) gets the candidate too, in its own pixels.
 */
export async function candidatesOf(handle: HitTargets, config: Config, q: Features, hits: Hit[], top: number): Promise<CandidateInput[]> {
  const cand: CandidateInput[] = [];
  const twins = handle.bank.repo(TwinsRepo);
  let ranked = 0;
  for (const h of hits) {
    if (ranked >= top) break;
    if (!storable(config, h)) continue;
    const info = handle.slot(h.slot);
    const t = await handle.load(h.slot);
    if (!info || !t) continue;
    const o = toOriginal(h, q, t.f);
    const c: CandidateInput = {
      targetItemId: info.itemId, rank: ++ranked, imageScore: Number(h.score.toFixed(4)), matches: h.matches, inliers: h.inliers,
      homography: o.homography, model: h.model ?? 'homography', fundamental: o.fundamental, mirrored: h.mirrored, pairs: o.pairs,
      verifiedBy: verifiedBy(h),
    };
    cand.push(c);
    const width = t.f.width / t.f.scale;
    for (const s of await twins.targetItemsShowing(info.sha)) {
      if (s.itemId !== info.itemId) cand.push(rescaleCandidate({ ...c, targetItemId: s.itemId }, 1, s.width ? s.width / width : 1));
    }
  }
  return cand;
}

export interface Ranked {
  cand: CandidateInput[];
  hits: Hit[];
  usedViews: boolean;
  /** viewEvidence of the plain search (null: views could not pay). */
  evidence: number | null;
  /** The plain search's direct-pass votes (the wide-baseline stages' promise and archive ranking). */
  votes: DirectVotes;
}

/**
 * Ranked candidates for query features: verified hits with a score above the threshold, best first.
 * grey: the query image at detection size, for the synthesised views (match.views); without it, the plain search only.
 * runViews: where the views are computed (a ViewPool's run for worker threads; default: this thread).
 */
export async function rankAgainstIndex(
  handle: IndexHandle,
  config: Config,
  q: Features,
  top: number,
  grey?: () => Promise<GreyImage | undefined>,
  runViews?: ViewRunner,
  allowViews?: (evidence: number) => boolean,
  /** When the source was harvested (epoch ms), for lsh.window: only targets within the window are shortlisted. */
  sourceAt?: number,
): Promise<Ranked> {
  const load = (s: number) => handle.load(s);
  const p = { ...searchParams(config), window: searchWindow(handle, config, sourceAt) };
  const r = grey
    ? await searchProgressive(handle.index, load, q, p, viewParams(config), config.sift, grey, runViews, allowViews, targetViewsOf(handle, config, runViews ?? inThreadViews))
    : { ...(await search(handle.index, load, q, p)), usedViews: false, evidence: null };
  return { cand: await candidatesOf(handle, config, q, r.hits, top), hits: r.hits, usedViews: r.usedViews, evidence: r.evidence, votes: r.votes };
}

/** Whether a search's hits hold nothing confident (match.views.confidence): what the wide-baseline stages are for. */
export function unconfident(config: Config, hits: Hit[]): boolean {
  return !hits.some((h) => h.score >= config.match.views.confidence);
}

/**
 * Archive matching of one query whose search stayed unconfident (archive.ts): its dense views, then its candidates,
 * `match.views.archive.candidates` of them, taken in turn (fuseRankings) from two rankings: `ranking`, its
 * plain search's direct pass by votes (not the mirror pass's nor the views', which vote for other things: a flipped
 * copy, synthesised views; their RANSAC inliers, 4-7 where only dense views of both sides verify, say nothing), and the
 * index's votes for its dense views (which put retrieval-wxbs's extreme-viewpoint targets first or second where the
 * plain votes ranked them 2nd-37th; the plain votes keep the 3D scenes' targets, which the dense votes rank lower);
 * each ranking's best are compared whatever the other says. Returns `hits` with each candidate it verified in place of its earlier hit
 * where it scores higher (or added), best first.
 */
export async function archiveRank(
  handle: IndexHandle,
  config: Config,
  q: Features,
  g: GreyImage,
  hits: Hit[],
  ranking: number[],
  runViews: ViewRunner,
  dense: DenseViewsSource,
  sourceAt?: number,
  /** The query's dense views from elsewhere (a sharded run: DenseViewsSource.query, computed once for all shards). */
  queryDense?: () => Promise<Features>,
): Promise<{ hits: Hit[]; archive: ArchiveResult; compared: { slot: number; votes: number }[] }> {
  const a = archiveParams(config);
  const sp = denseSiftParams(config, a);
  // the query's dense views as a sharded run reads them back from the bank (asStored: positions to 1/16 px), so that
  // one process and shards compare the same keypoints
  const qd = queryDense ? await queryDense() : asStored(await denseViews(g, q, a.maxTilt, a.keypointsPerView, a.maxSide, sp, runViews));
  const p = { ...searchParams(config), window: searchWindow(handle, config, sourceAt) };
  const byDense = await search(handle.index, () => undefined, q, { ...p, mirror: false, recollide: 0, recollideVoters: 0 }, qd);
  const cands = archiveCandidates(hits, ranking, byDense.votes.slots, Math.max(a.candidates, a.preselect), config.match.views.archive.verified);
  const verify = archiveVerifyParams(searchParams(config), a, config.match.views.poolRadius);
  const targetDense = async (slot: number) => {
    const info = handle.slot(slot);
    const plain = info && (await handle.load(slot));
    return info && plain ? dense.get(info.sha, plain.f) : undefined;
  };
  const targetPlain = async (slot: number) => (handle.slot(slot) ? (await handle.load(slot))?.f : undefined);
  const archive = await archiveMatch(qd, cands, a, verify, targetDense, config.match.views.confidence, targetPlain);
  if (!archive.hits.length) return { hits, archive, compared: archive.compared };
  return { hits: withArchiveHits(hits, archive.hits), archive, compared: archive.compared };
}

/** lsh.window's bound for a source harvested at `sourceAt` (epoch ms): only targets within it are shortlisted. */
export function searchWindow(handle: IndexHandle, config: Config, sourceAt?: number): SearchParams['window'] {
  const w = config.lsh.window * 86_400_000;
  return w && sourceAt !== undefined && Number.isFinite(sourceAt) ? { at: handle.harvestedAt, lo: sourceAt - w, hi: sourceAt + w } : undefined;
}

/**
 * Two-sided views' target side: the target's stored features and its own views, computed from its image in the
 * bank's image store on the same runner as the query's views, held in the handle's `viewed` cache. Undefined when
 * the image cannot be read or is not at the stored features' detection size.
 */
function targetViewsOf(handle: IndexHandle, config: Config, runViews: ViewRunner): TargetViews {
  return async (slot, specs, keypointsPerView, maxSide) => {
    const info = handle.slot(slot);
    const plain = info && (await handle.load(slot));
    if (!info || !plain) return undefined;
    const key = `${info.sha}|${viewsKey(specs, keypointsPerView, maxSide)}`;
    const held = handle.viewed?.get(key);
    if (held) return held;
    const g = await greyLoader(config, () => handle.bank.images.read(info.sha))();
    if (!g || g.width !== plain.f.width || g.height !== plain.f.height) return undefined;
    const all = await withOwnViews(plain.f, g, specs, siftParams(config.sift), keypointsPerView, maxSide, runViews);
    handle.viewed?.set(key, all);
    return all;
  };
}

/** An image at detection size, or undefined when it cannot be read (the plain search still counts). */
export function greyLoader(config: Config, bytes: () => Uint8Array | Promise<Uint8Array>): () => Promise<GreyImage | undefined> {
  return async () => {
    try {
      return await decodeGrey(await bytes(), { maxSide: config.sift.maxSide, maxPixels: config.sift.maxPixels, minSide: config.sift.minSide });
    } catch (err) {
      // an unreadable image gets no views; the image store failing stops the match (this batch is not committed)
      if (isInfrastructureFailure(err)) throw err;
      return undefined;
    }
  };
}

/** The archive's dense views of targets for one bank: held within a quarter of lsh.featureCacheMB (the two-sided
 *  views' share, which archive matching replaces), kept in the bank. */
export function denseViewsFor(bank: Bank, config: Config, runViews: ViewRunner): DenseViewsSource {
  return new DenseViewsSource(bank, config, archiveParams(config), runViews, Math.floor((config.lsh.featureCacheMB * 1024 * 1024) / 4));
}
