// Target shards (issue 35): the index split by target item id range, so that an archive larger than one worker's
// memory is matched by several. A match job is one window of sources against one shard; each source's verified
// candidates from each shard are kept (MatchPartialsRepo) until its last shard is in, then merged by image score
// into its candidates, and the source is marked matched. One process with the same plan does the same jobs one
// after the other, so one process and any number of workers end with the same candidates and pairs.
//
// The plan: lsh.shards N (N >= 2), or, with lsh.shards 0 and lsh.memoryMB M, as many shards as the index needs to
// fit M each (12 bytes a keypoint, estimateIndexBytes); ranges of about equal keypoints in item id order, the last
// open-ended (new targets join it). It is kept in the bank (meta lsh.shardPlan) and made again only when the count
// changes or a shard outgrows its share by half, so workers keep the shards they loaded.
import { createHash } from 'node:crypto';
import type { Bank, BankScope, CandidateInput, IdRange, MatchPartial, PartialWide, TargetRange } from '../../bank/index.js';
import { CandidatesRepo, JobsRepo, LshRepo, MatchPartialsRepo } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import { estimateIndexBytes } from '../../lib/image-index/index.js';
import { decideWide } from './choice.js';
import { GlobalVerifier, type GlobalPlain } from './global.js';

export interface ShardPlan {
  id: string;
  ranges: TargetRange[];
}

/**
 * A match run's part of the plan: which shard it searches (the rest it merges with), and which phase of its window:
 * 'plain', the plain searches (the last shard in merges them and decides, once for the whole index, which pictures
 * get the wide-baseline stages); 'wide', those stages for the pictures that decision chose (the last shard in merges).
 */
export interface MatchShard {
  plan: ShardPlan;
  range: TargetRange;
  phase: ShardPhase;
  /** A worker's job: the wide phase's jobs are queued when its decision asks for them (one process runs them). */
  queueWide: boolean;
}

export type ShardPhase = 'plain' | 'wide';

const META = 'lsh.shardPlan';
/** The last shard's upper bound: every later target joins it. */
export const OPEN_END = Number.MAX_SAFE_INTEGER;

const rangeText = (r: TargetRange) => `${r.first}-${r.last}`;

/** A match job's key: its shard and plan ("first-last@plan"; its wide-baseline phase: "first-last@plan/wide"). */
export const shardKey = (plan: ShardPlan | string, r: TargetRange, phase: ShardPhase = 'plain'): string =>
  `${rangeText(r)}@${typeof plan === 'string' ? plan : plan.id}${phase === 'wide' ? '/wide' : ''}`;

export function parseShardKey(key: string): { plan: string; range: TargetRange; phase: ShardPhase } | null {
  const m = /^(\d+)-(\d+)@([0-9a-f]+)(\/wide)?$/.exec(key);
  return m ? { plan: m[3]!, range: { first: Number(m[1]), last: Number(m[2]) }, phase: m[4] ? 'wide' : 'plain' } : null;
}

/** The shard count the config asks for, given the index's size (1: unsharded). */
export function shardCount(config: Config, keypoints: number, images: number): number {
  if (config.lsh.shards >= 1) return config.lsh.shards;
  const budget = config.lsh.memoryMB * 1024 * 1024;
  return budget > 0 ? Math.max(1, Math.ceil(estimateIndexBytes(keypoints, images) / budget)) : 1;
}

/** Ranges of about equal keypoints over the indexed targets in item id order (fewer when there are fewer targets). */
async function splitRanges(bank: BankScope | Bank, count: number, total: number): Promise<TargetRange[]> {
  const repo = bank.repo(LshRepo);
  const cuts: number[] = [];
  let acc = 0;
  let after = 0;
  for (;;) {
    const page = await repo.itemKeypoints(after, 5000);
    if (!page.length) break;
    for (const r of page) {
      acc += r.count;
      if (cuts.length < count - 1 && acc >= (total * (cuts.length + 1)) / count) cuts.push(r.itemId);
    }
    after = page[page.length - 1]!.itemId;
  }
  const ranges: TargetRange[] = [];
  let first = 0;
  for (const c of cuts) {
    if (c < first) continue;
    ranges.push({ first, last: c });
    first = c + 1;
  }
  ranges.push({ first, last: OPEN_END });
  return ranges;
}

