// Pairing decisions (the `pairs` table, migration 6) and the export watermark (`exports`).
// The pairing stage (src/stages/pair/pairing.ts) reads candidates through this repository: the candidates table is
// the match stage's (migration 3: source_item_id, target_item_id, rank, image_score, inliers, matched_at);
// only those documented columns are read here, and only when the table exists.
import crypto from 'node:crypto';
import type { VerifiedBy } from './candidates.js';
import type { Sql } from './sql.js';

export type Level = 'par' | 'com' | 'pse' | 'inc';
export const LEVEL_RANK: Record<Level, number> = { par: 3, com: 2, pse: 1, inc: 0 };
export const LEVELS: Level[] = ['par', 'com', 'pse', 'inc'];

/** A candidate as the pairing stage sees it. */
export interface PairCandidate {
  sourceItemId: number;
  targetItemId: number;
  rank: number;
  imageScore: number;
  inliers: number;
  /** The verification that stored it (its inlier floor: match.minInliers or archive.minInliers). */
  verifiedBy: VerifiedBy;
  matchedAt: string | null;
}

/** An aligned sentence pair of a caption pair (src/lib/comparability/align.ts): spans, texts, level and scores. */
export interface SentencePairFields {
  enFirst: number;
  enLast: number;
  zhFirst: number;
  zhLast: number;
  en: string;
  zh: string;
  level: Level;
  c: number;
  fc: number;
  fe: number;
  fl: number;
  fcov: number;
}

/** A sentence pair as the pairing stage decides it, stored in `sentence_pairs`. */
export interface SentencePairDecision extends SentencePairFields {
  emitted: boolean;
}

export interface PairDecision {
  sourceItemId: number;
  targetItemId: number;
  emitted: boolean;
  reason: string | null;
  en: string;
  zh: string;
  /** Scores of the caption pair: those of its best sentence pair (of the captions themselves when one sentence each). */
  level: Level | null;
  c: number | null;
  fc: number | null;
  fe: number | null;
  fl: number | null;
  fcov?: number | null;
  imageScore: number;
  inliers: number;
  candidateRank: number;
  matchedAt: string | null;
  explain: unknown;
  /** Sentences scored in each caption (null when not scored). */
  enSentences?: number | null;
  zhSentences?: number | null;
  /** Documents in the IDF table the scores were computed with. */
  idfDocs?: number | null;
  /** The aligned sentence pairs (stored in sentence_pairs by SentencePairsRepo.replace). */
  sentencePairs?: SentencePairDecision[];
}

export interface PairRow {
  id: number;
  sourceItemId: number;
  targetItemId: number;
  emitted: number;
  reason: string | null;
  en: string;
  zh: string;
  textKey: string;
  level: Level | null;
  c: number | null;
  fc: number | null;
  fe: number | null;
  fl: number | null;
  imageScore: number | null;
  inliers: number | null;
  candidateRank: number | null;
  matchedAt: string | null;
  explain: string | null;
  decidedAt: string;
  exportedAt: string | null;
  exportId: number | null;
}

export const textKey = (en: string, zh: string): string =>
  crypto.createHash('sha256').update(en).update('\u0000').update(zh).digest('hex').slice(0, 32);

const COLUMNS = `p.id, p.source_item_id AS "sourceItemId", p.target_item_id AS "targetItemId", p.emitted, p.reason, p.en, p.zh,
  p.text_key AS "textKey", p.level, p.c, p.fc, p.fe, p.fl, p.image_score AS "imageScore", p.inliers, p.candidate_rank AS "candidateRank",
  p.matched_at AS "matchedAt", p.explain, p.decided_at AS "decidedAt", p.exported_at AS "exportedAt", p.export_id AS "exportId"`;

export type PairOrder = 'score' | 'date' | 'id';

