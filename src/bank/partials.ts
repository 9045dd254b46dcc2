// A source's verified candidates from one shard of the index (migration 30), until the source's every shard has
// searched it and the candidates are merged into `candidates` (the lsh-index layer decides the merge).
import type { Sql } from './sql.js';
import type { CandidateInput } from './candidates.js';

export interface MatchPartial {
  sourceItemId: number;
  shard: string;
  plan: string;
  imageSha256: string;
  seq: number;
  /** The shard's direct search found a confident hit. */
  confident: boolean;
  candidates: CandidateInput[];
  /** What the window's wide-baseline decision needs of this shard's plain search, and what it decided (absent:
   *  a source with no features, or a partial written before issue 35 round 4). */
  wide?: PartialWide | null;
}

/**
 * A source's plain search on one shard, as the wide-baseline decision (match.views, taken once for the whole index
 * when the window's shards are all in) reads it; then the stages that decision gave its picture, and whether this
 * shard has run them.
 */
export interface PartialWide {
  /** The picture (twin group) the source shows in its window; searched: the source the window searched for it. */
  picture: string;
  searched: boolean;
  /** The shard's plain search has a hit at match.views.confidence. */
  sure: boolean;
  /** viewEvidence of the shard's plain search (null: views could not pay). */
  evidence: number | null;
  /** Its three most-voted images' votes, counted in the query's keypoints (shortlistVotes), best first. */
  top: number[];
  /** Its shortlist as [target item id, votes counted in keypoints], most-voted first: the order its verification took
   *  them in (the merge stops where one search of the whole index would have stopped, mergePartials). */
  shortlist?: [number, number][];
  /** Set by the decision: the picture's wide-baseline stages (views: full or the dense query alone). */
  stages?: { views?: 'full' | 'dense'; archive?: boolean };
  /** This shard has run them. */
  done?: boolean;
  /** The plain search's first step on this shard (issue 35 round 5): its voted images, verified once for all shards by
   *  the job that completes the window (dropped once it has). */
  voted?: PartialVoted;
  /** They replaced this shard's plain result (its candidates are no longer the shortlist's). */
  replaced?: boolean;
  /** Archive matching's dense query voted on this shard (round 6: the shard's wide job; the merge ranks every shard's
   *  dense votes as one index would, and compares the candidates once); null: no dense query (image unreadable). */
  dense?: ShardPass | null;
  /** The views search's passes voted on this shard (round 6: the merge verifies each pass's one shortlist): the dense
   *  query alone, the plain keypoints with the views'; null: no views (image unreadable). */
  views?: { dense?: ShardPass; views?: ShardPass } | null;
}

/** A shard's voted images of one pass: [target item id, image sha-256, votes counted in the query's keypoints,
 *  collisions as (query kp, target kp) uint16 pairs in base64, the query keypoints that voted for it (uint32,
 *  ascending, base64; round 6: the merge's exact votes)], most-voted first. */
export type VotedEntry = [number, string, number, string, string?];

/** What one pass's query keypoints did on a shard (the image index's KeypointVotes, base64: weight float64, hist
 *  uint16, `bins` counts a keypoint), and the pass's copy votes and keypoints searched (the same on every shard: the
 *  whole index's bucket sizes). */
export interface PassKeypoints {
  weight: string;
  hist: string;
  bins: number;
  copy: number;
  keypoints: number;
  /** Each keypoint's burst (uint16, base64; issue 33 round 7): the merge's burst-discounted votes (the promise). */
  burst?: string;
}

/** A pass's voted images on one shard with what its keypoints did there (round 6: without it, the merge ranks by votes
 *  counted in keypoints, about the whole index's). */
export interface ShardPass {
  entries: VotedEntry[];
  keypoints?: PassKeypoints;
}

/** The direct pass's and the mirror pass's voted images on one shard. */
export interface PartialVoted {
  direct: VotedEntry[];
  mirror: VotedEntry[];
  /** The reprobe pass's (lsh.reprobe; issue 35 round 13): voted on every shard with the others, verified by the merge
   *  only when neither the direct nor the mirror pass found anything confident. */
  reprobe?: VotedEntry[];
  /** Round 6: what the passes' query keypoints did on the shard (exact votes). */
  keypoints?: { direct: PassKeypoints; mirror?: PassKeypoints; reprobe?: PassKeypoints };
}

