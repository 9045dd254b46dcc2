// The crawler's repository: the frontier (crawl_urls: every URL to fetch with its state, failure class and
// retry schedule), site cycles, host pauses, validators for conditional GET and the robots.txt cache.
import type { Sql } from './sql.js';

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

const COLUMNS = `id, key, url, site, kind, depth, state, cycle, retry_cycle AS "retryCycle", attempts, requests,
  failure_class AS "failureClass", reason_code AS "reasonCode", reason, http_status AS "httpStatus", parent, data, updated_at AS "updatedAt"`;

const PAGE_KINDS = new Set<UrlKind>(['listing', 'feed', 'sitemap']);

const INSERT = `INSERT INTO crawl_urls (key, url, site, kind, depth, state, cycle, retry_cycle, parent, data, updated_at)
  VALUES (@key, @url, @site, @kind, @depth, 'pending', @cycle, @cycle, @parent, @data, @now) ON CONFLICT(key) DO NOTHING`;

const n = (r: { n: number | string } | undefined): number => Number(r?.n ?? 0);

export class CrawlRepo {
  constructor(private db: Sql) {}

  // --- site cycles ---

  async siteCycle(site: string): Promise<{ cycle: number; open: boolean } | undefined> {
    const r = await this.db.get<{ cycle: number; open: number }>('SELECT cycle, open FROM crawl_sites WHERE site = ?', [site]);
    return r && { cycle: Number(r.cycle), open: Number(r.open) === 1 };
  }

  /** Resumes the site's open cycle, or opens the next one and queues its seeds (in the caller's transaction). */
  async beginCycle(site: string, seeds: NewUrl[], now = new Date().toISOString()): Promise<{ cycle: number; resumed: boolean }> {
    const cur = await this.siteCycle(site);
    if (cur?.open) return { cycle: cur.cycle, resumed: true };
    const cycle = (cur?.cycle ?? 0) + 1;
    await this.db.run(
      `INSERT INTO crawl_sites (site, cycle, open, started_at) VALUES (?, ?, 1, ?)
       ON CONFLICT(site) DO UPDATE SET cycle = excluded.cycle, open = 1, started_at = excluded.started_at, finished_at = NULL`,
      [site, cycle, now],
    );
    await this.enqueue(site, cycle, seeds, { force: true, now });
    return { cycle, resumed: false };
  }

  async closeCycle(site: string, cycle: number, now = new Date().toISOString()): Promise<void> {
    await this.db.run('UPDATE crawl_sites SET open = 0, finished_at = ? WHERE site = ? AND cycle = ?', [now, site, cycle]);
  }

  // --- the frontier ---

  /** Queues URLs; returns how many became pending. Known articles and images are never queued again. */
  async enqueue(site: string, cycle: number, rows: NewUrl[], opts: { force?: boolean; now?: string } = {}): Promise<number> {
    const now = opts.now ?? new Date().toISOString();
    // A listing, feed or sitemap is walked once per cycle: one walked in an earlier cycle is queued again, and
    // one that failed permanently stays failed unless it is a seed (`force`).
    const requeue = `UPDATE crawl_urls SET state = 'pending', cycle = @cycle, retry_cycle = @cycle,
        depth = ${this.db.dialect === 'postgres' ? 'LEAST' : 'MIN'}(depth, @depth), updated_at = @now
      WHERE key = @key AND cycle < @cycle AND kind IN ('listing', 'feed', 'sitemap') AND (state <> 'failed' OR @force = 1)`;
    let added = 0;
    for (const r of rows) {
      const ins = await this.db.run(INSERT, { parent: null, data: null, ...r, site, cycle, now });
      if (ins) added++;
      else if (PAGE_KINDS.has(r.kind)) added += await this.db.run(requeue, { key: r.key, cycle, depth: r.depth, force: opts.force ? 1 : 0, now });
    }
    return added;
  }

  /** Pending rows of a site that this cycle may attempt, images first, then listings, then articles; id order. */
  async eligible(site: string, cycle: number, limit: number, skip: ReadonlySet<number> = new Set()): Promise<FrontierRow[]> {
    // Images first (they complete pages already fetched), then listings (they find the articles), then articles.
    const rows = await this.db.all<FrontierRow>(
      `SELECT ${COLUMNS} FROM crawl_urls WHERE site = ? AND state = 'pending' AND retry_cycle <= ?
       ORDER BY CASE kind WHEN 'image' THEN 0 WHEN 'article' THEN 2 ELSE 1 END, id LIMIT ?`,
      [site, cycle, limit + skip.size],
    );
    return rows.filter((r) => !skip.has(r.id)).slice(0, limit);
  }

