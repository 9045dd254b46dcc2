// What every command gets: the resolved data dir, the validated config, a logger, and the bank (opened on
// first use). Commands are thin: they parse, call the layers, and print.
import path from 'node:path';
import type { Command } from 'commander';
import { Bank, isBankUnavailable, isDatabaseRefusal, openImageBlobs } from '../bank/index.js';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { createLogger, type Logger } from '../util/log.js';
import { UserError, errorMessage } from '../util/errors.js';
import { parseImageStore } from '../util/store-url.js';

export interface GlobalOptions {
  data?: string;
  config?: string;
  logLevel?: string;
  /** Where image bytes live: folder or s3://bucket/prefix (overrides config images.store). */
  images?: string;
  /** A PostgreSQL URL (the program's --db; overrides config database.url). */
  db?: string;
}

export class Context {
  private bankHandle: Promise<Bank> | null = null;
  constructor(
    readonly dataDir: string,
    readonly config: Config,
    readonly logger: Logger,
    readonly configFiles: string[],
    /** images.store, or the command line's --images. */
    readonly imageStore: string = config.images.store,
    /** The PostgreSQL URL of the database, or undefined for the SQLite file in the data dir. */
    readonly dbUrl?: string,
  ) {}

  /** The bank, opened (and migrated) on first use: `const bank = await ctx.bank`. */
  get bank(): Promise<Bank> {
    if (!this.bankHandle) this.bankHandle = this.openBank();
    return this.bankHandle;
  }

  /**
   * The bank, waiting for it while it is unavailable (PostgreSQL down or refusing: BankUnavailableError), with
   * back-off from 1 s to 30 s, at most limitMs; other errors (a wrong URL or password) at once.
   */
  async bankWaiting(limitMs: number, backoff = { firstMs: 1000, maxMs: 30_000 }): Promise<Bank> {
    const t0 = Date.now();
    let waitMs = backoff.firstMs;
    for (;;) {
      try {
        return await this.bank;
      } catch (err) {
        if (!isBankUnavailable(err) || Date.now() - t0 + waitMs > limitMs) throw err;
        this.bankHandle = null;
        this.logger.warn(`${errorMessage(err)}; waiting ${Math.round(waitMs / 1000)} s, then trying again (down ${Math.round((Date.now() - t0) / 1000)} s)`);
        await new Promise((r) => setTimeout(r, waitMs));
        waitMs = Math.min(backoff.maxMs, waitMs * 2);
      }
    }
  }

  private async openBank(): Promise<Bank> {
    const blobs = await openImageBlobs(this.dataDir, this.config.images, this.imageStore);
    let bank: Bank;
    try {
      bank = await Bank.open(this.dataDir, { blobs, url: this.dbUrl });
    } catch (err) {
      await blobs.close?.();
      throw err;
    }
    try {
      await bank.images.checkStore();
    } catch (err) {
      await bank.close();
      throw err;
    }
    return bank;
  }

  async close(): Promise<void> {
    const h = this.bankHandle;
    this.bankHandle = null;
    if (h) await (await h.catch(() => null))?.close();
  }
}

export function resolveDataDir(opt: string | undefined, env = process.env): string {
  return path.resolve(opt ?? env.CAPBRIDGE_DATA ?? './capbridge-data');
}

export function createContext(opts: GlobalOptions): Context {
  const { config, files, warnings } = loadConfig({ configFile: opts.config });
  const level = opts.logLevel ?? process.env.CAPBRIDGE_LOG_LEVEL ?? config.log.level;
  if (!['error', 'warn', 'info', 'debug'].includes(level)) throw new UserError(`--log-level: expected error, warn, info or debug, got "${level}"`);
  const logger = createLogger(level);
  for (const w of warnings) logger.warn(w);
  if (opts.images !== undefined) {
    const sel = parseImageStore(opts.images);
    if ('error' in sel) throw new UserError(`--images: ${sel.error}`);
    if (sel.kind === 's3' && !sel.bucket && !config.images.s3.bucket) throw new UserError('--images s3: images.s3.bucket is empty (or give --images s3://bucket/prefix)');
  }
  const url = opts.db || config.database.url || undefined;
  if (url !== undefined && !/^postgres(ql)?:\/\//.test(url)) throw new UserError(`--db: expected a postgres:// URL, got "${url}"`);
  return new Context(resolveDataDir(opts.data), config, logger, files, opts.images ?? config.images.store, url);
}

/** Wraps a command action: builds the context, runs, reports errors on stderr with a non-zero exit code. */
export function action<A extends unknown[]>(fn: (ctx: Context, ...args: A) => Promise<number | void> | number | void) {
  return async (...args: A): Promise<void> => {
    const cmd = args[args.length - 1] as Command;
    let ctx: Context | null = null;
    try {
      ctx = createContext(cmd.optsWithGlobals() as GlobalOptions);
      const code = await fn(ctx, ...args);
      if (typeof code === 'number' && code !== 0) process.exitCode = code;
    } catch (err) {
      const msg = userMessage(err);
      process.stderr.write(`capbridge: ${msg}\n`);
      if (!(err instanceof UserError) && process.env.CAPBRIDGE_DEBUG) process.stderr.write(`${(err as Error).stack}\n`);
      process.exitCode = err instanceof UserError ? err.exitCode : 1;
    } finally {
      await ctx?.close();
    }
  };
}

/** What the user is told about an error: its message. A PostgreSQL error that reached this far (a statement the
 *  server refused: capbridge's bug, or a bank changed by hand) is named as the bank's with its SQLSTATE; the server's
 *  own words (about its indexes, types, constraints) only with CAPBRIDGE_DEBUG=1, with the stack. */
export function userMessage(err: unknown): string {
  if (isDatabaseRefusal(err)) {
    return `the bank (PostgreSQL) refused a statement (SQLSTATE ${err.code}); if the bank is healthy this is a bug of capbridge: ` +
      'run again with CAPBRIDGE_DEBUG=1 for the server\'s message and please report it';
  }
  return errorMessage(err);
}

/** Prints one JSON document (or line) on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n');
}

/**
 * Runs a resumable stage so that Ctrl-C / SIGTERM stops it cleanly: the first signal aborts it between batches
 * (what is committed stays committed, the next run resumes), a second one exits at once with 130.
 */
export async function runStoppable<T>(name: string, logger: Context['logger'], fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const stop = () => {
    logger.warn(`${name}: stopping after the current batch (send again to force)`);
    if (ac.signal.aborted) process.exit(130);
    ac.abort();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  try {
    return await fn(ac.signal);
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
  }
}
