// Archive matching (issue 19, on by default since issue 33): two photos of one facade or monument from far apart
// share almost no keypoints as SIFT sees them, nor after views of one side; ASIFT's sampling of the view sphere on
// BOTH sides (Morel & Yu 2009) puts some pair of views near-frontal to each other. The query's dense views are
// computed once per query, a candidate's once per image and kept in the bank (dense_views, DenseViewsRepo: whichever
// source, run or worker meets it next reads them), paired by nearest neighbours in a kd-forest (the index's 64-bit
// sketches lose the weak matches that decide these pairs) and verified pooled, by homography only, with keypoint
// frames checked (archiveVerifyParams).
import { LRUCache } from 'lru-cache';
import type { Bank, VerifiedBy } from '../../bank/index.js';
import { DenseViewsRepo, asStored, isInfrastructureFailure } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import { decodeGrey } from '../../lib/sift/index.js';
import { siftParams } from '../../lib/sift/index.js';
import type { SiftParams } from '../../lib/sift/index.js';
import { asiftSpecs, type ViewSpec } from '../../lib/sift/index.js';
import { DEFAULT_KD, KdForest } from '../../lib/image-index/index.js';
import { DESC_SIZE, type Features } from '../../lib/image-index/index.js';
import { isVerified } from './promise.js';
import { concatFeatures } from '../../lib/image-index/index.js';
import { prepare, type Hit, type SearchParams } from '../../lib/image-index/index.js';
import { verifyCandidate, type Prepared, type Verification } from '../../lib/image-index/index.js';
import { invert3 } from '../../lib/geometry/index.js';
import { featureBytes } from '../../lib/image-index/index.js';
import type { GreyImage, ViewRunner } from './views.js';

export interface ArchiveParams {
  /** Candidates (most-voted first) matched per source that reaches archive matching (0: never). */
  candidates: number;
  /** The first this many of the rankings taken in turn are looked at one-sided (preselect), the `candidates` best
   *  compared; 0 or at most `candidates`: the first `candidates` compared. */
  preselect: number;
  /** ASIFT's view sampling of the query (asiftSpecs) and its keypoints per view. */
  maxTilt: number;
  keypointsPerView: number;
  /** The same for a candidate (described once, kept in the bank): the views of both photos compose, so fewer and
   *  sparser views on the side every query meets cost less for the same coverage of the view sphere. */
  targetMaxTilt: number;
  targetKeypointsPerView: number;
  maxSide: number;
  /** Lowe's initial x2 upsampling in the dense views' SIFT (sift.upsample is the plain features'). */
  upsample: boolean;
  /** Descriptors compared per keypoint in the kd-forest. */
  checks: number;
  /** Nearest target keypoints per query keypoint for the ratio test (pooled: the rival is another place). */
  neighbours: number;
  /** RANSAC inliers an archive hit needs (its own floor: the a-contrario test, maxLogNfa, decides above it). */
  minInliers: number;
  /** A homography inlier's keypoints must agree in frame with it (VerifyParams.frames): orientation within this
   *  many degrees, size within a factor 2^scaleTolerance. */
  angleTolerance: number;
  scaleTolerance: number;
  /** A hit's consensus must be beyond chance: log10 of its number of false alarms at most this (homographyLogNfa). */
  maxLogNfa: number;
}

export function archiveParams(config: Config): ArchiveParams {
  const a = config.match.views.archive;
  return {
    candidates: a.candidates, preselect: a.preselect, maxTilt: a.maxTilt, keypointsPerView: a.keypointsPerView, targetMaxTilt: a.targetMaxTilt,
    targetKeypointsPerView: a.targetKeypointsPerView, maxSide: a.maxSide, upsample: a.upsample, checks: a.checks,
    neighbours: a.neighbours, minInliers: a.minInliers, angleTolerance: a.angleTolerance, scaleTolerance: a.scaleTolerance, maxLogNfa: a.maxLogNfa,
  };
}

