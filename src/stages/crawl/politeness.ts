// Per-host politeness done by us (the crawling library capbridge used at first, crawlee, spaced requests per
// registrable domain and not at all for IP addresses or localhost): at most N requests in flight per host, a delay between request starts, and the
// host's health:
//   - Retry-After on a 429/503 pauses the whole host until then (every request to it waits, other hosts do not);
//   - AIMD on the host's request rate: each transient error halves it (the delay between requests doubles, to at
//     least hosts.errorDelayMs), each success adds hosts.recoverRate requests per second, up to the polite rate.
//     With a share p of requests failing the rate settles near 2 * recoverRate * (1 - p) / p (as TCP's window
//     does), so a struggling host is asked less often and a recovered one soon gets its polite rate back;
//   - a circuit breaker: hosts.breakerErrors transient errors in a row (or a Retry-After longer than a cycle
//     should wait) open it: the host gets no request for the rest of the cycle, its URLs wait for the next one.
// robots.txt through our own cache: in memory, then the bank (crawl_robots), refetched after the TTL.
import { createRequire } from 'node:module';
import type { CrawlRepo } from '../../bank/index.js';
import { FetchRefused } from './fetch.js';

// robots-parser is CommonJS with a default-export typing that NodeNext cannot call; load it with require.
interface Robot {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
}
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, body: string) => Robot;

/** Time and waiting, replaceable by a fake clock in tests. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const sleep = (ms: number, signal?: AbortSignal) =>
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

export const realClock: Clock = { now: () => Date.now(), sleep };

export interface HostPolicy {
  /** Floor of the delay after a transient error (the additive start of a slow-down from a zero delay). */
  errorDelayMs: number;
  /** Ceiling of the host's delay. */
  maxDelayMs: number;
  /** Requests per second added to the host's rate per success. */
  recoverRate: number;
  /** Transient errors in a row that open the breaker for the rest of the cycle (0: never). */
  breakerErrors: number;
}

interface HostState {
  active: number;
  nextAt: number;
  /** The current delay between request starts (AIMD); never below the base asked for. */
  delayMs: number;
  pausedUntil: number;
  errorsInRow: number;
  open: string | null;
}

export class HostScheduler {
  private hosts = new Map<string, HostState>();
  private total = 0;
  /** Start times of requests per host (kept for tests and metrics; bounded). */
  readonly starts = new Map<string, number[]>();

  /** maxTotal: requests in flight over all hosts (crawler.maxConcurrency). */
  constructor(
    private maxTotal = Infinity,
    private policy: HostPolicy = { errorDelayMs: 500, maxDelayMs: 60_000, recoverRate: 0.25, breakerErrors: 10 },
    readonly clock: Clock = realClock,
  ) {}

  private host(name: string): HostState {
    let h = this.hosts.get(name);
    if (!h) this.hosts.set(name, (h = { active: 0, nextAt: 0, delayMs: 0, pausedUntil: 0, errorsInRow: 0, open: null }));
    return h;
  }

  /** Why the host gets no more requests this cycle, or null. */
  openReason(host: string): string | null {
    return this.hosts.get(host)?.open ?? null;
  }

  /** Milliseconds until the host could start a request (0 = now; Infinity when its breaker is open). */
  readyIn(host: string, concurrency: number): number {
    const h = this.hosts.get(host);
    if (!h) return this.total < this.maxTotal ? 0 : 5;
    if (h.open) return Infinity;
    const wait = Math.max(0, Math.max(h.nextAt, h.pausedUntil) - this.clock.now());
    return h.active >= concurrency || this.total >= this.maxTotal ? Math.max(5, wait) : wait;
  }

  /** Waits for a slot on the host; returns the release function. Throws when aborted or when the breaker opens. */
  async acquire(host: string, baseDelayMs: number, concurrency: number, signal?: AbortSignal): Promise<() => void> {
    const h = this.host(host);
    for (;;) {
      if (signal?.aborted) throw new FetchRefused('aborted', 'aborted while waiting for a host slot');
      if (h.open) throw new HostPaused(host, h.open);
      const now = this.clock.now();
      const at = Math.max(h.nextAt, h.pausedUntil);
      if (h.active < concurrency && now >= at && this.total < this.maxTotal) {
        h.active++;
        this.total++;
        h.delayMs = Math.max(h.delayMs, baseDelayMs);
        h.nextAt = now + h.delayMs;
        const s = this.starts.get(host) ?? [];
        s.push(now);
        if (s.length > 1000) s.shift();
        this.starts.set(host, s);
        let released = false;
        return () => {
          if (!released) {
            released = true;
            h.active--;
            this.total--;
          }
        };
      }
      await this.clock.sleep(Math.max(5, Math.min(at - now, 200)), signal);
    }
  }

  /** A request answered (any status that is not a transient failure): the rate grows by recoverRate req/s. */
  success(host: string, baseDelayMs: number): void {
    const h = this.host(host);
    h.errorsInRow = 0;
    if (h.delayMs > baseDelayMs) h.delayMs = Math.max(baseDelayMs, 1000 / (1000 / h.delayMs + this.policy.recoverRate));
  }

