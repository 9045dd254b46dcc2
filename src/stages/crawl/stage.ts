// The crawl stage: one harvest cycle per site profile, over the frontier kept in the bank (crawl_urls).
//
// A cycle queues the site's start pages, feeds and sitemaps, walks them (listing walk: listing.ts) to the
// article pages, harvests each article once (harvest.ts) and stores each captioned photo as an item, its image
// fetched as a row of its own (so an image that fails does not lose its caption, and is retried like a page).
// Every fetch goes through the retry policy and the host scheduler (retry.ts, politeness.ts); a URL that still
// fails is re-queued for a later cycle by its failure class (failures.ts) or given up after
// crawler.retry.giveUpAfter cycles. The frontier is committed with what each row produced, so a killed crawl
// resumes the open cycle where it stopped and repeats nothing it stored. One site that cannot run (a bad
// profile, an unexpected error) is reported with its reason; the other sites go on.
import fs from 'node:fs';
import path from 'node:path';
import type { Bank, BankName } from '../../bank/index.js';
import { CrawlRepo, isBankUnavailable, isStoreUnavailable, type FrontierRow, type ImageRecord, type NewUrl, type UrlKind } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import { checkCaption } from '../../lib/captions/index.js';
import type { Logger } from '../../util/log.js';
import type { Progress } from '../../util/progress.js';
import { UserError } from '../../util/errors.js';
import { urlKey } from '../../util/url-key.js';
import { normalisePageUrl } from '../../lib/extraction/index.js';
import type { Failure } from './failures.js';
import { FetchRefused, type Resolver } from './fetch.js';
import { checkImage, harvestPage, itemExtId } from './harvest.js';
import { linksOf, MAX_URL_LENGTH, planLinks } from './listing.js';
import { HostPaused, HostScheduler, RobotsCache, realClock, type Clock } from './politeness.js';
import { PoliteFetcher, retryCycle, type RetryPolicy } from './retry.js';
import { defaultSitesDir, hostAllowed, loadSitesReport, type SiteLoadError, type SiteProfile } from './sites.js';

export { itemExtId } from './harvest.js';
export { parseFeedOrSitemap } from './listing.js';

export interface CrawlOptions {
  /** One cycle and return (what every call does: the daemon schedules cycles); kept for the stage contract. */
  once?: boolean;
  site?: string;
  /** Only these sites (a crawl job's host group; names without an enabled profile are skipped). */
  sites?: readonly string[];
  signal?: AbortSignal;
  progress?: Progress;
  logger?: Logger;
  sitesDir?: string;
  /** Given-up URLs are queued again with a fresh count before the cycle. */
  retryGivenUp?: boolean;
  /** Name resolution for connections (tests point made-up names at 127.0.0.1). */
  resolve?: Resolver;
  clock?: Clock;
  random?: () => number;
}

export interface SiteFailure {
  site: string;
  file?: string;
  reason: string;
}

export interface CrawlSummary {
  sites: string[];
  resumed: string[];
  /** Sites that could not run this cycle, each with its reason (the other sites ran); sitesFailed counts them. */
  failedSites: SiteFailure[];
  sitesFailed: number;
  cycles: Record<string, number>;
  requests: number;
  /** Requests repeated within the cycle after a transient failure. */
  retries: number;
  pagesFetched: number;
  notModified: number;
  articles: number;
  pairsFound: number;
  itemsAdded: Record<BankName, number>;
  itemsUnchanged: number;
  imagesDownloaded: number;
  /** Failures this cycle by class and reason code (a URL counted once per cycle). */
  failures: { transient: Record<string, number>; permanent: Record<string, number> };
  /** URLs put off to the next cycle without counting against them (host paused, robots.txt unavailable). */
  deferred: number;
  /** URLs given up this cycle. */
  givenUp: number;
  /** After this cycle, over all sites: URLs waiting for a later attempt, and URLs given up so far. */
  pendingRetries: number;
  givenUpTotal: number;
  /** Articles left for the next cycle by the per-cycle page limit. */
  limited: number;
  /** Captioned photos dropped from pages over crawler.maxPhotosPerPage. */
  photosOverLimit: number;
  errors: number;
  aborted: boolean;
  queued: number;
}