const planId = (ranges: TargetRange[]) => createHash('sha1').update(ranges.map(rangeText).join(',')).digest('hex').slice(0, 12);

/** The plan stored in the bank, if any. */
export async function storedPlan(bank: Bank | BankScope): Promise<ShardPlan | null> {
  return (await bank.meta.getJson<ShardPlan>(META)) ?? null;
}

/**
 * The shard plan for this config and index: the stored one while it still fits (same count, no shard above 1.5
 * times its share), else a new one, stored. Null when the index is not sharded (then any stored plan is forgotten).
 */
export async function currentPlan(bank: Bank | BankScope, config: Config): Promise<ShardPlan | null> {
  const repo = bank.repo(LshRepo);
  const total = await repo.keypointTotal();
  const images = (await repo.signature()).count;
  const count = Math.min(shardCount(config, total, images), Math.max(1, images));
  const stored = await storedPlan(bank);
  if (count <= 1) {
    if (stored) await bank.meta.set(META, 'null');
    return null;
  }
  if (stored && stored.ranges.length === count) {
    let fits = true;
    for (const r of stored.ranges) if ((await repo.keypointTotal(r)) > (1.5 * total) / count) fits = false;
    if (fits) return stored;
  }
  const ranges = await splitRanges(bank, count, total);
  const plan = { id: planId(ranges), ranges };
  await bank.meta.setJson(META, plan);
  return plan;
}

/**
 * A source's candidates from each shard as one ranked list, as one search of the whole index ranks them. With
 * lsh.confidentScore and lsh.shortlist given, only the images one search would have verified count (withinShortlist).
 * One search verifies its whole shortlist (a confident hit only spares it the mirror pass and the re-collision), so
 * every verified image of that shortlist is kept, however few its votes (round 4 dropped those with fewer votes than
 * the most-voted confident hit: the weak rank-2-5 matches that made bench:scale's pairs differ).
 */
export function mergePartials(all: MatchPartial[], top: number, confidentScore?: number, shortlist?: number): CandidateInput[] {
  const parts = shortlist && confidentScore !== undefined ? withinShortlist(all, shortlist, confidentScore) : all;
  // A shard whose direct search was confident means the whole search was: it would not have run the mirror pass,
  // so no shard's mirrored hits count.
  const confident = parts.some((p) => p.confident);
  // one picture per rank within a shard (its indexed item first, then the items showing the same picture)
  const groups: CandidateInput[][] = [];
  for (const p of parts) {
    const byRank = new Map<number, CandidateInput[]>();
    for (const c of p.candidates) {
      if (confident && c.mirrored) continue;
      let g = byRank.get(c.rank);
      if (!g) byRank.set(c.rank, (g = []));
      g.push(c);
    }
    groups.push(...byRank.values());
  }
  groups.sort((a, b) => b[0]!.imageScore - a[0]!.imageScore || b[0]!.inliers - a[0]!.inliers || a[0]!.targetItemId - b[0]!.targetItemId);
  return groups.slice(0, top).flatMap((g, i) => g.map((c) => ({ ...c, rank: i + 1 })));
}

/**
 * One search of the whole index verifies its `n` most-voted images; each shard verified its own `n`. Votes counted in
 * keypoints compare across shards: the direct (not mirrored) candidates of images outside the `n` most-voted of all
 * shards' shortlists together are dropped, and whether a shard was confident is judged on what is left. A result the
 * wide-baseline stages replaced (views, archive matching: other images than the shortlist's) is kept whole. A
 * candidate's image is the indexed item at the head of its rank (the items showing the same picture follow it; only
 * the head is in the shortlist).
 */
