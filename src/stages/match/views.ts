// Progressive search with synthesised query views (MODS, Mishkin, Matas & Perdoch 2015): the plain query first;
// only when its best verified score is below `confidence` and some candidate shows partial evidence (RANSAC
// inliers below the bar: viewEvidence), the query image is warped into tilted views
// (src/lib/sift/views.ts: ASIFT tilts, keypoints mapped back to the query's frame), and the index is searched again
// with the plain keypoints and the views' together (one ratio test + RANSAC per image, in the query's frame).
// The plain pass's hits are kept where they score higher, so views can only add.
import type { Config } from '../../config/schema.js';
import { siftParams } from '../../lib/sift/index.js';
import type { SiftParams } from '../../lib/sift/index.js';
import { viewFeatures, viewSpecs, type ViewFeaturesResult, type ViewSpec } from '../../lib/sift/index.js';
import type { Features } from '../../lib/image-index/index.js';
import { concatFeatures } from '../../lib/image-index/index.js';
import type { LshIndex } from '../../lib/image-index/index.js';
import { mergeHits, prepare, search, sketchCollisions, sumScans, type Hit, type SearchParams, type SearchResult, type SlotLoader } from '../../lib/image-index/index.js';
import { tooFewCollisions, verifyCandidate } from '../../lib/image-index/index.js';


export interface ViewParams {
  enabled: boolean;
  /** Anisotropy of each view family (ASIFT's t). */
  tilts: number[];
  /** Directions per tilt, evenly spread over [0, 180). */
  rotations: number;
  keypointsPerView: number;
  /** Views run only when the plain query's best score is below this. */
  confidence: number;
  /** Longest side of a synthesised view (larger views are scaled down uniformly). */
  maxSide: number;
  /** Views run only when some candidate of the plain search has at least this many RANSAC inliers. */
  minEvidence: number;
  /** With the views, the query is also described again with up to this many keypoints and searched on its own
   *  (0: not): from another place, few of a scene's strongest keypoints are in common, weaker ones add matches. */
  denseKeypoints: number;
  /** Best-voted images re-matched by full sketch in that dense search (lsh.recollide's count there). */
  recollide: number;
  /** Two-sided views (MODS's last stage): when the views search is not confident either, this many of its best
   *  candidates get views of their own, and each is verified with both images' views pooled (0: never). */
  targetViews: number;
  /** Pixels within which pooled keypoints are one place (VerifyParams.pooled). */
  poolRadius: number;
}

export function viewParams(config: Config): ViewParams {
  const v = config.match.views;
  return {
    enabled: v.enabled, tilts: v.tilts, rotations: v.rotations, keypointsPerView: v.keypointsPerView, confidence: v.confidence,
    maxSide: v.maxSide, minEvidence: v.minEvidence, denseKeypoints: v.denseKeypoints, recollide: v.recollide,
    targetViews: v.targetViews, poolRadius: v.poolRadius,
  };
}

/**
 * Whether a query's views can pay, from what its plain search found: null when they cannot (views disabled, a
 * confident hit already, or no plausible candidate: none with minEvidence RANSAC inliers, which is what a
 * source without a counterpart mostly looks like); otherwise the evidence, larger = more promising (the best
 * candidate's inliers, then its votes), by which a budget of view searches is handed out (see runMatch).
 */
export function viewEvidence(plain: Pick<SearchResult, 'hits'>, vp: ViewParams): number | null {
  if (!vp.enabled || (!vp.tilts.length && !vp.denseKeypoints)) return null;
  let best = -1;
  let votes = 0;
  for (const h of plain.hits) {
    if (h.score >= vp.confidence) return null;
    if (h.inliers > best || (h.inliers === best && h.votes > votes)) {
      best = h.inliers;
      votes = h.votes;
    }
  }
  if (best < vp.minEvidence) return null;
  return best + Math.min(votes, 999) / 1000;
}

/** A grey image at the query's detection size (what decodeGrey returns). */
export interface GreyImage {
  grey: Uint8Array;
  width: number;
  height: number;
}

/**
 * Computes the views' features (one Features per spec, in spec order, mapped back to the grey image's frame).
 * Default: in the calling thread (sift's viewFeatures); `poolViews` runs them on a SiftPool's workers.
 */
export type ViewRunner = (
  g: GreyImage & { scale?: number },
  specs: ViewSpec[],
  sift: SiftParams,
  keypointsPerView: number,
  maxSide: number,
) => Promise<ViewFeaturesResult> | ViewFeaturesResult;

export const inThreadViews: ViewRunner = (g, specs, sift, kpv, maxSide) => viewFeatures(g, specs, sift, kpv, maxSide);

/** A ViewRunner over a SiftPool (or anything with its views method). */
export function poolViews(pool: { views: (d: GreyImage & { scale?: number }, specs: ViewSpec[], o: { sift: SiftParams; keypointsPerView: number; maxSide?: number }) => Promise<ViewFeaturesResult> }): ViewRunner {
  return (g, specs, sift, keypointsPerView, maxSide) => pool.views(g, specs, { sift, keypointsPerView, maxSide });
}