function bump(rec: Record<string, number>, key: string, n = 1): void {
  rec[key] = (rec[key] ?? 0) + n;
}

const PAGE_KINDS = new Set<UrlKind>(['listing', 'feed', 'sitemap']);
const IMAGE_ACCEPT = 'image/avif,image/webp,image/jpeg,image/png,image/*;q=0.8';

interface ItemData {
  bank: BankName;
  extId: string;
  pageUrl: string;
  caption: string;
  credit?: string;
}

/** What every site of one crawl shares: config, bank, host scheduler, robots cache, fetchers, the summary. */
class Crawl {
  readonly cc: Config['crawler'];
  readonly repo: CrawlRepo;
  readonly scheduler: HostScheduler;
  readonly fetcher: PoliteFetcher;
  readonly clock: Clock;
  readonly summary: CrawlSummary;
  readonly policy: RetryPolicy;
  /** Page keys being harvested right now (two spellings of one page in flight harvest it once). */
  readonly claimed = new Set<string>();
  /** Image URLs being fetched right now: a second row of the same photo waits for the first. */
  readonly imageFetches = new Map<string, Promise<ImageRecord | Failure>>();

  constructor(
    readonly bank: Bank,
    readonly config: Config,
    readonly sites: SiteProfile[],
    readonly opts: CrawlOptions,
  ) {
    const cc = (this.cc = config.crawler);
    this.repo = bank.repo(CrawlRepo);
    this.clock = opts.clock ?? realClock;
    this.policy = {
      triesPerCycle: cc.retry.triesPerCycle,
      baseDelayMs: cc.retry.baseDelayMs,
      maxDelayMs: cc.retry.maxDelayMs,
      maxRetryAfterMs: cc.retry.maxRetryAfterSecs * 1000,
      giveUpAfter: cc.retry.giveUpAfter,
    };
    this.scheduler = new HostScheduler(cc.maxConcurrency, cc.hosts, this.clock);
    const fetchOpts = {
      userAgent: cc.userAgent,
      timeoutMs: cc.requestTimeoutSecs * 1000,
      maxRedirects: cc.maxRedirects,
      allowPrivate: (u: URL) => this.privateAllowed(u),
      resolve: opts.resolve,
    };
    const common = {
      scheduler: this.scheduler,
      policy: this.policy,
      perHostDelayMs: cc.perHostDelayMs,
      perHostConcurrency: cc.perHostConcurrency,
      fetch: fetchOpts,
      signal: opts.signal,
      clock: this.clock,
      random: opts.random,
      onLongPause: (host: string, until: number, reason: string) =>
        void this.repo.setHostPause(host, new Date(until).toISOString(), reason).catch((err: Error) => this.log?.warn(`crawl: cannot store the pause of ${host}: ${err.message}`)),
    };
    const robotsFetcher = new PoliteFetcher({ ...common, robots: null });
    const robots = new RobotsCache(
      this.repo,
      cc.robotsTtlHours * 3600_000,
      cc.userAgent,
      async (u) => {
        const a = await robotsFetcher.fetch(u, { maxBytes: 512 * 1024 });
        this.count(a);
        if (a.ok) return { status: a.res.status, body: a.res.body.toString('utf8') };
        if (a.failure.status) return { status: a.failure.status, body: '' };
        if (a.failure.code === 'host-paused') throw new HostPaused(new URL(u).host, a.failure.message);
        throw new FetchRefused(a.failure.code === 'private-address' ? 'private-address' : 'network', a.failure.message);
      },
      Math.max(1000, cc.retry.baseDelayMs * 4),
      this.clock,
    );
    this.fetcher = new PoliteFetcher({ ...common, robots });
    this.summary = {
      sites: this.sites.map((s) => s.name),
      resumed: [],
      failedSites: [],
      sitesFailed: 0,
      cycles: {},
      requests: 0,
      retries: 0,
      pagesFetched: 0,
      notModified: 0,
      articles: 0,
      pairsFound: 0,
      itemsAdded: { source: 0, target: 0 },
      itemsUnchanged: 0,
      imagesDownloaded: 0,
      failures: { transient: {}, permanent: {} },
      deferred: 0,
      givenUp: 0,
      pendingRetries: 0,
      givenUpTotal: 0,
      limited: 0,
      photosOverLimit: 0,
      errors: 0,
      aborted: false,
      queued: 0,
    };
  }

