// A worker riding out a bank outage: PostgreSQL restarted, a failover, the network to it cut. Every claim loop of the
// worker that meets a BankUnavailableError waits here, together: one probe at a time (SELECT 1), back-off from 1 s
// doubling to 30 s, logged with the bank's address (never its password), until the bank answers or the outage has
// lasted worker.bankWaitSeconds (then the worker exits 1 saying so, and systemd's RestartSec takes over).
import { setTimeout as delay } from 'node:timers/promises';
import type { Bank } from '../bank/index.js';
import { UserError } from '../util/errors.js';
import type { Logger } from '../util/log.js';

const FIRST_WAIT_MS = 1000;
const MAX_WAIT_MS = 30_000;

export interface OutageState {
  /** When the outage began (ISO), null while the bank answers. */
  since: string | null;
  /** Probes made during the current outage. */
  probes: number;
  lastError: string | null;
  /** Outages ridden out since the worker started. */
  outages: number;
}

export interface BankWaitHooks {
  /** The bank went down (true) or answers again (false). */
  onChange?: (down: boolean) => void;
}

export class BankWait {
  readonly state: OutageState = { since: null, probes: 0, lastError: null, outages: 0 };
  private waiting: Promise<void> | null = null;

  constructor(
    private bank: Bank,
    private limitMs: number,
    private logger?: Logger,
    private signal?: AbortSignal,
    private hooks: BankWaitHooks = {},
    /** Back-off bounds (tests shorten them). */
    private backoff = { firstMs: FIRST_WAIT_MS, maxMs: MAX_WAIT_MS },
  ) {}

  get down(): boolean {
    return this.state.since !== null;
  }

  /** Waits until the bank answers (resolves), the signal aborts (resolves), or the outage outlasts the limit (a
   *  UserError naming the bank). Concurrent callers share one wait. */
  until(reason: unknown): Promise<void> {
    this.waiting ??= this.wait(reason).finally(() => (this.waiting = null));
    return this.waiting;
  }

  private async wait(reason: unknown): Promise<void> {
    const s = this.state;
    const startMs = s.since ? Date.parse(s.since) : Date.now();
    if (!s.since) {
      s.since = new Date(startMs).toISOString();
      s.probes = 0;
      s.outages++;
      this.hooks.onChange?.(true);
    }
    s.lastError = reason instanceof Error ? reason.message : String(reason);
    let waitMs = this.backoff.firstMs;
    for (;;) {
      if (this.signal?.aborted) return;
      const outMs = Date.now() - startMs;
      if (outMs >= this.limitMs) {
        throw new UserError(
          `${s.lastError}; waited ${Math.round(outMs / 1000)} s for it (worker.bankWaitSeconds ${Math.round(this.limitMs / 1000)}): giving up. ` +
            'Check that PostgreSQL is running and reachable from this machine',
        );
      }
      this.logger?.warn(`worker: ${s.lastError}; waiting ${(waitMs / 1000).toFixed(waitMs < 1000 ? 1 : 0)} s, then trying again (down ${Math.round(outMs / 1000)} s)`);
      await delay(Math.min(waitMs, this.limitMs - outMs + 10), undefined, { signal: this.signal }).catch(() => undefined);
      waitMs = Math.min(this.backoff.maxMs, waitMs * 2);
      s.probes++;
      const h = await this.bank.health(5000);
      if (h.up) {
        this.logger?.info(`worker: the bank (${h.kind === 'postgres' ? 'PostgreSQL' : 'SQLite'} at ${h.location}) answers again after ${Math.round((Date.now() - startMs) / 1000)} s; going on`);
        s.since = null;
        this.hooks.onChange?.(false);
        return;
      }
      s.lastError = `the bank (PostgreSQL at ${h.location}) is unavailable: ${h.lastError ?? 'no answer'}`;
    }
  }
}
