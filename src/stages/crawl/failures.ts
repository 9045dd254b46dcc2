// Failure classes. A permanent failure says something about the URL (404, 410, refused by robots.txt or by
// the address check, not a page, too large, a broken image): fetching it again would give the same answer, so
// it is never retried. A transient failure says something about the moment (timeouts, resets, DNS, 408, 425,
// 429, 5xx, a truncated body, a redirect loop): retried within the cycle with back-off, then in later cycles,
// then given up. Host-level deferrals (the host paused by Retry-After or by its error budget, robots.txt
// unavailable) are transient and do not count against the URL.
import { FetchRefused } from './fetch.js';

export type FailureClass = 'transient' | 'permanent';

export interface Failure {
  class: FailureClass;
  /** Stable code for counting: http-503, timeout, reset, dns, robots, too-large, ... */
  code: string;
  /** One line naming the URL and the reason. */
  message: string;
  status?: number;
  /** Retry-After of a 429/503, in ms from now. */
  retryAfterMs?: number;
  /** Not the URL's fault: the host could not be tried (paused, robots.txt unavailable); no attempt is counted. */
  hostLevel?: boolean;
}

const TRANSIENT_STATUS = new Set([408, 425, 429]);

export function isTransientStatus(status: number): boolean {
  return status >= 500 || TRANSIENT_STATUS.has(status);
}

/**
 * Retry-After (RFC 9110 10.2.3): delay-seconds or an HTTP-date. Milliseconds from now (0 for a date in the past),
 * capped at a day; undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  let ms: number;
  if (/^\d+$/.test(v)) ms = Number(v) * 1000;
  else {
    const t = Date.parse(v);
    if (!Number.isFinite(t)) return undefined;
    ms = Math.max(0, t - now);
  }
  return Math.min(ms, 86_400_000);
}

/** The failure of an HTTP answer that is not a success (status >= 400, or a 3xx without a usable Location). */
export function statusFailure(url: string, status: number, headers?: Headers, now = Date.now()): Failure {
  const transient = isTransientStatus(status);
  const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(headers?.get('retry-after'), now) : undefined;
  return {
    class: transient ? 'transient' : 'permanent',
    code: `http-${status}`,
    message: `${url}: HTTP ${status}${retryAfterMs !== undefined ? ` (Retry-After ${Math.round(retryAfterMs / 1000)} s)` : ''}`,
    status,
    retryAfterMs,
  };
}

const TRANSIENT_REFUSALS = new Set(['timeout', 'network', 'reset', 'dns', 'truncated', 'too-many-redirects', 'redirect-loop']);

/** The failure of a fetch that threw (FetchRefused, or anything else as an internal error). */
export function errorFailure(url: string, err: unknown): Failure {
  if (err instanceof FetchRefused) {
    return { class: TRANSIENT_REFUSALS.has(err.reason) ? 'transient' : 'permanent', code: err.reason, message: err.message.includes(url) ? err.message : `${url}: ${err.message}` };
  }
  return { class: 'permanent', code: 'internal', message: `${url}: ${(err as Error)?.message ?? String(err)}` };
}

export function permanent(url: string, code: string, reason: string): Failure {
  return { class: 'permanent', code, message: `${url}: ${reason}` };
}
