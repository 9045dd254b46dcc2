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
import type { Bank, BankScope, CandidateInput, MatchPartial, TargetRange } from '../../bank/index.js';
import { CandidatesRepo, LshRepo, MatchPartialsRepo } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import { estimateIndexBytes } from '../../lib/image-index/index.js';

export interface ShardPlan {
  id: string;
  ranges: TargetRange[];
}

/** A match run's part of the plan: which shard it searches (the rest it merges with). */
export interface MatchShard {
  plan: ShardPlan;
  range: TargetRange;
}

const META = 'lsh.shardPlan';
/** The last shard's upper bound: every later target joins it. */
export const OPEN_END = Number.MAX_SAFE_INTEGER;

const rangeText = (r: TargetRange) => `${r.first}-${r.last}`;

/** A match job's key: its shard and plan ("first-last@plan"). */
export const shardKey = (plan: ShardPlan | string, r: TargetRange): string => `${rangeText(r)}@${typeof plan === 'string' ? plan : plan.id}`;

export function parseShardKey(key: string): { plan: string; range: TargetRange } | null {
  const m = /^(\d+)-(\d+)@([0-9a-f]+)$/.exec(key);
  return m ? { plan: m[3]!, range: { first: Number(m[1]), last: Number(m[2]) } } : null;
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

/** A source's candidates from each shard as one ranked list, as one search of the whole index ranks them. */
export function mergePartials(parts: MatchPartial[], top: number): CandidateInput[] {
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

/** Where a match run puts each source's candidates, and what ends a window. */
export interface MatchSink {
  put(tx: BankScope, s: { id: number; sha: string }, cand: CandidateInput[], now: string): Promise<void>;
  /** The window's sources are searched (views included): they are marked matched, or, sharded, merged when complete. */
  windowDone(tx: BankScope, sources: { id: number; sha: string }[], now: string): Promise<void>;
}

/** The whole index in one run: candidates stored as they are, sources marked matched at the window's end. */
export function wholeSink(seq: number): MatchSink {
  return {
    put: (tx, s, cand, now) => tx.repo(CandidatesRepo).replaceFor(s.id, cand, now),
    windowDone: async (tx, sources, now) => {
      for (const s of sources) await tx.repo(CandidatesRepo).markMatched(s.id, s.sha, seq, now);
    },
  };
}

/** One shard: each source's result kept apart; at the window's end, every source whose shards are all in is merged
 *  (in the same transaction, one merger at a time: whichever shard's job finishes last merges). A shard's result is
 *  confident when its best direct (not mirrored) candidate scores lsh.confidentScore: its search then ran no mirror
 *  pass (the candidates are the verified hits, best first). */
export function shardSink(shard: MatchShard, seq: number, top: number, confidentScore: number): MatchSink {
  const key = rangeText(shard.range);
  return {
    put: (tx, s, cand, now) => {
      const confident = cand.some((c) => !c.mirrored && c.imageScore >= confidentScore);
      return tx.repo(MatchPartialsRepo).put({ sourceItemId: s.id, shard: key, plan: shard.plan.id, imageSha256: s.sha, seq, confident, candidates: cand }, now);
    },
    windowDone: async (tx, sources, now) => {
      const repo = tx.repo(MatchPartialsRepo);
      await repo.lockMerge();
      const want = new Set(shard.plan.ranges.map(rangeText));
      for (const s of sources) {
        const parts = (await repo.forSource(s.id)).filter((p) => p.plan === shard.plan.id && p.imageSha256 === s.sha && want.has(p.shard));
        if (parts.length < want.size) continue;
        await tx.repo(CandidatesRepo).replaceFor(s.id, mergePartials(parts, top), now);
        await tx.repo(CandidatesRepo).markMatched(s.id, s.sha, Math.min(...parts.map((p) => p.seq)), now);
        await repo.deleteFor(s.id);
      }
    },
  };
}