  row(key: string): Promise<FrontierRow | undefined> {
    return this.db.get<FrontierRow>(`SELECT ${COLUMNS} FROM crawl_urls WHERE key = ?`, [key]);
  }

  async finish(id: number, o: RowOutcome, now = new Date().toISOString()): Promise<void> {
    await this.db.run(
      `UPDATE crawl_urls SET state = @state, failure_class = @failureClass, reason_code = @reasonCode, reason = @reason,
         http_status = COALESCE(@httpStatus, http_status), attempts = COALESCE(@attempts, attempts),
         retry_cycle = COALESCE(@retryCycle, retry_cycle), requests = requests + @requests, url = COALESCE(@url, url),
         updated_at = @now
       WHERE id = @id`,
      {
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
      },
    );
  }

  /** Records a page under a key of its own: the canonical URL of a page reached under another, or a redirect target. */
  async recordPage(site: string, cycle: number, p: { key: string; url: string; state: UrlState; reason?: string; httpStatus?: number }, now = new Date().toISOString()): Promise<void> {
    await this.db.run(
      `INSERT INTO crawl_urls (key, url, site, kind, depth, state, cycle, retry_cycle, reason, http_status, updated_at)
       VALUES (@key, @url, @site, 'article', 1, @state, @cycle, @cycle, @reason, @httpStatus, @now)
       ON CONFLICT(key) DO UPDATE SET state = excluded.state, failure_class = NULL, reason_code = NULL, reason = excluded.reason,
         http_status = COALESCE(excluded.http_status, crawl_urls.http_status), updated_at = excluded.updated_at`,
      { reason: null, httpStatus: null, ...p, site, cycle, now },
    );
  }

  /** Rows of a site still pending (any cycle). */
  async pendingCount(site: string): Promise<number> {
    return n(await this.db.get(`SELECT COUNT(*) AS n FROM crawl_urls WHERE site = ? AND state = 'pending'`, [site]));
  }

  /** A page waiting for its images becomes done once none of them is pending. Returns true when it did. */
  async completePage(key: string, now = new Date().toISOString()): Promise<boolean> {
    return (
      (await this.db.run(
        `UPDATE crawl_urls SET state = 'done', updated_at = ? WHERE key = ? AND state = 'images'
         AND NOT EXISTS (SELECT 1 FROM crawl_urls WHERE parent = ? AND state = 'pending')`,
        [now, key, key],
      )) > 0
    );
  }

  /** Articles of a site attempted in this cycle (the per-cycle page limit survives a restart). */
  async articlesAttempted(site: string, since: string): Promise<number> {
    return n(await this.db.get(`SELECT COUNT(*) AS n FROM crawl_urls WHERE site = ? AND kind = 'article' AND requests > 0 AND updated_at >= ?`, [site, since]));
  }

  async cycleStartedAt(site: string): Promise<string | undefined> {
    return (await this.db.get<{ s: string | null }>('SELECT started_at AS s FROM crawl_sites WHERE site = ?', [site]))?.s ?? undefined;
  }

  /** Rows in some states (newest first), for `crawl --list`. */
  list(states: UrlState[], opts: { site?: string; limit?: number } = {}): Promise<FrontierRow[]> {
    const marks = states.map(() => '?').join(', ');
    const site = opts.site ? 'AND site = ?' : '';
    const args: unknown[] = [...states, ...(opts.site ? [opts.site] : []), opts.limit ?? 1000];
    const cond = states.includes('pending') ? `AND (state <> 'pending' OR failure_class IS NOT NULL)` : '';
    return this.db.all<FrontierRow>(`SELECT ${COLUMNS} FROM crawl_urls WHERE state IN (${marks}) ${cond} ${site} ORDER BY updated_at DESC, id DESC LIMIT ?`, args);
  }

