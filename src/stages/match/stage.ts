// The match stage and image search (stage contract): features first (the features stage), then the index is brought in
// step with the target bank, then every source item not yet matched, or matched before targets were added, is
// ranked against the index; its verified candidates are stored (committed per batch, so a killed run resumes).
// The plain searches come first; the synthesised views then go, within the run's budget (match.views.budget),
// to the sources whose plain search found the most evidence without a confident hit.
import type { Bank, IdRange, Item } from '../../bank/index.js';
import { CandidatesRepo, FeaturesRepo, LshRepo, TwinsRepo, isInfrastructureFailure, type CandidateInput } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import { decodeGrey } from '../../lib/sift/index.js';
import { extractFeatures, siftParams } from '../../lib/sift/index.js';
import { SiftPool, resolveThreads } from '../../lib/sift/index.js';
import type { Logger } from '../../util/log.js';
import type { Progress } from '../../util/progress.js';
import type { Features } from '../../lib/image-index/index.js';
import { search, type Hit } from '../../lib/image-index/index.js';
import { indexTargets, openIndex, searchParams, syncIndex, type IndexHandle } from '../../lib/image-index/index.js';
import { errorMessage } from '../../util/errors.js';
import { inThreadViews, poolViews, searchProgressive, viewParams, viewsKey, withOwnViews, type GreyImage, type TargetViews, type ViewRunner } from './views.js';

export interface MatchOptions {
  top?: number;
  signal?: AbortSignal;
  progress?: Progress;
  logger?: Logger;
  /** Sources per committed batch. */
  batchSize?: number;
  /** Only items with ids in this range (a worker's job): its sources to match; default all. */
  idRange?: IdRange;
  /** Worker threads for the synthesised views (default: config sift.threads; 1 = this thread). */
  threads?: number;
  /** Called after each source's search (not for sources that took another's candidates), with its cost: CPU of
   *  the whole process (the views' worker threads included) and wall time; a second time for a source that gets
   *  views (its views search: viewed true). For benchmarks. */
  onSource?: (s: { itemId: number; cpuMs: number; wallMs: number; viewed: boolean; candidates: number }) => void;
}

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