  /** Hosts still paused by a long Retry-After of an earlier run stay closed. */
  async init(): Promise<void> {
    for (const p of await this.repo.hostPauses(new Date(this.clock.now()).toISOString())) {
      this.scheduler.close(p.host, `${p.reason ?? 'paused'} until ${p.pausedUntil}`);
    }
  }

  /** Private addresses: allowed everywhere by crawler.allowPrivateAddresses, or on the allowedHosts of a profile that says so. */
  privateAllowed(u: URL): boolean {
    return this.cc.allowPrivateAddresses || this.sites.some((s) => s.allowPrivateAddresses && hostAllowed(s, u.href));
  }

  count(a: { requests: number; retries: number }): void {
    this.summary.requests += a.requests;
    this.summary.retries += a.retries;
  }

  get log(): Logger | undefined {
    return this.opts.logger;
  }
}

/** One site's cycle: its rows dispatched to workers by host readiness, each row handled by its kind. */
class SiteCycle {
  private readonly repo: CrawlRepo;
  private readonly inflight = new Set<number>();
  /** Rows this run leaves alone (over the page limit). */
  private readonly skip = new Set<number>();
  private ready: FrontierRow[] = [];
  private refilling: Promise<void> | null = null;
  /** Rows handled to their end so far, and that count when the rows in `ready` were read: a read begun before a
   *  row's end may not see what that row queued (its links, its photos), so it cannot tell that nothing is left. */
  private settled = 0;
  private readAt = 0;
  private articles = 0;
  private listings = 0;
  private readonly bankName: BankName;
  private readonly maxPages: number;
  private readonly maxDepth: number;

  constructor(
    private readonly c: Crawl,
    private readonly site: SiteProfile,
    readonly cycle: number,
    private readonly cycleStartedAt: string | undefined,
  ) {
    this.repo = c.repo;
    this.bankName = site.language === 'en' ? 'source' : 'target';
    this.maxPages = site.limits.maxPages ?? c.cc.maxPagesPerSite;
    this.maxDepth = site.limits.maxDepth ?? c.cc.maxDepth;
  }

  private get signal() {
    return this.c.opts.signal;
  }

  /** Redirects of pages stay on the profile's hosts; every hop is checked. */
  private pageHop = (u: string) => (hostAllowed(this.site, u) ? null : `outside the allowedHosts of ${this.site.file ?? this.site.name}`);

  async run(): Promise<void> {
    if (this.cycleStartedAt) this.articles = await this.repo.articlesAttempted(this.site.name, this.cycleStartedAt);
    const workers = Math.max(2, Math.min(this.c.cc.maxConcurrency, this.c.cc.perHostConcurrency * 4));
    await Promise.all(Array.from({ length: workers }, () => this.worker()));
  }

  /** Reads the next rows when none are ready; the workers share one read (they would otherwise take the same rows). */
  private async refill(): Promise<void> {
    if (this.ready.length) return;
    this.refilling ??= (async () => {
      const exclude = new Set([...this.inflight, ...this.skip]);
      const at = this.settled;
      this.ready = await this.repo.eligible(this.site.name, this.cycle, 200, exclude);
      this.readAt = at;
    })().finally(() => (this.refilling = null));
    await this.refilling;
  }

