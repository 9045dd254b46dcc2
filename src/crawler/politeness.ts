// Per-host politeness done by us (crawlee's sameDomainDelaySecs keys on the registrable domain and does nothing
// for IP addresses or localhost): at most N requests in flight per host, and a delay between request starts.
// robots.txt through our own cache: in memory, then the bank (crawl_robots), refetched after the TTL.
// A 5xx (or no answer) on robots.txt disallows the whole host; a 4xx allows everything.
import { createRequire } from 'node:module';

// robots-parser is CommonJS with a default-export typing that NodeNext cannot call; load it with require.
interface Robot {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
}
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, body: string) => Robot;
import type { CrawlRepo } from '../bank/crawl.js';
import { FetchRefused } from './fetch.js';

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

export class HostScheduler {
  private hosts = new Map<string, { active: number; nextAt: number }>();
  private total = 0;

  /** maxTotal: requests in flight over all hosts (crawler.maxConcurrency). */
  constructor(private maxTotal = Infinity) {}
  /** Start times of requests per host (kept for tests and metrics; bounded). */
  readonly starts = new Map<string, number[]>();

  /** Waits for a slot on the host; returns the release function. Resolves early (with a no-op) when aborted. */
  async acquire(host: string, delayMs: number, concurrency: number, signal?: AbortSignal): Promise<() => void> {
    let h = this.hosts.get(host);
    if (!h) this.hosts.set(host, (h = { active: 0, nextAt: 0 }));
    for (;;) {
      if (signal?.aborted) throw new FetchRefused('aborted', 'aborted while waiting for a host slot');
      const now = Date.now();
      if (h.active < concurrency && now >= h.nextAt && this.total < this.maxTotal) {
        h.active++;
        this.total++;
        h.nextAt = now + delayMs;
        const s = this.starts.get(host) ?? [];
        s.push(now);
        if (s.length > 1000) s.shift();
        this.starts.set(host, s);
        let released = false;
        return () => {
          if (!released) {
            released = true;
            h!.active--;
            this.total--;
          }
        };
      }
      await sleep(Math.max(5, Math.min(h.nextAt - now, 200)), signal);
    }
  }
}

export interface RobotsVerdict {
  allowed: boolean;
  crawlDelayMs: number;
  reason?: string;
}

type Parsed = { allow: 'all' | 'none' | Robot; fetchedAt: number };

export class RobotsCache {
  private mem = new Map<string, Parsed>();
  private inflight = new Map<string, Promise<Parsed>>();

  constructor(
    private repo: CrawlRepo,
    private ttlMs: number,
    private userAgent: string,
    private fetchRobots: (url: string) => Promise<{ status: number; body: string }>,
  ) {}

  private parse(origin: string, status: number, body: string, fetchedAt: number): Parsed {
    if (status >= 200 && status < 300) return { allow: robotsParser(`${origin}/robots.txt`, body), fetchedAt };
    if (status >= 400 && status < 500) return { allow: 'all', fetchedAt };
    return { allow: 'none', fetchedAt }; // 5xx, or no answer at all
  }

  private async load(origin: string): Promise<Parsed> {
    const now = Date.now();
    const m = this.mem.get(origin);
    if (m && now - m.fetchedAt < this.ttlMs) return m;
    const row = this.repo.robots(origin);
    if (row && now - Date.parse(row.fetchedAt) < this.ttlMs) {
      const p = this.parse(origin, row.status, row.body, Date.parse(row.fetchedAt));
      this.mem.set(origin, p);
      return p;
    }
    let pending = this.inflight.get(origin);
    if (!pending) {
      pending = (async () => {
        let status = 0, body = '';
        try {
          ({ status, body } = await this.fetchRobots(`${origin}/robots.txt`));
        } catch (err) {
          if (err instanceof FetchRefused && (err.reason === 'aborted' || err.reason === 'private-address')) throw err; // not a verdict on the host
          status = 0;
        }
        this.repo.setRobots(origin, status, body);
        const p = this.parse(origin, status, body, Date.now());
        this.mem.set(origin, p);
        return p;
      })().finally(() => this.inflight.delete(origin));
      this.inflight.set(origin, pending);
    }
    return pending;
  }

  async check(url: string): Promise<RobotsVerdict> {
    const origin = new URL(url).origin;
    const p = await this.load(origin);
    if (p.allow === 'all') return { allowed: true, crawlDelayMs: 0 };
    if (p.allow === 'none') return { allowed: false, crawlDelayMs: 0, reason: 'robots.txt unavailable (server error): host disallowed' };
    const allowed = p.allow.isAllowed(url, this.userAgent) !== false;
    const delay = p.allow.getCrawlDelay(this.userAgent);
    return { allowed, crawlDelayMs: delay ? delay * 1000 : 0, reason: allowed ? undefined : 'disallowed by robots.txt' };
  }
}

export { sleep };
