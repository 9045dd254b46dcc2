// Migration 30 (lsh-index, issue 35): the index split into shards by target item id range. A match job is one
// window of sources against one shard; each writes its sources' verified candidates from that shard here, and the
// job that completes a source's shards merges them into `candidates` (and marks the source matched).
// shard: 'first-last' target item ids; plan: the shard plan's id (partials of another plan are never merged);
// seq: the index watermark the search saw (the merged source is marked matched at the lowest); confident: the shard's
// direct search found a confident hit (mirrored hits of every shard are then dropped, as one search would not have
// run the mirror pass); candidates: JSON (CandidateInput[], inlier pairs as base64 float32).
import type { Migration } from './types.js';

const SQL = `
  CREATE TABLE match_partials (
    source_item_id  BIGINT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    shard           TEXT NOT NULL,
    plan            TEXT NOT NULL,
    image_sha256    TEXT NOT NULL,
    seq             BIGINT NOT NULL,
    confident       INTEGER NOT NULL,
    candidates      TEXT NOT NULL,
    searched_at     TEXT NOT NULL,
    PRIMARY KEY (source_item_id, shard)
  );
`;

export const m030MatchPartials: Migration = {
  version: 30,
  name: 'match results per index shard, merged per source',
  up: SQL,
  pg: SQL,
};
