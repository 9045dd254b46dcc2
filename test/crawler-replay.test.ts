// The crawler against the replay harness (hand-written fixture pages served as an en and a zh site behind a
// seeded fault injector): nothing lost or duplicated after a few cycles, permanent failures never retried,
// robots.txt 5xx is "not now", failed listings are fetched in full again, give-up with its reason, and kill -9
// at random moments ends in the same bank as an uninterrupted run.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Bank, CrawlRepo, StatsRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import { runCrawl, type CrawlSummary } from '../src/stages/crawl/stage.js';
import { mulberry32 } from '../src/util/random.js';
import { urlKey } from '../src/util/url-key.js';
import { REPO_ROOT, runCli, tempDir } from './helpers.js';
import { fixturePages, startReplay, type FaultOptions, type Replay } from './helpers/replay.js';

const FIXTURES = path.join(REPO_ROOT, 'fixtures', 'crawler');

/** Fast retry settings: loopback answers in milliseconds, so back-off and timeouts shrink with them. */
const FAST = {
  perHostDelayMs: 0,
  requestTimeoutSecs: 1,
  minImageSide: 100,
  retry: { triesPerCycle: 3, baseDelayMs: 20, maxDelayMs: 200, giveUpAfter: 3, maxRetryAfterSecs: 10 },
  hosts: { errorDelayMs: 20, maxDelayMs: 500, recoverRate: 20, breakerErrors: 10 },
};

function config(over: Record<string, unknown> = {}): Config {
  const { config } = loadConfig();
  return { ...config, crawler: { ...config.crawler, ...FAST, ...over } as Config['crawler'] };
}

/** The bank's crawled items as comparable rows, and which expected items are there. */
async function bankItems(bank: Bank) {
  const rows = [...(await bank.items.list('source', 100000)), ...(await bank.items.list('target', 100000))];
  return rows.map((i) => ({ ext: i.extId, page: i.pageUrl!, image: i.imageUrl!, caption: i.caption, sha: i.imageSha256 })).sort((a, b) => (a.ext < b.ext ? -1 : 1));
}

/** The same, without what depends on the servers' ports (two runs on two replays). */
async function portless(bank: Bank) {
  const strip = (u: string) => u.replace(/^http:\/\/127\.0\.0\.1:\d+/, '');
  return (await bankItems(bank))
    .map((i) => ({ page: strip(i.page), image: strip(i.image), caption: i.caption, sha: i.sha }))
    .sort((a, b) => (`${a.page} ${a.image}` < `${b.page} ${b.image}` ? -1 : 1));
}

async function coverage(replay: Replay, bank: Bank) {
  const key = (p: string, i: string) => `${p}\n${i}`;
  const want = new Set(replay.expected.map((e) => key(e.pageUrl, e.imageUrl)));
  const have = new Map<string, number>();
  for (const i of await bankItems(bank)) have.set(key(i.page, i.image), (have.get(key(i.page, i.image)) ?? 0) + 1);
  return {
    found: [...want].filter((k) => have.has(k)).length,
    expected: want.size,
    duplicated: [...have.values()].filter((n) => n > 1).length,
    unexpected: [...have.keys()].filter((k) => !want.has(k)).length,
  };
}

/** The fixture sites replayed, a fresh data dir with their profiles, and one crawl cycle at a call. */
async function withReplay(faults: FaultOptions | null, fn: (r: { replay: Replay; bank: Bank; dir: string; crawl: (site?: string) => Promise<CrawlSummary> }) => Promise<void>) {
  const replay = await startReplay(fixturePages(FIXTURES), faults);
  const dir = tempDir();
  replay.writeProfiles(path.join(dir, 'sites'));
  const bank = await Bank.open(path.join(dir, 'data'));
  try {
    await fn({ replay, bank, dir, crawl: (site) => runCrawl(bank, config(), { sitesDir: path.join(dir, 'sites'), site }) });
  } finally {
    await bank.close();
    await replay.close();
  }
}

/** Every request to the site fails with 503, but for the paths `only` accepts. */
const only503 = (only: (p: string) => boolean): FaultOptions => ({ share: 1, seed: 1, kinds: ['503'], spare: (p) => !only(p) });

