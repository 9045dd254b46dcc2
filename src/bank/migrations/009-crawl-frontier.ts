// Migration 9: the crawl frontier moves into the bank. One row per URL the crawler must fetch (listing pages,
// feeds, sitemaps, articles, and one per image still to store for an item), with its state, the failure class
// and reason of its last failure, how many cycles it has failed, and the cycle before which it is not retried.
// The queue is committed with what it produced (items, links), so a kill -9 anywhere loses and repeats
// nothing, and a page or image that failed for a passing reason is retried in later cycles instead of being
// recorded as done. Also: per-site cycle state (was crawler.cycle.NAME in meta) and per-host pauses asked for by
// Retry-After that outlast a cycle.
//
// crawl_pages (migration 5) is folded in and dropped: pages harvested become done rows; pages that failed for a
// transient reason (timeout, network error, 5xx, 429, a robots.txt that answered 5xx) become pending again, so
// what the old crawler lost is fetched once more; other failures (404, refused address...) stay failed.
import type Database from 'better-sqlite3';
import { urlKey } from '../../util/url-key.js';
import type { Migration } from './types.js';

const TRANSIENT_REASON = /^(timeout|network|error|too-many-redirects|robots|HTTP (5\d\d|429|408|425))$/;

export const m009CrawlFrontier: Migration = {
  version: 9,
  name: 'crawl frontier: per-URL state, failure classes, retries; site cycles; host pauses',
  up: (db: Database.Database) => {
    db.exec(`
      CREATE TABLE crawl_urls (
        id             INTEGER PRIMARY KEY,
        key            TEXT NOT NULL UNIQUE,   -- identity: url-key of a page (scheme, www, case folded), 'item:<bank>:<ext_id>' for an image
        url            TEXT NOT NULL,          -- what is fetched
        site           TEXT NOT NULL,
        kind           TEXT NOT NULL CHECK (kind IN ('listing', 'feed', 'sitemap', 'article', 'image')),
        depth          INTEGER NOT NULL DEFAULT 0,
        state          TEXT NOT NULL CHECK (state IN ('pending', 'images', 'done', 'failed', 'given-up')),
        cycle          INTEGER NOT NULL DEFAULT 0,   -- the site cycle that last queued it (listings are walked once per cycle)
        retry_cycle    INTEGER NOT NULL DEFAULT 0,   -- not attempted before this site cycle
        attempts       INTEGER NOT NULL DEFAULT 0,   -- cycles that ended in a transient failure
        requests       INTEGER NOT NULL DEFAULT 0,   -- requests made for it, over all cycles
        failure_class  TEXT CHECK (failure_class IN ('transient', 'permanent')),
        reason_code    TEXT,                   -- http-503, timeout, robots, too-large, ...
        reason         TEXT,                   -- the last failure, naming the URL
        http_status    INTEGER,
        parent         TEXT,                   -- images: the key of their page
        data           TEXT,                   -- images: JSON of the item to store (page URL, caption, credit, bank)
        updated_at     TEXT NOT NULL
      );
      CREATE INDEX crawl_urls_work ON crawl_urls (site, state, retry_cycle, id);
      CREATE INDEX crawl_urls_parent ON crawl_urls (parent, state) WHERE parent IS NOT NULL;
      CREATE INDEX crawl_urls_failures ON crawl_urls (state, failure_class, reason_code);

      CREATE TABLE crawl_sites (
        site         TEXT PRIMARY KEY,
        cycle        INTEGER NOT NULL,
        open         INTEGER NOT NULL,         -- 1 while the cycle is running (a restart resumes it)
        started_at   TEXT,
        finished_at  TEXT
      );

      CREATE TABLE crawl_hosts (
        host          TEXT PRIMARY KEY,        -- host:port as in URLs
        paused_until  TEXT NOT NULL,           -- Retry-After longer than a cycle waits for
        reason        TEXT
      );
    `);
    const now = new Date().toISOString();
    const insert = db.prepare(
      `INSERT INTO crawl_urls (key, url, site, kind, depth, state, cycle, retry_cycle, attempts, requests, failure_class, reason_code, reason, http_status, updated_at)
       VALUES (?, ?, ?, 'article', 1, ?, 0, 0, ?, 1, ?, ?, ?, ?, ?) ON CONFLICT(key) DO NOTHING`,
    );
    type Old = { url: string; site: string; status: number; reason: string | null };
    const rows = db.prepare('SELECT url, site, status, reason FROM crawl_pages ORDER BY (status BETWEEN 200 AND 299) DESC, fetched_at').all() as Old[];
    for (const r of rows) {
      const key = urlKey(r.url);
      if (!key) continue;
      const reason = r.reason ?? (r.status >= 400 ? `HTTP ${r.status}` : null);
      const ok = (r.status >= 200 && r.status < 300 && !reason) || (reason ?? '').startsWith('redirected to');
      if (ok) insert.run(key, r.url, r.site, 'done', 0, null, null, null, r.status || null, now);
      else if (TRANSIENT_REASON.test(reason ?? 'error'))
        insert.run(key, r.url, r.site, 'pending', 1, 'transient', 'legacy', `${r.url}: ${reason} (before retries existed)`, r.status || null, now);
      else insert.run(key, r.url, r.site, 'failed', 0, 'permanent', 'legacy', `${r.url}: ${reason}`, r.status || null, now);
    }
    db.exec('DROP TABLE crawl_pages');
    const cycles = db.prepare(`SELECT substr(key, 15) AS site, value FROM meta WHERE key LIKE 'crawler.cycle.%'`).all() as { site: string; value: string }[];
    const site = db.prepare('INSERT INTO crawl_sites (site, cycle, open) VALUES (?, ?, 0) ON CONFLICT(site) DO NOTHING');
    for (const c of cycles) site.run(c.site, Number(c.value) || 0);
    db.exec(`DELETE FROM meta WHERE key LIKE 'crawler.cycle.%'`);
  },
};