/**
 * A shortlisted target's features with its own views (its stored keypoints, then the views' mapped back to its
 * detection frame), for two-sided verification; undefined when its image cannot be had. Called with the views'
 * specs and sizes the query used.
 */
export type TargetViews = (slot: number, specs: ViewSpec[], keypointsPerView: number, maxSide: number) => Promise<Features | undefined>;

/**
 * A target's stored features with its own views appended, mapped to its detection frame (what TargetViews returns).
 * When the specs hold the image itself (a view of tilt 1, as archive matching's asiftSpecs do), that view replaces
 * the stored features: both are the image described by the same SIFT, and each place twice over would fill the
 * nearest neighbours a keypoint's ratio test looks among with copies.
 */
export async function withOwnViews(
  plain: Features, g: GreyImage, specs: ViewSpec[], sift: SiftParams, keypointsPerView: number, maxSide: number, runViews: ViewRunner = inThreadViews,
): Promise<Features> {
  const vf = await runViews(g, specs, sift, keypointsPerView, maxSide);
  return concatFeatures(plain, specs.some((v) => v.tilt === 1) ? vf.views : [plain, ...vf.views]);
}

export interface ProgressiveResult extends SearchResult {
  /** Whether the views ran (the plain query was not confident, and had a plausible candidate). */
  usedViews: boolean;
  /** viewEvidence of the plain search (null: views could not pay). */
  evidence: number | null;
  views: {
    count: number; keypoints: number; synthMs: number; extractMs: number; searchMs: number; targets: number; targetsMs: number;
  };
}

/**
 * Plain search, then (when not confident, with a plausible candidate, views enabled, and `allow` agrees with the
 * evidence) the views search; hits merged per image.
 * grey: the query image decoded at its detection size (called only when the views run). The query's
 * width/height must be the grey image's. runViews: where the views are computed (default: this thread;
 * `poolViews(pool)` for worker threads, same features).
 */
export async function searchProgressive(
  index: LshIndex,
  load: SlotLoader,
  q: Features,
  p: SearchParams,
  vp: ViewParams,
  sift: Config['sift'],
  grey: () => Promise<GreyImage | undefined> | GreyImage | undefined,
  runViews: ViewRunner = inThreadViews,
  allow?: (evidence: number) => boolean,
  targetViews?: TargetViews,
): Promise<ProgressiveResult> {
  const plain = await search(index, load, q, p);
  const none = { count: 0, keypoints: 0, synthMs: 0, extractMs: 0, searchMs: 0, targets: 0, targetsMs: 0 };
  const evidence = viewEvidence(plain, vp);
  if (evidence === null || (allow && !allow(evidence))) return { ...plain, usedViews: false, views: none, evidence };
  const g = await grey();
  if (!g || g.width !== q.width || g.height !== q.height) return { ...plain, usedViews: false, views: none, evidence };
  const specs = viewSpecs(vp.tilts, vp.rotations);
  const { dq, vf, dv } = await viewQueries(q, g, vp, sift, runViews);
  const t0 = performance.now();
  // Two more searches, each verified on its own: the dense query alone (a 3D scene from another place: more,
  // weaker keypoints in common; view keypoints of a tilted plane would only crowd its ratio tests), and the
  // plain keypoints with the views' (a plane seen at a steep angle). The mirror pass already ran.
  const passes: SearchResult[] = [];
  if (dq) passes.push(await search(index, load, dq, viewPassParams(p, vp, 'dense')));
  if (vf.views.length) passes.push(await search(index, load, q, viewPassParams(p, vp, 'views'), concatFeatures(q, vf.views)));
  const searchMs = performance.now() - t0;
  // Views count only through verified evidence: a later pass's hit replaces an earlier one only with a higher
  // score, and among unverified (score 0) hits the plain pass's order stands, the others' after it.
  let hits = plain.hits;
  for (const r of passes) hits = mergeHits(hits, r.hits, true);
  const t1 = performance.now();
  // Two-sided candidates: the most evidence over every pass (RANSAC inliers, then votes), not the plain pass's order.
  const two = targetViews && vf.views.length && vp.targetViews > 0 && !hits.some((h) => h.score >= vp.confidence)
    ? await twoSided(index, q, vf.views, [...hits].sort((a, b) => b.inliers - a.inliers || b.votes - a.votes).slice(0, vp.targetViews), p, vp, specs, targetViews)
    : [];
  hits = replaceBetter(hits, two);
  const targetsMs = performance.now() - t1;
  const shortlist = [...new Set([...plain.shortlist, ...passes.flatMap((r) => r.shortlist)])];
  const sum = (k: keyof SearchResult['timings']) => plain.timings[k] + passes.reduce((a, r) => a + r.timings[k], 0);
  return {
    hits,
    shortlist,
    mirrorPass: plain.mirrorPass,
    timings: { probeMs: sum('probeMs'), voteMs: sum('voteMs'), verifyMs: sum('verifyMs') },
    scan: sumScans([plain, ...passes]),
    votes: plain.votes, // the plain search's: what the wide-baseline stages' promise reads
    usedViews: true,
    views: {
      count: specs.length,
      keypoints: (dq?.count ?? 0) + vf.views.reduce((a, f) => a + f.count, 0),
      synthMs: vf.synthMs + (dv?.synthMs ?? 0),
      extractMs: vf.extractMs + (dv?.extractMs ?? 0),
      searchMs,
      targets: two.length,
      targetsMs,
    },
    evidence,
  };
}