const UPSERT = `
  INSERT INTO pairs (source_item_id, target_item_id, emitted, reason, en, zh, text_key, level, level_rank, c, fc, fe, fl, fcov,
      image_score, inliers, candidate_rank, matched_at, explain, decided_at, en_sentences, zh_sentences, idf_docs)
    VALUES (@sourceItemId, @targetItemId, @emitted, @reason, @en, @zh, @textKey, @level, @levelRank, @c, @fc, @fe, @fl, @fcov,
      @imageScore, @inliers, @candidateRank, @matchedAt, @explain, @now, @enSentences, @zhSentences, @idfDocs)
  ON CONFLICT (source_item_id, target_item_id) DO UPDATE SET
    emitted = excluded.emitted, reason = excluded.reason, en = excluded.en, zh = excluded.zh, text_key = excluded.text_key,
    level = excluded.level, level_rank = excluded.level_rank, c = excluded.c, fc = excluded.fc, fe = excluded.fe, fl = excluded.fl,
    fcov = excluded.fcov, en_sentences = excluded.en_sentences, zh_sentences = excluded.zh_sentences, idf_docs = excluded.idf_docs,
    image_score = excluded.image_score, inliers = excluded.inliers, candidate_rank = excluded.candidate_rank,
    matched_at = excluded.matched_at, explain = excluded.explain, decided_at = excluded.decided_at,
    -- a pair whose caption texts changed is a new pair of the corpus: it will be exported again
    exported_at = CASE WHEN pairs.text_key = excluded.text_key THEN pairs.exported_at ELSE NULL END,
    export_id = CASE WHEN pairs.text_key = excluded.text_key THEN pairs.export_id ELSE NULL END
  RETURNING id`;

const count = (r: { n: number | string } | undefined): number => Number(r?.n ?? 0);

const upsertParams = (d: PairDecision, now: string) => ({
  sourceItemId: d.sourceItemId,
  targetItemId: d.targetItemId,
  emitted: d.emitted ? 1 : 0,
  reason: d.reason,
  en: d.en,
  zh: d.zh,
  textKey: textKey(d.en, d.zh),
  level: d.level,
  levelRank: d.level ? LEVEL_RANK[d.level] : 0,
  c: d.c,
  fc: d.fc,
  fe: d.fe,
  fl: d.fl,
  fcov: d.fcov ?? null,
  enSentences: d.enSentences ?? null,
  zhSentences: d.zhSentences ?? null,
  idfDocs: d.idfDocs ?? null,
  imageScore: d.imageScore,
  inliers: d.inliers,
  candidateRank: d.candidateRank,
  matchedAt: d.matchedAt,
  explain: d.explain === undefined || d.explain === null ? null : JSON.stringify(d.explain),
  now,
});

export class PairsRepo {
  constructor(private db: Sql) {}

  /**
   * Source items (id order, after `afterId`) that need a pairing decision: a candidate never decided, or decided on
   * other caption texts, another candidate run, or a caption status that no longer allows pairing, or scored with an
   * IDF table of fewer than `staleBelowDocs` documents (or before sentence alignment: idf_docs NULL). With `all`,
   * every source that has candidates (re-decide after a threshold change).
   */
  async pendingSources(afterId: number, limit: number, all = false, staleBelowDocs = 0): Promise<number[]> {
    const where = all
      ? ''
      : `AND (p.id IS NULL OR p.idf_docs IS NULL OR (p.c IS NOT NULL AND p.idf_docs < ${Math.floor(staleBelowDocs)})
           OR p.en <> s.caption OR p.zh <> t.caption OR p.matched_at IS DISTINCT FROM CAST(c.matched_at AS TEXT)
           OR p.image_score IS DISTINCT FROM c.image_score OR p.inliers IS DISTINCT FROM c.inliers
           OR (p.emitted = 1 AND (s.caption_status <> 'ok' OR t.caption_status <> 'ok'))
           OR (p.emitted = 0 AND p.reason = 'caption-status' AND s.caption_status = 'ok' AND t.caption_status = 'ok'))`;
    const rows = await this.db.all<{ id: number }>(
      `SELECT DISTINCT c.source_item_id AS id FROM candidates c
         JOIN items s ON s.id = c.source_item_id JOIN items t ON t.id = c.target_item_id
         LEFT JOIN pairs p ON p.source_item_id = c.source_item_id AND p.target_item_id = c.target_item_id
       WHERE c.source_item_id > ? ${where}
       ORDER BY c.source_item_id LIMIT ?`,
      [afterId, limit],
    );
    return rows.map((r) => Number(r.id));
  }