function withinShortlist(parts: MatchPartial[], n: number, confidentScore: number): MatchPartial[] {
  if (!parts.every((p) => p.wide?.shortlist)) return parts;
  const union = parts.flatMap((p) => p.wide!.shortlist!).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const keep = new Set(union.slice(0, n).map(([id]) => id));
  return parts.map((p) => {
    if (p.wide!.replaced) return p;
    const head = new Map<number, number>();
    for (const c of p.candidates) if (!head.has(c.rank)) head.set(c.rank, c.targetItemId);
    const candidates = p.candidates.filter((c) => c.mirrored || keep.has(head.get(c.rank)!));
    return { ...p, candidates, confident: candidates.some((c) => !c.mirrored && c.imageScore >= confidentScore) };
  });
}

/** Where a match run puts each source's candidates, and what ends a window. */
export interface MatchSink {
  /** wide: what the window's wide-baseline decision needs of this plain search (a shard's sink keeps it). */
  put(tx: BankScope, s: { id: number; sha: string }, cand: CandidateInput[], now: string, wide?: PartialWide): Promise<void>;
  /** The window's sources are searched (views included): they are marked matched, or, sharded, merged when complete.
   *  count: the pending rows the window took (its wide-baseline budgets' base). */
  windowDone(tx: BankScope, sources: { id: number; sha: string }[], now: string, count: number): Promise<void>;
  /** A shard's wide phase: a waiting source's stored result, as the sink starts from (nothing written). */
  remember?(id: number, cand: CandidateInput[], wide: PartialWide): void;
  /** After the window's end is committed: a shard's plain phase decides the window's wide-baseline stages (when every
   *  shard is in); its wide phase runs the stages run once per picture (`once`: shard-wide.ts) for the window's
   *  sources whose every shard has voted, outside the merge lock, and merges them under it. */
  finish?(bank: Bank, once: StagesOnce): Promise<void>;
}

/** The stages run once for a window's sources (each one's parts on every shard): their candidates (undefined: the
 *  shards' as they are). */
export type StagesOnce = (bySource: Map<number, MatchPartial[]>) => Promise<Map<number, CandidateInput[] | undefined>>;

/** Whether a decision's stages send a picture to archive matching without the views search (what the default
 *  match.views.archive.views 'none' gives every picture chosen for archive matching): matched once per picture, by the
 *  job completing the window's wide phase (shard-wide.ts), not on each shard. */
export const archiveOnly = (st: PartialWide['stages'] | undefined): boolean => !!st?.archive && !st.views;

/** The views search alone (the picture's other choice under archive.views 'none'), without two-sided views
 *  (match.views.targetViews 0, the default): searched once per picture, as archive matching is. */
export const viewsOnly = (st: PartialWide['stages'] | undefined, config: Config): boolean => !!st?.views && !st.archive && config.match.views.targetViews === 0;

/** The stages the job completing the window's wide phase runs once per picture (shard-wide.ts); the others run on each
 *  shard (run.ts) and are merged by score (mergePartials). */
export const stagesOnce = (st: PartialWide['stages'] | undefined, config: Config): boolean => archiveOnly(st) || viewsOnly(st, config);

/** The whole index in one run: candidates stored as they are, sources marked matched at the window's end. */
export function wholeSink(seq: number): MatchSink {
  return {
    put: (tx, s, cand, now) => tx.repo(CandidatesRepo).replaceFor(s.id, cand, now),
    windowDone: async (tx, sources, now) => {
      for (const s of sources) await tx.repo(CandidatesRepo).markMatched(s.id, s.sha, seq, now);
    },
  };
}

/** What a shard's sink is told besides the shard: the index watermark, candidates kept, lsh.confidentScore, the
 *  window's id range, and whether to queue the wide-baseline jobs its decision asks for (workers; one process runs
 *  them itself). */
export interface ShardSinkOptions {
  config: Config;
  seq: number;
  top: number;
  confidentScore: number;
  window: IdRange;
  queueWide: boolean;
  /** lsh.window's filter of a source's candidates (the merge's verified search stores them as a search does). */
  inWindow: (id: number, cand: CandidateInput[]) => Promise<CandidateInput[]>;
  /** Told each merged source's candidates (the run's summary counts them: a shard's plain job stores none). */
  merged?: (cand: CandidateInput[]) => void;
}

