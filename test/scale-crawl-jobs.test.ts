// The crawl in the scale-out mode: the daemon's cycle on a PostgreSQL bank queues one crawl job per host group (sites
// sharing a host in one job) instead of crawling, and no second job while a group's is open; a worker that crawls
// runs them against real loopback sites and the items arrive in the bank. Migration 16 (crawl jobs) keeps the jobs a
// bank already has, on SQLite (a rebuilt table) and PostgreSQL.
import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import pg from 'pg';
import sharp from 'sharp';
import { Bank, JobsRepo } from '../src/bank/index.js';
import { m015Jobs } from '../src/bank/migrations/015-jobs.js';
import { m016CrawlJobs } from '../src/bank/migrations/016-crawl-jobs.js';
import { loadConfig } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import type { SiteProfile } from '../src/stages/crawl/sites.js';
import { runCycle } from '../src/daemon/cycle.js';
import { createLogger } from '../src/util/log.js';
import { hostGroups } from '../src/worker/crawl-jobs.js';
import { Worker } from '../src/worker/worker.js';
import { tempDir } from './helpers.js';
import { pgUnavailable, startPg } from './helpers/postgres.js';

const profile = (name: string, allowedHosts: string[]) => ({ name, allowedHosts }) as unknown as SiteProfile;