  /** The stored candidates of a source item, best first. */
  candidatesOf(sourceItemId: number): Promise<PairCandidate[]> {
    return this.db.all<PairCandidate>(
      `SELECT source_item_id AS "sourceItemId", target_item_id AS "targetItemId", rank, image_score AS "imageScore", inliers,
              verified_by AS "verifiedBy", CAST(matched_at AS TEXT) AS "matchedAt"
       FROM candidates WHERE source_item_id = ? ORDER BY rank, target_item_id`,
      [sourceItemId],
    );
  }

  /** Ranked target item ids for every source that has candidates (for evaluation). */
  async rankedTargets(): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>();
    for await (const r of this.db.iterate<{ s: number; t: number }>(
      `SELECT source_item_id AS s, target_item_id AS t FROM candidates ORDER BY source_item_id, rank, target_item_id`,
    )) {
      const s = Number(r.s);
      let list = out.get(s);
      if (!list) out.set(s, (list = []));
      list.push(Number(r.t));
    }
    return out;
  }

  /** Stores a decision (a new row, or the pair's row updated); returns the row's id. */
  async upsert(d: PairDecision, now = new Date().toISOString()): Promise<number> {
    return Number((await this.db.get<{ id: number }>(UPSERT, upsertParams(d, now)))!.id);
  }

  /** Drops the decisions of a source whose target is no longer among its candidates; returns how many. */
  async removeOthers(sourceItemId: number, keepTargetIds: number[]): Promise<number> {
    const keep = new Set(keepTargetIds);
    const rows = await this.db.all<{ id: number; t: number }>('SELECT id, target_item_id AS t FROM pairs WHERE source_item_id = ?', [sourceItemId]);
    const gone = rows.filter((r) => !keep.has(Number(r.t)));
    return this.db.runMany('DELETE FROM pairs WHERE id = ?', gone.map((r) => [r.id]));
  }

  /** Drops decisions whose candidate vanished (sources re-matched to nothing). */
  sweepOrphans(): Promise<number> {
    return this.db.run(
      `DELETE FROM pairs WHERE NOT EXISTS (SELECT 1 FROM candidates c
         WHERE c.source_item_id = pairs.source_item_id AND c.target_item_id = pairs.target_item_id)`,
    );
  }

  get(sourceItemId: number, targetItemId: number): Promise<PairRow | undefined> {
    return this.db.get<PairRow>(`SELECT ${COLUMNS} FROM pairs p WHERE source_item_id = ? AND target_item_id = ?`, [sourceItemId, targetItemId]);
  }

  /**
   * Pairs page by page, for listings and the review page: keyset pagination (pass the last row of a page as
   * `after`), so page 1000 of 100k pairs costs what page 1 does (under a millisecond a page on 100k pairs).
   * Orders: id (oldest first), score (C descending, then newest id), date (newest decision first); filters by exact level or a level floor. Indexes: pairs_level, pairs_score,
   * pairs_decided.
   */
  list(opts: {
    level?: Level;
    minLevel?: Level;
    emitted?: boolean;
    limit: number;
    order?: PairOrder;
    after?: Pick<PairRow, 'id' | 'c' | 'decidedAt'>;
    /** @deprecated use after (id order only) */
    afterId?: number;
  }): Promise<PairRow[]> {
    const cond: string[] = ['p.emitted = ?'];
    const args: unknown[] = [opts.emitted === false ? 0 : 1];
    if (opts.level) {
      cond.push('p.level_rank = ?');
      args.push(LEVEL_RANK[opts.level]);
    }
    if (opts.minLevel) {
      cond.push('p.level_rank >= ?');
      args.push(LEVEL_RANK[opts.minLevel]);
    }
    const order = opts.order ?? 'id';
    // emitted pairs always have a score, so the plain column (and its index) serves; decisions without one sort last
    const cExpr = opts.emitted === false ? 'COALESCE(p.c, -1)' : 'p.c';
    const after = opts.after ?? (opts.afterId ? { id: opts.afterId, c: null, decidedAt: '' } : undefined);
    if (after) {
      // row-value comparisons: the index is sought to the cursor instead of scanned to it
      if (order === 'score') {
        cond.push(`(${cExpr}, p.id) < (?, ?)`);
        args.push(after.c ?? -1, after.id);
      } else if (order === 'date') {
        cond.push('(p.decided_at, p.id) < (?, ?)');
        args.push(after.decidedAt, after.id);
      } else {
        cond.push('p.id > ?');
        args.push(after.id);
      }
    }
    const orderBy = order === 'score' ? `${cExpr} DESC, p.id DESC` : order === 'date' ? 'p.decided_at DESC, p.id DESC' : 'p.id';
    args.push(opts.limit);
    return this.db.all<PairRow>(`SELECT ${COLUMNS} FROM pairs p WHERE ${cond.join(' AND ')} ORDER BY ${orderBy} LIMIT ?`, args);
  }

  /** Every emitted (source, target) pair at or above a level, with its level (evaluation). */
  emittedPairs(minLevel: Level = 'inc'): Promise<{ sourceItemId: number; targetItemId: number; level: Level }[]> {
    return this.db.all(
      `SELECT source_item_id AS "sourceItemId", target_item_id AS "targetItemId", level FROM pairs
       WHERE emitted = 1 AND level_rank >= ? ORDER BY source_item_id, target_item_id`,
      [LEVEL_RANK[minLevel]],
    );
  }

  /** Emitted pairs per level (the metrics endpoint and stats). */
  async countByLevel(): Promise<Record<Level, number>> {
    const out: Record<Level, number> = { par: 0, com: 0, pse: 0, inc: 0 };
    for (const r of await this.db.all<{ level: Level; n: number }>('SELECT level, COUNT(*) AS n FROM pairs WHERE emitted = 1 GROUP BY level')) {
      if (r.level) out[r.level] = Number(r.n);
    }
    return out;
  }

  async count(emitted = true): Promise<number> {
    return count(await this.db.get('SELECT COUNT(*) AS n FROM pairs WHERE emitted = ?', [emitted ? 1 : 0]));
  }

  async countCandidates(): Promise<number> {
    return count(await this.db.get('SELECT COUNT(*) AS n FROM candidates'));
  }

  async beginExport(e: { formats: string[]; paths: string[]; onlyNew: boolean; minLevel: Level }, now = new Date().toISOString()): Promise<number> {
    const r = await this.db.get<{ id: number }>(
      'INSERT INTO exports (started_at, formats, paths, only_new, min_level) VALUES (?, ?, ?, ?, ?) RETURNING id',
      [now, JSON.stringify(e.formats), JSON.stringify(e.paths), e.onlyNew ? 1 : 0, e.minLevel],
    );
    return Number(r!.id);
  }

  /** Records a finished export: rows written, and the sentence pairs those rows stand for (SentencePairsRepo.markExported moves their watermark). */
  async finishExport(exportId: number, rows: number, members: number, now = new Date().toISOString()): Promise<void> {
    await this.db.run('UPDATE exports SET finished_at = ?, pairs = ?, members = ? WHERE id = ?', [now, rows, members, exportId]);
  }

  lastExport(): Promise<{ id: number; startedAt: string; finishedAt: string | null; formats: string; paths: string; pairs: number } | undefined> {
    return this.db.get(
      'SELECT id, started_at AS "startedAt", finished_at AS "finishedAt", formats, paths, pairs FROM exports WHERE finished_at IS NOT NULL ORDER BY id DESC LIMIT 1',
    );
  }
}