/**
 * One shard: each source's result kept apart (MatchPartialsRepo). A result is confident when its best direct (not
 * mirrored) candidate scores lsh.confidentScore (its search then ran no mirror pass). At the window's end, under the
 * merge lock (one merger at a time: whichever shard's job finishes last merges):
 * - plain phase: once every shard's plain searches of the window are in, the wide-baseline decision is taken over
 *   them together (decideWide: as one search of the whole index would be judged); the sources it gives no stage are
 *   merged and marked matched, the others wait for the wide phase (its jobs queued for every shard);
 * - wide phase: this shard has run the stages; once every shard has, the sources are merged and marked matched.
 */
export function shardSink(shard: MatchShard, o: ShardSinkOptions): MatchSink {
  const key = rangeText(shard.range);
  const wideOf = new Map<number, PartialWide>();
  const candOf = new Map<number, CandidateInput[]>();
  const merger = new ShardMerger(shard, o);
  /** The plain phase's window just ended (its sources and pending count): finish decides over it. */
  let plainDone: { sources: { id: number; sha: string }[]; count: number } | null = null;
  const row = (s: { id: number; sha: string }, cand: CandidateInput[], wide: PartialWide | undefined): MatchPartial => ({
    sourceItemId: s.id, shard: key, plan: shard.plan.id, imageSha256: s.sha, seq: o.seq,
    confident: cand.some((c) => !c.mirrored && c.imageScore >= o.confidentScore), candidates: cand, wide,
  });
  return {
    put: async (tx, s, cand, now, wide) => {
      if (shard.phase === 'plain') return tx.repo(MatchPartialsRepo).put(row(s, cand, wide), now);
      // the wide phase's results are kept here and written at the window's end, under the merge lock, for the sources
      // still waiting for this shard's stages (another job may have merged them meanwhile: a lease taken over)
      candOf.set(s.id, cand);
      const w = wideOf.get(s.id);
      if (w) wideOf.set(s.id, { ...w, replaced: true });
    },
    remember: (id, cand, wide) => {
      wideOf.set(id, wide);
      candOf.set(id, cand);
    },
    windowDone: async (tx, sources, now, count) => {
      if (shard.phase === 'plain') return void (plainDone = { sources, count });
      await tx.repo(MatchPartialsRepo).lockMerge();
      // the window's stored results, read once (every shard's, every source's)
      const rows = new WindowRows(await tx.repo(MatchPartialsRepo).inRange(shard.plan.id, o.window.first, o.window.last));
      for (const s of sources) {
        const mine = rows.of(s.id).find((p) => p.shard === key);
        if (!mine?.wide?.stages || mine.wide.done) continue;
        const done = row(s, candOf.get(s.id) ?? [], { ...(wideOf.get(s.id) ?? mine.wide), done: true });
        await tx.repo(MatchPartialsRepo).put(done, now);
        rows.replace(done);
      }
      await merger.mergeComplete(tx, rows, sources, now, (p) => p.wide?.done === true);
    },
    finish: async (bank, once) => {
      if (shard.phase === 'wide') return merger.finishOnce(bank, once);
      const done = plainDone;
      plainDone = null;
      // the wide phase's jobs queued in the decision's transaction (workers; one process runs them itself)
      const r = o.window;
      const queue = (tx: BankScope) => tx.repo(JobsRepo).enqueueKeyedRanges('match', shard.plan.ranges.map((t) => ({ range: r, key: shardKey(shard.plan, t, 'wide') })));
      if (done) await merger.decide(bank, done.sources, done.count, o.queueWide ? queue : undefined);
    },
  };
}

/** A window's stored partial results by source (read once at the window's end). */
class WindowRows {
  private readonly bySource = new Map<number, MatchPartial[]>();
  constructor(rows: MatchPartial[]) {
    for (const r of rows) this.of(r.sourceItemId, true).push(r);
  }

