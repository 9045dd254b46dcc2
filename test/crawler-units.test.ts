// The crawler's units one by one: failure classes and Retry-After, back-off and re-queue schedule, the host
// scheduler (Retry-After pauses, AIMD, circuit breaker) on a fake clock, fetch with the retry policy on loopback,
// the listing walk, the article harvest and image checks, URL identity, migration 9, the deprecated filters.
import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { Bank, CrawlRepo } from '../src/bank/index.js';
import { applyMigrations } from '../src/bank/db.js';
import { SqliteBackend } from '../src/bank/sqlite.js';
import { migrations } from '../src/bank/migrations/index.js';
import { loadConfig } from '../src/config/load.js';
import { errorFailure, parseRetryAfter, statusFailure } from '../src/stages/crawl/failures.js';
import { FetchRefused, type FetchResult } from '../src/stages/crawl/fetch.js';
import { checkImage, harvestPage } from '../src/stages/crawl/harvest.js';
import { linksOf, planLinks } from '../src/stages/crawl/listing.js';
import { HostPaused, HostScheduler, type Clock } from '../src/stages/crawl/politeness.js';
import { PoliteFetcher, backoffMs, retryCycle, type RetryPolicy } from '../src/stages/crawl/retry.js';
import { parseSite, type SiteProfile } from '../src/stages/crawl/sites.js';
import { urlKey } from '../src/util/url-key.js';
import { tempDir } from './helpers.js';

const fakeClock = (start = 1_000_000) => {
  const c = { t: start, now: () => c.t, sleep: async (ms: number) => void (c.t += Math.max(1, ms)) };
  return c as Clock & { t: number };
};

const result = (url: string, body: string | Buffer, headers: Record<string, string> = {}, status = 200): FetchResult => ({
  url,
  status,
  headers: new Headers(headers),
  body: Buffer.isBuffer(body) ? body : Buffer.from(body),
  redirects: 0,
});

const site = (over = ''): SiteProfile =>
  parseSite(`name: t\nlanguage: en\nstartUrls: ["http://news.test/"]\nallowedHosts: ["news.test", "www.news.test"]\narticlePatterns: ['/20\\d\\d/']\n${over}`, 't.yaml');

describe('crawler units: failure classes, Retry-After, back-off', () => {
  it('classifies answers and errors as permanent or transient', () => {
    for (const s of [404, 410, 403, 400]) expect(statusFailure('http://a/x', s).class, String(s)).to.equal('permanent');
    for (const s of [408, 425, 429, 500, 502, 503, 504]) expect(statusFailure('http://a/x', s).class, String(s)).to.equal('transient');
    expect(statusFailure('http://a/x', 503).message).to.equal('http://a/x: HTTP 503');
    for (const r of ['timeout', 'reset', 'dns', 'network', 'truncated', 'redirect-loop', 'too-many-redirects'] as const) {
      expect(errorFailure('http://a/x', new FetchRefused(r, 'x')).class, r).to.equal('transient');
    }
    for (const r of ['too-large', 'private-address', 'robots', 'offsite-redirect', 'bad-url'] as const) {
      expect(errorFailure('http://a/x', new FetchRefused(r, 'x')).class, r).to.equal('permanent');
    }
  });

  it('reads Retry-After as seconds or an HTTP-date, on 429 and 503 only', () => {
    const now = Date.parse('2025-03-01T10:00:00Z');
    expect(parseRetryAfter('5', now)).to.equal(5000);
    expect(parseRetryAfter('Sat, 01 Mar 2025 10:00:30 GMT', now)).to.equal(30_000);
    expect(parseRetryAfter('Sat, 01 Mar 2025 09:00:00 GMT', now)).to.equal(0);
    expect(parseRetryAfter('soon', now)).to.equal(undefined);
    expect(parseRetryAfter('999999999', now)).to.equal(86_400_000);
    const h = new Headers({ 'retry-after': '7' });
    expect(statusFailure('u', 429, h, now).retryAfterMs).to.equal(7000);
    expect(statusFailure('u', 503, h, now).retryAfterMs).to.equal(7000);
    expect(statusFailure('u', 500, h, now).retryAfterMs).to.equal(undefined);
  });

  it('backs off exponentially with jitter within a cycle, and re-queues 1, 2, 4, 8 cycles later', () => {
    const p = { baseDelayMs: 1000, maxDelayMs: 30_000 };
    for (let n = 1; n <= 6; n++) {
      const cap = Math.min(30_000, 1000 * 2 ** (n - 1));
      expect(backoffMs(p, n, () => 0)).to.equal(cap / 2);
      expect(backoffMs(p, n, () => 0.999999)).to.equal(cap);
    }
    expect([1, 2, 3, 4].map((a) => retryCycle(10, a))).to.deep.equal([11, 12, 14, 18]);
  });
});