  /** The next row whose host can take a request now (marked in flight); null when nothing is left; a wait in ms
   *  otherwise. Nothing is left only when a read begun after the last row's end found nothing and none is in flight:
   *  a read begun while a row was in flight (by another worker of the site) may end after that row queued its
   *  article or photo, and all the site's workers ending on it closed the cycle with that row never fetched. */
  private async pick(): Promise<FrontierRow | null | number> {
    await this.refill();
    if (!this.ready.length) return this.inflight.size ? 50 : this.readAt === this.settled ? null : 0;
    let wait = Infinity;
    for (let i = 0; i < this.ready.length; i++) {
      const row = this.ready[i]!;
      if (row.kind === 'article' && this.articles >= this.maxPages) {
        this.skip.add(row.id);
        this.c.summary.limited++;
        this.ready.splice(i--, 1);
        continue;
      }
      if (PAGE_KINDS.has(row.kind) && row.depth > 0 && this.listings >= this.maxPages) {
        this.skip.add(row.id);
        this.ready.splice(i--, 1);
        continue;
      }
      let host: string;
      try {
        host = new URL(row.url).host;
      } catch {
        host = '';
      }
      const w = host ? this.c.scheduler.readyIn(host, this.c.cc.perHostConcurrency) : 0;
      if (w === 0 || w === Infinity) {
        // Infinity: the host's breaker is open; the row is deferred at once rather than waited for.
        this.ready.splice(i, 1);
        if (row.kind === 'article') this.articles++;
        else if (PAGE_KINDS.has(row.kind)) this.listings++;
        // In flight now, not when the caller resumes: a worker asking in between saw nothing ready and nothing in
        // flight and ended, so every site but one whose host was busy at its start crawled with one worker.
        this.inflight.add(row.id);
        return row;
      }
      wait = Math.min(wait, w);
    }
    if (!this.ready.length) return this.pick();
    return Math.min(wait, 200);
  }

  private async worker(): Promise<void> {
    for (;;) {
      if (this.signal?.aborted) return;
      const next = await this.pick();
      if (next === null) return;
      if (typeof next === 'number') {
        await this.c.clock.sleep(next, this.signal);
        continue;
      }
      try {
        await this.handle(next);
      } catch (err) {
        if (this.signal?.aborted || (err instanceof FetchRefused && err.reason === 'aborted')) return; // the row stays pending: resumed next run
        // The bank failing is nobody's URL's fault, and nothing can be recorded in it: the crawl stops, the row stays
        // pending, the next run (or the crawl job, taken again) resumes.
        if (isBankUnavailable(err)) throw err;
        // The image store failing (an object store unreachable after its retries) is not the URL's fault: the row
        // waits for the next cycle without counting an attempt.
        if (isStoreUnavailable(err)) {
          this.c.log?.warn(`crawl ${this.site.name}: ${next.url}: ${err.message}`);
          await this.c.bank.transaction((tx) => this.fail(tx.repo(CrawlRepo), next, { class: 'transient', code: 'image-store', message: `${next.url}: ${err.message}`, hostLevel: true }, 0));
          continue;
        }
        // An unexpected error fails this URL alone, with its reason.
        const msg = `${next.url}: ${(err as Error)?.message ?? String(err)}`;
        this.c.log?.error(`crawl ${this.site.name}: ${msg}`);
        await this.c.bank.transaction((tx) => this.fail(tx.repo(CrawlRepo), next, { class: 'permanent', code: 'internal', message: msg }, 0));
      } finally {
        this.inflight.delete(next.id);
        this.settled++;
      }
    }
  }

  private async handle(picked: FrontierRow): Promise<void> {
    // The row as the bank has it now: another worker may have settled it since it was read (a page harvested
    // under its canonical URL settles that URL's own row).
    const row = await this.repo.row(picked.key);
    if (!row || row.state !== 'pending' || row.retryCycle > this.cycle) return;
    if (row.kind === 'image') return this.fetchImageRow(row);
    if (row.kind === 'article') return this.harvestArticle(row);
    return this.walkListing(row);
  }