/**
 * How archive matching verifies: pooled, by homography only, its inliers agreeing in keypoint frame (orientation
 * and size) as well as position, at least `archive.minInliers` of them. The pairs it exists for are planes (ASIFT's
 * views make one plane near-frontal in two photos). Among tens of thousands of keypoints a side, position alone
 * let wrong models gather chance consensus: the epipolar model verified two unrelated night streets of
 * retrieval-wxbs (s0005, t0060) by 62 inliers after guided matching, a homography 12-14 on its EVD negatives;
 * with the frames checked, unrelated pairs keep at most 8 (bench:two-sided, 2,810 pairs), and RANSAC's local
 * samples find planes whose inliers are a few percent of the matches (s0047: 16 inliers of 314 matches). Its inlier
 * floor is archive.minInliers alone (not match.minInliers): since issue 33 round 8 the test's chance is counted over
 * every pairing of the candidate's matches, and a plane of 10 inliers among 92 dense matches is beyond chance
 * (10^-4.6) where a count of 12 refused it.
 */
export function archiveVerifyParams(p: SearchParams, a: ArchiveParams, poolRadius: number): SearchParams {
  return { ...p, pooled: poolRadius, minInliers: a.minInliers, epipolar: undefined, frames: { angleTolerance: a.angleTolerance, scaleTolerance: a.scaleTolerance, maxLogNfa: a.maxLogNfa } };
}

/** Prepared (RootSIFT) dense features and their kd-forest, for as long as the features are held. */
const held = new WeakMap<Features, Prepared>();
const forests = new WeakMap<Prepared, { forest: KdForest; checks: number }>();

function prepared(f: Features): Prepared {
  let p = held.get(f);
  if (!p) held.set(f, (p = prepare(f)));
  return p;
}

function forestOf(p: Prepared, checks: number): KdForest {
  const f = forests.get(p);
  if (f?.checks === checks) return f.forest;
  const forest = new KdForest(p.vecs, DESC_SIZE, p.f.count, { ...DEFAULT_KD, checks });
  forests.set(p, { forest, checks });
  return forest;
}

/**
 * One archive comparison: each of the candidate's dense keypoints paired with its `neighbours` nearest among the
 * query's (one kd-forest per query, built once however many candidates it meets), Lowe's test and the pooled,
 * frame-checked homography from the candidate's side, then turned round: H maps query px to target px and the
 * pairs read query x, y, target x, y, as every hit does. (Nearest neighbours are asked from the candidate's side so
 * that the forest, about a second to build over tens of thousands of keypoints, is built once per query, not once
 * per candidate.)
 */
export function archiveCompare(qa: Prepared, tf: Features, a: Pick<ArchiveParams, 'checks' | 'neighbours'>, params: SearchParams): Verification {
  const ta = prepared(tf);
  const r = verifyCandidate(ta, qa, forestOf(qa, a.checks).knnPairs(ta.vecs, ta.f.count, a.neighbours), params);
  return turned(r);
}

/** A verification from the candidate's side read from the query's: H inverted, each pair's two points swapped. */
function turned(r: Verification): Verification {
  const pairs = new Float32Array(r.pairs.length);
  for (let i = 0; i < r.pairs.length; i += 4) pairs.set([r.pairs[i + 2]!, r.pairs[i + 3]!, r.pairs[i]!, r.pairs[i + 1]!], i);
  return { ...r, H: r.H ? invert3(r.H) : null, F: null, pairs };
}

/** The inliers a hit needs to be stored (and its caption pair emitted): an archive hit's (verified by the a-contrario
 *  test: it carries its logNfa) archive.minInliers, any other's match.minInliers. */
export function inlierFloor(config: Config, h: Pick<Verification, 'logNfa'>): number {
  return h.logNfa === undefined ? config.match.minInliers : config.match.views.archive.minInliers;
}

/** The verification that stored a hit (candidates.verified_by): archive matching's hits carry the a-contrario test's
 *  logNfa, the plain and views searches' do not. */