/** A news host on loopback: per site prefix, a list page linking one article with one captioned photo. */
async function newsHost(sites: { prefix: string; caption: string; shade: number }[]) {
  const photos = new Map<string, Buffer>();
  for (const s of sites) {
    photos.set(
      `/${s.prefix}/photo.jpg`,
      await sharp({ create: { width: 320, height: 240, channels: 3, background: { r: s.shade, g: 90, b: 200 - s.shade } } })
        .composite([{ input: Buffer.from(`<svg width="320" height="240"><rect x="60" y="50" width="120" height="90" fill="rgb(${255 - s.shade},40,40)"/></svg>`) }])
        .jpeg()
        .toBuffer(),
    );
  }
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    const p = req.url ?? '';
    hits.push(p);
    const photo = photos.get(p);
    if (photo) return void res.writeHead(200, { 'content-type': 'image/jpeg' }).end(photo);
    for (const s of sites) {
      const page = (body: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html><head><meta charset="utf-8"><title>t</title></head><body><article>${body}</article></body></html>`);
      if (p === `/${s.prefix}/`) return void page(`<a href="/${s.prefix}/2026/story.html">story</a>`);
      if (p === `/${s.prefix}/2026/story.html`) return void page(`<figure><img src="/${s.prefix}/photo.jpg"><figcaption>${s.caption}</figcaption></figure>`);
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { host, hits, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

describe('scale-out crawl: one job per host group', function () {
  this.timeout(120_000);

  it('groups the sites whose allowed hosts overlap (the same host, or a subdomain of a .domain)', () => {
    const groups = hostGroups([
      profile('a-en', ['news.example.com:8080']),
      profile('a-zh', ['news.example.com:8080']),
      profile('b', ['other.example.net']),
      profile('c', ['.example.org']),
      profile('c-photos', ['img.example.org']),
      profile('d', ['example.com']), // another host than news.example.com:8080 (the port differs)
    ]);
    expect(groups).to.deep.equal([['a-en', 'a-zh'], ['b'], ['c', 'c-photos'], ['d']]);
  });

  it('migration 16 keeps a bank\'s jobs and their ids, and admits crawl jobs with a key (SQLite)', () => {
    const db = new Database(path.join(tempDir('capbridge-m16-'), 'bank.db'));
    try {
      db.exec(m015Jobs.up as string);
      db.prepare(`INSERT INTO jobs (stage, first_id, last_id, state, attempts, enqueued_at) VALUES ('features', 1, 32, 'done', 1, 'x'), ('match', 5, 9, 'queued', 0, 'y')`).run();
      expect(() => db.prepare(`INSERT INTO jobs (stage, first_id, last_id, enqueued_at) VALUES ('crawl', 0, 0, 'z')`).run()).to.throw(/CHECK/);
      db.exec(m016CrawlJobs.up as string);
      expect(db.prepare('SELECT id, stage, first_id, last_id, state, key FROM jobs ORDER BY id').all()).to.deep.equal([
        { id: 1, stage: 'features', first_id: 1, last_id: 32, state: 'done', key: null },
        { id: 2, stage: 'match', first_id: 5, last_id: 9, state: 'queued', key: null },
      ]);
      const r = db.prepare(`INSERT INTO jobs (stage, first_id, last_id, key, enqueued_at) VALUES ('crawl', 0, 0, '["a"]', 'z')`).run();
      expect(Number(r.lastInsertRowid)).to.equal(3); // the ids go on from the old table's
      expect(() => db.prepare(`INSERT INTO jobs (stage, first_id, last_id, enqueued_at) VALUES ('index', 0, 0, 'z')`).run()).to.throw(/CHECK/);
    } finally {
      db.close();
    }
  });

  const why = pgUnavailable();
  if (why) {
    it(`PostgreSQL parts skipped: ${why}`, function () {
      this.skip();
    });
    return;
  }

  it('migration 16 keeps a bank\'s jobs, and admits crawl jobs with a key (PostgreSQL)', async () => {
    const server = await startPg();
    const c = new pg.Client({ connectionString: await server.createDatabase() });
    await c.connect();
    try {
      await c.query(m015Jobs.pg as string);
      await c.query(`INSERT INTO jobs (stage, first_id, last_id, state, attempts, enqueued_at) VALUES ('features', 1, 32, 'done', 1, 'x')`);
      await c.query(m016CrawlJobs.pg as string);
      expect((await c.query('SELECT id::int, stage, first_id::int, state, key FROM jobs')).rows).to.deep.equal([{ id: 1, stage: 'features', first_id: 1, state: 'done', key: null }]);
      await c.query(`INSERT INTO jobs (stage, first_id, last_id, key, enqueued_at) VALUES ('crawl', 0, 0, '["a"]', 'z')`);
      let refused = false;
      await c.query(`INSERT INTO jobs (stage, first_id, last_id, enqueued_at) VALUES ('index', 0, 0, 'z')`).catch(() => (refused = true));
      expect(refused).to.equal(true);
    } finally {
      await c.end();
    }
  });

  it('the daemon queues a job per host group and crawls nothing; a crawling worker runs them; no second job while one is open', async () => {
    const a = await newsHost([
      { prefix: 'en', caption: 'Firefighters spray water on a burning warehouse in the harbour district on Monday.', shade: 40 },
      { prefix: 'zh', caption: '周一，消防员向港区一座燃烧的仓库喷水，附近居民被疏散。', shade: 120 },
    ]);
    const b = await newsHost([{ prefix: 'en', caption: 'A train crosses the new bridge over the river after the opening ceremony.', shade: 200 }]);
    const dir = tempDir('capbridge-crawljobs-');
    const sitesDir = path.join(dir, 'sites');
    fs.mkdirSync(sitesDir);
    const site = (name: string, language: string, host: string, prefix: string) =>
      fs.writeFileSync(
        path.join(sitesDir, `${name}.yaml`),
        `name: ${name}\nlanguage: ${language}\nstartUrls: ["http://${host}/${prefix}/"]\nallowedHosts: ["${host}"]\narticlePatterns: ['/${prefix}/20\\d\\d/']\ncaptions: { container: figure, caption: figcaption }\n`,
      );
    site('host-a-en', 'en', a.host, 'en');
    site('host-a-zh', 'zh', a.host, 'zh');
    site('host-b-en', 'en', b.host, 'en');
    const { config: base } = loadConfig({});
    const config: Config = {
      ...base,
      crawler: { ...base.crawler, allowPrivateAddresses: true, perHostDelayMs: 0, sitesDir },
      worker: { ...base.worker, pollSeconds: 0.1 },
      sift: { ...base.sift, threads: 1 },
    };
    const server = await startPg();
    const bank = await Bank.open(path.join(dir, 'data'), { url: await server.createDatabase() });
    try {
      const logger = createLogger('error');
      const cycle = await runCycle(bank, config, { logger, stages: ['crawl'] });
      expect(cycle.stages[0]!.summary).to.include({ groups: 2, jobs: 2, stillOpen: 0, scaleOut: true });
      expect(a.hits.length + b.hits.length, 'the daemon fetched nothing').to.equal(0);
      const jobs = bank.repo(JobsRepo);
      const keys = (await jobs.list()).map((j) => j.key).sort();
      expect(keys).to.deep.equal([JSON.stringify(['host-a-en', 'host-a-zh']), JSON.stringify(['host-b-en'])]);
      // the next cycle while both are open queues nothing more
      expect((await runCycle(bank, config, { logger, stages: ['crawl'] })).stages[0]!.summary).to.include({ jobs: 0, stillOpen: 2 });

      const w = new Worker(bank, config, { stages: ['crawl', 'features', 'match', 'pair'], concurrency: 1, drain: true, id: 'crawler-1', logger });
      const summary = await w.run();
      expect(summary.failed).to.equal(0);
      expect(summary.done.crawl).to.equal(2);
      expect(a.hits.some((h) => h.startsWith('/zh/2026/')) && b.hits.some((h) => h.startsWith('/en/2026/'))).to.equal(true);
      expect(await bank.items.count('source')).to.equal(2);
      expect(await bank.items.count('target')).to.equal(1);
      expect((await jobs.list()).filter((j) => j.stage === 'crawl').every((j) => j.state === 'done' && j.worker === 'crawler-1')).to.equal(true);
      // done: the next cycle queues both groups again
      expect((await runCycle(bank, config, { logger, stages: ['crawl'] })).stages[0]!.summary).to.include({ jobs: 2, stillOpen: 0 });
    } finally {
      await bank.close();
      await a.close();
      await b.close();
    }
  });
});
