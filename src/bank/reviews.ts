// Linguists' judgements (the `reviews` table, migration 8) and the queries of the review page: the pair list
// (filters + keyset pagination over an index, in both directions), one pair with both items, per-day counts.
// Judgements are keyed by (source item, target item) so they outlive re-matching and re-export.
import type { Sql } from './sql.js';
import { LEVEL_RANK, type Level, type PairRow } from './pairs.js';

export type Verdict = 'accepted' | 'rejected';
export const VERDICTS: Verdict[] = ['accepted', 'rejected'];
export type ReviewState = 'unreviewed' | 'reviewed' | 'accepted' | 'rejected';
export type PairListKind = 'emitted' | 'candidate' | 'all';
export type PairListSort = 'c' | 'image' | 'date' | 'id';

export interface Review {
  sourceItemId: number;
  targetItemId: number;
  verdict: Verdict | null;
  level: Level | null;
  en: string;
  zh: string;
  reviewedAt: string;
}

export interface PairListFilter {
  kind: PairListKind;
  level?: Level;
  cMin?: number;
  cMax?: number;
  imageMin?: number;
  imageMax?: number;
  /** Site of the source or the target item. */
  site?: string;
  /** Bounds on decided_at (ISO text; `to` is exclusive). */
  from?: string;
  to?: string;
  review?: ReviewState;
  sort: PairListSort;
  dir: 'asc' | 'desc';
}

/** A position in a list: the sort value and the pair id of a row (the keyset). */
export interface ListCursor {
  v: number | string | null;
  id: number;
}

/** A pair row (without the export bookkeeping) joined with both items and its judgement, as the review list reads it. */
export interface ReviewPairRow extends Omit<PairRow, 'textKey' | 'exportId'> {
  sourceExtId: string;
  targetExtId: string;
  sourceCaption: string;
  targetCaption: string;
  sourceSha: string;
  targetSha: string;
  sourceSite: string | null;
  targetSite: string | null;
  sourceUrl: string | null;
  targetUrl: string | null;
  sourceImageUrl: string | null;
  targetImageUrl: string | null;
  sourceHarvestedAt: string | null;
  targetHarvestedAt: string | null;
  verdict: Verdict | null;
  reviewLevel: Level | null;
  reviewedAt: string | null;
  reviewEn: string | null;
  reviewZh: string | null;
  /** In lists (listPairs), the captions' whole lengths in characters: sourceCaption, targetCaption, en and zh are
   *  cut to LIST_TEXT_CHARS there (a 1 MB caption must not make every list page 1 MB). Absent for one pair. */
  sourceCaptionChars?: number;
  targetCaptionChars?: number;
}

/** Characters of each text a list row carries (ReviewsRepo.listPairs); one pair's view has them whole. */
export const LIST_TEXT_CHARS = 600;
/** A list row's explanation is left out above this many characters (it grows with the captions). */
const LIST_EXPLAIN_CHARS = 20_000;

/** A judged pair with its scores, for calibration. */
export interface LabelledPair {
  sourceItemId: number;
  targetItemId: number;
  en: string;
  zh: string;
  verdict: Verdict | null;
  /** The linguist's level when set, else null. */
  level: Level | null;
  /** The machine's decision at review time, when the pair is decided. */
  machineLevel: Level | null;
  c: number | null;
  fc: number | null;
  fe: number | null;
  fl: number | null;
  reviewedAt: string;
}

const SORT_COLUMN: Record<PairListSort, string> = { c: 'p.c', image: 'p.image_score', date: 'p.decided_at', id: 'p.id' };
const NULLABLE: Record<PairListSort, boolean> = { c: true, image: true, date: false, id: false };

const ROW_COLUMNS = `p.id, p.source_item_id AS "sourceItemId", p.target_item_id AS "targetItemId", p.emitted, p.reason, p.en, p.zh,
  p.level, p.c, p.fc, p.fe, p.fl, p.image_score AS "imageScore", p.inliers, p.candidate_rank AS "candidateRank", p.matched_at AS "matchedAt",
  p.explain, p.decided_at AS "decidedAt", p.exported_at AS "exportedAt",
  s.ext_id AS "sourceExtId", t.ext_id AS "targetExtId", s.caption AS "sourceCaption", t.caption AS "targetCaption",
  s.image_sha256 AS "sourceSha", t.image_sha256 AS "targetSha", s.site AS "sourceSite", t.site AS "targetSite",
  s.page_url AS "sourceUrl", t.page_url AS "targetUrl", s.image_url AS "sourceImageUrl", t.image_url AS "targetImageUrl",
  COALESCE(s.fetched_at, s.imported_at) AS "sourceHarvestedAt", COALESCE(t.fetched_at, t.imported_at) AS "targetHarvestedAt",
  r.verdict, r.level AS "reviewLevel", r.reviewed_at AS "reviewedAt", r.en AS "reviewEn", r.zh AS "reviewZh"`;

