// Ranked image-matching candidates per source item (migration 3), and when each source was last matched.
// The export and review layers read them through this repository.
import type { Sql } from './sql.js';
import { HAS_FEATURES } from './lsh.js';

/** Which verification stored a candidate (migration 37). */
export type VerifiedBy = 'search' | 'archive';

export interface CandidateInput {
  targetItemId: number;
  rank: number;
  imageScore: number;
  matches: number;
  inliers: number;
  /** 9 numbers, row-major, source px -> target px; null when none. */
  homography: number[] | null;
  /** The model that verified it: one homography (a copy, a plane; the default) or the epipolar geometry of a 3D scene. */
  model?: 'homography' | 'fundamental';
  /** 9 numbers, row-major, x_targetᵀ F x_source = 0 in original pixels, when the model is 'fundamental'. */
  fundamental?: number[] | null;
  mirrored: boolean;
  /** The verification that stored it: the plain or views search (at least match.minInliers inliers; the default) or
   *  archive matching (the a-contrario test, at least archive.minInliers). */
  verifiedBy?: VerifiedBy;
  /** Inlier pairs (xs, ys, xt, yt) in original pixels. */
  pairs: Float32Array | null;
}

export interface Candidate extends CandidateInput {
  model: 'homography' | 'fundamental';
  fundamental: number[] | null;
  verifiedBy: VerifiedBy;
  sourceItemId: number;
  matchedAt: string;
}

export interface CandidateJoined extends Candidate {
  sourceExtId: string;
  targetExtId: string;
  sourceCaption: string;
  targetCaption: string;
  source: { pageUrl: string | null; imageUrl: string | null; site: string | null; importedAt: string | null; fetchedAt: string | null };
  target: { pageUrl: string | null; imageUrl: string | null; site: string | null; importedAt: string | null; fetchedAt: string | null };
}

interface Row {
  sourceItemId: number;
  targetItemId: number;
  rank: number;
  imageScore: number;
  matches: number;
  inliers: number;
  homography: string | null;
  model: 'homography' | 'fundamental';
  fundamental: string | null;
  verifiedBy: VerifiedBy;
  matchedAt: string;
  mirrored: number;
  pairs: Buffer | null;
}

const COLS = `c.source_item_id AS "sourceItemId", c.target_item_id AS "targetItemId", c.rank, c.image_score AS "imageScore",
  c.matches, c.inliers, c.homography, c.model, c.fundamental, c.verified_by AS "verifiedBy", c.matched_at AS "matchedAt", c.mirrored, c.pairs`;

function pairsBlob(p: Float32Array | null): Buffer | null {
  if (!p) return null;
  const b = Buffer.alloc(p.length * 4);
  for (let i = 0; i < p.length; i++) b.writeFloatLE(p[i]!, i * 4);
  return b;
}

function fromRow(r: Row): Candidate {
  let pairs: Float32Array | null = null;
  if (r.pairs) {
    pairs = new Float32Array(r.pairs.length >> 2);
    for (let i = 0; i < pairs.length; i++) pairs[i] = r.pairs.readFloatLE(i * 4);
  }
  return {
    sourceItemId: r.sourceItemId,
    targetItemId: r.targetItemId,
    rank: r.rank,
    imageScore: r.imageScore,
    matches: r.matches,
    inliers: r.inliers,
    homography: r.homography ? (JSON.parse(r.homography) as number[]) : null,
    model: r.model,
    fundamental: r.fundamental ? (JSON.parse(r.fundamental) as number[]) : null,
    verifiedBy: r.verifiedBy,
    matchedAt: r.matchedAt,
    mirrored: r.mirrored === 1,
    pairs,
  };
}

export class CandidatesRepo {
  constructor(private db: Sql) {}

  /** Replaces the stored candidates of a source item (call inside the caller's transaction). */
  async replaceFor(sourceItemId: number, list: CandidateInput[], matchedAt = new Date().toISOString()): Promise<void> {
    await this.db.run('DELETE FROM candidates WHERE source_item_id = ?', [sourceItemId]);
    await this.db.copyRows(
      'candidates',
      ['source_item_id', 'target_item_id', 'rank', 'image_score', 'matches', 'inliers', 'homography', 'matched_at', 'mirrored', 'pairs', 'model', 'fundamental', 'verified_by'],
      list.map((c) => [
        sourceItemId, c.targetItemId, c.rank, c.imageScore, c.matches, c.inliers,
        c.homography ? JSON.stringify(c.homography) : null, matchedAt, c.mirrored ? 1 : 0, pairsBlob(c.pairs),
        c.model ?? 'homography', c.fundamental ? JSON.stringify(c.fundamental) : null, c.verifiedBy ?? 'search',
      ]),
    );
  }

