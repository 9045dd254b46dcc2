// Migration 16 (scale): crawl jobs. In the scale-out mode the daemon no longer crawls; it queues one crawl job per
// host group (the site profiles that share a host), and workers that crawl claim them, so that one host's politeness
// lives in one worker at a time. Such a job is keyed by its sites (`key`), not by an id range (first_id = last_id =
// 0). SQLite cannot alter a CHECK constraint: the table is rebuilt, its rows and ids kept.
import type { Migration } from './types.js';

const STAGES = `'crawl', 'features', 'match', 'pair'`;

export const m016CrawlJobs: Migration = {
  version: 16,
  name: 'crawl jobs keyed by host group',
  up: `
    CREATE TABLE jobs_new (
      id           INTEGER PRIMARY KEY AUTOINCREMENT,
      stage        TEXT NOT NULL CHECK (stage IN (${STAGES})),
      first_id     BIGINT NOT NULL,
      last_id      BIGINT NOT NULL,
      state        TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'done')),
      worker       TEXT,
      lease_until  BIGINT,
      attempts     INTEGER NOT NULL DEFAULT 0,
      enqueued_at  TEXT NOT NULL,
      done_at      TEXT,
      key          TEXT
    );
    INSERT INTO jobs_new (id, stage, first_id, last_id, state, worker, lease_until, attempts, enqueued_at, done_at)
      SELECT id, stage, first_id, last_id, state, worker, lease_until, attempts, enqueued_at, done_at FROM jobs;
    DROP TABLE jobs;
    ALTER TABLE jobs_new RENAME TO jobs;
    CREATE INDEX jobs_open ON jobs (stage, id) WHERE state = 'queued';
  `,
  pg: `
    ALTER TABLE jobs ADD COLUMN key TEXT;
    ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_stage_check;
    ALTER TABLE jobs ADD CONSTRAINT jobs_stage_check CHECK (stage IN (${STAGES}));
  `,
};