/** ROW_COLUMNS for lists: texts cut to LIST_TEXT_CHARS (with the captions' whole lengths), a long explanation left out. */
const cut = (col: string, alias: string) => `substr(${col}, 1, ${LIST_TEXT_CHARS}) AS "${alias}"`;
const LIST_COLUMNS = ROW_COLUMNS.replace('p.en, p.zh,', `${cut('p.en', 'en')}, ${cut('p.zh', 'zh')},`)
  .replace('p.explain,', `CASE WHEN length(p.explain) <= ${LIST_EXPLAIN_CHARS} THEN p.explain END AS "explain",`)
  .replace('s.caption AS "sourceCaption", t.caption AS "targetCaption",', `${cut('s.caption', 'sourceCaption')}, ${cut('t.caption', 'targetCaption')}, length(s.caption) AS "sourceCaptionChars", length(t.caption) AS "targetCaptionChars",`)
  .replace('r.en AS "reviewEn", r.zh AS "reviewZh"', `${cut('r.en', 'reviewEn')}, ${cut('r.zh', 'reviewZh')}`);

// CROSS JOIN keeps `pairs` the outer loop on SQLite, so the ORDER BY walks one of its indexes and LIMIT stops early.
// PostgreSQL's planner picks that order itself (and has no CROSS JOIN … ON).
const FROM = `FROM pairs p CROSS JOIN items s ON s.id = p.source_item_id CROSS JOIN items t ON t.id = p.target_item_id
  LEFT JOIN reviews r ON r.source_item_id = p.source_item_id AND r.target_item_id = p.target_item_id`;
const PG_FROM = FROM.replace(/CROSS JOIN/g, 'JOIN');

interface Segment {
  sql: string;
  args: unknown[];
}

export class ReviewsRepo {
  constructor(private db: Sql) {}

  private get from(): string {
    return this.db.dialect === 'postgres' ? PG_FROM : FROM;
  }

  get(sourceItemId: number, targetItemId: number): Promise<Review | undefined> {
    return this.db.get<Review>(
      `SELECT source_item_id AS "sourceItemId", target_item_id AS "targetItemId", verdict, level, en, zh, reviewed_at AS "reviewedAt"
       FROM reviews WHERE source_item_id = ? AND target_item_id = ?`,
      [sourceItemId, targetItemId],
    );
  }

  /**
   * Records a judgement. `verdict` / `level` left undefined keep their stored value; null clears it. A judgement
   * with neither a verdict nor a level is removed. Returns the stored judgement (undefined when removed).
   */
  async set(
    j: { sourceItemId: number; targetItemId: number; verdict?: Verdict | null; level?: Level | null; en: string; zh: string },
    now = new Date().toISOString(),
  ): Promise<Review | undefined> {
    const old = await this.get(j.sourceItemId, j.targetItemId);
    const verdict = j.verdict === undefined ? (old?.verdict ?? null) : j.verdict;
    const level = j.level === undefined ? (old?.level ?? null) : j.level;
    if (!verdict && !level) {
      await this.clear(j.sourceItemId, j.targetItemId);
      return undefined;
    }
    await this.db.run(
        `INSERT INTO reviews (source_item_id, target_item_id, verdict, level, level_rank, en, zh, reviewed_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (source_item_id, target_item_id) DO UPDATE SET verdict = excluded.verdict, level = excluded.level,
           level_rank = excluded.level_rank, en = excluded.en, zh = excluded.zh, reviewed_at = excluded.reviewed_at`,
      [j.sourceItemId, j.targetItemId, verdict, level, level ? LEVEL_RANK[level] : null, j.en, j.zh, now],
    );
    return this.get(j.sourceItemId, j.targetItemId);
  }

  async clear(sourceItemId: number, targetItemId: number): Promise<boolean> {
    return (await this.db.run('DELETE FROM reviews WHERE source_item_id = ? AND target_item_id = ?', [sourceItemId, targetItemId])) > 0;
  }