  /** A transient failure: the delay doubles; a Retry-After pauses the host; past the error budget the breaker opens. */
  failure(host: string, baseDelayMs: number, retryAfterMs?: number): void {
    const h = this.host(host);
    const now = this.clock.now();
    h.errorsInRow++;
    h.delayMs = Math.min(this.policy.maxDelayMs, Math.max(2 * h.delayMs, baseDelayMs, this.policy.errorDelayMs));
    h.nextAt = Math.max(h.nextAt, now + h.delayMs);
    if (retryAfterMs !== undefined) this.pauseUntil(host, now + retryAfterMs);
    if (this.policy.breakerErrors > 0 && h.errorsInRow >= this.policy.breakerErrors && !h.open) {
      h.open = `${h.errorsInRow} transient errors in a row: ${host} paused for the rest of the cycle`;
    }
  }

  /** No request starts on the host before `until` (epoch ms). */
  pauseUntil(host: string, until: number): void {
    const h = this.host(host);
    h.pausedUntil = Math.max(h.pausedUntil, until);
  }

  /** Opens the host's breaker for the rest of the cycle. */
  close(host: string, reason: string): void {
    this.host(host).open ??= reason;
  }

  state(host: string): Readonly<HostState> | undefined {
    return this.hosts.get(host);
  }
}

/** The host gets no request now (breaker open, paused past the cycle, robots.txt unavailable). */
export class HostPaused extends Error {
  constructor(readonly host: string, reason: string) {
    super(reason);
  }
}

export interface RobotsVerdict {
  /** 'unavailable': robots.txt could not be read (5xx, 429, no answer): nothing may be fetched for now. */
  allowed: boolean | 'unavailable';
  crawlDelayMs: number;
  reason?: string;
}

type Parsed = { allow: 'all' | 'none' | Robot; fetchedAt: number; status: number };

/**
 * robots.txt per origin (RFC 9309): 2xx: its rules; 4xx: no rules (everything allowed); 5xx, 429 or no answer:
 * complete disallow for now (unreachable), which is a transient state: it is not stored for the TTL, the next
 * check after `retryMs` asks again, and a copy read before (even past its TTL) is used meanwhile (RFC 9309 2.4).
 */
export class RobotsCache {
  private mem = new Map<string, Parsed>();
  private inflight = new Map<string, Promise<Parsed>>();

  constructor(
    private repo: CrawlRepo,
    private ttlMs: number,
    private userAgent: string,
    private fetchRobots: (url: string) => Promise<{ status: number; body: string }>,
    private retryMs = 60_000,
    private clock: Clock = realClock,
  ) {}

  private parse(origin: string, status: number, body: string, fetchedAt: number): Parsed {
    if (status >= 200 && status < 300) return { allow: robotsParser(`${origin}/robots.txt`, body), fetchedAt, status };
    if (status >= 400 && status < 500 && status !== 429) return { allow: 'all', fetchedAt, status };
    return { allow: 'none', fetchedAt, status }; // 5xx, 429, or no answer at all: unreachable
  }

  private fresh(p: Parsed, now: number): boolean {
    return now - p.fetchedAt < (p.allow === 'none' ? this.retryMs : this.ttlMs);
  }

  private async load(origin: string): Promise<Parsed> {
    const now = this.clock.now();
    const m = this.mem.get(origin);
    if (m && this.fresh(m, now)) return m;
    const row = await this.repo.robots(origin);
    const stored = row ? this.parse(origin, row.status, row.body, Date.parse(row.fetchedAt)) : undefined;
    if (stored && stored.allow !== 'none' && this.fresh(stored, now)) {
      this.mem.set(origin, stored);
      return stored;
    }
    let pending = this.inflight.get(origin);
    if (!pending) {
      pending = (async () => {
        let status = 0, body = '';
        try {
          ({ status, body } = await this.fetchRobots(`${origin}/robots.txt`));
        } catch (err) {
          if (err instanceof FetchRefused && (err.reason === 'aborted' || err.reason === 'private-address')) throw err; // not a verdict on the host
          if (err instanceof HostPaused) throw err;
          status = 0;
        }
        let p = this.parse(origin, status, body, this.clock.now());
        if (p.allow === 'none') {
          // Unreachable: keep using a copy read before, if there is one; never store "unreachable" for the TTL.
          if (stored && stored.allow !== 'none') p = { ...stored, fetchedAt: this.clock.now() - this.ttlMs + this.retryMs };
        } else await this.repo.setRobots(origin, status, body);
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
    if (p.allow === 'none') return { allowed: 'unavailable', crawlDelayMs: 0, reason: `${origin}/robots.txt unavailable (${p.status ? `HTTP ${p.status}` : 'no answer'}): nothing fetched from the host for now` };
    const allowed = p.allow.isAllowed(url, this.userAgent) !== false;
    const delay = p.allow.getCrawlDelay(this.userAgent);
    return { allowed, crawlDelayMs: delay ? delay * 1000 : 0, reason: allowed ? undefined : 'disallowed by robots.txt' };
  }
}