  async listFor(sourceItemId: number): Promise<Candidate[]> {
    return (await this.db.all<Row>(`SELECT ${COLS} FROM candidates c WHERE c.source_item_id = ? ORDER BY c.rank`, [sourceItemId])).map(fromRow);
  }

  async count(): Promise<number> {
    return Number((await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM candidates'))!.n);
  }

  /** Every candidate with both items (ext ids, captions, provenance), by source then rank. */
  async *iterateJoined(): AsyncGenerator<CandidateJoined> {
    const rows = this.db.iterate<Row & Record<string, string | null>>(
      `SELECT ${COLS}, s.ext_id AS "sExt", t.ext_id AS "tExt", s.caption AS "sCap", t.caption AS "tCap",
         s.page_url AS "sPage", s.image_url AS "sImg", s.site AS "sSite", s.imported_at AS "sImp", s.fetched_at AS "sFetch",
         t.page_url AS "tPage", t.image_url AS "tImg", t.site AS "tSite", t.imported_at AS "tImp", t.fetched_at AS "tFetch"
       FROM candidates c JOIN items s ON s.id = c.source_item_id JOIN items t ON t.id = c.target_item_id
       ORDER BY c.source_item_id, c.rank`,
    );
    for await (const r of rows) {
      yield {
        ...fromRow(r),
        sourceExtId: r.sExt as string,
        targetExtId: r.tExt as string,
        sourceCaption: r.sCap as string,
        targetCaption: r.tCap as string,
        source: { pageUrl: r.sPage ?? null, imageUrl: r.sImg ?? null, site: r.sSite ?? null, importedAt: r.sImp ?? null, fetchedAt: r.sFetch ?? null },
        target: { pageUrl: r.tPage ?? null, imageUrl: r.tImg ?? null, site: r.tSite ?? null, importedAt: r.tImp ?? null, fetchedAt: r.tFetch ?? null },
      };
    }
  }

  /** Records that a source was matched against the index up to `indexSeq`. */
  async markMatched(sourceItemId: number, imageSha256: string, indexSeq: number, matchedAt: string): Promise<void> {
    await this.db.run(
      `INSERT INTO match_state (source_item_id, image_sha256, index_seq, matched_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(source_item_id) DO UPDATE SET image_sha256 = excluded.image_sha256, index_seq = excluded.index_seq,
         matched_at = excluded.matched_at`,
      [sourceItemId, imageSha256, indexSeq, matchedAt],
    );
  }

  private pendingWhere = `FROM items i LEFT JOIN match_state m ON m.source_item_id = i.id
    WHERE i.bank = 'source' AND i.status <> 'failed' AND ${HAS_FEATURES}
      AND (m.source_item_id IS NULL OR m.index_seq < @seq OR m.image_sha256 <> i.image_sha256)`;

  /** Source items with features (and not failed: a failed item waits for a new image or --retry-failed) never matched, matched before targets were added (index_seq < seq), or
   *  matched with another image; id order after afterId. */
  async pendingSources(seq: number, afterId: number, limit: number): Promise<{ id: number; imageSha256: string }[]> {
    return this.db.all(`SELECT i.id, i.image_sha256 AS "imageSha256" ${this.pendingWhere} AND i.id > @afterId ORDER BY i.id LIMIT @limit`, { seq, afterId, limit });
  }

  /** When the earliest-harvested pending source (ids in the range, when given) was harvested (fetched, else imported;
   *  ISO), or null when none is pending: how far back a match run's index must reach under lsh.window. */
  async oldestPendingHarvest(seq: number, range?: { first: number; last: number }): Promise<string | null> {
    const r = await this.db.get<{ at: string | null }>(
      `SELECT MIN(COALESCE(i.fetched_at, i.imported_at)) AS at ${this.pendingWhere} AND i.id BETWEEN @first AND @last`,
      { seq, first: range?.first ?? 0, last: range?.last ?? Number.MAX_SAFE_INTEGER },
    );
    return r?.at ?? null;
  }

  async countPending(seq: number): Promise<number> {
    return Number((await this.db.get<{ n: number }>(`SELECT COUNT(*) AS n ${this.pendingWhere}`, { seq }))!.n);
  }
}
