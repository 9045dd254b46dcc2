// One `match` run (stage contract): the index in step with the target bank, then every pending
// source in id order, in windows of worker.batch.match sources (one worker job is one window): the plain searches of
// a window first, committed per batch; then the window's wide-baseline stages (wide.ts: views, archive matching) for
// the sources the plain search left unconfident, within the window's budgets; then the window's sources are marked
// matched, all at once (a run stopped mid-window leaves the whole window pending, and the next run searches it again
// as one window, with the same budgets).
import type { Bank, Item } from '../../bank/index.js';
import { CandidatesRepo, FeaturesRepo, LshRepo, MatchPartialsRepo, isInfrastructureFailure, type CandidateInput, type PartialWide } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import { errorMessage } from '../../util/errors.js';
import { indexTargets, mirrorFeatures, openIndex, prepare, reprobes, searchParams, shardVotePass, type Features, type IndexHandle } from '../../lib/image-index/index.js';
import { passKeypoints, votedEntries } from './global.js';
import { ViewPool, denseViewsFor, greyLoader, rankAgainstIndex, rescaleCandidate, searchWindow, unconfident } from './rank.js';
import type { DenseViewsSource } from './archive.js';
import { WideBaseline } from './wide.js';
import { denseOnShard, viewsOnShard, wideOnce } from './shard-wide.js';
import { shortlistPromise, shortlistVotes, verifiedBelow } from './promise.js';
import { OPEN_END, archiveOnly, shardSink, stagesOnce, wholeSink, type MatchShard, type MatchSink } from './shards.js';
import { publishSourceRanking } from './rankings.js';
import { MatchWindow, candidatesInWindow, harvestedAt, publishSourceCost, type MatchContext, type MatchOptions, type MatchStageName, type MatchSummary } from './context.js';

export type { MatchOptions, MatchStageName, MatchSummary };

interface SourceResult {
  id: number;
  sha: string;
  cand: CandidateInput[];
  failed?: string;
  /** Its plain search as a sharded window's wide-baseline decision reads it. */
  wide?: PartialWide;
}

export const emptySummary = (): MatchSummary => ({
  indexed: 0, indexedImages: 0, indexMemoryBytes: 0, sources: 0, withCandidates: 0, candidates: 0,
  viewed: 0, archived: 0, denseComputed: 0, reused: 0, failed: 0, aborted: false, ms: 0,
});

/** A match run over the pending sources (see the file's header). */
export class MatchRun implements MatchContext {
  readonly window = new MatchWindow();
  readonly views: ViewPool;
  readonly dense: DenseViewsSource;
  readonly top: number;
  readonly windowMs: number;
  private readonly cands: CandidatesRepo;
  private readonly feats: FeaturesRepo;
  private readonly wide: WideBaseline;
  readonly sharded: boolean;

  private constructor(readonly bank: Bank, readonly config: Config, readonly opts: MatchOptions, readonly handle: IndexHandle, readonly sink: MatchSink, readonly summary: MatchSummary, readonly seq: number, readonly shard: MatchShard | null) {
    this.top = opts.top ?? config.match.top;
    this.sharded = shard !== null;
    this.windowMs = config.lsh.window * 86_400_000;
    this.cands = bank.repo(CandidatesRepo);
    this.feats = bank.repo(FeaturesRepo);
    // One pool for the views of the whole run (not one per query), stopped however the run ends.
    this.views = new ViewPool(config, opts.threads, opts.logger);
    this.dense = denseViewsFor(bank, config, this.views.run);
    this.wide = new WideBaseline(this);
  }

