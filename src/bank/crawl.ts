// The crawler's repository: validators for conditional GET, the robots.txt cache and harvested pages.
import type Database from 'better-sqlite3';

export interface Validators { etag: string | null; lastModified: string | null }
export interface RobotsRow { status: number; body: string; fetchedAt: string }

export class CrawlRepo {
  constructor(private db: Database.Database) {}

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

  pageDone(url: string): boolean {
    return this.db.prepare('SELECT 1 FROM crawl_pages WHERE url = ?').get(url) !== undefined;
  }

  recordPage(p: { url: string; site: string; status: number; pairs: number; added: number; reason?: string | null }, now = new Date().toISOString()): void {
    this.db
      .prepare(
        `INSERT INTO crawl_pages (url, site, status, pairs, added, reason, fetched_at) VALUES (@url, @site, @status, @pairs, @added, @reason, @now)
         ON CONFLICT(url) DO UPDATE SET status = excluded.status, pairs = excluded.pairs, added = excluded.added, reason = excluded.reason, fetched_at = excluded.fetched_at`,
      )
      .run({ reason: null, ...p, now });
  }

  /** The stored image of an image URL some earlier item came from (the same photo on another page). */
  imageForUrl(imageUrl: string): string | undefined {
    return (this.db.prepare('SELECT image_sha256 AS sha FROM items WHERE image_url = ? LIMIT 1').get(imageUrl) as { sha: string } | undefined)?.sha;
  }

  pagesBySite(site: string): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM crawl_pages WHERE site = ?').get(site) as { n: number }).n;
  }
}