describe('crawler: replay of fixture sites with faults', function () {
  this.timeout(120000);

  it('with 30 % of requests failing transiently, every expected item is in the bank after at most 3 cycles; permanent failures are asked once', () =>
    withReplay({ share: 0.3, seed: 7, retryAfterSecs: 1, stallMs: 1500 }, async ({ replay, bank, crawl }) => {
      expect(replay.expected.length).to.be.at.least(6); // the fixtures' captioned photos
      const found: number[] = [];
      let retries = 0;
      for (let cycle = 1; cycle <= 3; cycle++) {
        const s = await crawl();
        expect(s.failedSites).to.deep.equal([]);
        retries += s.retries;
        found.push((await coverage(replay, bank)).found);
      }
      const cov = await coverage(replay, bank);
      expect(cov.found, `found after each cycle: ${found}`).to.equal(cov.expected);
      expect(cov.duplicated).to.equal(0);
      expect(cov.unexpected).to.equal(0);
      expect(Object.values(replay.faultsInjected).reduce((a, b) => a + b, 0)).to.be.at.least(5);
      expect(retries).to.be.at.least(3);
      // 404/410 pages: never asked again after their answer; the robots-disallowed page never asked at all.
      expect(replay.permanentRetried).to.equal(0);
      expect(replay.disallowedRequested).to.equal(0);
      const st = (await bank.repo(StatsRepo).all()).crawl;
      expect(st.failures.permanent).to.include.keys('robots');
      expect((st.failures.permanent['http-404'] ?? 0) + (st.failures.permanent['http-410'] ?? 0)).to.equal(8);
    }));

  it("an image that fails every try keeps its page waiting ('images'), and the next cycle stores it without fetching the page again", () =>
    withReplay(null, async ({ replay, bank, crawl }) => {
      const victim = replay.expected.find((e) => e.lang === 'en')!;
      const imgPath = new URL(victim.imageUrl).pathname;
      replay.sites.en.faults = only503((p) => p.startsWith(imgPath));
      const s1 = await crawl('replay-en');
      expect(s1.failures.transient['http-503']).to.equal(1);
      const repo = bank.repo(CrawlRepo);
      expect((await repo.row(urlKey(victim.pageUrl)!))!.state).to.equal('images');
      expect((await coverage(replay, bank)).found).to.equal(replay.expected.filter((e) => e.lang === 'en').length - 1);
      replay.sites.en.faults = null;
      replay.sites.en.hits.length = 0;
      const s2 = await crawl('replay-en');
      expect(s2.itemsAdded.source).to.equal(1);
      expect((await repo.row(urlKey(victim.pageUrl)!))!.state).to.equal('done');
      expect(replay.sites.en.hits.map((h) => h.path)).to.not.include(new URL(victim.pageUrl).pathname);
      expect(replay.sites.en.hits.filter((h) => h.path === imgPath)).to.have.length(1);
    }));

  it('robots.txt answering 503 puts the host off for now (nothing recorded as refused); the next cycle harvests everything', () =>
    withReplay(null, async ({ replay, bank, crawl }) => {
      replay.sites.zh.faults = only503((p) => p === '/robots.txt');
      const s1 = await crawl('replay-zh');
      expect(s1.deferred).to.equal(3); // home page, feed, sitemap
      expect(replay.sites.zh.hits.every((h) => h.path === '/robots.txt')).to.equal(true);
      expect((await bank.repo(StatsRepo).all()).crawl.failed).to.equal(0);
      replay.sites.zh.faults = null;
      await crawl('replay-zh');
      expect((await bank.items.count('target'))).to.equal(replay.expected.filter((e) => e.lang === 'zh').length);
    }));

  it('a host that keeps failing opens its breaker: no more requests to it this cycle, its URLs wait for the next; the other host is harvested', () =>
    withReplay(null, async ({ replay, bank, dir }) => {
      replay.sites.en.faults = only503((p) => p !== '/robots.txt');
      const cfg = config({ hosts: { errorDelayMs: 1, maxDelayMs: 20, recoverRate: 100, breakerErrors: 4 } });
      const s = await runCrawl(bank, cfg, { sitesDir: path.join(dir, 'sites') });
      const enRequests = replay.sites.en.hits.filter((h) => h.path !== '/robots.txt').length;
      expect(enRequests).to.be.within(4, 5); // the error budget (and at most one request already on its way), then nothing
      expect(s.deferred).to.be.at.least(2); // the start page's siblings (feed, sitemap) put off without a request
      expect(await bank.items.count('target')).to.equal(replay.expected.filter((e) => e.lang === 'zh').length);
      const pending = await bank.repo(CrawlRepo).list(['pending'], { site: 'replay-en' });
      expect(pending.map((r) => r.reasonCode).sort()).to.include('host-paused');
      // Next cycle, the host answers again: everything comes in.
      replay.sites.en.faults = null;
      await runCrawl(bank, cfg, { sitesDir: path.join(dir, 'sites') });
      expect(await bank.items.count('source')).to.equal(replay.expected.filter((e) => e.lang === 'en').length);
    }));

  it('a listing that failed is fetched in full next cycle even though its validators were stored', () =>
    withReplay(null, async ({ replay, bank, crawl }) => {
      const repo = bank.repo(CrawlRepo);
      const feed = `${replay.sites.en.base}/rss.xml`;
      await repo.setValidators(feed, { etag: '"v1"', lastModified: null }); // stored by an earlier cycle
      replay.sites.en.faults = only503((p) => p === '/rss.xml');
      await crawl('replay-en');
      expect(await repo.validators(feed)).to.equal(undefined);
      replay.sites.en.faults = null;
      replay.sites.en.hits.length = 0;
      await crawl('replay-en');
      expect((await repo.row(urlKey(feed)!))!.state).to.equal('done');
      expect(replay.sites.en.hits.filter((h) => h.path === '/rss.xml')).to.have.length(1);
    }));

  it('a page that keeps failing is retried in cycles 2, 4, then given up with its reason (stats, crawl --list)', () =>
    withReplay(null, async ({ replay, bank, dir, crawl }) => {
      const victim = replay.sites.en.articles[0]!;
      const vpath = new URL(victim.url).pathname;
      replay.sites.en.faults = only503((p) => p === vpath);
      const asked: number[] = [];
      for (let c = 1; c <= 5; c++) {
        const before = replay.sites.en.hits.filter((h) => h.path === vpath).length;
        await crawl('replay-en');
        asked.push(replay.sites.en.hits.filter((h) => h.path === vpath).length - before);
      }
      // Three tries in cycle 1, the next cycle, then two cycles later (giveUpAfter 3 here): given up.
      expect(asked).to.deep.equal([3, 3, 0, 3, 0]);
      const row = (await bank.repo(CrawlRepo).row(urlKey(victim.url)!))!;
      expect(row).to.deep.include({ state: 'given-up', failureClass: 'transient', reasonCode: 'http-503', attempts: 3 });
      expect(row.reason).to.include(victim.url);
      const st = (await bank.repo(StatsRepo).all()).crawl;
      expect(st.givenUp).to.equal(1);
      expect(st.failures.transient['http-503']).to.equal(1);
      const { DaemonMetrics } = await import('../src/daemon/metrics.js');
      const metrics = await new DaemonMetrics(bank).registry.metrics();
      expect(metrics).to.match(/^capbridge_crawl_given_up 1$/m);
      expect(metrics).to.match(/^capbridge_crawl_failures\{class="transient",reason="http-503"\} 1$/m);
      expect(metrics).to.match(/^capbridge_crawl_urls\{kind="article",state="given-up"\} 1$/m);
      expect(metrics).to.match(/^capbridge_crawl_pending_retries 0$/m);
      const list = await runCli(['--data', path.join(dir, 'data'), 'crawl', '--list', 'given-up', '--json']);
      expect(list.code).to.equal(0);
      expect(JSON.parse(list.stdout).map((r: { url: string }) => r.url)).to.deep.equal([victim.url]);
      const stats = await runCli(['--data', path.join(dir, 'data'), 'stats']);
      expect(stats.stdout).to.match(/given up 1/);
      expect(stats.stdout).to.match(/transient failures: http-503 1/);
      // Once the site is fixed, --retry-given-up queues it again.
      replay.sites.en.faults = null;
      const again = await runCrawl(bank, config(), { sitesDir: path.join(dir, 'sites'), site: 'replay-en', retryGivenUp: true });
      expect(again.articles).to.equal(1);
      expect((await bank.repo(CrawlRepo).row(urlKey(victim.url)!))!.state).to.be.oneOf(['done', 'images']);
    }));
});

