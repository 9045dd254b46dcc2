// Crawl jobs of the scale-out mode: the daemon does not crawl; each cycle it queues one crawl job per host group, the
// enabled site profiles whose allowed hosts overlap (the same host, or one a subdomain of the other's), so that a
// host's politeness (its request spacing, robots.txt, a Retry-After pause) is kept by one worker at a time. A group
// whose job is still open (a slow host) gets no second job behind it. Workers started with `--stages crawl,…` claim
// them (src/worker/worker.ts); the crawl frontier in the bank makes a retaken job resume, not restart.
import { JobsRepo, type Bank } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import { defaultSitesDir, loadSitesReport, type SiteProfile } from '../stages/crawl/index.js';

/** A host pattern of a profile (`host[:port]`, or `.domain` for the domain and its subdomains) as a domain. */
const domainOf = (pattern: string) => pattern.toLowerCase().replace(/^\./, '');
const overlaps = (a: string, b: string) => a === b || a.endsWith(`.${b}`) || b.endsWith(`.${a}`);

/** The sites in groups that share a host, each group's names sorted, the groups in order of their first name. */
export function hostGroups(sites: readonly SiteProfile[]): string[][] {
  const parent = sites.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  const domains = sites.map((s) => s.allowedHosts.map(domainOf));
  for (let i = 0; i < sites.length; i++) {
    for (let j = i + 1; j < sites.length; j++) {
      if (domains[i]!.some((a) => domains[j]!.some((b) => overlaps(a, b)))) parent[find(j)] = find(i);
    }
  }
  const groups = new Map<number, string[]>();
  sites.forEach((s, i) => {
    const g = groups.get(find(i));
    if (g) g.push(s.name);
    else groups.set(find(i), [s.name]);
  });
  return [...groups.values()].map((g) => g.sort()).sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

export interface CrawlQueueResult {
  /** Host groups of the enabled profiles. */
  groups: number;
  /** Crawl jobs queued now. */
  jobs: number;
  /** Groups skipped because their job from an earlier cycle is still open. */
  stillOpen: number;
  /** False when another process was scheduling (nothing queued this time). */
  scheduled: boolean;
}

/** Queues this cycle's crawl jobs: one per host group without an open one. */
export async function queueCrawlJobs(bank: Bank, config: Config, opts: { sitesDir?: string } = {}): Promise<CrawlQueueResult> {
  const { sites } = loadSitesReport(opts.sitesDir ?? (config.crawler.sitesDir || defaultSitesDir()));
  const keys = hostGroups(sites.filter((s) => s.enabled)).map((g) => JSON.stringify(g));
  return bank.transaction(async (tx) => {
    const jobs = tx.repo(JobsRepo);
    if (!(await jobs.tryLockScheduler())) return { groups: keys.length, jobs: 0, stillOpen: 0, scheduled: false };
    const open = await jobs.openKeys('crawl');
    const fresh = keys.filter((k) => !open.has(k));
    if (fresh.length) await jobs.enqueueKeyed('crawl', fresh);
    return { groups: keys.length, jobs: fresh.length, stillOpen: keys.length - fresh.length, scheduled: true };
  });
}
