// The crawler's repository: the frontier (crawl_urls: every URL to fetch with its state, failure class and
// retry schedule), site cycles, host pauses, validators for conditional GET and the robots.txt cache.
import type Database from 'better-sqlite3';

export interface Validators { etag: string | null; lastModified: string | null }
export interface RobotsRow { status: number; body: string; fetchedAt: string }

export type UrlKind = 'listing' | 'feed' | 'sitemap' | 'article' | 'image';
export type UrlState = 'pending' | 'images' | 'done' | 'failed' | 'given-up';
export type FailureClass = 'transient' | 'permanent';

export interface FrontierRow {
  id: number;
  key: string;
  url: string;
  site: string;
  kind: UrlKind;
  depth: number;
  state: UrlState;
  cycle: number;
  retryCycle: number;
  attempts: number;
  requests: number;
  failureClass: FailureClass | null;
  reasonCode: string | null;
  reason: string | null;
  httpStatus: number | null;
  parent: string | null;
  data: string | null;
  updatedAt: string;
}

/** A URL to queue. */
export interface NewUrl {
  key: string;
  url: string;
  kind: UrlKind;
  depth: number;
  parent?: string | null;
  data?: string | null;
}

/** How one attempt at a row ended. */
export interface RowOutcome {
  state: UrlState;
  failureClass?: FailureClass | null;
  reasonCode?: string | null;
  reason?: string | null;
  httpStatus?: number | null;
  /** Cycles failed so far (transient failures count; a host-level deferral does not). */
  attempts?: number;
  retryCycle?: number;
  /** Requests this attempt made. */
  requests?: number;
  /** A final URL after redirects (the row keeps its key). */
  url?: string;
}

export interface CrawlStats {
  urls: Record<string, Record<string, number>>;
  /** Rows waiting for a later attempt after a transient failure. */
  pendingRetries: number;
  givenUp: number;
  failed: number;
  /** Failures by class and reason code: pending retries and given-up rows (transient), failed rows (permanent). */
  failures: Record<FailureClass, Record<string, number>>;
}

const COLUMNS = `id, key, url, site, kind, depth, state, cycle, retry_cycle AS retryCycle, attempts, requests,
  failure_class AS failureClass, reason_code AS reasonCode, reason, http_status AS httpStatus, parent, data, updated_at AS updatedAt`;

const PAGE_KINDS = new Set<UrlKind>(['listing', 'feed', 'sitemap']);

export class CrawlRepo {
  private eligibleStmt: Database.Statement;
  private finishStmt: Database.Statement;
  private insertStmt: Database.Statement;
  private requeueStmt: Database.Statement;

  constructor(private db: Database.Database) {
    // Images first (they complete pages already fetched), then listings (they find the articles), then articles.
    this.eligibleStmt = db.prepare(
      `SELECT ${COLUMNS} FROM crawl_urls WHERE site = ? AND state = 'pending' AND retry_cycle <= ?
       ORDER BY CASE kind WHEN 'image' THEN 0 WHEN 'article' THEN 2 ELSE 1 END, id LIMIT ?`,
    );
    this.finishStmt = db.prepare(
      `UPDATE crawl_urls SET state = @state, failure_class = @failureClass, reason_code = @reasonCode, reason = @reason,
         http_status = COALESCE(@httpStatus, http_status), attempts = COALESCE(@attempts, attempts),
         retry_cycle = COALESCE(@retryCycle, retry_cycle), requests = requests + @requests, url = COALESCE(@url, url),
         updated_at = @now
       WHERE id = @id`,
    );
    this.insertStmt = db.prepare(
      `INSERT INTO crawl_urls (key, url, site, kind, depth, state, cycle, retry_cycle, parent, data, updated_at)
       VALUES (@key, @url, @site, @kind, @depth, 'pending', @cycle, @cycle, @parent, @data, @now) ON CONFLICT(key) DO NOTHING`,
    );
    // A listing, feed or sitemap is walked once per cycle: one walked in an earlier cycle is queued again, and
    // one that failed permanently stays failed unless it is a seed (`force`).
    this.requeueStmt = db.prepare(
      `UPDATE crawl_urls SET state = 'pending', cycle = @cycle, retry_cycle = @cycle, depth = MIN(depth, @depth), updated_at = @now
       WHERE key = @key AND cycle < @cycle AND kind IN ('listing', 'feed', 'sitemap') AND (state <> 'failed' OR @force = 1)`,
    );
  }

  // --- site cycles ---

  siteCycle(site: string): { cycle: number; open: boolean } | undefined {
    const r = this.db.prepare('SELECT cycle, open FROM crawl_sites WHERE site = ?').get(site) as { cycle: number; open: number } | undefined;
    return r && { cycle: r.cycle, open: r.open === 1 };
  }