export function verifiedBy(h: Pick<Verification, 'logNfa'>): VerifiedBy {
  return h.logNfa === undefined ? 'search' : 'archive';
}

/** SIFT's settings for dense views: the plain features', with archive.upsample's initial upsampling. */
export function denseSiftParams(config: Config, a: Pick<ArchiveParams, 'upsample'>): SiftParams {
  return { ...siftParams(config.sift), upsample: a.upsample };
}

/** The key of an image's dense views: the views, their sizes and SIFT's settings (a DenseViewsRow's key). */
export function denseKey(specs: ViewSpec[], keypointsPerView: number, maxSide: number, sift: SiftParams): string {
  const s = `${sift.upsample ? 'u' : ''}${sift.octaveLayers}/${sift.sigma}/${sift.contrastThreshold}/${sift.edgeThreshold}`;
  return `asift-v2|${keypointsPerView}|${maxSide}|${s}|${specs.map((v) => `${v.tilt.toFixed(4)}/${v.phi}${v.compress ? 'c' : ''}`).join(',')}`;
}

/** An image's dense views: its ASIFT views up to `maxTilt` (the image itself included, tilt 1), at most
 *  `keypointsPerView` keypoints each, in the detection frame of `base`, its stored features (whose size the grey
 *  image has). */
export async function denseViews(g: GreyImage, base: Pick<Features, 'width' | 'height' | 'scale'>, maxTilt: number, keypointsPerView: number, maxSide: number, sp: SiftParams, runViews: ViewRunner): Promise<Features> {
  const vf = await runViews(g, asiftSpecs(maxTilt), sp, keypointsPerView, maxSide);
  return concatFeatures(base, vf.views);
}

/**
 * Target images' dense views: held in memory (least recently used dropped, within `cacheBytes`), else read from the
 * bank, else computed from the image store on the run's view threads and written to the bank. Undefined when the
 * image cannot be read or is not at the stored features' detection size.
 */
export class DenseViewsSource {
  private readonly held: LRUCache<string, Features> | null;
  private readonly key: string;
  private readonly sp: SiftParams;
  readonly stats = { memory: 0, bank: 0, computed: 0, computeMs: 0 };

  constructor(private readonly bank: Bank, private readonly config: Config, private readonly a: ArchiveParams, private readonly runViews: ViewRunner, cacheBytes: number) {
    this.held = cacheBytes > 0 ? new LRUCache({ maxSize: cacheBytes, sizeCalculation: featureBytes }) : null;
    this.sp = denseSiftParams(config, a);
    this.key = denseKey(asiftSpecs(a.targetMaxTilt), a.targetKeypointsPerView, a.maxSide, this.sp);
  }

  async get(sha: string, plain: Features): Promise<Features | undefined> {
    const mem = this.held?.get(sha);
    if (mem) return this.stats.memory++, mem;
    const repo = this.bank.repo(DenseViewsRepo);
    let f = await repo.get(sha, this.key);
    if (f) this.stats.bank++;
    else {
      const g = await this.grey(sha);
      if (!g || g.width !== plain.width || g.height !== plain.height) return undefined;
      const t0 = performance.now();
      f = await denseViews(g, plain, this.a.targetMaxTilt, this.a.targetKeypointsPerView, this.a.maxSide, this.sp, this.runViews);
      const ms = performance.now() - t0;
      this.stats.computed++;
      this.stats.computeMs += ms;
      await repo.put(sha, this.key, f, ms);
      // as stored: the same keypoints whether this process computed them or another read them back (issue 35 round 6)
      f = asStored(f);
    }
    this.held?.set(sha, f);
    return f;
  }