  async counts(): Promise<{ accepted: number; rejected: number; levelOnly: number; total: number }> {
    const out = { accepted: 0, rejected: 0, levelOnly: 0, total: 0 };
    for (const r of await this.db.all<{ verdict: Verdict | null; n: number }>('SELECT verdict, COUNT(*) AS n FROM reviews GROUP BY verdict')) {
      const n = Number(r.n);
      if (r.verdict) out[r.verdict] = n;
      else out.levelOnly = n;
      out.total += n;
    }
    return out;
  }

  /** Every judgement with the machine's scores of the pair (when decided), in review order: calibration input. */
  labelled(): AsyncIterable<LabelledPair> {
    return this.db.iterate<LabelledPair>(
        `SELECT r.source_item_id AS "sourceItemId", r.target_item_id AS "targetItemId", r.en, r.zh, r.verdict, r.level,
                p.level AS "machineLevel", p.c, p.fc, p.fe, p.fl, r.reviewed_at AS "reviewedAt"
         FROM reviews r LEFT JOIN pairs p ON p.source_item_id = r.source_item_id AND p.target_item_id = r.target_item_id
         ORDER BY r.reviewed_at, r.source_item_id, r.target_item_id`,
    );
  }

  /** One pair with both items and its judgement. */
  pair(sourceItemId: number, targetItemId: number): Promise<ReviewPairRow | undefined> {
    return this.db.get<ReviewPairRow>(`SELECT ${ROW_COLUMNS} ${this.from} WHERE p.source_item_id = ? AND p.target_item_id = ?`, [sourceItemId, targetItemId]);
  }

  /** The keyset of a row in a list order. */
  static cursorOf(row: Pick<ReviewPairRow, 'id' | 'c' | 'imageScore' | 'decidedAt'>, sort: PairListSort): ListCursor {
    const v = sort === 'c' ? row.c : sort === 'image' ? row.imageScore : sort === 'date' ? row.decidedAt : row.id;
    return { v: v ?? null, id: row.id };
  }

  private filterSql(f: PairListFilter): Segment {
    const cond: string[] = [];
    const args: unknown[] = [];
    if (f.kind !== 'all') {
      cond.push('p.emitted = ?');
      args.push(f.kind === 'emitted' ? 1 : 0);
    }
    if (f.level) {
      cond.push('p.level_rank = ? AND p.level = ?');
      args.push(LEVEL_RANK[f.level], f.level);
    }
    const range = (col: string, min?: number, max?: number) => {
      if (min !== undefined) (cond.push(`${col} >= ?`), args.push(min));
      if (max !== undefined) (cond.push(`${col} <= ?`), args.push(max));
    };
    range('p.c', f.cMin, f.cMax);
    range('p.image_score', f.imageMin, f.imageMax);
    if (f.from) (cond.push('p.decided_at >= ?'), args.push(f.from));
    if (f.to) (cond.push('p.decided_at < ?'), args.push(f.to));
    if (f.site) (cond.push('(s.site = ? OR t.site = ?)'), args.push(f.site, f.site));
    if (f.review === 'unreviewed') cond.push('r.source_item_id IS NULL');
    else if (f.review === 'reviewed') cond.push('r.source_item_id IS NOT NULL');
    else if (f.review) (cond.push('r.verdict = ?'), args.push(f.review));
    return { sql: cond.join(' AND '), args };
  }