  /** Resumes the site's open cycle, or opens the next one and queues its seeds (in the caller's transaction). */
  beginCycle(site: string, seeds: NewUrl[], now = new Date().toISOString()): { cycle: number; resumed: boolean } {
    const cur = this.siteCycle(site);
    if (cur?.open) return { cycle: cur.cycle, resumed: true };
    const cycle = (cur?.cycle ?? 0) + 1;
    this.db
      .prepare(
        `INSERT INTO crawl_sites (site, cycle, open, started_at) VALUES (?, ?, 1, ?)
         ON CONFLICT(site) DO UPDATE SET cycle = excluded.cycle, open = 1, started_at = excluded.started_at, finished_at = NULL`,
      )
      .run(site, cycle, now);
    this.enqueue(site, cycle, seeds, { force: true, now });
    return { cycle, resumed: false };
  }

  closeCycle(site: string, cycle: number, now = new Date().toISOString()): void {
    this.db.prepare('UPDATE crawl_sites SET open = 0, finished_at = ? WHERE site = ? AND cycle = ?').run(now, site, cycle);
  }

  // --- the frontier ---

  /** Queues URLs; returns how many became pending. Known articles and images are never queued again. */
  enqueue(site: string, cycle: number, rows: NewUrl[], opts: { force?: boolean; now?: string } = {}): number {
    const now = opts.now ?? new Date().toISOString();
    let n = 0;
    for (const r of rows) {
      const ins = this.insertStmt.run({ parent: null, data: null, ...r, site, cycle, now });
      if (ins.changes) n++;
      else if (PAGE_KINDS.has(r.kind)) n += this.requeueStmt.run({ key: r.key, cycle, depth: r.depth, force: opts.force ? 1 : 0, now }).changes;
    }
    return n;
  }

  /** Pending rows of a site that this cycle may attempt, images first, then listings, then articles; id order. */
  eligible(site: string, cycle: number, limit: number, skip: ReadonlySet<number> = new Set()): FrontierRow[] {
    const rows = this.eligibleStmt.all(site, cycle, limit + skip.size) as FrontierRow[];
    return rows.filter((r) => !skip.has(r.id)).slice(0, limit);
  }

  row(key: string): FrontierRow | undefined {
    return this.db.prepare(`SELECT ${COLUMNS} FROM crawl_urls WHERE key = ?`).get(key) as FrontierRow | undefined;
  }

  finish(id: number, o: RowOutcome, now = new Date().toISOString()): void {
    this.finishStmt.run({
      id,
      state: o.state,
      failureClass: o.failureClass ?? null,
      reasonCode: o.reasonCode ?? null,
      reason: o.reason ?? null,
      httpStatus: o.httpStatus ?? null,
      attempts: o.attempts ?? null,
      retryCycle: o.retryCycle ?? null,
      requests: o.requests ?? 0,
      url: o.url ?? null,
      now,
    });
  }

  /** Records a page under a key of its own: the canonical URL of a page reached under another, or a redirect target. */
  recordPage(site: string, cycle: number, p: { key: string; url: string; state: UrlState; reason?: string; httpStatus?: number }, now = new Date().toISOString()): void {
    this.db
      .prepare(
        `INSERT INTO crawl_urls (key, url, site, kind, depth, state, cycle, retry_cycle, reason, http_status, updated_at)
         VALUES (@key, @url, @site, 'article', 1, @state, @cycle, @cycle, @reason, @httpStatus, @now)
         ON CONFLICT(key) DO UPDATE SET state = excluded.state, failure_class = NULL, reason_code = NULL, reason = excluded.reason,
           http_status = COALESCE(excluded.http_status, http_status), updated_at = excluded.updated_at`,
      )
      .run({ reason: null, httpStatus: null, ...p, site, cycle, now });
  }