describe('crawler units: host scheduler (fake clock)', () => {
  const policy = { errorDelayMs: 500, maxDelayMs: 8000, recoverRate: 0.25, breakerErrors: 4 };

  it('Retry-After pauses the whole host: no slot before it ends, while another host is served at once', async () => {
    const clock = fakeClock();
    const s = new HostScheduler(8, policy, clock);
    const t0 = clock.t;
    (await s.acquire('a.test', 0, 2))();
    s.failure('a.test', 0, 5000);
    (await s.acquire('b.test', 0, 2))();
    expect(clock.t).to.equal(t0); // b did not wait
    expect(s.readyIn('a.test', 2)).to.equal(5000);
    (await s.acquire('a.test', 0, 2))();
    expect(clock.t - t0).to.be.at.least(5000);
    expect(s.starts.get('a.test')![1]! - t0).to.be.at.least(5000);
  });

  it('AIMD: each transient error halves the rate (delay x2, from at least errorDelayMs, up to maxDelayMs); each success adds recoverRate req/s', () => {
    const s = new HostScheduler(8, policy, fakeClock());
    const d = () => s.state('h')!.delayMs;
    s.failure('h', 0);
    expect(d()).to.equal(500);
    s.failure('h', 0);
    s.failure('h', 0);
    expect(d()).to.equal(2000); // 0.5 req/s
    s.success('h', 0);
    expect(d()).to.be.closeTo(1000 / 0.75, 1e-9);
    s.success('h', 0);
    expect(d()).to.be.closeTo(1000, 1e-9);
    // A share p of failures settles near 2 * recoverRate * (1 - p) / p: p = 0.2 -> 2 req/s (500 ms).
    const ref = new HostScheduler(8, { ...policy, breakerErrors: 0 }, fakeClock());
    let sum = 0;
    for (let i = 0; i < 5000; i++) {
      if (i % 5 === 0) ref.failure('r', 0);
      else ref.success('r', 0);
      if (i >= 1000) sum += 1000 / Math.max(1, ref.state('r')!.delayMs);
    }
    expect(sum / 4000).to.be.within(1.5, 2.5);
    s.success('h', 0);
    for (let i = 0; i < 200; i++) s.success('h', 0);
    expect(d()).to.be.below(50);
    for (let i = 0; i < 5; i++) s.failure('h', 1000);
    expect(d()).to.equal(8000); // 1000, 2000, 4000, 8000, then capped
    for (let i = 0; i < 100; i++) s.success('h', 1000);
    expect(d()).to.equal(1000); // never below the polite delay
  });

  it('past the error budget the breaker opens: the host gets nothing more this cycle, other hosts go on', async () => {
    const s = new HostScheduler(8, policy, fakeClock());
    for (let i = 0; i < 3; i++) s.failure('bad', 0);
    s.success('bad', 0); // a success resets the run of errors
    for (let i = 0; i < 3; i++) s.failure('bad', 0);
    expect(s.openReason('bad')).to.equal(null);
    s.failure('bad', 0);
    expect(s.openReason('bad')).to.match(/4 transient errors in a row/);
    expect(s.readyIn('bad', 1)).to.equal(Infinity);
    let err: unknown;
    await s.acquire('bad', 0, 1).catch((e) => (err = e));
    expect(err).to.be.instanceOf(HostPaused);
    (await s.acquire('good', 0, 1))();
  });
});