  /** Records a failed attempt by class: deferred (host-level), failed (permanent), re-queued or given up. */
  private async fail(repo: CrawlRepo, row: FrontierRow, f: Failure, requests: number): Promise<void> {
    const s = this.c.summary;
    const base = { failureClass: f.class, reasonCode: f.code, reason: f.message, httpStatus: f.status ?? null, requests };
    if (f.hostLevel) {
      s.deferred++;
      await repo.finish(row.id, { ...base, state: 'pending', retryCycle: this.cycle + 1 });
    } else if (f.class === 'permanent') {
      s.errors++;
      bump(s.failures.permanent, f.code);
      await repo.finish(row.id, { ...base, state: 'failed' });
    } else {
      s.errors++;
      bump(s.failures.transient, f.code);
      const attempts = row.attempts + 1;
      // Listings are walked every cycle and never given up; pages and images are, after giveUpAfter cycles.
      const giveUp = !PAGE_KINDS.has(row.kind) && attempts >= this.c.policy.giveUpAfter;
      if (giveUp) s.givenUp++;
      await repo.finish(row.id, { ...base, attempts, state: giveUp ? 'given-up' : 'pending', retryCycle: PAGE_KINDS.has(row.kind) ? this.cycle + 1 : retryCycle(this.cycle, attempts) });
    }
    if (PAGE_KINDS.has(row.kind)) await repo.clearValidators(row.url); // fetched in full next time
    if (row.kind === 'image' && row.parent) await repo.completePage(row.parent);
    this.c.log?.info(`crawl ${this.site.name}: ${f.class}${f.hostLevel ? ' (host)' : ''} ${f.code}: ${f.message}`);
  }

  /** Listing walk: a start page, feed or sitemap, fetched conditionally; its links queued with the row's end. */
  private async walkListing(row: FrontierRow): Promise<void> {
    const cc = this.c.cc;
    const v = await this.repo.validators(row.url);
    const headers: Record<string, string> = {};
    if (v?.etag) headers['if-none-match'] = v.etag;
    if (v?.lastModified) headers['if-modified-since'] = v.lastModified;
    const a = await this.c.fetcher.fetch(row.url, { maxBytes: cc.maxPageBytes, headers, siteDelayMs: this.site.limits.delayMs, hopAllowed: this.pageHop });
    this.c.count(a);
    if (!a.ok) return this.c.bank.transaction((tx) => this.fail(tx.repo(CrawlRepo), row, a.failure, a.requests));
    this.c.summary.pagesFetched++;
    this.c.opts.progress?.tick(1, row.url);
    const res = a.res;
    const done = { state: 'done' as const, httpStatus: res.status, requests: a.requests };
    if (res.status === 304) {
      this.c.summary.notModified++;
      return this.c.bank.transaction((tx) => tx.repo(CrawlRepo).finish(row.id, done));
    }
    const found = linksOf(row.kind, res, cc.maxPageBytes, { maxElements: cc.maxPageElements, maxDepth: cc.maxPageDepth });
    if (found.refused) {
      const refused = found.refused;
      return this.c.bank.transaction((tx) => this.fail(tx.repo(CrawlRepo), row, refused, a.requests));
    }
    const toQueue = planLinks(this.site, row, found.links, this.maxDepth);
    const etag = res.headers.get('etag');
    const lastModified = res.headers.get('last-modified');
    // Links, validators and the row's end in one transaction: a 304 next cycle never hides links not stored.
    await this.c.bank.transaction(async (tx) => {
      const repo = tx.repo(CrawlRepo);
      await repo.enqueue(this.site.name, this.cycle, toQueue);
      if (etag || lastModified) await repo.setValidators(row.url, { etag, lastModified });
      await repo.finish(row.id, done);
    });
  }