  /** Rows of a site still pending (any cycle). */
  pendingCount(site: string): number {
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM crawl_urls WHERE site = ? AND state = 'pending'`).get(site) as { n: number }).n;
  }

  /** A page waiting for its images becomes done once none of them is pending. Returns true when it did. */
  completePage(key: string, now = new Date().toISOString()): boolean {
    return (
      this.db
        .prepare(
          `UPDATE crawl_urls SET state = 'done', updated_at = ? WHERE key = ? AND state = 'images'
           AND NOT EXISTS (SELECT 1 FROM crawl_urls WHERE parent = ? AND state = 'pending')`,
        )
        .run(now, key, key).changes > 0
    );
  }

  /** Articles of a site attempted in this cycle (the per-cycle page limit survives a restart). */
  articlesAttempted(site: string, since: string): number {
    return (
      this.db.prepare(`SELECT COUNT(*) AS n FROM crawl_urls WHERE site = ? AND kind = 'article' AND requests > 0 AND updated_at >= ?`).get(site, since) as { n: number }
    ).n;
  }

  cycleStartedAt(site: string): string | undefined {
    return (this.db.prepare('SELECT started_at AS s FROM crawl_sites WHERE site = ?').get(site) as { s: string | null } | undefined)?.s ?? undefined;
  }

  /** Rows in some states (newest first), for `crawl --list`. */
  list(states: UrlState[], opts: { site?: string; limit?: number } = {}): FrontierRow[] {
    const marks = states.map(() => '?').join(', ');
    const site = opts.site ? 'AND site = ?' : '';
    const args: unknown[] = [...states, ...(opts.site ? [opts.site] : []), opts.limit ?? 1000];
    const cond = states.includes('pending') ? `AND (state <> 'pending' OR failure_class IS NOT NULL)` : '';
    return this.db.prepare(`SELECT ${COLUMNS} FROM crawl_urls WHERE state IN (${marks}) ${cond} ${site} ORDER BY updated_at DESC, id DESC LIMIT ?`).all(...args) as FrontierRow[];
  }

  /** Given-up URLs become pending again with a fresh count (`crawl --retry-given-up`). */
  retryGivenUp(site?: string, now = new Date().toISOString()): number {
    const sql = `UPDATE crawl_urls SET state = 'pending', attempts = 0, retry_cycle = 0, updated_at = ? WHERE state = 'given-up' ${site ? 'AND site = ?' : ''}`;
    const info = site ? this.db.prepare(sql).run(now, site) : this.db.prepare(sql).run(now);
    // Their pages wait for them again.
    this.db.exec(`UPDATE crawl_urls SET state = 'images' WHERE state = 'done' AND kind = 'article'
      AND EXISTS (SELECT 1 FROM crawl_urls c WHERE c.parent = crawl_urls.key AND c.state = 'pending')`);
    return info.changes;
  }

  stats(): CrawlStats {
    const urls: CrawlStats['urls'] = {};
    for (const r of this.db.prepare('SELECT kind, state, COUNT(*) AS n FROM crawl_urls GROUP BY kind, state ORDER BY kind, state').all() as { kind: string; state: string; n: number }[]) {
      (urls[r.kind] ??= {})[r.state] = r.n;
    }
    const one = (sql: string) => (this.db.prepare(sql).get() as { n: number }).n;
    const failures: CrawlStats['failures'] = { transient: {}, permanent: {} };
    const rows = this.db
      .prepare(
        `SELECT failure_class AS c, reason_code AS code, COUNT(*) AS n FROM crawl_urls
         WHERE failure_class IS NOT NULL AND state IN ('pending', 'given-up', 'failed') GROUP BY c, code ORDER BY n DESC`,
      )
      .all() as { c: FailureClass; code: string | null; n: number }[];
    for (const r of rows) failures[r.c][r.code ?? 'unknown'] = r.n;
    return {
      urls,
      pendingRetries: one(`SELECT COUNT(*) AS n FROM crawl_urls WHERE state = 'pending' AND failure_class IS NOT NULL`),
      givenUp: one(`SELECT COUNT(*) AS n FROM crawl_urls WHERE state = 'given-up'`),
      failed: one(`SELECT COUNT(*) AS n FROM crawl_urls WHERE state = 'failed'`),
      failures,
    };
  }

  // --- hosts ---

  /** Hosts paused past now by a long Retry-After. */
  hostPauses(now = new Date().toISOString()): { host: string; pausedUntil: string; reason: string | null }[] {
    return this.db.prepare('SELECT host, paused_until AS pausedUntil, reason FROM crawl_hosts WHERE paused_until > ?').all(now) as {
      host: string;
      pausedUntil: string;
      reason: string | null;
    }[];
  }

  setHostPause(host: string, until: string, reason: string): void {
    this.db
      .prepare('INSERT INTO crawl_hosts (host, paused_until, reason) VALUES (?, ?, ?) ON CONFLICT(host) DO UPDATE SET paused_until = excluded.paused_until, reason = excluded.reason')
      .run(host, until, reason);
  }

  // --- conditional GET and robots.txt ---

  validators(url: string): Validators | undefined {
    return this.db.prepare('SELECT etag, last_modified AS lastModified FROM crawl_validators WHERE url = ?').get(url) as Validators | undefined;
  }

  setValidators(url: string, v: Validators, now = new Date().toISOString()): void {
    this.db
      .prepare(
        `INSERT INTO crawl_validators (url, etag, last_modified, checked_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(url) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified, checked_at = excluded.checked_at`,
      )
      .run(url, v.etag, v.lastModified, now);
  }

  /** Forgets a listing's validators (it failed: the next cycle fetches it in full). */
  clearValidators(url: string): void {
    this.db.prepare('DELETE FROM crawl_validators WHERE url = ?').run(url);
  }

  robots(origin: string): RobotsRow | undefined {
    return this.db.prepare('SELECT status, body, fetched_at AS fetchedAt FROM crawl_robots WHERE origin = ?').get(origin) as RobotsRow | undefined;
  }

  setRobots(origin: string, status: number, body: string, now = new Date().toISOString()): void {
    this.db
      .prepare(
        `INSERT INTO crawl_robots (origin, status, body, fetched_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(origin) DO UPDATE SET status = excluded.status, body = excluded.body, fetched_at = excluded.fetched_at`,
      )
      .run(origin, status, body, now);
  }

  /** The stored image of an image URL some earlier item came from (the same photo on another page). */
  imageForUrl(imageUrl: string): string | undefined {
    return (this.db.prepare('SELECT image_sha256 AS sha FROM items WHERE image_url = ? LIMIT 1').get(imageUrl) as { sha: string } | undefined)?.sha;
  }
}