  /**
   * The segments a page is read from, in order. Rows are ordered by (sort column, id), both in `dir`; SQLite puts
   * NULLs first in ascending order, so a nullable column is read as two keyset walks (non-null values, NULLs).
   */
  private segments(f: PairListFilter, after: ListCursor | undefined, dir: 'asc' | 'desc'): Segment[] {
    const col = SORT_COLUMN[f.sort];
    const base = this.filterSql(f);
    const cmp = dir === 'asc' ? '>' : '<';
    const sqlDir = dir === 'asc' ? 'ASC' : 'DESC';
    const where = (extra: string, extraArgs: unknown[]): Segment => {
      const cond = [base.sql, extra].filter(Boolean).join(' AND ');
      return { sql: cond ? `WHERE ${cond}` : '', args: [...base.args, ...extraArgs] };
    };
    const order = `ORDER BY ${col} ${sqlDir}${f.sort === 'id' ? '' : `, p.id ${sqlDir}`}`;
    const seg = (s: Segment): Segment => ({ sql: `${s.sql} ${order}`, args: s.args });
    if (f.sort === 'id') return [seg(where(after ? `p.id ${cmp} ?` : '', after ? [after.id] : []))];
    if (!NULLABLE[f.sort]) return [seg(where(after ? `(${col}, p.id) ${cmp} (?, ?)` : '', after ? [after.v, after.id] : []))];
    const values = (a?: ListCursor) => seg(where(a ? `(${col}, p.id) ${cmp} (?, ?)` : `${col} IS NOT NULL`, a ? [a.v, a.id] : []));
    const nulls = (a?: ListCursor) => seg(where(a ? `${col} IS NULL AND p.id ${cmp} ?` : `${col} IS NULL`, a ? [a.id] : []));
    if (dir === 'desc') {
      // values first (high to low), then NULLs
      if (!after) return [values(), nulls()];
      return after.v === null ? [nulls(after)] : [values(after), nulls()];
    }
    // NULLs first, then values (low to high)
    if (!after) return [nulls(), values()];
    return after.v === null ? [nulls(after), values()] : [values(after)];
  }

  /**
   * A page of the pair list after `after` (or from the start), `limit` rows, and the cursor of the next page.
   * `reverse` walks backwards from `after` (for "previous"); rows then come nearest first.
   */
  async listPairs(f: PairListFilter, opts: { after?: ListCursor; limit: number; reverse?: boolean }): Promise<{ rows: ReviewPairRow[]; next: ListCursor | null }> {
    const dir = opts.reverse ? (f.dir === 'asc' ? 'desc' : 'asc') : f.dir;
    const rows: ReviewPairRow[] = [];
    for (const s of this.segments(f, opts.after, dir)) {
      const want = opts.limit + 1 - rows.length;
      if (want <= 0) break;
      rows.push(...(await this.db.all<ReviewPairRow>(`SELECT ${LIST_COLUMNS} ${this.from} ${s.sql} LIMIT ?`, [...s.args, want])));
    }
    const more = rows.length > opts.limit;
    if (more) rows.length = opts.limit;
    return { rows, next: more && rows.length ? ReviewsRepo.cursorOf(rows[rows.length - 1]!, f.sort) : null };
  }

  /** The plan of the first page's queries (EXPLAIN QUERY PLAN on SQLite, EXPLAIN on PostgreSQL): the test shows
   *  the list walks an index. */
  async explainListPairs(f: PairListFilter, after?: ListCursor): Promise<string[]> {
    const pg = this.db.dialect === 'postgres';
    const out: string[] = [];
    for (const s of this.segments(f, after, f.dir)) {
      const plan = await this.db.all<{ detail?: string; 'QUERY PLAN'?: string }>(
        `${pg ? 'EXPLAIN' : 'EXPLAIN QUERY PLAN'} SELECT ${LIST_COLUMNS} ${this.from} ${s.sql} LIMIT ?`,
        [...s.args, 50],
      );
      out.push(plan.map((r) => r.detail ?? r['QUERY PLAN'] ?? '').join('\n'));
    }
    return out;
  }

  /** Sites of the items of both banks (the list's site filter). */
  async sites(): Promise<string[]> {
    return (await this.db.all<{ site: string }>('SELECT DISTINCT site FROM items WHERE site IS NOT NULL ORDER BY site')).map((r) => r.site);
  }

  /** Emitted pairs per decision day and level (the stats page). */
  async pairsPerDay(): Promise<Array<{ day: string; level: Level | null; n: number }>> {
    const rows = await this.db.all<{ day: string; level: Level | null; n: number }>(
      `SELECT substr(decided_at, 1, 10) AS day, level, COUNT(*) AS n FROM pairs WHERE emitted = 1
       GROUP BY day, level ORDER BY day, level`,
    );
    return rows.map((r) => ({ ...r, n: Number(r.n) }));
  }

  /** Pairs by kind: emitted and not emitted (candidates decided against). */
  async pairCounts(): Promise<{ emitted: number; candidate: number }> {
    const out = { emitted: 0, candidate: 0 };
    for (const r of await this.db.all<{ emitted: number; n: number }>('SELECT emitted, COUNT(*) AS n FROM pairs GROUP BY emitted')) {
      if (r.emitted) out.emitted = Number(r.n);
      else out.candidate = Number(r.n);
    }
    return out;
  }
}