  /** Given-up URLs become pending again with a fresh count (`crawl --retry-given-up`). */
  async retryGivenUp(site?: string, now = new Date().toISOString()): Promise<number> {
    const sql = `UPDATE crawl_urls SET state = 'pending', attempts = 0, retry_cycle = 0, updated_at = ? WHERE state = 'given-up' ${site ? 'AND site = ?' : ''}`;
    const changed = await this.db.run(sql, site ? [now, site] : [now]);
    // Their pages wait for them again.
    await this.db.run(`UPDATE crawl_urls SET state = 'images' WHERE state = 'done' AND kind = 'article'
      AND EXISTS (SELECT 1 FROM crawl_urls c WHERE c.parent = crawl_urls.key AND c.state = 'pending')`);
    return changed;
  }

  async stats(): Promise<CrawlStats> {
    const urls: CrawlStats['urls'] = {};
    for (const r of await this.db.all<{ kind: string; state: string; n: number }>('SELECT kind, state, COUNT(*) AS n FROM crawl_urls GROUP BY kind, state ORDER BY kind, state')) {
      (urls[r.kind] ??= {})[r.state] = Number(r.n);
    }
    const one = async (sql: string) => n(await this.db.get(sql));
    const failures: CrawlStats['failures'] = { transient: {}, permanent: {} };
    const rows = await this.db.all<{ c: FailureClass; code: string | null; n: number }>(
      `SELECT failure_class AS c, reason_code AS code, COUNT(*) AS n FROM crawl_urls
       WHERE failure_class IS NOT NULL AND state IN ('pending', 'given-up', 'failed') GROUP BY failure_class, reason_code ORDER BY n DESC`,
    );
    for (const r of rows) failures[r.c][r.code ?? 'unknown'] = Number(r.n);
    return {
      urls,
      pendingRetries: await one(`SELECT COUNT(*) AS n FROM crawl_urls WHERE state = 'pending' AND failure_class IS NOT NULL`),
      givenUp: await one(`SELECT COUNT(*) AS n FROM crawl_urls WHERE state = 'given-up'`),
      failed: await one(`SELECT COUNT(*) AS n FROM crawl_urls WHERE state = 'failed'`),
      failures,
    };
  }

  // --- hosts ---

  /** Hosts paused past now by a long Retry-After. */
  hostPauses(now = new Date().toISOString()): Promise<{ host: string; pausedUntil: string; reason: string | null }[]> {
    return this.db.all('SELECT host, paused_until AS "pausedUntil", reason FROM crawl_hosts WHERE paused_until > ?', [now]);
  }

  async setHostPause(host: string, until: string, reason: string): Promise<void> {
    await this.db.run(
      'INSERT INTO crawl_hosts (host, paused_until, reason) VALUES (?, ?, ?) ON CONFLICT(host) DO UPDATE SET paused_until = excluded.paused_until, reason = excluded.reason',
      [host, until, reason],
    );
  }

  // --- conditional GET and robots.txt ---

  validators(url: string): Promise<Validators | undefined> {
    return this.db.get<Validators>('SELECT etag, last_modified AS "lastModified" FROM crawl_validators WHERE url = ?', [url]);
  }

  async setValidators(url: string, v: Validators, now = new Date().toISOString()): Promise<void> {
    await this.db.run(
      `INSERT INTO crawl_validators (url, etag, last_modified, checked_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(url) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified, checked_at = excluded.checked_at`,
      [url, v.etag, v.lastModified, now],
    );
  }

  /** Forgets a listing's validators (it failed: the next cycle fetches it in full). */
  async clearValidators(url: string): Promise<void> {
    await this.db.run('DELETE FROM crawl_validators WHERE url = ?', [url]);
  }

  robots(origin: string): Promise<RobotsRow | undefined> {
    return this.db.get<RobotsRow>('SELECT status, body, fetched_at AS "fetchedAt" FROM crawl_robots WHERE origin = ?', [origin]);
  }

  async setRobots(origin: string, status: number, body: string, now = new Date().toISOString()): Promise<void> {
    await this.db.run(
      `INSERT INTO crawl_robots (origin, status, body, fetched_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(origin) DO UPDATE SET status = excluded.status, body = excluded.body, fetched_at = excluded.fetched_at`,
      [origin, status, body, now],
    );
  }

  /** The stored image of an image URL some earlier item came from (the same photo on another page). */
  async imageForUrl(imageUrl: string): Promise<string | undefined> {
    return (await this.db.get<{ sha: string }>('SELECT image_sha256 AS sha FROM items WHERE image_url = ? LIMIT 1', [imageUrl]))?.sha;
  }
}