  /** Article harvest: the page fetched once, its identity settled (aliases are one page), its photos queued as image rows. */
  private async harvestArticle(row: FrontierRow): Promise<void> {
    const cc = this.c.cc;
    const a = await this.c.fetcher.fetch(row.url, { maxBytes: cc.maxPageBytes, siteDelayMs: this.site.limits.delayMs, hopAllowed: this.pageHop });
    this.c.count(a);
    if (!a.ok) return this.c.bank.transaction((tx) => this.fail(tx.repo(CrawlRepo), row, a.failure, a.requests));
    const s = this.c.summary;
    s.pagesFetched++;
    s.articles++;
    this.c.opts.progress?.tick(1, row.url);
    const page = harvestPage(this.site, a.res, { maxElements: cc.maxPageElements, maxDepth: cc.maxPageDepth });
    if (!page.ok) return this.c.bank.transaction((tx) => this.fail(tx.repo(CrawlRepo), row, page.failure, a.requests));
    const finalUrl = normalisePageUrl(a.res.url) ?? a.res.url;
    const finalKey = urlKey(finalUrl) ?? finalUrl;
    const sameAs = (key: string) => key !== row.key;
    // Another spelling, a redirect source or a non-canonical URL of a page already harvested (or being harvested).
    if (sameAs(page.key)) {
      const known = await this.repo.row(page.key);
      if ((known && known.state !== 'pending') || this.c.claimed.has(page.key)) {
        return this.c.bank.transaction((tx) =>
          tx.repo(CrawlRepo).finish(row.id, { state: 'done', reason: `same page as ${page.pageUrl}`, httpStatus: a.res.status, requests: a.requests, url: finalUrl }),
        );
      }
    }
    this.c.claimed.add(page.key);
    try {
      s.pairsFound += page.pairs.length;
      // A page with more captioned photos than any real gallery (a hostile or broken page) keeps the first ones.
      const maxPhotos = cc.maxPhotosPerPage;
      const over = Math.max(0, page.pairs.length - maxPhotos);
      const note = over ? `${page.pairs.length} captioned photos, over crawler.maxPhotosPerPage: the first ${maxPhotos} kept` : undefined;
      if (over) {
        s.photosOverLimit += over;
        this.c.log?.warn(`crawl ${this.site.name}: ${page.pageUrl}: ${note}`);
      }
      const images: NewUrl[] = [];
      for (const pair of page.pairs.slice(0, maxPhotos)) {
        if (!pair.caption.trim() || pair.image_url.length > MAX_URL_LENGTH) continue;
        const extId = itemExtId(page.pageUrl, pair.image_url);
        if (await this.c.bank.items.get(this.bankName, extId)) {
          s.itemsUnchanged++;
          continue;
        }
        const data: ItemData = { bank: this.bankName, extId, pageUrl: page.pageUrl, caption: pair.caption, ...(pair.credit ? { credit: pair.credit } : {}) };
        images.push({ key: `item:${this.bankName}:${extId}`, url: pair.image_url, kind: 'image', depth: row.depth + 1, parent: page.key, data: JSON.stringify(data) });
      }
      await this.c.bank.transaction(async (tx) => {
        const repo = tx.repo(CrawlRepo);
        const state = images.length ? 'images' : 'done';
        if (sameAs(page.key)) {
          await repo.recordPage(this.site.name, this.cycle, { key: page.key, url: page.pageUrl, state, httpStatus: a.res.status, reason: note });
          await repo.finish(row.id, { state: 'done', reason: `same page as ${page.pageUrl}`, httpStatus: a.res.status, requests: a.requests, url: finalUrl });
        } else await repo.finish(row.id, { state, reason: note, httpStatus: a.res.status, requests: a.requests, url: finalKey === row.key ? finalUrl : undefined });
        if (sameAs(finalKey) && finalKey !== page.key) await repo.recordPage(this.site.name, this.cycle, { key: finalKey, url: finalUrl, state: 'done', reason: `same page as ${page.pageUrl}` });
        await repo.enqueue(this.site.name, this.cycle, images);
        if (images.length) await repo.completePage(page.key);
      });
    } finally {
      this.c.claimed.delete(page.key);
    }
  }