describe('crawler: upgrade from the crawlee queue', function () {
  this.timeout(60000);

  it('pending article requests of an old crawlee queue are adopted by the frontier once, and the old folder removed', () =>
    withReplay(null, async ({ replay, bank, crawl }) => {
      const qdir = path.join(bank.dataDir, 'crawl', 'request_queues', 'site-replay-en');
      fs.mkdirSync(qdir, { recursive: true });
      const orphan = `${replay.sites.en.base}/en/2024/orphan.html`; // linked from nowhere now: only the old queue knows it
      const req = (url: string, orderNo: number | null, kind: string) =>
        JSON.stringify({ id: 'x', json: JSON.stringify({ url, uniqueKey: `${kind}:${url}`, userData: { kind, depth: 1, site: 'replay-en' } }), method: 'GET', orderNo, url });
      fs.writeFileSync(path.join(qdir, 'a.json'), req(orphan, 1795453313820, 'article'));
      fs.writeFileSync(path.join(qdir, 'b.json'), req(`${replay.sites.en.base}/en/2024/handled.html`, null, 'article'));
      fs.writeFileSync(path.join(qdir, 'c.json'), '{"id": "half-writ');
      await crawl('replay-en');
      expect(replay.sites.en.hits.map((h) => h.path)).to.include('/en/2024/orphan.html').and.not.include('/en/2024/handled.html');
      expect((await bank.repo(CrawlRepo).row(urlKey(orphan)!))).to.deep.include({ state: 'failed', reasonCode: 'http-404' });
      expect(fs.existsSync(path.join(bank.dataDir, 'crawl', 'request_queues'))).to.equal(false);
    }));
});

