// Fetch with the retry policy: every request goes through the address check, robots.txt and a politeness slot
// of its host (each redirect hop too, with the hop's own host), and a transient failure is tried again within
// the cycle after an exponential back-off with jitter (crawler.retry.triesPerCycle tries in all). Retry-After on
// 429/503 pauses the whole host (the scheduler holds every request to it); a Retry-After longer than
// crawler.retry.maxRetryAfterSecs closes the host for this cycle and is remembered for the next ones.
// What is left failing is handed back with its failure class; the stage re-queues it for a later cycle.
import { errorFailure, statusFailure, type Failure } from './failures.js';
import { FetchRefused, fetchLimited, type FetchOptions, type FetchResult } from './fetch.js';
import { HostPaused, realClock, type Clock, type HostScheduler, type RobotsCache } from './politeness.js';

export interface RetryPolicy {
  /** Requests per URL within one cycle (1: no retry within the cycle). */
  triesPerCycle: number;
  /** Back-off before retry n: between half and all of min(maxDelayMs, baseDelayMs * 2^(n-1)) ("equal jitter"). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A longer Retry-After is not waited for within the cycle: the host is closed until then. */
  maxRetryAfterMs: number;
  /** Cycles with a transient failure before a URL is given up. */
  giveUpAfter: number;
}

/** Back-off before the n-th retry within a cycle (n >= 1). */
export function backoffMs(policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>, n: number, random: () => number = Math.random): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (n - 1));
  return Math.round(cap / 2 + (random() * cap) / 2);
}

/** The cycle a URL is retried in after its n-th failed cycle: the next one, then 2, 4, 8... cycles later. */
export function retryCycle(cycle: number, attempts: number): number {
  return cycle + 2 ** Math.max(0, Math.min(attempts - 1, 10));
}

export type Attempt =
  | { ok: true; res: FetchResult; requests: number; retries: number }
  | { ok: false; failure: Failure; requests: number; retries: number };

export interface PoliteFetcherOptions {
  scheduler: HostScheduler;
  /** null for robots.txt itself. */
  robots: RobotsCache | null;
  policy: RetryPolicy;
  perHostDelayMs: number;
  perHostConcurrency: number;
  fetch: Omit<FetchOptions, 'maxBytes' | 'headers' | 'beforeHop'>;
  signal?: AbortSignal;
  clock?: Clock;
  random?: () => number;
  /** A Retry-After too long for this cycle: remembered so that the next cycles wait too. */
  onLongPause?: (host: string, untilMs: number, reason: string) => void;
}

export interface FetchRequest {
  maxBytes: number;
  headers?: Record<string, string>;
  /** The site's own delay between requests (its profile's limits.delayMs). */
  siteDelayMs?: number;
  /** Checks each redirect target; returns why it is refused, or null. */
  hopAllowed?: (url: string) => string | null;
  allowPrivate?: FetchOptions['allowPrivate'];
}

const hostOf = (u: string) => new URL(u).host;

export class PoliteFetcher {
  private clock: Clock;
  private random: () => number;
  /** Requests started and in-cycle retries, over this fetcher's life. */
  requests = 0;
  retries = 0;

  constructor(private o: PoliteFetcherOptions) {
    this.clock = o.clock ?? realClock;
    this.random = o.random ?? Math.random;
  }

  /** The URL fetched with retries within the cycle; never throws but for an abort. */
  async fetch(url: string, req: FetchRequest): Promise<Attempt> {
    let requests = 0;
    for (let t = 1; ; t++) {
      const baseDelay = { host: hostOf(url), ms: Math.max(this.o.perHostDelayMs, req.siteDelayMs ?? 0) };
      let failure: Failure | undefined;
      let res: FetchResult | undefined;
      const counted = { n: 0 };
      try {
        res = await this.once(url, req, baseDelay, counted);
        if (res.status >= 400 || (res.status >= 300 && res.status !== 304)) failure = statusFailure(res.url, res.status, res.headers, this.clock.now());
      } catch (err) {
        if (err instanceof FetchRefused && err.reason === 'aborted') throw err;
        if (this.o.signal?.aborted) throw new FetchRefused('aborted', `aborted: ${url}`);
        if (err instanceof HostPaused) failure = { class: 'transient', code: 'host-paused', message: `${url}: ${err.message}`, hostLevel: true };
        else if (err instanceof FetchRefused && err.reason === 'robots-unavailable') failure = { class: 'transient', code: 'robots-unavailable', message: err.message, hostLevel: true };
        else failure = errorFailure(url, err);
      }
      requests += counted.n;
      const host = baseDelay.host;
      if (!failure) {
        this.o.scheduler.success(host, baseDelay.ms);
        return { ok: true, res: res!, requests, retries: t - 1 };
      }
      if (failure.class === 'transient' && !failure.hostLevel) {
        this.o.scheduler.failure(host, baseDelay.ms, failure.retryAfterMs);
        if (failure.retryAfterMs !== undefined && failure.retryAfterMs > this.o.policy.maxRetryAfterMs) {
          const until = this.clock.now() + failure.retryAfterMs;
          const reason = `${host} asked for a pause of ${Math.round(failure.retryAfterMs / 1000)} s (Retry-After)`;
          this.o.scheduler.close(host, reason);
          this.o.onLongPause?.(host, until, reason);
        }
      } else if (!failure.hostLevel && counted.n > 0) this.o.scheduler.success(host, baseDelay.ms); // the host answered
      if (failure.class === 'permanent' || failure.hostLevel || t >= this.o.policy.triesPerCycle || this.o.scheduler.openReason(host)) {
        return { ok: false, failure, requests, retries: t - 1 };
      }
      this.retries++;
      await this.clock.sleep(backoffMs(this.o.policy, t, this.random), this.o.signal);
    }
  }

  /** One request: robots and a slot for the URL and for every redirect hop. */
  private async once(url: string, req: FetchRequest, base: { host: string; ms: number }, counted: { n: number }): Promise<FetchResult> {
    const slot = async (u: string) => {
      let delay = base.ms;
      if (this.o.robots) {
        const verdict = await this.o.robots.check(u);
        if (verdict.allowed === 'unavailable') throw new FetchRefused('robots-unavailable', `${u}: ${verdict.reason}`);
        if (!verdict.allowed) throw new FetchRefused('robots', `${u}: ${verdict.reason}`);
        delay = Math.max(delay, verdict.crawlDelayMs);
      }
      const host = hostOf(u);
      if (host === base.host) base.ms = delay;
      const release = await this.o.scheduler.acquire(host, delay, this.o.perHostConcurrency, this.o.signal);
      counted.n++;
      this.requests++;
      return release;
    };
    let release = await slot(url);
    try {
      return await fetchLimited(url, {
        ...this.o.fetch,
        ...(req.allowPrivate !== undefined ? { allowPrivate: req.allowPrivate } : {}),
        maxBytes: req.maxBytes,
        headers: req.headers,
        signal: this.o.signal,
        beforeHop: async (u) => {
          const refused = req.hopAllowed?.(u);
          if (refused) throw new FetchRefused('offsite-redirect', `${url}: redirected to ${u}: ${refused}`);
          release();
          release = () => {};
          release = await slot(u);
        },
      });
    } finally {
      release();
    }
  }
}