  /** Image fetch: one photo of a harvested page; stored with its caption as an item of the site's bank. */
  private async fetchImageRow(row: FrontierRow): Promise<void> {
    const data = JSON.parse(row.data ?? '{}') as ItemData;
    const bank = this.c.bank;
    if (await bank.items.get(data.bank, data.extId)) {
      return bank.transaction(async (tx) => {
        const repo = tx.repo(CrawlRepo);
        await repo.finish(row.id, { state: 'done' });
        if (row.parent) await repo.completePage(row.parent);
      });
    }
    const knownSha = await this.repo.imageForUrl(row.url);
    let stored: ImageRecord | Failure | undefined = knownSha ? await bank.images.get(knownSha) : undefined;
    let requests = 0;
    if (!stored) {
      let pending = this.c.imageFetches.get(row.url);
      if (!pending) {
        pending = this.downloadImage(row.url, (n) => (requests += n));
        this.c.imageFetches.set(row.url, pending);
        pending.finally(() => this.c.imageFetches.delete(row.url)).catch(() => {});
      }
      stored = await pending;
    }
    if ('class' in stored) {
      const failure = stored;
      return bank.transaction((tx) => this.fail(tx.repo(CrawlRepo), row, failure, requests));
    }
    const image = stored;
    const cfg = this.c.config.captions;
    const check = checkCaption(data.caption, data.bank === 'source' ? cfg.sourceLanguages : cfg.targetLanguages, {
      check: cfg.checkLanguage,
      minLength: cfg.minLengthForDetection,
    });
    const fetchedAt = new Date().toISOString();
    const out = await bank.transaction(async (tx) => {
      const repo = tx.repo(CrawlRepo);
      await tx.images.record(image);
      const r = await tx.items.upsert({
        bank: data.bank,
        extId: data.extId,
        caption: data.caption,
        credit: data.credit ?? null,
        lang: check.lang,
        captionStatus: check.status,
        captionReason: check.reason,
        imageSha256: image.sha256,
        pageUrl: data.pageUrl,
        imageUrl: row.url,
        site: this.site.name,
        fetchedAt,
      });
      await repo.finish(row.id, { state: 'done', requests });
      if (row.parent) await repo.completePage(row.parent);
      return r;
    });
    if (out.outcome === 'added') this.c.summary.itemsAdded[data.bank]++;
    else this.c.summary.itemsUnchanged++;
  }

  private async downloadImage(url: string, addRequests: (n: number) => void): Promise<ImageRecord | Failure> {
    const cc = this.c.cc;
    const a = await this.c.fetcher.fetch(url, { maxBytes: cc.maxImageBytes, headers: { accept: IMAGE_ACCEPT } });
    this.c.count(a);
    addRequests(a.requests);
    if (!a.ok) return a.failure;
    this.c.summary.imagesDownloaded++;
    const refused = await checkImage(a.res, { maxPixels: cc.maxImagePixels, minSide: cc.minImageSide });
    if (refused) return refused;
    return this.c.bank.images.prepare(a.res.body);
  }
}

/** Start pages, feeds and sitemaps of a profile, as frontier rows of depth 0. */
function seedsOf(site: SiteProfile): NewUrl[] {
  const seeds: NewUrl[] = [];
  const add = (urls: string[], kind: UrlKind) => {
    for (const u of urls) {
      const norm = normalisePageUrl(u) ?? u;
      seeds.push({ key: urlKey(norm) ?? norm, url: norm, kind, depth: 0 });
    }
  };
  add(site.startUrls, 'listing');
  add(site.feeds, 'feed');
  add(site.sitemaps, 'sitemap');
  return seeds;
}

/**
 * Pending article requests of the crawlee queues an earlier capbridge kept in DATA/crawl/request_queues are
 * moved into the frontier once, so an upgrade in the middle of a cycle loses nothing; the folder is then removed.
 */
