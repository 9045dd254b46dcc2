// The daemon's Prometheus metrics (prom-client): bank gauges are read from the bank at scrape time; counters and
// stage durations are recorded by the pipeline as it runs.
import client from 'prom-client';
import { BANKS, CrawlRepo, PairsRepo, StatsRepo, LEVELS, failureKind, isBankUnavailable, type Bank, type CrawlStats } from '../bank/index.js';

/** A gauge read from the bank at scrape time: while the bank is down it keeps its last values (capbridge_bank_up
 *  says why they do not move), so /metrics still answers. */
function whileBankUp<T>(fn: (this: T) => Promise<void>): (this: T) => Promise<void> {
  return async function (this: T) {
    try {
      await fn.call(this);
    } catch (err) {
      if (!isBankUnavailable(err)) throw err;
    }
  };
}

export class DaemonMetrics {
  readonly registry = new client.Registry();
  readonly stageDuration: client.Histogram<'stage'>;
  readonly stageRuns: client.Counter<'stage' | 'result'>;
  readonly errors: client.Counter<'stage'>;
  readonly pagesFetched: client.Counter;
  readonly cycles: client.Counter<'result'>;
  readonly lastSuccess: client.Gauge;
  readonly stageItems: client.Counter<'stage' | 'key'>;

  constructor(bank: Bank) {
    const registry = this.registry;
    client.collectDefaultMetrics({ register: registry, prefix: 'capbridge_process_' });
    this.stageDuration = new client.Histogram({
      name: 'capbridge_stage_duration_seconds',
      help: 'Duration of pipeline stages',
      labelNames: ['stage'],
      buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
      registers: [registry],
    });
    this.stageRuns = new client.Counter({ name: 'capbridge_stage_runs_total', help: 'Stage runs by result (ok, error, aborted)', labelNames: ['stage', 'result'], registers: [registry] });
    this.errors = new client.Counter({ name: 'capbridge_errors_total', help: 'Errors by stage', labelNames: ['stage'], registers: [registry] });
    this.pagesFetched = new client.Counter({ name: 'capbridge_pages_fetched_total', help: 'Pages fetched by the crawler (from crawl summaries)', registers: [registry] });
    this.cycles = new client.Counter({ name: 'capbridge_cycles_total', help: 'Pipeline cycles by result', labelNames: ['result'], registers: [registry] });
    this.lastSuccess = new client.Gauge({ name: 'capbridge_last_success_timestamp_seconds', help: 'End of the last successful cycle (unix time)', registers: [registry] });
    this.stageItems = new client.Counter({
      name: 'capbridge_stage_summary_total',
      help: 'Numeric counts reported by stage summaries, summed over runs',
      labelNames: ['stage', 'key'],
      registers: [registry],
    });
    new client.Gauge({
      name: 'capbridge_bank_up',
      help: '1 while the bank answers (PostgreSQL: SELECT 1 within 2 s), 0 while it is down',
      registers: [registry],
      async collect() {
        this.set((await bank.health(2000)).up ? 1 : 0);
      },
    });
    new client.Gauge({
      name: 'capbridge_items',
      help: 'Items per bank and pipeline status',
      labelNames: ['bank', 'status'],
      registers: [registry],
      collect: whileBankUp(async function () {
        const stats = bank.repo(StatsRepo);
        const counts = await Promise.all(BANKS.map((b) => stats.bankCounts(b)));
        this.reset();
        BANKS.forEach((b, i) => {
          for (const [status, n] of Object.entries(counts[i]!.byStatus)) this.set({ bank: b, status }, n);
        });
      }),
    });
    new client.Gauge({
      name: 'capbridge_failures',
      help: 'Failed items per bank and caption pairs whose scoring failed (scope source, target, pairs), by kind of reason (capbridge stats has the reasons)',
      labelNames: ['scope', 'kind'],
      registers: [registry],
      collect: whileBankUp(async function () {
        const stats = bank.repo(StatsRepo);
        const counts = await Promise.all(BANKS.map((b) => stats.bankCounts(b)));
        const pairs = await stats.pairFailures();
        this.reset();
        const add = (scope: string, failures: Record<string, number>) => {
          const by = new Map<string, number>();
          for (const [reason, n] of Object.entries(failures)) by.set(failureKind(reason), (by.get(failureKind(reason)) ?? 0) + n);
          for (const [kind, n] of by) this.set({ scope, kind }, n);
        };
        BANKS.forEach((b, i) => add(b, counts[i]!.failures));
        add('pairs', pairs.failures);
      }),
    });
    crawlGauges(registry, bank);
    new client.Gauge({
      name: 'capbridge_candidates',
      help: 'Stored image-matching candidates',
      registers: [registry],
      collect: whileBankUp(async function (this: client.Gauge) {
        this.set(await bank.repo(PairsRepo).countCandidates());
      }),
    });
    new client.Gauge({
      name: 'capbridge_pairs',
      help: 'Emitted pairs by comparability level',
      labelNames: ['level'],
      registers: [registry],
      collect: whileBankUp(async function () {
        const by = await bank.repo(PairsRepo).countByLevel();
        for (const l of LEVELS) this.set({ level: l }, by[l]);
      }),
    });
  }