  /** The index (the whole, or one shard's) and a run over the pending sources; a summary instead when stopped before
   *  the search. */
  static async open(bank: Bank, config: Config, opts: MatchOptions, shard: MatchShard | null = null): Promise<MatchRun | MatchSummary> {
    const summary = emptySummary();
    if (opts.signal?.aborted) return { ...summary, aborted: true };
    summary.indexed = (await indexTargets(bank, config, { signal: opts.signal, logger: opts.logger, reencodeProgress: opts.reencodeProgress })).indexed;
    const cands = bank.repo(CandidatesRepo);
    const seq = await bank.repo(LshRepo).sequence();
    // lsh.window bounds the index in memory: targets harvested before the window of this run's oldest pending source
    // could be nobody's candidate here, and are dropped (the search masks what is outside each source's window, so
    // what a process holds beyond that changes no result).
    const windowMs = config.lsh.window * 86_400_000;
    const oldest = windowMs ? await cands.oldestPendingHarvest(seq, opts.idRange) : null;
    const floor = oldest && Number.isFinite(Date.parse(oldest)) ? Date.parse(oldest) - windowMs : -Infinity;
    const handle = await openIndex(bank, config, floor, shard?.range, shard?.plan.ranges);
    summary.indexedImages = handle.index.size;
    summary.indexMemoryBytes = handle.memoryBytes();
    const total = await cands.countPending(seq);
    opts.progress?.setTotal(total);
    opts.logger?.info(`match: ${total} source items against ${handle.index.size} indexed target images${shard ? ` (shard ${shard.range.first}..${shard.range.last})` : ''}`);
    const top = opts.top ?? config.match.top;
    const window = opts.idRange ?? { first: 0, last: OPEN_END };
    const sink = shard ? shardSink(shard, { config, seq, top, confidentScore: config.lsh.confidentScore, window, queueWide: shard.queueWide,
      inWindow: (id, c) => candidatesInWindow(bank, windowMs, id, c),
      merged: (c) => {
        summary.withCandidates += c.length ? 1 : 0;
        summary.candidates += c.length;
      },
    }) : wholeSink(seq);
    return new MatchRun(bank, config, opts, handle, sink, summary, seq, shard);
  }

  /** The pending sources, window after window (a shard's wide phase: the sources its window's decision chose). */
  async walk(): Promise<void> {
    if (this.shard?.phase === 'wide') return this.walkWide();
    const range = this.opts.idRange;
    const perWindow = this.config.worker.batch.match;
    const batchSize = this.opts.batchSize ?? 20;
    let afterId = range ? range.first - 1 : 0;
    for (;;) {
      if (this.opts.signal?.aborted) {
        this.summary.aborted = true;
        return;
      }
      const batch = (await this.cands.pendingSources(this.seq, afterId, Math.min(batchSize, perWindow - this.window.count))).filter((b) => !range || b.id <= range.last);
      if (!batch.length) break;
      this.window.count += batch.length;
      afterId = batch[batch.length - 1]!.id;
      const results: SourceResult[] = [];
      const harvest = await this.harvestTimes(batch.map((b) => b.id));
      for (const s of batch) results.push(await this.searchSource(s, harvest.get(s.id)));
      await this.storeBatch(results);
      this.opts.progress?.tick(batch.length);
      if (this.window.count >= perWindow && !(await this.endWindow())) return;
    }
    if (this.window.count) await this.endWindow();
  }

  async close(): Promise<void> {
    await this.views.close();
    this.summary.denseComputed = this.dense.stats.computed;
  }

  /** When the source was harvested (epoch ms; NaN when unknown). */
  harvestedAt(i: Item | undefined): number {
    return harvestedAt(i);
  }