/**
 * The queries of a views search: the dense query (an identity view with more keypoints: the same detector on the same
 * grey image; null when it finds no more than the plain features) and the views' keypoints (tilted and rotated views,
 * mapped back to the query's frame).
 */
export async function viewQueries(q: Features, g: GreyImage, vp: ViewParams, sift: Config['sift'], runViews: ViewRunner = inThreadViews) {
  const specs = viewSpecs(vp.tilts, vp.rotations);
  const sp = siftParams(sift);
  const [dv, vf] = await Promise.all([
    vp.denseKeypoints > q.count ? runViews(g, [{ tilt: 1, phi: 0 }], sp, vp.denseKeypoints, Math.max(vp.maxSide, g.width, g.height)) : null,
    specs.length ? runViews(g, specs, sp, vp.keypointsPerView, vp.maxSide) : { views: [], synthMs: 0, extractMs: 0 },
  ]);
  const dq: Features | null = dv?.views[0] && dv.views[0].count > q.count ? { ...dv.views[0], width: q.width, height: q.height, scale: q.scale } : null;
  return { dq, vf, dv };
}

/** A views search's pass: the dense query alone (more re-matched by full sketch), or the plain keypoints with the
 *  views'; no mirror pass (the plain search's ran), and no re-match by voting keypoints (lsh.recollideVoters: the
 *  plain search's did that; the views' gate and CPU were measured without it). */
export function viewPassParams(p: SearchParams, vp: ViewParams, pass: 'dense' | 'views'): SearchParams {
  // (neither re-matches by voters nor probes again, lsh.reprobe: the plain search did both)
  return pass === 'dense' ? { ...p, mirror: false, recollide: Math.max(p.recollide, vp.recollide), recollideVoters: 0, reprobe: 0 } : { ...p, mirror: false, recollideVoters: 0, reprobe: 0 };
}

/** hits with each image's hit replaced by a verified one of `better` that scores higher; by score, stable. */
function replaceBetter(hits: Hit[], better: Hit[]): Hit[] {
  if (!better.length) return hits;
  const by = new Map(better.map((h) => [h.slot, h]));
  return hits.map((h) => ((by.get(h.slot)?.score ?? 0) > h.score ? by.get(h.slot)! : h)).sort((a, b) => b.score - a.score);
}

/** The key of a target's own views: the views and their sizes (what TargetViews' callers cache by, with the image). */
export function viewsKey(specs: ViewSpec[], keypointsPerView: number, maxSide: number): string {
  return `${keypointsPerView}|${maxSide}|${specs.map((v) => `${v.tilt}/${v.phi}${v.compress ? 'c' : ''}`).join(',')}`;
}

/**
 * Two-sided views: a plane seen obliquely from two sides (a mural, a shop front photographed from the left and
 * from the right) is tilted beyond what views of one image undo; with views of both, some pair of views is
 * near-frontal. Each candidate's own views come from `targetViews`; the query's keypoints (plain and views) and
 * the candidate's are paired by full sketch (as lsh.recollide does) and verified with both sides pooled
 * (VerifyParams.pooled: a place counts once, Lowe's rival is another place). Returns the candidates it verified.
 */
async function twoSided(
  index: LshIndex,
  q: Features,
  views: Features[],
  cands: Hit[],
  p: SearchParams,
  vp: ViewParams,
  specs: ViewSpec[],
  targetViews: TargetViews,
): Promise<Hit[]> {
  const qa = prepare(concatFeatures(q, [q, ...views]));
  const qs = index.probe(qa.vecs, qa.f.count).sketches;
  const pooled: SearchParams = { ...p, pooled: vp.poolRadius };
  const out: Hit[] = [];
  for (const h of cands) {
    const tf = await targetViews(h.slot, specs, vp.keypointsPerView, vp.maxSide);
    if (!tf?.count) continue;
    const ta = prepare(tf);
    const c = sketchCollisions(qs, qa.f.count, index.probe(ta.vecs, ta.f.count).sketches, p.recollideHamming);
    if (tooFewCollisions(c, p)) continue;
    const r = verifyCandidate(qa, ta, c, pooled);
    if (r.score > 0) out.push({ ...r, slot: h.slot, votes: h.votes, mirrored: false });
  }
  return out;
}
