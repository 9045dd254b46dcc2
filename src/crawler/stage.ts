// The crawl stage: one harvest cycle over the site profiles.
//
// Each site has a named, persistent crawlee request queue in the data dir (crawl/request_queues/site-NAME), so
// a killed crawl resumes where it stopped: the queue is only seeded (start URLs, feeds, sitemaps) when it is
// empty, and a request is marked handled only after what it produced is committed to the bank. Article pages
// already harvested are recorded in crawl_pages and never fetched again; items already stored skip their image.
// Politeness (robots.txt cache, Crawl-delay, per-host delay and concurrency) and every network limit are ours
// (politeness.ts, fetch.ts). RequestQueueV1 is used because V2 locks prefetched heads for minutes, so after a
// kill the resumed run would find them locked.
import crypto from 'node:crypto';
import { Configuration, RequestQueueV1, log as crawleeLog, LogLevel, type Request } from 'crawlee';
import { MemoryStorage } from '@crawlee/memory-storage';
import * as cheerio from 'cheerio';
import { XMLParser } from 'fast-xml-parser';
import type { Bank, BankName } from '../bank/index.js';
import { CrawlRepo, probeImage, type Validators } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import { checkCaption } from '../ingest/language.js';
import type { Logger } from '../util/log.js';
import type { Progress } from '../util/progress.js';
import { UserError } from '../util/errors.js';
import { extractPairs } from './extract/index.js';
import { decodeHtml } from './extract/decode.js';
import { normalisePageUrl, resolveUrl } from './extract/urls.js';
import { FetchRefused, checkHost, fetchLimited, type FetchResult } from './fetch.js';
import { checkCaptionFilters } from './filters.js';
import { HostScheduler, RobotsCache } from './politeness.js';
import { defaultSitesDir, hostAllowed, isArticle, loadSites, type SiteProfile } from './sites.js';

export interface CrawlOptions {
  /** One cycle and return (what every call does: the daemon schedules cycles); kept for the stage contract. */
  once?: boolean;
  site?: string;
  signal?: AbortSignal;
  progress?: Progress;
  logger?: Logger;
  sitesDir?: string;
}

export interface CrawlSummary {
  sites: string[];
  resumed: string[];
  pagesFetched: number;
  notModified: number;
  articles: number;
  pairsFound: number;
  itemsAdded: Record<BankName, number>;
  itemsUnchanged: number;
  imagesDownloaded: number;
  rejections: Record<string, number>;
  refused: Record<string, number>;
  errors: number;
  aborted: boolean;
  queued: number;
}

type Kind = 'listing' | 'feed' | 'sitemap' | 'article';
interface UserData { kind: Kind; depth: number; site: string }

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', removeNSPrefix: true });

export function itemExtId(pageUrl: string, imageUrl: string): string {
  return crypto.createHash('sha1').update(`${pageUrl}\n${imageUrl}`).digest('hex');
}

const arr = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);

/** Links of an RSS/Atom feed or a sitemap (urlset or sitemapindex). */
export function parseFeedOrSitemap(body: string): { articles: string[]; sitemaps: string[] } {
  let doc: Record<string, any>;
  try {
    doc = xml.parse(body) as Record<string, any>;
  } catch {
    return { articles: [], sitemaps: [] };
  }
  const articles: string[] = [];
  const sitemaps: string[] = [];
  for (const item of arr(doc.rss?.channel?.item)) if (typeof item?.link === 'string') articles.push(item.link.trim());
  for (const item of arr(doc.RDF?.item)) if (typeof item?.link === 'string') articles.push(item.link.trim());
  for (const entry of arr(doc.feed?.entry)) {
    const links = arr(entry?.link);
    const l = links.find((x: any) => !x?.['@rel'] || x['@rel'] === 'alternate') ?? links[0];
    const href = typeof l === 'string' ? l : l?.['@href'];
    if (href) articles.push(String(href).trim());
  }
  for (const u of arr(doc.urlset?.url)) if (u?.loc) articles.push(String(u.loc).trim());
  for (const s of arr(doc.sitemapindex?.sitemap)) if (s?.loc) sitemaps.push(String(s.loc).trim());
  return { articles, sitemaps };
}

