// Migration 5: the crawler's own state. Conditional-GET validators of listing pages and feeds, the robots.txt
// cache (expires by fetched_at), and the article pages already harvested (so a later cycle does not fetch them
// again). The request queue itself was then crawlee's, in the data dir (crawl/); migration 9 moved the frontier into
// the bank (crawl_urls), and the crawl stage adopts an old queue once (adoptLegacyQueues).
import type { Migration } from './types.js';

export const m005Crawler: Migration = {
  version: 5,
  name: 'crawler: validators, robots cache, harvested pages',
  up: `
    CREATE TABLE crawl_validators (
      url            TEXT PRIMARY KEY,       -- normalised listing/feed/sitemap URL
      etag           TEXT,
      last_modified  TEXT,
      checked_at     TEXT NOT NULL
    );

    CREATE TABLE crawl_robots (
      origin      TEXT PRIMARY KEY,          -- scheme://host:port
      status      INTEGER NOT NULL,          -- HTTP status of robots.txt (0 = network error)
      body        TEXT NOT NULL DEFAULT '',
      fetched_at  TEXT NOT NULL
    );

    CREATE TABLE crawl_pages (
      url         TEXT PRIMARY KEY,          -- normalised article URL
      site        TEXT NOT NULL,
      status      INTEGER NOT NULL,          -- HTTP status (0 = refused/failed before a response)
      pairs       INTEGER NOT NULL DEFAULT 0,
      added       INTEGER NOT NULL DEFAULT 0,
      reason      TEXT,
      fetched_at  TEXT NOT NULL
    );
    CREATE INDEX crawl_pages_site ON crawl_pages(site, fetched_at);
    CREATE INDEX items_image_url ON items(image_url);   -- an image URL already stored is not downloaded again
  `,
  // PostgreSQL: BIGINT identities for ids, BYTEA for BLOBs, DOUBLE PRECISION for SQLite's 8-byte REAL.
  pg: `
    CREATE TABLE crawl_validators (
      url            TEXT PRIMARY KEY,
      etag           TEXT,
      last_modified  TEXT,
      checked_at     TEXT NOT NULL
    );

    CREATE TABLE crawl_robots (
      origin      TEXT PRIMARY KEY,
      status      INTEGER NOT NULL,
      body        TEXT NOT NULL DEFAULT '',
      fetched_at  TEXT NOT NULL
    );

    CREATE TABLE crawl_pages (
      url         TEXT PRIMARY KEY,
      site        TEXT NOT NULL,
      status      INTEGER NOT NULL,
      pairs       INTEGER NOT NULL DEFAULT 0,
      added       INTEGER NOT NULL DEFAULT 0,
      reason      TEXT,
      fetched_at  TEXT NOT NULL
    );
    CREATE INDEX crawl_pages_site ON crawl_pages(site, fetched_at);
    CREATE INDEX items_image_url ON items(image_url);
  `,
};