  /** With lsh.window, when each of these sources was harvested (epoch ms, NaN when unknown), read at once; without
   *  it, nothing (a source's search then has no time bound). */
  private async harvestTimes(ids: number[]): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    if (!this.windowMs) return out;
    const items = await this.bank.items.byIds(ids);
    for (const id of ids) out.set(id, this.harvestedAt(items.get(id)));
    return out;
  }

  /** lsh.window (the news case): a source keeps only the candidates harvested within N days of it. */
  inWindow(sourceId: number, cand: CandidateInput[]): Promise<CandidateInput[]> {
    return candidatesInWindow(this.bank, this.windowMs, sourceId, cand);
  }

  /**
   * One source's plain search. One search per picture: a source showing a picture already ranked in this window (the
   * same image, or a near-identical copy) takes its candidates, in its own pixels; under lsh.window only a source
   * harvested at the same time does (another time has another window, so another search). One source's failure (its
   * features unreadable, a throw in the search or the verification) is that item's: it is marked failed with the
   * reason and the run goes on with the others.
   */
  private async searchSource(s: { id: number; imageSha256: string }, at: number | undefined): Promise<SourceResult> {
    let cand: CandidateInput[] = [];
    let wide: PartialWide | undefined;
    try {
      const q = await this.feats.get(s.imageSha256);
      // a shard votes even when it holds no target (its part of the source's one search is then empty)
      if (q && (this.handle.index.size || this.shard)) {
        const picture = (q.twinOf ?? s.imageSha256) + (at === undefined ? '' : `@${at}`);
        const width = q.width / q.scale;
        const seen = this.window.pictures.get(picture);
        if (seen) {
          cand = seen.cand.map((c) => rescaleCandidate(c, width / seen.width, 1));
          seen.members.push({ id: s.id, sha: s.imageSha256, width });
          if (seen.wide) wide = { ...seen.wide, searched: false };
          this.summary.reused++;
        } else if (this.shard) {
          // A shard's plain search is its first step only: the window's merge verifies every shard's votes at once.
          const c0 = process.cpuUsage();
          const w0 = performance.now();
          wide = this.voteOnShard(q, picture, at);
          this.window.pictures.set(picture, { cand, width, members: [{ id: s.id, sha: s.imageSha256, width }], wide });
          publishSourceCost(s.id, 'plain', c0, w0, 0);
        } else {
          // The plain search only: views and archive matching are handed out at the window's end (wide.ts).
          const c0 = process.cpuUsage();
          const w0 = performance.now();
          const r = await rankAgainstIndex(this.handle, this.config, q, this.top, greyLoader(this.config, () => this.bank.images.read(s.imageSha256)), this.views.run, () => false, at);
          cand = r.cand;
          publishSourceRanking(s.id, 'plain', () => r.votes.slots.map((sl, i) => [this.handle.slot(sl)?.itemId ?? -1, r.votes.votes[i]!]), shortlistPromise(r.votes));
          wide = { picture, searched: true, sure: !unconfident(this.config, r.hits), evidence: r.evidence, top: shortlistVotes(r.votes) };
          this.window.pictures.set(picture, { cand, width, members: [{ id: s.id, sha: s.imageSha256, width }], wide });
          const promise = unconfident(this.config, r.hits) ? shortlistPromise(r.votes) : undefined;
          if (promise !== undefined) this.window.unconfident.push({ picture, id: s.id, sha: s.imageSha256, evidence: r.evidence, hits: r.hits, promise, verified: verifiedBelow(r.hits), ranking: r.votes.slots, at });
          publishSourceCost(s.id, 'plain', c0, w0, cand.length, promise);
        }
      }
    } catch (err) {
      if (isInfrastructureFailure(err)) throw err; // the store's or the bank's fault, not this item's: stop, resume next run
      const reason = `match: ${errorMessage(err)}`;
      this.opts.logger?.warn(`match: source item ${s.id} failed: ${reason}`);
      return { id: s.id, sha: s.imageSha256, cand: [], failed: reason };
    }
    return { id: s.id, sha: s.imageSha256, cand: await this.inWindow(s.id, cand), wide };
  }

  /** A shard's votes for one picture (the direct pass and the mirror pass, each with its shortlist's collisions), as the
   *  window's merge verifies them (global.ts); its shortlist and top votes in keypoints, as the merges read them. */
  private voteOnShard(q: Features, picture: string, at: number | undefined): PartialWide {
    const p = { ...searchParams(this.config), window: searchWindow(this.handle, this.config, at) };
    const v = prepare(q);
    const again = reprobes(this.handle.index, p);
    const d = shardVotePass(this.handle.index, v, p, false, { record: again });
    const m = p.mirror ? shardVotePass(this.handle.index, prepare(mirrorFeatures(q)), p, true) : undefined;
    // the reprobe pass's votes too (whether it is verified is known only once every shard's direct and mirror passes are)
    // (scanning only the buckets it adds to the direct pass's: ScanRecord)
    const r = again ? shardVotePass(this.handle.index, v, p, false, { probes: p.reprobe, resume: d.record }) : undefined;
    const direct = votedEntries(this.handle, d);
    const mirror = m ? votedEntries(this.handle, m) : [];
    const top = direct.slice(0, 3).map((e) => e[2]);
    const keypoints = { direct: passKeypoints(d), mirror: m && passKeypoints(m), ...(r ? { reprobe: passKeypoints(r) } : {}) };
    return { picture, searched: true, sure: false, evidence: null, top, shortlist: direct.map((e) => [e[0], e[2]]), voted: { direct, mirror, ...(r ? { reprobe: votedEntries(this.handle, r) } : {}), keypoints } };
  }

  /** A batch's candidates in one transaction; a failed source is marked failed (not matched: it waits for a new image
   *  or --retry-failed), the others are marked matched at the end of the window. */
  private async storeBatch(results: SourceResult[]): Promise<void> {
    const now = new Date().toISOString();
    await this.bank.transaction(async (tx) => {
      for (const r of results) {
        await this.sink.put(tx, r, r.cand, now, r.wide);
        if (r.failed) await tx.items.setStatus(r.id, 'failed', r.failed);
      }
    });
    for (const r of results) {
      if (r.failed) {
        this.summary.failed++;
        continue;
      }
      this.summary.sources++;
      this.window.sources.push({ id: r.id, sha: r.sha });
      if (r.cand.length) this.summary.withCandidates++;
      this.summary.candidates += r.cand.length;
    }
  }

  /**
   * The window's wide-baseline stages, then its sources marked matched, all at once (a shard's job: merged, those
   * whose every shard is in: the sink). False when the run stopped before (the window stays pending). A picture is
   * searched once per window, as in a worker's job.
   */
  private async endWindow(): Promise<boolean> {
    // sharded, the wide-baseline stages wait for every shard's plain searches (the sink decides, shardSink)
    const done = this.shard ? true : await this.wide.spend(this.window);
    return this.closeWindow(done);
  }

  private async closeWindow(done: boolean): Promise<boolean> {
    if (!done) {
      this.summary.aborted = true;
      return false;
    }
    const now = new Date().toISOString();
    const sources = [...this.window.sources];
    const count = this.window.count;
    await this.bank.transaction((tx) => this.sink.windowDone(tx, sources, now, count));
    this.window.reset();
    await this.finish();
    return true;
  }

  /** A sharded window's last step (the sink's): the plain phase's decision; the wide phase's stages run once per
   *  picture (shard-wide.ts), then the merge. */
  private async finish(): Promise<void> {
    await this.sink.finish?.(this.bank, (bySource) => wideOnce(this, bySource));
  }

  /**
   * A shard's wide phase (issue 35): the sources of this job's window whose pictures the window's decision gave
   * wide-baseline stages (their partial results on this shard, not yet done). A picture given archive matching or the
   * views search alone (stagesOnce) only votes for its queries on this shard (denseOnShard, viewsOnShard; the job
   * completing the window verifies and matches once, shard-wide.ts); a picture given both (archive.views 'before') or
   * two-sided views is searched again on this shard (the plain search: its hits and ranking, which the stages start
   * from), then its stages run on this shard. The window ends as any (the sink merges once every shard is done).
   */
  private async walkWide(): Promise<void> {
    const r = this.opts.idRange ?? { first: 0, last: OPEN_END };
    const key = `${this.shard!.range.first}-${this.shard!.range.last}`;
    const parts = (await this.bank.repo(MatchPartialsRepo).inRange(this.shard!.plan.id, r.first, r.last)).filter((p) => p.shard === key && p.wide?.stages && !p.wide.done);
    const stages = new Map<string, NonNullable<PartialWide['stages']>>();
    const harvest = await this.harvestTimes(parts.map((p) => p.sourceItemId));
    for (const p of parts) {
      const w = p.wide!;
      const q = await this.feats.get(p.imageSha256);
      const width = q ? q.width / q.scale : 1;
      let entry = this.window.pictures.get(w.picture);
      if (!entry) this.window.pictures.set(w.picture, (entry = { cand: [], width, members: [] }));
      entry.members.push({ id: p.sourceItemId, sha: p.imageSha256, width });
      this.window.sources.push({ id: p.sourceItemId, sha: p.imageSha256 });
      this.sink.remember?.(p.sourceItemId, p.candidates, w);
      if (!w.searched || !q) continue;
      const at = harvest.get(p.sourceItemId);
      if (stagesOnce(w.stages, this.config)) {
        // only this shard's votes: the job completing the wide phase verifies and matches once (shard-wide.ts)
        const c0 = process.cpuUsage();
        const w0 = performance.now();
        const voted = archiveOnly(w.stages) ? { dense: await denseOnShard(this, p.imageSha256, q, at) } : { views: await viewsOnShard(this, p.imageSha256, q, at, w.stages!.views!) };
        this.sink.remember?.(p.sourceItemId, p.candidates, { ...w, ...voted });
        publishSourceCost(p.sourceItemId, 'shard-votes', c0, w0, 0);
        continue;
      }
      entry.cand = p.candidates;
      entry.width = width;
      stages.set(w.picture, w.stages!);
      const plain = await rankAgainstIndex(this.handle, this.config, q, this.top, greyLoader(this.config, () => this.bank.images.read(p.imageSha256)), this.views.run, () => false, at);
      this.window.unconfident.push({ picture: w.picture, id: p.sourceItemId, sha: p.imageSha256, evidence: plain.evidence, hits: plain.hits, promise: 0, ranking: plain.votes.slots, at });
    }
    this.window.count = parts.length;
    // none left on this shard (a job run again after its rows were written): what is complete is still merged
    if (!parts.length) return this.finish();
    await this.closeWindow(await this.wide.spendChosen(this.window, stages));
  }
}