function bump(rec: Record<string, number>, key: string, n = 1): void {
  rec[key] = (rec[key] ?? 0) + n;
}

export async function runCrawl(bank: Bank, config: Config, opts: CrawlOptions = {}): Promise<CrawlSummary> {
  const cc = config.crawler;
  const log = opts.logger;
  const signal = opts.signal;
  const sitesDir = opts.sitesDir ?? (cc.sitesDir || defaultSitesDir());
  let sites = loadSites(sitesDir).filter((s) => s.enabled);
  if (opts.site) {
    sites = sites.filter((s) => s.name === opts.site);
    if (!sites.length) throw new UserError(`--site ${opts.site}: no enabled profile of that name in ${sitesDir}`);
  }
  const repo = bank.repo(CrawlRepo);
  const summary: CrawlSummary = {
    sites: sites.map((s) => s.name),
    resumed: [],
    pagesFetched: 0,
    notModified: 0,
    articles: 0,
    pairsFound: 0,
    itemsAdded: { source: 0, target: 0 },
    itemsUnchanged: 0,
    imagesDownloaded: 0,
    rejections: {},
    refused: {},
    errors: 0,
    aborted: false,
    queued: 0,
  };

  crawleeLog.setLevel(LogLevel.ERROR); // our logger reports; crawlee's own info lines would pollute stderr
  const storage = new MemoryStorage({ localDataDirectory: bank.subdir('crawl'), persistStorage: true, writeMetadata: false });
  const crawleeConfig = new Configuration({ storageClient: storage, purgeOnStart: false, persistStorage: true });
  const scheduler = new HostScheduler(cc.maxConcurrency);
  const baseFetch = {
    userAgent: cc.userAgent,
    timeoutMs: cc.requestTimeoutSecs * 1000,
    maxRedirects: cc.maxRedirects,
    allowPrivate: cc.allowPrivateAddresses,
    signal,
  };
  const robots = new RobotsCache(repo, cc.robotsTtlHours * 3600_000, cc.userAgent, async (url) => {
    const host = new URL(url).host;
    const release = await scheduler.acquire(host, cc.perHostDelayMs, cc.perHostConcurrency, signal);
    try {
      const r = await fetchLimited(url, { ...baseFetch, maxBytes: 512 * 1024 });
      return { status: r.status, body: r.body.toString('utf8') };
    } finally {
      release();
    }
  });

  /** Address check, robots check and a politeness slot for one URL, then the fetch. Every redirect hop goes
   * through the same three checks with its own slot (the target may be another host). */
  const politeFetch = async (site: SiteProfile, url: string, maxBytes: number, headers?: Record<string, string>): Promise<FetchResult> => {
    const slot = async (u: string) => {
      try {
        await checkHost(new URL(u).hostname, cc.allowPrivateAddresses);
      } catch (err) {
        throw err instanceof FetchRefused ? err : new FetchRefused('network', `${new URL(u).hostname}: ${(err as Error).message}`);
      }
      const verdict = await robots.check(u);
      if (!verdict.allowed) throw new FetchRefused('robots', `${u}: ${verdict.reason}`);
      const delay = Math.max(cc.perHostDelayMs, site.limits.delayMs ?? 0, verdict.crawlDelayMs);
      return scheduler.acquire(new URL(u).host, delay, cc.perHostConcurrency, signal);
    };
    let release = await slot(url);
    try {
      return await fetchLimited(url, {
        ...baseFetch,
        maxBytes,
        headers,
        beforeHop: async (u) => {
          release();
          release = () => {};
          release = await slot(u);
        },
      });
    } finally {
      release();
    }
  };

  const robotsRefused = (err: unknown) => err instanceof FetchRefused && err.reason === 'robots';

  const handle = async (site: SiteProfile, queue: RequestQueueV1, req: Request<UserData>, counters: { articles: number; listings: number }) => {
    const { kind, depth } = req.userData;
    const url = req.url;
    if (kind === 'article') {
      const norm = normalisePageUrl(url) ?? url;
      if (repo.pageDone(norm)) return;
      const maxPages = site.limits.maxPages ?? cc.maxPagesPerSite;
      if (counters.articles >= maxPages) {
        bump(summary.refused, 'site-page-limit');
        return 'keep';
      }
      counters.articles++;
      await harvestArticle(site, norm);
      return;
    }
    // Listing pages, feeds and sitemaps: conditional GET with the stored validators. Their number per cycle is
    // bounded like the articles' (a depth-3 walk of a news site's sections would otherwise have no end).
    if (kind === 'listing' && depth > 0 && counters.listings >= (site.limits.maxPages ?? cc.maxPagesPerSite)) {
      bump(summary.refused, 'site-listing-limit');
      return;
    }
    if (kind === 'listing') counters.listings++;
    const v = repo.validators(url);
    const headers: Record<string, string> = {};
    if (v?.etag) headers['if-none-match'] = v.etag;
    if (v?.lastModified) headers['if-modified-since'] = v.lastModified;
    const res = await politeFetch(site, url, cc.maxPageBytes, headers);
    summary.pagesFetched++;
    opts.progress?.tick(1, url);
    if (res.status === 304) {
      summary.notModified++;
      return;
    }
    if (res.status >= 400) {
      log?.warn(`crawl ${site.name}: ${url} answered HTTP ${res.status}`);
      summary.errors++;
      return;
    }
    const links: { url: string; kind: Kind }[] = [];
    const ctype = res.headers.get('content-type') ?? '';
    if (kind === 'feed' || kind === 'sitemap' || /xml|rss|atom/i.test(ctype)) {
      const { articles, sitemaps } = parseFeedOrSitemap(decodeHtml(res.body, ctype).text);
      for (const a of articles) links.push({ url: a, kind: 'article' });
      for (const s of sitemaps) links.push({ url: s, kind: 'sitemap' });
    } else {
      const $ = cheerio.load(decodeHtml(res.body, ctype).text);
      const base = resolveUrl($('base[href]').attr('href'), res.url) ?? res.url;
      $('a[href]').each((_, a) => {
        const abs = resolveUrl($(a).attr('href'), base);
        if (abs) links.push({ url: abs, kind: 'listing' });
      });
    }
    const maxDepth = site.limits.maxDepth ?? cc.maxDepth;
    const toAdd: { url: string; uniqueKey: string; userData: UserData }[] = [];
    for (const l of links.slice(0, 5000)) {
      const norm = normalisePageUrl(l.url);
      if (!norm || !hostAllowed(site, norm)) continue;
      if (isArticle(site, norm)) {
        if (!repo.pageDone(norm)) toAdd.push({ url: norm, uniqueKey: `article:${norm}`, userData: { kind: 'article', depth: depth + 1, site: site.name } });
      } else if (l.kind === 'sitemap' || (kind === 'listing' && depth + 1 <= maxDepth)) {
        toAdd.push({ url: norm, uniqueKey: `${l.kind}:${queueCycle.get(site.name)}:${norm}`, userData: { kind: l.kind, depth: depth + 1, site: site.name } });
      }
    }
    if (toAdd.length) await queue.addRequests(toAdd);
    // Validators are stored only once the queue has written the links to disk (see the end of runCrawl): a 304
    // next time must not hide links a killed run never persisted.
    if (res.status === 200) pendingValidators.push([url, { etag: res.headers.get('etag'), lastModified: res.headers.get('last-modified') }]);
  };

  const harvestArticle = async (site: SiteProfile, pageUrl: string) => {
    let res: FetchResult;
    try {
      res = await politeFetch(site, pageUrl, cc.maxPageBytes);
    } catch (err) {
      if (err instanceof FetchRefused && err.reason === 'aborted') throw err;
      const reason = robotsRefused(err) ? 'robots' : err instanceof FetchRefused ? err.reason : 'error';
      bump(summary.refused, reason);
      log?.info(`crawl ${site.name}: ${pageUrl}: ${(err as Error).message}`);
      repo.recordPage({ url: pageUrl, site: site.name, status: 0, pairs: 0, added: 0, reason });
      return;
    }
    summary.pagesFetched++;
    summary.articles++;
    opts.progress?.tick(1, pageUrl);
    const requested = pageUrl;
    const finalUrl = normalisePageUrl(res.url) ?? res.url;
    if (finalUrl !== requested) {
      if (!hostAllowed(site, finalUrl) || repo.pageDone(finalUrl)) {
        repo.recordPage({ url: requested, site: site.name, status: res.status, pairs: 0, added: 0, reason: `redirected to ${finalUrl}` });
        return;
      }
      pageUrl = finalUrl;
    }
    if (res.status >= 400) {
      summary.errors++;
      repo.recordPage({ url: pageUrl, site: site.name, status: res.status, pairs: 0, added: 0, reason: `HTTP ${res.status}` });
      return;
    }
    const extracted = extractPairs(res.body, { url: res.url, contentType: res.headers.get('content-type'), selectors: site.captions, lang: site.language });
    summary.pairsFound += extracted.pairs.length;
    const bankName: BankName = site.language === 'en' ? 'source' : 'target';
    let added = 0;
    for (const pair of extracted.pairs) {
      if (signal?.aborted) throw new FetchRefused('aborted', 'aborted');
      const rejected = checkCaptionFilters(pair.caption, site.language, config);
      if (rejected) {
        bump(summary.rejections, rejected);
        continue;
      }
      const extId = itemExtId(pageUrl, pair.image_url);
      if (bank.items.get(bankName, extId)) {
        summary.itemsUnchanged++;
        continue;
      }
      const knownSha = repo.imageForUrl(pair.image_url);
      const known = knownSha ? bank.images.get(knownSha) : undefined;
      const stored = known ?? (await fetchImage(site, pair.image_url));
      if (!stored) continue;
      const check = checkCaption(pair.caption, bankName === 'source' ? config.captions.sourceLanguages : config.captions.targetLanguages, {
        check: config.captions.checkLanguage,
        minLength: config.captions.minLengthForDetection,
      });
      const fetchedAt = new Date().toISOString();
      const out = bank.transaction(() => {
        bank.images.record(stored);
        return bank.items.upsert({
          bank: bankName,
          extId,
          caption: pair.caption,
          credit: pair.credit ?? null,
          lang: check.lang,
          captionStatus: check.status,
          captionReason: check.reason,
          imageSha256: stored.sha256,
          pageUrl,
          imageUrl: pair.image_url,
          site: site.name,
          fetchedAt,
        });
      });
      if (out.outcome === 'added') {
        added++;
        summary.itemsAdded[bankName]++;
      } else summary.itemsUnchanged++;
    }
    repo.recordPage({ url: pageUrl, site: site.name, status: res.status, pairs: extracted.pairs.length, added });
    if (requested !== pageUrl) repo.recordPage({ url: requested, site: site.name, status: res.status, pairs: 0, added: 0, reason: `redirected to ${pageUrl}` });
  };

  const fetchImage = async (site: SiteProfile, imageUrl: string) => {
    let res: FetchResult;
    try {
      res = await politeFetch(site, imageUrl, cc.maxImageBytes, { accept: 'image/avif,image/webp,image/jpeg,image/png,image/*;q=0.8' });
    } catch (err) {
      if (err instanceof FetchRefused && err.reason === 'aborted') throw err;
      bump(summary.rejections, robotsRefused(err) ? 'image-robots' : `image-${err instanceof FetchRefused ? err.reason : 'error'}`);
      return null;
    }
    summary.imagesDownloaded++;
    if (res.status !== 200) {
      bump(summary.rejections, 'image-http');
      return null;
    }
    const ctype = res.headers.get('content-type') ?? '';
    if (ctype && !/^image\/|octet-stream/i.test(ctype)) {
      bump(summary.rejections, 'image-type');
      return null;
    }
    let probe: { format: string; width: number; height: number };
    try {
      probe = await probeImage(res.body); // header only: a decompression bomb is refused before any pixel is decoded
    } catch {
      bump(summary.rejections, 'image-unreadable');
      return null;
    }
    if (!['jpeg', 'png', 'webp', 'avif', 'heif', 'tiff'].includes(probe.format)) {
      bump(summary.rejections, 'image-type');
      return null;
    }
    if (probe.width * probe.height > cc.maxImagePixels) {
      bump(summary.rejections, 'image-pixels');
      return null;
    }
    if (Math.min(probe.width, probe.height) < cc.minImageSide) {
      bump(summary.rejections, 'image-small');
      return null;
    }
    return bank.images.prepare(res.body);
  };

  const queueCycle = new Map<string, number>();
  const pendingValidators: [string, Validators][] = [];

  const runSite = async (site: SiteProfile) => {
    const queue = await RequestQueueV1.open(`site-${site.name}`, { config: crawleeConfig });
    const cycleKey = `crawler.cycle.${site.name}`;
    let cycle = Number(bank.meta.get(cycleKey) ?? 0);
    if (await queue.isEmpty()) {
      cycle++;
      bank.meta.set(cycleKey, String(cycle));
      queueCycle.set(site.name, cycle);
      const seeds = [
        ...site.startUrls.map((u) => ({ u, kind: 'listing' as Kind })),
        ...site.feeds.map((u) => ({ u, kind: 'feed' as Kind })),
        ...site.sitemaps.map((u) => ({ u, kind: 'sitemap' as Kind })),
      ];
      await queue.addRequests(
        seeds.map(({ u, kind }) => {
          const norm = normalisePageUrl(u) ?? u;
          return { url: norm, uniqueKey: `${kind}:${cycle}:${norm}`, userData: { kind, depth: 0, site: site.name } };
        }),
      );
    } else {
      queueCycle.set(site.name, cycle);
      summary.resumed.push(site.name);
      log?.info(`crawl ${site.name}: resuming cycle ${cycle}`);
    }
    const counters = { articles: 0, listings: 0 };
    // Our own end-of-queue test: crawlee's isFinished() waits ~10 s "for consistency" on every empty head, and
    // concurrent fetchNextRequest() calls race on V1's head cache, so heads are taken one at a time.
    let active = 0;
    let headLock: Promise<unknown> = Promise.resolve();
    const nextRequest = () => {
      const p = headLock.then(() => queue.fetchNextRequest() as Promise<Request<UserData> | null>);
      headLock = p.catch(() => null);
      return p;
    };
    const workers = Math.max(1, Math.min(cc.maxConcurrency, cc.perHostConcurrency * 2));
    const worker = async () => {
      for (;;) {
        if (signal?.aborted) return;
        active++;
        const req = await nextRequest();
        if (!req) {
          active--;
          if (active === 0 && (await queue.isEmpty())) return;
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        try {
          const r = await handle(site, queue, req, counters);
          if (r === 'keep') {
            await queue.reclaimRequest(req); // over this run's page limit: left for the next cycle
            return;
          }
          await queue.markRequestHandled(req);
        } catch (err) {
          if (signal?.aborted || (err instanceof FetchRefused && err.reason === 'aborted')) {
            await queue.reclaimRequest(req, { forefront: true }).catch(() => {});
            return;
          }
          summary.errors++;
          const reason = robotsRefused(err) ? 'robots' : err instanceof FetchRefused ? err.reason : 'error';
          bump(summary.refused, reason);
          log?.info(`crawl ${site.name}: ${req.url}: ${(err as Error).message}`);
          await queue.markRequestHandled(req);
        } finally {
          active--;
        }
      }
    };
    await Promise.all(Array.from({ length: workers }, worker));
    const info = await queue.getInfo();
    summary.queued += Math.max(0, (info?.totalRequestCount ?? 0) - (info?.handledRequestCount ?? 0));
  };

  try {
    await Promise.all(sites.map(runSite));
  } finally {
    await storage.teardown(); // waits for crawlee's background writes of the queues
    bank.transaction(() => {
      for (const [u, v] of pendingValidators) repo.setValidators(u, v);
    });
  }
  summary.aborted = Boolean(signal?.aborted);
  return summary;
}