async function adoptLegacyQueues(bank: Bank, log?: Logger): Promise<void> {
  const dir = path.join(bank.dataDir, 'crawl', 'request_queues');
  if (!fs.existsSync(dir)) return;
  let adopted = 0;
  for (const q of fs.readdirSync(dir)) {
    const site = q.replace(/^site-/, '');
    const rows: NewUrl[] = [];
    const qdir = path.join(dir, q);
    if (!fs.statSync(qdir).isDirectory()) continue;
    for (const f of fs.readdirSync(qdir).filter((x) => x.endsWith('.json'))) {
      try {
        const r = JSON.parse(fs.readFileSync(path.join(qdir, f), 'utf8')) as { orderNo: number | null; url: string; json?: string };
        const kind = (r.json ? (JSON.parse(r.json) as { userData?: { kind?: string } }).userData?.kind : undefined) ?? '';
        if (r.orderNo === null || kind !== 'article') continue;
        const key = urlKey(r.url);
        if (key) rows.push({ key, url: r.url, kind: 'article', depth: 1 });
      } catch {
        /* a half-written file of a killed run: skip */
      }
    }
    adopted += await bank.transaction(async (tx) => {
      const repo = tx.repo(CrawlRepo);
      return repo.enqueue(site, (await repo.siteCycle(site))?.cycle ?? 0, rows);
    });
  }
  fs.rmSync(dir, { recursive: true, force: true });
  if (adopted) log?.info(`crawl: ${adopted} pending article(s) moved from the old request queues into the bank`);
}

export async function runCrawl(bank: Bank, config: Config, opts: CrawlOptions = {}): Promise<CrawlSummary> {
  const cc = config.crawler;
  const sitesDir = opts.sitesDir ?? (cc.sitesDir || defaultSitesDir());
  const report = loadSitesReport(sitesDir);
  let sites = report.sites.filter((s) => s.enabled);
  let loadErrors: SiteLoadError[] = report.errors;
  if (opts.sites) {
    const only = new Set(opts.sites);
    sites = sites.filter((s) => only.has(s.name));
    loadErrors = loadErrors.filter((e) => e.site !== undefined && only.has(e.site));
  }
  if (opts.site) {
    sites = sites.filter((s) => s.name === opts.site);
    loadErrors = loadErrors.filter((e) => e.site === opts.site);
    if (!sites.length && loadErrors.length) throw new UserError(loadErrors[0]!.reason);
    if (!sites.length) throw new UserError(`--site ${opts.site}: no enabled profile of that name in ${sitesDir}`);
  }
  const c = new Crawl(bank, config, sites, opts);
  const s = c.summary;
  for (const e of loadErrors) {
    s.failedSites.push({ site: e.site ?? path.basename(e.file).replace(/\.ya?ml$/, ''), file: e.file, reason: e.reason });
    opts.logger?.error(`crawl: ${e.reason}`);
  }
  await c.init();
  await adoptLegacyQueues(bank, opts.logger);
  if (opts.retryGivenUp) await c.repo.retryGivenUp(opts.site);

  const runSite = async (site: SiteProfile) => {
    const { cycle, resumed } = await bank.transaction((tx) => tx.repo(CrawlRepo).beginCycle(site.name, seedsOf(site)));
    s.cycles[site.name] = cycle;
    if (resumed) {
      s.resumed.push(site.name);
      opts.logger?.info(`crawl ${site.name}: resuming cycle ${cycle}`);
    }
    const sc = new SiteCycle(c, site, cycle, await c.repo.cycleStartedAt(site.name));
    await sc.run();
    if (!opts.signal?.aborted) await c.repo.closeCycle(site.name, cycle);
  };
  const results = await Promise.allSettled(sites.map(runSite));
  results.forEach((r, i) => {
    if (r.status === 'rejected' && !opts.signal?.aborted) {
      const site = sites[i]!;
      const reason = `${site.file ?? site.name}: the site's cycle stopped: ${(r.reason as Error)?.message ?? String(r.reason)}`;
      s.failedSites.push({ site: site.name, file: site.file, reason });
      opts.logger?.error(`crawl: ${reason}`);
    }
  });
  s.sitesFailed = s.failedSites.length;
  const stats = await c.repo.stats();
  s.pendingRetries = stats.pendingRetries;
  s.givenUpTotal = stats.givenUp;
  for (const site of sites) s.queued += await c.repo.pendingCount(site.name);
  s.aborted = Boolean(opts.signal?.aborted);
  return s;
}