  /** Adds the numeric fields of a stage summary (one level deep) to the summary counter. */
  recordSummary(stage: string, summary: Record<string, unknown>): void {
    for (const [k, v] of Object.entries(summary)) {
      if (typeof v === 'number' && Number.isFinite(v) && v >= 0) this.stageItems.inc({ stage, key: k }, v);
    }
    if (stage === 'crawl') {
      const pages = summary.pagesFetched ?? summary.pages ?? summary.fetched;
      if (typeof pages === 'number' && pages > 0) this.pagesFetched.inc(pages);
      // fetch errors the crawler counted and survived
      if (typeof summary.errors === 'number' && summary.errors > 0) this.errors.inc({ stage: 'crawl' }, summary.errors);
    }
  }
}

/** The crawl frontier's gauges, read at scrape time: one query (cached for a second) feeds the four. */
function crawlGauges(registry: client.Registry, bank: Bank): void {
  let crawlAt = 0;
  let crawl: Promise<CrawlStats> | undefined;
  const crawlStats = (): Promise<CrawlStats> => {
    if (!crawl || Date.now() - crawlAt > 1000) {
      crawl = bank.repo(CrawlRepo).stats();
      crawlAt = Date.now();
    }
    return crawl;
  };
  new client.Gauge({
    name: 'capbridge_crawl_urls',
    help: 'Crawl frontier URLs by kind (listing, feed, sitemap, article, image) and state (pending, images, done, failed, given-up)',
    labelNames: ['kind', 'state'],
    registers: [registry],
    collect: whileBankUp(async function () {
      const stats = await crawlStats();
      this.reset();
      for (const [kind, by] of Object.entries(stats.urls)) for (const [state, n] of Object.entries(by)) this.set({ kind, state }, n);
    }),
  });
  new client.Gauge({
    name: 'capbridge_crawl_pending_retries',
    help: 'Crawl URLs waiting for a later cycle after a transient failure',
    registers: [registry],
    collect: whileBankUp(async function (this: client.Gauge) {
      this.set((await crawlStats()).pendingRetries);
    }),
  });
  new client.Gauge({
    name: 'capbridge_crawl_given_up',
    help: 'Crawl URLs given up after crawler.retry.giveUpAfter cycles of transient failures',
    registers: [registry],
    collect: whileBankUp(async function (this: client.Gauge) {
      this.set((await crawlStats()).givenUp);
    }),
  });
  new client.Gauge({
    name: 'capbridge_crawl_failures',
    help: 'Crawl URLs whose last attempt failed, by failure class (transient: retried or given up; permanent: failed) and reason',
    labelNames: ['class', 'reason'],
    registers: [registry],
    collect: whileBankUp(async function () {
      const f = (await crawlStats()).failures;
      this.reset();
      for (const cls of ['transient', 'permanent'] as const) for (const [reason, n] of Object.entries(f[cls])) this.set({ class: cls, reason }, n);
    }),
  });
}