export interface MatchSummary {
  indexed: number;
  indexedImages: number;
  indexMemoryBytes: number;
  sources: number;
  withCandidates: number;
  candidates: number;
  /** Sources searched again with synthesised views (match.views: their plain search was not confident). */
  viewed: number;
  /** Sources that took the candidates of a picture already ranked in this run (the same or a near-identical image). */
  reused: number;
  /** Sources whose search, verification or views threw: marked failed with the reason (the run went on). */
  failed: number;
  aborted: boolean;
  ms: number;
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
): Promise<{ cand: CandidateInput[]; hits: Hit[]; usedViews: boolean; evidence: number | null }> {
  const load = (s: number) => handle.load(s);
  const w = config.lsh.window * 86_400_000;
  const p = { ...searchParams(config), window: w && sourceAt !== undefined && Number.isFinite(sourceAt) ? { at: handle.harvestedAt, lo: sourceAt - w, hi: sourceAt + w } : undefined };
  const r = grey
    ? await searchProgressive(handle.index, load, q, p, viewParams(config), config.sift, grey, runViews, allowViews, targetViewsOf(handle, config, runViews ?? inThreadViews))
    : { ...(await search(handle.index, load, q, p)), usedViews: false, evidence: null };
  const minScore = config.match.minScore;
  const cand: CandidateInput[] = [];
  const twins = handle.bank.repo(TwinsRepo);
  let ranked = 0;
  for (const h of r.hits) {
    if (ranked >= top) break;
    if (h.score <= 0 || h.score < minScore || h.inliers < config.match.minInliers) continue;
    const info = handle.slot(h.slot);
    const t = await handle.load(h.slot);
    if (!info || !t) continue;
    const o = toOriginal(h, q, t.f);
    const c: CandidateInput = {
      targetItemId: info.itemId,
      rank: ++ranked,
      imageScore: Number(h.score.toFixed(4)),
      matches: h.matches,
      inliers: h.inliers,
      homography: o.homography,
      model: h.model ?? 'homography',
      fundamental: o.fundamental,
      mirrored: h.mirrored,
      pairs: o.pairs,
    };
    cand.push(c);
    // The picture is indexed once: every other target item showing it (the same image, or a near-identical copy
    // at another size) gets the candidate too, in its own pixels.
    const width = t.f.width / t.f.scale;
    for (const s of await twins.targetItemsShowing(info.sha)) {
      if (s.itemId !== info.itemId) cand.push(rescaleCandidate({ ...c, targetItemId: s.itemId }, 1, s.width ? s.width / width : 1));
    }
  }
  return { cand, hits: r.hits, usedViews: r.usedViews, evidence: r.evidence };
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

/** The query image at detection size, or undefined when it cannot be read (the plain search still counts). */
function greyLoader(config: Config, bytes: () => Uint8Array | Promise<Uint8Array>): () => Promise<GreyImage | undefined> {
  return async () => {
    try {
      return await decodeGrey(await bytes(), { maxSide: config.sift.maxSide, maxPixels: config.sift.maxPixels, minSide: config.sift.minSide });
    } catch (err) {
      // an unreadable image gets no views; the image store or the bank failing stops the match (this batch is not committed)
      if (isInfrastructureFailure(err)) throw err;
      return undefined;
    }
  };
}

export async function runMatch(bank: Bank, config: Config, opts: MatchOptions = {}): Promise<MatchSummary> {
  const t0 = performance.now();
  const top = opts.top ?? config.match.top;
  const range = opts.idRange;
  const summary: MatchSummary = {
    indexed: 0, indexedImages: 0, indexMemoryBytes: 0,
    sources: 0, withCandidates: 0, candidates: 0, viewed: 0, reused: 0, failed: 0, aborted: false, ms: 0,
  };
  if (opts.signal?.aborted) return { ...summary, aborted: true, ms: performance.now() - t0 };
  summary.indexed = (await indexTargets(bank, config, { signal: opts.signal, logger: opts.logger })).indexed;
  const cands = bank.repo(CandidatesRepo);
  const feats = bank.repo(FeaturesRepo);
  const seq = await bank.repo(LshRepo).sequence();
  // lsh.window bounds the index in memory: targets harvested before the window of this run's oldest pending source
  // could be nobody's candidate here, and are dropped (the search masks what is outside each source's window, so
  // what a process holds beyond that changes no result).
  const windowMs = config.lsh.window * 86_400_000;
  const oldest = windowMs ? await cands.oldestPendingHarvest(seq, range) : null;
  const floor = oldest && Number.isFinite(Date.parse(oldest)) ? Date.parse(oldest) - windowMs : -Infinity;
  const handle = await openIndex(bank, config, floor);
  summary.indexedImages = handle.index.size;
  summary.indexMemoryBytes = handle.index.memoryBytes();
  const total = await cands.countPending(seq);
  opts.progress?.setTotal(total);
  opts.logger?.info(`match: ${total} source items against ${handle.index.size} indexed target images`);
  const batchSize = opts.batchSize ?? 20;
  // One pool for the views of the whole run (not one per query), stopped however the loop ends.
  const views = new ViewPool(config, opts.threads, opts.logger);
  // picture -> its candidates (source px of `width`) and the sources showing it in this run
  const ranked = new Map<string, { cand: CandidateInput[]; width: number; members: { id: number; sha: string; width: number }[] }>();
  const hopeful: { picture: string; id: number; sha: string; evidence: number; at?: number }[] = []; // not confident, plausible candidate
  // lsh.window (the news case): a source keeps only the candidates harvested within N days of it
  const harvestedAt = (i: Item | undefined) => (i ? Date.parse(i.fetchedAt ?? i.importedAt ?? '') : NaN);
  const inWindow = async (sourceId: number, cand: CandidateInput[]): Promise<CandidateInput[]> => {
    if (!windowMs || !cand.length) return cand;
    const at = harvestedAt(await bank.items.byId(sourceId));
    if (Number.isNaN(at)) return cand;
    const out: CandidateInput[] = [];
    for (const c of cand) if (Math.abs(harvestedAt(await bank.items.byId(c.targetItemId)) - at) <= windowMs) out.push(c);
    return out;
  };
  // The views budget is spent per window of worker.batch.match pending sources (id order), and a picture shown by
  // several sources is searched once per window: one worker job is one window, so one process and any number of
  // workers hand out the same views and end with the same candidates and pairs.
  const denseOnly: Config = { ...config, match: { ...config.match, views: { ...config.match.views, tilts: [] } } };
  const spendViews = async (windowCount: number): Promise<void> => {
    // Views only where they can pay: a view search costs about fifteen plain ones, so of the sources whose plain
    // search was not confident but found a plausible candidate (viewEvidence), the run's budget goes to those
    // with the most evidence. Their candidates (and those of every source showing the same picture) are replaced
    // by the progressive search's, which keeps every plain hit.
    // The dense query alone (the query described again with more keypoints, match.views.denseKeypoints) costs
    // about two plain searches, not fifteen: a larger share of the sources (match.views.denseBudget) gets it, the
    // same evidence first, after those that get the views (which include it).
    const budget = hopeful.length ? Math.max(1, Math.floor(config.match.views.budget * windowCount)) : 0;
    const denseBudget = hopeful.length && config.match.views.denseKeypoints ? Math.floor(config.match.views.denseBudget * windowCount) : 0;
    hopeful.sort((a, b) => b.evidence - a.evidence || a.id - b.id);
    const chosen = hopeful.slice(0, Math.max(budget, denseBudget));
    hopeful.length = 0;
    for (const [k, h] of chosen.entries()) {
      if (opts.signal?.aborted) {
        summary.aborted = true;
        break;
      }
      const q = await feats.get(h.sha);
      const entry = ranked.get(h.picture);
      if (!q || !entry) continue;
      const c0 = process.cpuUsage();
      const w0 = performance.now();
      let r: Awaited<ReturnType<typeof rankAgainstIndex>>;
      try {
        r = await rankAgainstIndex(handle, k < budget ? config : denseOnly, q, top, greyLoader(config, () => bank.images.read(h.sha)), views.run, () => true, h.at);
      } catch (err) {
        if (isInfrastructureFailure(err)) throw err;
        // the views of one picture failed: its sources keep their plain search's candidates, and say why
        const reason = `views: ${errorMessage(err)}`;
        opts.logger?.warn(`match: source item ${h.id} failed: ${reason}`);
        await bank.transaction(async (tx) => {
          for (const m of entry.members) await tx.items.setStatus(m.id, 'failed', reason);
        });
        summary.failed += entry.members.length;
        continue;
      }
      const cpu = process.cpuUsage(c0);
      opts.onSource?.({ itemId: h.id, cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - w0, viewed: r.usedViews, candidates: r.cand.length });
      if (!r.usedViews) continue;
      summary.viewed++;
      const now = new Date().toISOString();
      const memberCands = new Map<number, CandidateInput[]>();
      for (const m of entry.members) memberCands.set(m.id, await inWindow(m.id, r.cand.map((c) => rescaleCandidate(c, m.width / entry.width, 1))));
      await bank.transaction(async (tx) => {
        const cs = tx.repo(CandidatesRepo);
        for (const m of entry.members) {
          const before = entry.cand.length;
          const cand = memberCands.get(m.id)!;
          await cs.replaceFor(m.id, cand, now);
          if (!before && cand.length) summary.withCandidates++;
          summary.candidates += cand.length - before;
        }
      });
      entry.cand = r.cand;
    }
    // a picture is searched once per window, as in a worker's job (the next window searches it again)
    ranked.clear();
    if (summary.aborted) return;
    // The window's sources are marked matched only now, all at once: a run stopped (or a worker killed) before
    // its views were spent leaves the whole window pending, and the next run searches it again as one window,
    // with the same views (their candidates, stored per batch meanwhile, are replaced).
    const now = new Date().toISOString();
    await bank.transaction(async (tx) => {
      const cs = tx.repo(CandidatesRepo);
      for (const s of windowSources) await cs.markMatched(s.id, s.sha, seq, now);
    });
    windowSources.length = 0;
  };
  const viewWindow = config.worker.batch.match;
  let inWindowSources = 0;
  const windowSources: { id: number; sha: string }[] = []; // searched in this window, marked matched at its end
  let afterId = range ? range.first - 1 : 0;
  try {
    for (;;) {
      if (opts.signal?.aborted) {
        summary.aborted = true;
        break;
      }
      const batch = (await cands.pendingSources(seq, afterId, Math.min(batchSize, viewWindow - inWindowSources))).filter((b) => !range || b.id <= range.last);
      if (!batch.length) break;
      inWindowSources += batch.length;
      afterId = batch[batch.length - 1]!.id;
      const results: { id: number; sha: string; cand: CandidateInput[]; failed?: string }[] = [];
      for (const s of batch) {
        let cand: CandidateInput[] = [];
        // One source's failure (its features unreadable, a throw in the search or the verification) is that
        // item's: it is marked failed with the reason and the run goes on with the others.
        try {
          const q = await feats.get(s.imageSha256);
          if (q && handle.index.size) {
            // One search per picture: a source showing a picture already ranked in this run (the same image, or
            // a near-identical copy) takes its candidates, in its own pixels. Under lsh.window, only a source
            // harvested at the same time does (another time has another window, so another search).
            const at = windowMs ? harvestedAt(await bank.items.byId(s.id)) : undefined;
            const picture = (q.twinOf ?? s.imageSha256) + (at === undefined ? '' : `@${at}`);
            const width = q.width / q.scale;
            const seen = ranked.get(picture);
            if (seen) {
              cand = seen.cand.map((c) => rescaleCandidate(c, width / seen.width, 1));
              seen.members.push({ id: s.id, sha: s.imageSha256, width });
              summary.reused++;
            } else {
              // The plain search only: views are handed out after the run's plain searches (below).
              const c0 = process.cpuUsage();
              const w0 = performance.now();
              const r = await rankAgainstIndex(handle, config, q, top, greyLoader(config, () => bank.images.read(s.imageSha256)), views.run, () => false, at);
              cand = r.cand;
              ranked.set(picture, { cand, width, members: [{ id: s.id, sha: s.imageSha256, width }] });
              if (r.evidence !== null) hopeful.push({ picture, id: s.id, sha: s.imageSha256, evidence: r.evidence, at });
              const cpu = process.cpuUsage(c0);
              opts.onSource?.({ itemId: s.id, cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - w0, viewed: false, candidates: cand.length });
            }
          }
        } catch (err) {
          if (isInfrastructureFailure(err)) throw err; // the store's or the bank's fault, not this item's: stop, resume next run
          const reason = `match: ${errorMessage(err)}`;
          opts.logger?.warn(`match: source item ${s.id} failed: ${reason}`);
          results.push({ id: s.id, sha: s.imageSha256, cand: [], failed: reason });
          continue;
        }
        results.push({ id: s.id, sha: s.imageSha256, cand: await inWindow(s.id, cand) });
      }
      const now = new Date().toISOString();
      await bank.transaction(async (tx) => {
        const c = tx.repo(CandidatesRepo);
        for (const r of results) {
          await c.replaceFor(r.id, r.cand, now);
          // a failed source is not marked matched: it waits (not pending while failed) for a new image or --retry-failed;
          // the others are marked at the end of the window (spendViews)
          if (r.failed) await tx.items.setStatus(r.id, 'failed', r.failed);
        }
      });
      for (const r of results) {
        if (r.failed) {
          summary.failed++;
          continue;
        }
        summary.sources++;
        windowSources.push({ id: r.id, sha: r.sha });
        if (r.cand.length) summary.withCandidates++;
        summary.candidates += r.cand.length;
      }
      opts.progress?.tick(batch.length);
      if (inWindowSources >= viewWindow) {
        await spendViews(inWindowSources);
        inWindowSources = 0;
      }
    }
    if (inWindowSources && !summary.aborted) await spendViews(inWindowSources);
  } finally {
    await views.close();
  }
  summary.ms = Math.round(performance.now() - t0);
  opts.logger?.info(
    `match: ${summary.sources} sources ranked, ${summary.withCandidates} with candidates (${summary.candidates} stored), ${summary.viewed} searched again with synthesised views` +
      (summary.aborted ? ' — stopped early, run again to resume' : ''),
  );
  return summary;
}

export interface SearchHit {
  rank: number;
  item: Item;
  imageScore: number;
  matches: number;
  inliers: number;
  mirrored: boolean;
  /** The model that verified it (see CandidateInput.model). */
  model: 'homography' | 'fundamental';
  homography: number[] | null;
  fundamental: number[] | null;
}

/**
 * Ranks the target bank for one image (bytes of any format sharp reads). Indexes pending targets first.
 * The synthesised views (when the plain search is not confident) run on `opts.pool` when given (a long-lived
 * caller keeps one), else on a ViewPool started for this search only when views run, and stopped before returning.
 */
export async function searchImage(
  bank: Bank,
  config: Config,
  buf: Uint8Array,
  opts: { top?: number; logger?: Logger; pool?: SiftPool; threads?: number; views?: ViewPool } = {},
): Promise<SearchHit[]> {
  const q = await extractFeatures(buf, config);
  const { handle } = await syncIndex(bank, config, { logger: opts.logger });
  if (!handle.index.size) return [];
  // views: a long-lived caller's pool (the review server's), kept open; otherwise one for this search, closed after
  const own = opts.pool || opts.views ? undefined : new ViewPool(config, opts.threads, opts.logger);
  let cand: CandidateInput[];
  try {
    const runViews = opts.pool ? poolViews(opts.pool) : (opts.views ?? own!).run;
    ({ cand } = await rankAgainstIndex(handle, config, q, opts.top ?? config.match.top, greyLoader(config, () => buf), runViews));
  } finally {
    await own?.close();
  }
  const out: SearchHit[] = [];
  for (const c of cand) {
    const item = await bank.items.byId(c.targetItemId);
    if (!item) continue;
    out.push({
      rank: c.rank, item, imageScore: c.imageScore, matches: c.matches, inliers: c.inliers, mirrored: c.mirrored,
      model: c.model ?? 'homography', homography: c.homography, fundamental: c.fundamental ?? null,
    });
  }
  return out;
}