type Stored = Omit<CandidateInput, 'pairs'> & { pairs: string | null };

// The candidates column holds the list (a partial of before round 4) or { candidates, wide } (no migration needed).
const encode = (list: CandidateInput[], wide?: PartialWide | null): string => {
  const candidates = list.map((c): Stored => ({ ...c, pairs: c.pairs ? Buffer.from(c.pairs.buffer, c.pairs.byteOffset, c.pairs.byteLength).toString('base64') : null }));
  return JSON.stringify(wide ? { candidates, wide } : candidates);
};

function decode(text: string): { candidates: CandidateInput[]; wide: PartialWide | null } {
  const v = JSON.parse(text) as Stored[] | { candidates: Stored[]; wide: PartialWide };
  return Array.isArray(v) ? { candidates: decodeList(v), wide: null } : { candidates: decodeList(v.candidates), wide: v.wide };
}

function decodeList(list: Stored[]): CandidateInput[] {
  return list.map((c) => {
    if (!c.pairs) return { ...c, pairs: null };
    const b = Buffer.from(c.pairs, 'base64');
    const pairs = new Float32Array(b.length >> 2);
    new Uint8Array(pairs.buffer).set(b);
    return { ...c, pairs };
  });
}

export class MatchPartialsRepo {
  constructor(private db: Sql) {}

  /** Stores (replaces) a source's result from one shard. */
  async put(p: MatchPartial, now = new Date().toISOString()): Promise<void> {
    await this.db.run('DELETE FROM match_partials WHERE source_item_id = ? AND shard = ?', [p.sourceItemId, p.shard]);
    await this.db.run(
      `INSERT INTO match_partials (source_item_id, shard, plan, image_sha256, seq, confident, candidates, searched_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [p.sourceItemId, p.shard, p.plan, p.imageSha256, p.seq, p.confident ? 1 : 0, encode(p.candidates, p.wide), now],
    );
  }

  /** The stored results of a source, any plan. */
  forSource(sourceItemId: number): Promise<MatchPartial[]> {
    return this.select('source_item_id = ? ORDER BY shard', [sourceItemId]);
  }

  /** The stored results of one plan's sources with ids in first..last (every shard), in source id order. */
  inRange(plan: string, first: number, last: number): Promise<MatchPartial[]> {
    return this.select('plan = ? AND source_item_id >= ? AND source_item_id <= ? ORDER BY source_item_id, shard', [plan, first, last]);
  }

  private async select(where: string, args: (string | number)[]): Promise<MatchPartial[]> {
    const rows = await this.db.all<{ sourceItemId: number; shard: string; plan: string; imageSha256: string; seq: number; confident: number; candidates: string }>(
      `SELECT source_item_id AS "sourceItemId", shard, plan, image_sha256 AS "imageSha256", seq, confident, candidates FROM match_partials WHERE ${where}`,
      args,
    );
    return rows.map((r) => ({ ...r, sourceItemId: Number(r.sourceItemId), seq: Number(r.seq), confident: Number(r.confident) === 1, ...decode(r.candidates) }));
  }

  async deleteFor(sourceItemId: number): Promise<void> {
    await this.db.run('DELETE FROM match_partials WHERE source_item_id = ?', [sourceItemId]);
  }

  /** Drops the results of other shard plans than `plan` (their shards will not be merged). */
  dropOtherPlans(plan: string): Promise<number> {
    return this.db.run('DELETE FROM match_partials WHERE plan <> ?', [plan]);
  }

  async count(): Promise<number> {
    return Number((await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM match_partials'))!.n);
  }

  /** On PostgreSQL, one merger at a time until the transaction ends: two shard jobs of one window that finish together
   *  would otherwise each miss the other's uncommitted results and neither would merge. SQLite's write lock does it. */
  async lockMerge(): Promise<void> {
    if (this.db.dialect === 'postgres') await this.db.get('SELECT pg_advisory_xact_lock(7216035)');
  }
}