  sourceIds(): number[] {
    return [...this.bySource.keys()];
  }

  of(id: number, create = false): MatchPartial[] {
    let list = this.bySource.get(id);
    if (!list) {
      list = [];
      if (create) this.bySource.set(id, list);
    }
    return list;
  }

  /** A row just written in place of the one of its source and shard. */
  replace(p: MatchPartial): void {
    const list = this.of(p.sourceItemId, true);
    const i = list.findIndex((x) => x.shard === p.shard);
    if (i >= 0) list[i] = p;
    else list.push(p);
  }
}

/** The merges of one plan's partial results (shardSink's window ends). */
class ShardMerger {
  private readonly want: Set<string>;
  private readonly config: Config;
  constructor(private readonly shard: MatchShard, private readonly o: ShardSinkOptions) {
    this.config = o.config;
    this.want = new Set(shard.plan.ranges.map(rangeText));
  }

  /** A source's results of this plan and image, when every shard's are in and pass `complete`; else null. */
  private parts(rows: WindowRows, s: { id: number; sha: string }, complete: (p: MatchPartial) => boolean = () => true): MatchPartial[] | null {
    const parts = rows.of(s.id).filter((p) => p.plan === this.shard.plan.id && p.imageSha256 === s.sha && this.want.has(p.shard));
    return parts.length === this.want.size && parts.every(complete) ? parts : null;
  }

  async merge(tx: BankScope, id: number, parts: MatchPartial[], now: string, cand?: CandidateInput[]): Promise<void> {
    const merged = cand ?? mergePartials(parts, this.o.top, this.config.lsh.confidentScore, this.config.lsh.shortlist);
    await tx.repo(CandidatesRepo).replaceFor(id, merged, now);
    this.o.merged?.(merged);
    await tx.repo(CandidatesRepo).markMatched(id, parts[0]!.imageSha256, Math.min(...parts.map((p) => p.seq)), now);
    await tx.repo(MatchPartialsRepo).deleteFor(id);
  }

  /** Merges the sources whose every shard's results are in and pass `complete` (not those whose stages run once:
   *  finishOnce merges them). */
  async mergeComplete(tx: BankScope, rows: WindowRows, sources: { id: number; sha: string }[], now: string, complete?: (p: MatchPartial) => boolean): Promise<void> {
    for (const s of sources) {
      const parts = this.parts(rows, s, complete);
      if (parts && !stagesOnce(parts[0]!.wide?.stages, this.config)) await this.merge(tx, s.id, parts, now);
    }
  }

  /**
   * The window's sources whose stages run once (stagesOnce) and whose every shard's wide job is done: their pictures
   * searched once (`once`: shard-wide.ts's wideOnce, outside any transaction: it reads the bank and the image store,
   * and runs for seconds), then merged under the merge lock where they are still waiting (another job may have merged
   * them meanwhile: the same result). Reads the window's rows itself, so that a job run again after its own rows were
   * written still merges them.
   */
  async finishOnce(bank: Bank, once: StagesOnce): Promise<void> {
    const w = this.o.window;
    const repo = bank.repo(MatchPartialsRepo);
    const ready = (p: MatchPartial) => p.wide?.done === true && stagesOnce(p.wide.stages, this.config);
    const waiting = (rows: WindowRows) => {
      const out = new Map<number, MatchPartial[]>();
      for (const id of rows.sourceIds()) {
        const parts = this.parts(rows, { id, sha: rows.of(id)[0]!.imageSha256 }, ready);
        if (parts) out.set(id, parts);
      }
      return out;
    };
    const before = waiting(new WindowRows(await repo.inRange(this.shard.plan.id, w.first, w.last)));
    if (!before.size) return;
    const cand = await once(before);
    const now = new Date().toISOString();
    await bank.transaction(async (tx) => {
      await tx.repo(MatchPartialsRepo).lockMerge();
      const now2 = waiting(new WindowRows(await tx.repo(MatchPartialsRepo).inRange(this.shard.plan.id, w.first, w.last)));
      for (const [id, parts] of now2) if (cand.has(id)) await this.merge(tx, id, parts, now, cand.get(id));
    });
  }