  /**
   * A query's own dense views (maxTilt, keypointsPerView), read from the bank or computed from `g` and written there:
   * a sharded window matches a chosen picture on every shard, and its dense views are then computed once, not once a
   * shard (issue 35).
   */
  async query(sha: string, q: Features, g: GreyImage): Promise<Features> {
    const key = denseKey(asiftSpecs(this.a.maxTilt), this.a.keypointsPerView, this.a.maxSide, this.sp);
    const repo = this.bank.repo(DenseViewsRepo);
    const held = await repo.get(sha, key);
    if (held) return held;
    const t0 = performance.now();
    const f = await denseViews(g, q, this.a.maxTilt, this.a.keypointsPerView, this.a.maxSide, this.sp, this.runViews);
    await repo.put(sha, key, f, performance.now() - t0);
    return asStored(f);
  }

  private async grey(sha: string): Promise<GreyImage | undefined> {
    try {
      const c = this.config.sift;
      return await decodeGrey(await this.bank.images.read(sha), { maxSide: c.maxSide, maxPixels: c.maxPixels, minSide: c.minSide });
    } catch (err) {
      if (isInfrastructureFailure(err)) throw err;
      return undefined;
    }
  }
}

export interface ArchiveResult {
  /** Candidates it verified (score > 0), in the order matched. */
  hits: Hit[];
  /** The candidates it compared (or would have, had none verified at or above `confident`), in order. */
  compared: { slot: number; votes: number }[];
  /** Candidates matched (those with dense views), the query's dense keypoints, wall time. */
  candidates: number;
  keypoints: number;
  ms: number;
}

/**
 * Archive matching of one query: its dense views `qd` (denseViews) compared with each candidate's (`targetDense`, by
 * slot), in the given order, or, with `targetPlain` and more than `a.candidates` candidates, in preselect's order; a
 * candidate verified at or above `confident` ends the matching (the plain search stops at its confident hit the same
 * way).
 */
export async function archiveMatch(
  qd: Features,
  cands: { slot: number; votes: number }[],
  a: ArchiveParams,
  verify: SearchParams,
  targetDense: (slot: number) => Promise<Features | undefined>,
  confident = Infinity,
  targetPlain?: (slot: number) => Promise<Features | undefined>,
): Promise<ArchiveResult> {
  const t0 = performance.now();
  const qa = prepare(qd);
  const hits: Hit[] = [];
  let candidates = 0;
  const compared = targetPlain && cands.length > a.candidates ? await preselect(qa, cands, a, verify, targetPlain) : cands.slice(0, a.candidates);
  for (const h of compared) {
    const tf = await targetDense(h.slot);
    if (!tf?.count) continue;
    candidates++;
    const r = archiveCompare(qa, tf, a, verify);
    if (r.score > 0) hits.push({ ...r, slot: h.slot, votes: h.votes, mirrored: false });
    if (r.score >= confident) break;
  }
  return { hits, compared, candidates, keypoints: qa.f.count, ms: performance.now() - t0 };
}

/**
 * The `a.candidates` of `cands` that archive matching compares: each first looked at one-sided, the query's dense
 * views against the candidate's plain features (archiveCompare, the same verification; ~15 ms, where the candidate's
 * dense views cost ~1 s the first time), the most inliers so first, ties in the given order. From another viewpoint
 * the two rankings' votes put a true target anywhere in their first 16 (retrieval-wxbs's s0023: 7th of the dense
 * votes, absent from the plain ones, 13th taken in turn); one-sided it keeps some of the inliers it verifies with
 * two-sided (6-53 for the five retrieval-wxbs targets that verify so, one with 0), where wrong candidates keep 0-1
 * (678 of them; issue 33 round 9, dev/archive-loss.ts --one-sided).
 */
export async function preselect(
  qa: Prepared,
  cands: { slot: number; votes: number }[],
  a: Pick<ArchiveParams, 'candidates' | 'checks' | 'neighbours'>,
  verify: SearchParams,
  targetPlain: (slot: number) => Promise<Features | undefined>,
): Promise<{ slot: number; votes: number }[]> {
  const looked: { c: { slot: number; votes: number }; at: number; inliers: number }[] = [];
  for (const [at, c] of cands.entries()) {
    const f = await targetPlain(c.slot);
    looked.push({ c, at, inliers: f?.count ? archiveCompare(qa, f, a, verify).inliers : 0 });
  }
  return looked.sort((x, y) => y.inliers - x.inliers || x.at - y.at).slice(0, a.candidates).map((l) => l.c);
}