describe('crawler: kill -9 during cycles', function () {
  this.timeout(240000);

  it('three kill -9 at random moments, then restarts: the same items and image hashes as an uninterrupted run', async () => {
    const pages = fixturePages(FIXTURES);
    const faults = { share: 0.15, seed: 11, retryAfterSecs: 1, stallMs: 1200 };
    const cfgOver = { ...FAST, retry: { ...FAST.retry, giveUpAfter: 10 } };
    // The uninterrupted run, in this process.
    const ref = await startReplay(pages, { ...faults });
    const dir = tempDir();
    let expectedItems: Awaited<ReturnType<typeof portless>>;
    try {
      ref.writeProfiles(path.join(dir, 'ref-sites'));
      const bank = await Bank.open(path.join(dir, 'ref'));
      for (let c = 0; c < 4; c++) {
        const r = await runCrawl(bank, config(cfgOver), { sitesDir: path.join(dir, 'ref-sites') });
        if (r.pendingRetries === 0 && r.queued === 0) break;
      }
      expectedItems = await portless(bank);
      expect(expectedItems.length).to.equal(ref.expected.length);
      await bank.close();
    } finally {
      await ref.close();
    }
    // The killed run: `capbridge crawl` processes killed at random moments, then run to the end.
    const replay = await startReplay(pages, { ...faults });
    try {
      const sites = path.join(dir, 'sites');
      replay.writeProfiles(sites);
      const cfg = path.join(dir, 'cfg.json');
      fs.writeFileSync(cfg, JSON.stringify({ crawler: cfgOver }));
      const rand = mulberry32(5);
      // A kill lands at a random request of the run (the n-th the replay server sees, then 0-40 ms more), so it falls
      // inside a cycle however fast the machine is (a kill timed in ms after the first request missed the cycle on
      // an idle machine, where a whole resumed cycle takes less than that).
      const crawl = (killAtRequest?: number, extraMs = 0) =>
        new Promise<{ code: number | null; signal: string | null; out: string }>((resolve) => {
          const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--data', path.join(dir, 'killed'), '--config', cfg, 'crawl', '--json', '--sites', sites], {
            cwd: REPO_ROOT,
            stdio: ['ignore', 'pipe', 'ignore'],
          });
          let out = '';
          child.stdout!.on('data', (d) => (out += d));
          let timer: NodeJS.Timeout | undefined;
          if (killAtRequest !== undefined) {
            const start = replay.sites.en.hits.length + replay.sites.zh.hits.length;
            const poll = setInterval(() => {
              if (replay.sites.en.hits.length + replay.sites.zh.hits.length >= start + killAtRequest) {
                clearInterval(poll);
                timer = setTimeout(() => child.kill('SIGKILL'), extraMs);
              }
            }, 1);
            child.on('exit', () => clearInterval(poll));
          }
          child.on('close', (code, signal) => {
            if (timer) clearTimeout(timer);
            resolve({ code, signal, out });
          });
        });
      let kills = 0;
      for (let i = 0; i < 3; i++) {
        const r = await crawl(2 + Math.floor(rand() * 8), Math.round(rand() * 40));
        if (r.signal === 'SIGKILL') kills++;
      }
      expect(kills, 'kills that landed inside a cycle').to.be.at.least(2);
      for (let c = 0; c < 4; c++) {
        const r = await crawl();
        expect(r.code).to.equal(0);
        const summary = JSON.parse(r.out);
        if (summary.pendingRetries === 0 && summary.queued === 0) break;
      }
      const bank = await Bank.open(path.join(dir, 'killed'));
      expect(await portless(bank)).to.deep.equal(expectedItems!);
      await bank.close();
    } finally {
      await replay.close();
    }
  });
});