  /**
   * When the window's plain searches are in from every shard: each source's one search verified over every shard's
   * votes (GlobalVerifier), the wide-baseline decision over those searches, the sources it gives no stage merged (their
   * candidates: that search's), the others' results marked with their stages and holding that search's candidates of
   * their own shard (the wide phase starts from them). The verification reads the bank outside any transaction (seconds
   * for a window: other jobs' window ends do not wait for it); what it decided is written under the merge lock for the
   * sources still undecided (two jobs that both found the window complete decide alike; the first writes). True when
   * some source waits for the stages.
   */
  async decide(bank: Bank, sources: { id: number; sha: string }[], count: number, queueWide?: (tx: BankScope) => Promise<unknown>): Promise<boolean> {
    const w = this.o.window;
    const undecided = (rows: WindowRows) => {
      const out = new Map<number, MatchPartial[]>();
      for (const s of sources) {
        const parts = this.parts(rows, s);
        // decided already: another shard's job found the window complete first
        if (parts && !parts.some((p) => p.wide?.stages)) out.set(s.id, parts);
      }
      return out;
    };
    const complete = undecided(new WindowRows(await bank.repo(MatchPartialsRepo).inRange(this.shard.plan.id, w.first, w.last)));
    if (!complete.size) return false;
    const verifier = new GlobalVerifier(bank, this.config, this.o.top, this.o.inWindow);
    const plain = new Map<number, GlobalPlain | null>();
    for (const s of sources) if (complete.has(s.id)) plain.set(s.id, await verifier.verify(s.id, s.sha, complete.get(s.id)!));
    const stages = decideWide(this.config, plain, count);
    const now = new Date().toISOString();
    return bank.transaction(async (tx) => {
      await tx.repo(MatchPartialsRepo).lockMerge();
      const still = undecided(new WindowRows(await tx.repo(MatchPartialsRepo).inRange(this.shard.plan.id, w.first, w.last)));
      let waiting = false;
      for (const [id, parts] of still) {
        if (!plain.has(id)) continue;
        const g = plain.get(id);
        const st = g ? stages.get(g.picture) : undefined;
        // a source without the shards' votes (no features; a partial of before round 5): merged as the shards left it
        if (!st) await this.merge(tx, id, parts, now, g?.cand);
        else {
          waiting = true;
          await this.waitFor(tx, parts, g!, st, now);
        }
      }
      if (waiting) await queueWide?.(tx);
      return waiting;
    });
  }

  /** A source given wide-baseline stages: its result on each shard holds the verified search's candidates of that
   *  shard, and the stages. */
  private async waitFor(tx: BankScope, parts: MatchPartial[], g: GlobalPlain, st: NonNullable<PartialWide['stages']>, now: string): Promise<void> {
    for (const p of parts) {
      const candidates = onShard(g.cand, p.shard);
      const confident = candidates.some((c) => !c.mirrored && c.imageScore >= this.config.lsh.confidentScore);
      // the stages run once (shard-wide.ts) verify the plain search again from the shards' votes: kept for them;
      // the shards' shortlists are not the verified search's (withinShortlist would filter by them): dropped
      const voted = stagesOnce(st, this.config) ? p.wide!.voted : undefined;
      await tx.repo(MatchPartialsRepo).put({ ...p, candidates, confident, wide: { ...p.wide!, voted, shortlist: undefined, stages: st, done: false } }, now);
    }
  }
}

/** The candidates whose picture (the indexed item heading its rank; the twins follow it) is in a shard's range. */
function onShard(cand: CandidateInput[], shard: string): CandidateInput[] {
  const [first, last] = shard.split('-').map(Number) as [number, number];
  const head = new Map<number, number>();
  for (const c of cand) if (!head.has(c.rank)) head.set(c.rank, c.targetItemId);
  return cand.filter((c) => {
    const h = head.get(c.rank)!;
    return h >= first && h <= last;
  });
}