/**
 * The candidates archive matching compares, most promising first: with `verifiedFirst` (match.views.archive.verified)
 * the plain search's hits that verified without being confident (promise.ts isVerified: a model with minInliers
 * inliers, the image score under match.views.confidence), best first, then `n` of the plain search's direct-pass
 * ranking and the dense query's ranking taken in turn (fuseRankings); each with its plain hit's votes (0 when the plain search did not reach it). A verified hit is the best evidence a search
 * has: among 100,000 targets a low-textured copy's true target is outvoted and found by lsh.recollideVoters' re-match
 * only, with few inliers (retrieval-smvs s0143: 110 keypoints, 13 inliers of 15, score 0.075, no candidate at
 * match.minScore 0.2; its dense views and the target's: 35 inliers, 0.92), ranked 22nd by the votes, past the `n`
 * compared (issue 35 round 9). Slots are the caller's (an index's, or the sharded merge's targets).
 */
export function archiveCandidates(hits: Hit[], ranking: number[], dense: number[], n: number, verifiedFirst: boolean): { slot: number; votes: number }[] {
  const votes = new Map(hits.map((h) => [h.slot, h.votes]));
  const verified = (verifiedFirst ? hits.filter(isVerified) : []).sort((a, b) => b.score - a.score || b.inliers - a.inliers || a.slot - b.slot).map((h) => h.slot);
  const slots = [...new Set([...verified, ...fuseRankings([ranking, dense], n)])];
  return slots.map((slot) => ({ slot, votes: votes.get(slot) ?? 0 }));
}

/** The plain search's hits with archive matching's: each candidate it verified in place of its earlier hit where it
 *  scores higher (or added), best first. */
export function withArchiveHits(hits: Hit[], archive: Hit[]): Hit[] {
  const by = new Map(archive.map((h) => [h.slot, h]));
  const had = new Set(hits.map((h) => h.slot));
  const merged = hits.map((h) => ((by.get(h.slot)?.score ?? 0) > h.score ? by.get(h.slot)! : h));
  for (const h of archive) if (!had.has(h.slot)) merged.push(h);
  return merged.sort((x, y) => y.score - x.score);
}

/**
 * Rankings taken in turn: the first of each, then the second of each, and so on, a slot met again skipped, at most n
 * slots. Each ranking's best are compared whatever the other says: the plain search's direct pass ranks a 3D scene's
 * target well, the dense views' votes an extreme viewpoint's, and each of the two kinds is often missing from the other
 * ranking (two shortlists of lsh.shortlist images). Rounds 3-6 fused them by reciprocal rank (k = 60, Cormack et al.
 * 2009), which suits long rankings that agree: with these, any slot in both (5th in each: 2/65) outranked one first in
 * a single ranking (1/61), and retrieval-wxbs targets the dense votes rank 2nd or 7th and the plain votes miss came 15th
 * and 22nd, past the 8 compared (issue 33 round 7, dev/archive-loss.ts).
 */
export function fuseRankings(rankings: number[][], n: number): number[] {
  const out: number[] = [];
  const seen = new Set<number>();
  const at = rankings.map(() => 0);
  while (out.length < n) {
    let moved = false;
    for (const [r, ranking] of rankings.entries()) {
      while (at[r]! < ranking.length && seen.has(ranking[at[r]!]!)) at[r]!++;
      if (at[r]! >= ranking.length || out.length >= n) continue;
      const s = ranking[at[r]!++]!;
      seen.add(s);
      out.push(s);
      moved = true;
    }
    if (!moved) break;
  }
  return out;
}