describe('crawler units: fetch with the retry policy (loopback)', function () {
  this.timeout(30000);
  let server: http.Server;
  let base = '';
  const hits: string[] = [];
  const answers = new Map<string, (res: http.ServerResponse, n: number) => void>();

  before(async () => {
    server = http.createServer((req, res) => {
      const p = req.url ?? '';
      hits.push(p);
      const n = hits.filter((h) => h === p).length;
      const a = answers.get(p.replace(/\?.*/, ''));
      if (a) return a(res, n);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    answers.set('/flaky', (res, n) => (n <= 2 ? res.writeHead(503).end() : res.end('ok')));
    answers.set('/gone', (res) => res.writeHead(410).end());
    answers.set('/cut', (res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('x'.repeat(100), () => res.socket?.destroy()); // cut once the first 100 bytes are sent
    });
    answers.set('/loop', (res) => res.writeHead(302, { location: '/loop2' }).end());
    answers.set('/loop2', (res) => res.writeHead(302, { location: '/loop' }).end());
    answers.set('/away', (res) => res.writeHead(301, { location: '/hop' }).end());
    answers.set('/hop', (res) => res.writeHead(302, { location: 'http://other.test/landing' }).end());
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const fetcher = (over: Partial<RetryPolicy> = {}) =>
    new PoliteFetcher({
      scheduler: new HostScheduler(8, { errorDelayMs: 0, maxDelayMs: 0, recoverRate: 1, breakerErrors: 0 }),
      robots: null,
      policy: { triesPerCycle: 3, baseDelayMs: 10, maxDelayMs: 50, maxRetryAfterMs: 10_000, giveUpAfter: 5, ...over },
      perHostDelayMs: 0,
      perHostConcurrency: 1,
      fetch: { userAgent: 't', timeoutMs: 2000, maxRedirects: 5, allowPrivate: true },
    });

  it('retries a transient failure within the cycle and succeeds; a permanent one is asked once', async () => {
    hits.length = 0;
    const a = await fetcher().fetch(`${base}/flaky`, { maxBytes: 1000 });
    expect(a.ok && a.res.body.toString()).to.equal('ok');
    expect(a).to.include({ requests: 3, retries: 2 });
    const g = await fetcher().fetch(`${base}/gone`, { maxBytes: 1000 });
    expect(g.ok).to.equal(false);
    if (!g.ok) expect(g.failure).to.deep.include({ class: 'permanent', code: 'http-410' });
    expect(hits.filter((h) => h === '/gone')).to.have.length(1);
  });

  it('a body cut short is a truncated (transient) failure; a redirect loop is found at the first repeated hop', async () => {
    const c = await fetcher({ triesPerCycle: 1 }).fetch(`${base}/cut`, { maxBytes: 10_000 });
    expect(!c.ok && c.failure).to.deep.include({ class: 'transient', code: 'truncated' });
    hits.length = 0;
    const l = await fetcher({ triesPerCycle: 1 }).fetch(`${base}/loop`, { maxBytes: 10_000 });
    expect(!l.ok && l.failure).to.deep.include({ class: 'transient', code: 'redirect-loop' });
    expect(hits).to.deep.equal(['/loop', '/loop2']);
  });

  it('checks every redirect hop: a hop outside the allowed hosts is refused before it is requested', async () => {
    hits.length = 0;
    const allowed = new URL(base).host;
    const r = await fetcher().fetch(`${base}/away`, { maxBytes: 1000, hopAllowed: (u) => (new URL(u).host === allowed ? null : 'outside allowedHosts') });
    expect(!r.ok && r.failure).to.deep.include({ class: 'permanent', code: 'offsite-redirect' });
    expect(!r.ok && r.failure.message).to.contain('http://other.test/landing');
    expect(hits).to.deep.equal(['/away', '/hop']); // each hop once: permanent, not retried
  });
});

describe('crawler units: listing walk', () => {
  const lim = { maxElements: 5000, maxDepth: 100 };
  it('reads links of HTML listings (with <base>), feeds and gzipped sitemaps, and plans articles, deeper listings and sitemaps', () => {
    const s = site();
    const htmlRes = result('http://news.test/section/', `<html><head><base href="http://news.test/"></head><body>
      <a href="2024/a.html">a</a><a href="https://www.news.test/2024/a.html?utm_source=x">a again</a><a href="/world/">world</a>
      <a href="http://elsewhere.test/2024/z.html">off-site</a><a href="mailto:x@y">mail</a></body></html>`, { 'content-type': 'text/html' });
    const { links } = linksOf('listing', htmlRes, 1e6, lim);
    expect(links.map((l) => l.url)).to.deep.equal(['http://news.test/2024/a.html', 'https://www.news.test/2024/a.html?utm_source=x', 'http://news.test/world/', 'http://elsewhere.test/2024/z.html']);
    const plan = planLinks(s, { kind: 'listing', depth: 0 }, links, 1);
    expect(plan.map((p) => [p.kind, p.url, p.depth])).to.deep.equal([
      ['article', 'http://news.test/2024/a.html', 1], // one page under two spellings: queued once
      ['listing', 'http://news.test/world/', 1],
    ]);
    expect(planLinks(s, { kind: 'listing', depth: 1 }, links, 1).map((p) => p.kind)).to.deep.equal(['article']); // maxDepth reached
    const long = `http://news.test/2024/${'x'.repeat(2100)}.html`;
    expect(planLinks(s, { kind: 'listing', depth: 0 }, [{ url: long, kind: 'listing' }, { url: 'http://news.test/2024/ok.html', kind: 'listing' }], 1).map((p) => p.url)).to.deep.equal(['http://news.test/2024/ok.html']); // over MAX_URL_LENGTH
    const sm = zlib.gzipSync(Buffer.from('<?xml version="1.0"?><sitemapindex><sitemap><loc>http://news.test/s2.xml</loc></sitemap></sitemapindex>'));
    const smLinks = linksOf('sitemap', result('http://news.test/s.xml.gz', sm, { 'content-type': 'application/x-gzip' }), 1e6, lim).links;
    expect(planLinks(s, { kind: 'sitemap', depth: 0 }, smLinks, 0).map((p) => [p.kind, p.url])).to.deep.equal([['sitemap', 'http://news.test/s2.xml']]);
    // A gzip bomb (64 MB of zeros in 64 KB) and a broken gzip stream: refused with their reason, nothing read.
    const bomb = linksOf('sitemap', result('http://news.test/bomb.xml.gz', zlib.gzipSync(Buffer.alloc(64 << 20))), 1e6, lim);
    expect(bomb.links).to.deep.equal([]);
    expect(bomb.refused).to.deep.include({ class: 'permanent', code: 'too-large' });
    expect(bomb.refused!.message).to.match(/^http:\/\/news\.test\/bomb\.xml\.gz: gzipped body inflates past 1000000 bytes/);
    const broken = linksOf('sitemap', result('http://news.test/broken.xml.gz', sm.subarray(0, 20)), 1e6, lim);
    expect(broken.refused).to.deep.include({ code: 'unreadable' });
    const feed = linksOf('feed', result('http://news.test/rss', '<rss><channel><item><link>/2024/b.html</link></item></channel></rss>'), 1e6, lim).links;
    expect(planLinks(s, { kind: 'feed', depth: 0 }, feed, 0).map((p) => p.url)).to.deep.equal(['http://news.test/2024/b.html']);
  });

  it('refuses a hostile HTML listing (nested too deep, too many elements) without building a DOM; reads at most MAX_LINKS links', () => {
    // 200,000 nested elements: cheerio took minutes on this; the streaming scan stops at the depth bound.
    const deep = linksOf('listing', result('http://news.test/deep/', `<html><body>${'<div>'.repeat(200_000)}<a href="/2024/a.html">a</a>${'</div>'.repeat(200_000)}</body></html>`, { 'content-type': 'text/html' }), 1e7, lim);
    expect(deep.links).to.deep.equal([]);
    expect(deep.refused).to.deep.include({ class: 'permanent', code: 'too-deep' });
    expect(deep.refused!.message).to.match(/^http:\/\/news\.test\/deep\/: /);
    const many = linksOf('listing', result('http://news.test/many/', `<p>${'<b>x</b>'.repeat(6000)}</p>`, { 'content-type': 'text/html' }), 1e7, lim);
    expect(many.refused).to.deep.include({ code: 'too-many-elements' });
    const flat = linksOf('listing', result('http://news.test/flat/', '<a href="/2024/a.html">a</a>'.repeat(60_000), { 'content-type': 'text/html' }), 1e7, { maxElements: 100_000, maxDepth: 100 });
    expect(flat.refused).to.equal(undefined);
    expect(flat.links).to.have.length(50_000);
  });
});

describe('crawler units: article harvest and image checks', () => {
  const page = (body: string, head = '') => `<!doctype html><html><head><meta charset="utf-8">${head}</head><body>${body}</body></html>`;
  const fig = '<figure><img src="/img/a.jpg"><figcaption>Rescue workers search the rubble after the earthquake.</figcaption></figure>';
  const limits = { maxElements: 5000, maxDepth: 100 };

  it('harvests pairs under the page canonical URL when it names an article of the site, else under the fetched URL', () => {
    const s = site();
    const viaAlias = harvestPage(s, result('http://m.news.test/2024/a.html', page(fig, '<link rel="canonical" href="https://www.news.test/2024/a.html">'), { 'content-type': 'text/html' }), limits);
    expect(viaAlias.ok && [viaAlias.pageUrl, viaAlias.key, viaAlias.pairs.length]).to.deep.equal(['https://www.news.test/2024/a.html', '//news.test/2024/a.html', 1]);
    // A canonical that is the home page (a badly configured site) is not the article's identity.
    const home = harvestPage(s, result('http://news.test/2024/b.html', page(fig, '<link rel="canonical" href="http://news.test/">')), limits);
    expect(home.ok && home.pageUrl).to.equal('http://news.test/2024/b.html');
  });

  it('refuses a page that is not HTML, has too many elements or is nested too deep, before building a DOM', () => {
    const s = site();
    const pdf = harvestPage(s, result('http://news.test/2024/c.pdf', '%PDF-1.4', { 'content-type': 'application/pdf' }), limits);
    expect(!pdf.ok && pdf.failure).to.deep.include({ class: 'permanent', code: 'not-html' });
    const many = harvestPage(s, result('http://news.test/2024/d.html', page('<i>x</i>'.repeat(6000))), limits);
    expect(!many.ok && many.failure).to.deep.include({ code: 'too-many-elements' });
    expect(!many.ok && many.failure.message).to.match(/^http:\/\/news\.test\/2024\/d\.html: more than 5000/);
    const deep = harvestPage(s, result('http://news.test/2024/e.html', page('<div>'.repeat(200) + fig + '</div>'.repeat(200))), limits);
    expect(!deep.ok && deep.failure).to.deep.include({ code: 'too-deep' });
    const fine = harvestPage(s, result('http://news.test/2024/f.html', page('<div>'.repeat(50) + fig + '</div>'.repeat(50))), limits);
    expect(fine.ok && fine.pairs.length).to.equal(1);
  });

  it('checks images from their header: type, readable, pixel bound, minimum side', async () => {
    const img = (w: number, h: number) => sharp({ create: { width: w, height: h, channels: 3, background: '#888' } }).jpeg().toBuffer();
    const lim = { maxPixels: 1_000_000, minSide: 100 };
    expect(await checkImage(result('http://i/a.jpg', await img(300, 200), { 'content-type': 'image/jpeg' }), lim)).to.equal(null);
    expect((await checkImage(result('http://i/a.jpg', '<html>', { 'content-type': 'text/html' }), lim))!.code).to.equal('image-type');
    expect((await checkImage(result('http://i/a.jpg', 'garbage', { 'content-type': 'image/jpeg' }), lim))!.code).to.equal('image-unreadable');
    expect((await checkImage(result('http://i/a.jpg', await img(2000, 1000)), lim))!.code).to.equal('image-pixels');
    expect((await checkImage(result('http://i/a.jpg', await img(300, 60)), lim))!.code).to.equal('image-small');
  });
});

describe('crawler units: URL identity, migration 9, deprecated keys', () => {
  it('one page under several spellings has one key', () => {
    const k = urlKey('http://news.test/2024/a.html');
    for (const u of ['https://news.test/2024/a.html', 'http://WWW.News.Test/2024/a.html', 'http://news.test./2024/a.html', 'http://news.test:80/2024/%61.html', 'https://news.test:443/2024/a.html']) {
      expect(urlKey(u), u).to.equal(k);
    }
    expect(urlKey('http://news.test/2024/A.html')).to.not.equal(k);
    expect(urlKey('http://news.test:8080/2024/a.html')).to.not.equal(k);
    expect(urlKey('http://www.test/')).to.equal('//www.test/'); // a host that is only "www." + a TLD keeps it
    expect(urlKey('ftp://news.test/a')).to.equal(null);
  });

  it('migration 9 turns harvested pages into done rows and transient failures into pending retries', async () => {
    const file = path.join(tempDir(), 'capbridge.db');
    const db = SqliteBackend.open(file);
    await applyMigrations(db, migrations.filter((m) => m.version < 9));
    const ins = 'INSERT INTO crawl_pages (url, site, status, pairs, added, reason, fetched_at) VALUES (?, ?, ?, 0, 0, ?, ?)';
    await db.run(ins, ['http://news.test/2024/ok.html', 's', 200, null, '2024-01-01']);
    await db.run(ins, ['http://news.test/2024/t.html', 's', 0, 'timeout', '2024-01-01']);
    await db.run(ins, ['http://news.test/2024/5.html', 's', 503, 'HTTP 503', '2024-01-01']);
    await db.run(ins, ['http://news.test/2024/r.html', 's', 0, 'robots', '2024-01-01']);
    await db.run(ins, ['http://news.test/2024/g.html', 's', 404, 'HTTP 404', '2024-01-01']);
    await db.run("INSERT INTO meta (key, value) VALUES ('crawler.cycle.s', '7')");
    await db.close();
    const b2 = await Bank.open(path.dirname(file));
    const repo = b2.repo(CrawlRepo);
    const states: (string | undefined)[] = [];
    for (const p of ['ok.html', 't.html', '5.html', 'r.html', 'g.html']) states.push((await repo.row(urlKey(`http://news.test/2024/${p}`)!))?.state);
    expect(states).to.deep.equal(['done', 'pending', 'pending', 'pending', 'failed']);
    expect(await repo.siteCycle('s')).to.deep.equal({ cycle: 7, open: false });
    expect(await b2.meta.get('crawler.cycle.s')).to.equal(undefined);
    await b2.close();
  });

  it('crawler.filters of an old config file is ignored with a warning instead of stopping start-up', () => {
    const file = path.join(tempDir(), 'old.yaml');
    fs.writeFileSync(file, 'crawler:\n  perHostDelayMs: 100\n  filters:\n    oneSentence: true\n    maxChineseWords: 20\n    checkLanguage: true\n');
    const { config, warnings } = loadConfig({ configFile: file, env: {} });
    expect(config.crawler.perHostDelayMs).to.equal(100);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.contain(file).and.to.contain('"crawler.filters" is no longer used');
  });
});
