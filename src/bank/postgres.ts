// The PostgreSQL backend of the bank (the scale-out mode): node-postgres behind the async Sql interface.
// Statements outside a transaction run on any connection of the pool; a transaction holds one connection from
// BEGIN to COMMIT. The shared SQL text of the repositories is rewritten once per statement: `?` and `@name`
// parameters become $1..$n. Bulk writes go through COPY (pg-copy-streams).
import pg from 'pg';
import Cursor from 'pg-cursor';
import { from as copyFrom } from 'pg-copy-streams';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { UserError } from '../util/errors.js';
import { asBankError, isConnectionFailure, isBankUnavailable } from './outage.js';
import { TransactionOverError, type BankHealth, type Params, type Sql, type SqlBackend } from './sql.js';

const STATEMENT_CACHE = 400;
const ITERATE_BATCH = 500;

// 64-bit integers (COUNT(*), BIGINT ids) as numbers: every id and count of a bank fits in 2^53.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return (v: string) => (v === null ? null : Number(v));
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

interface Translated {
  text: string;
  /** Positional: how many `?`; named: the name of each $n. */
  names: string[] | null;
  count: number;
}

/** `?` → $1.., `@name` → $k (a repeated name reuses its number); quoted strings, identifiers and comments skipped. */
export function translate(sql: string): Translated {
  let out = '';
  let n = 0;
  const names: string[] = [];
  let named = false;
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i]!;
    if (ch === "'" || ch === '"') {
      const end = sql.indexOf(ch, i + 1);
      const j = end < 0 ? sql.length : end;
      out += sql.slice(i, j + 1);
      i = j;
    } else if (ch === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const j = end < 0 ? sql.length : end;
      out += sql.slice(i, j);
      i = j - 1;
    } else if (ch === '?') {
      out += `$${++n}`;
    } else if (ch === '@' && /[A-Za-z_]/.test(sql[i + 1] ?? '')) {
      named = true;
      let j = i + 1;
      while (j < sql.length && /[A-Za-z0-9_]/.test(sql[j]!)) j++;
      const name = sql.slice(i + 1, j);
      let k = names.indexOf(name);
      if (k < 0) k = names.push(name) - 1;
      out += `$${k + 1}`;
      i = j - 1;
    } else out += ch;
  }
  return { text: out, names: named ? names : null, count: named ? names.length : n };
}

function values(t: Translated, params: Params | undefined, sql: string): unknown[] {
  if (params === undefined) return [];
  if (Array.isArray(params)) {
    if (t.names) throw new Error(`statement uses named parameters, got an array: ${sql.slice(0, 80)}`);
    return (params as unknown[]).map(toPg);
  }
  if (!t.names) throw new Error(`statement uses ? parameters, got an object: ${sql.slice(0, 80)}`);
  const obj = params as Record<string, unknown>;
  return t.names.map((name) => {
    if (!(name in obj)) throw new Error(`missing named parameter "${name}" for: ${sql.slice(0, 80)}`);
    return toPg(obj[name]);
  });
}

/** Typed arrays travel as BYTEA (better-sqlite3 stores Buffers as BLOBs the same way). */
const toPg = (v: unknown): unknown => (v instanceof Uint8Array && !Buffer.isBuffer(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v);

type Client = pg.PoolClient;

/** What the bank and its transactions share: the pool, the statement cache, and what the last statements said
 *  about the server (up, or down since when and why: /healthz reads it). */
class Shared {
  readonly cache = new Map<string, Translated>();
  up = true;
  since = new Date().toISOString();
  lastError: string | null = null;
  constructor(readonly pool: pg.Pool, readonly location: string) {}

  /** Notes a statement's outcome: an outage marks the bank down, any success marks it up. */
  ok(): void {
    if (this.up) return;
    this.up = true;
    this.since = new Date().toISOString();
  }

  /** The error to throw: an outage becomes a BankUnavailableError (and marks the bank down). */
  fail(err: unknown): unknown {
    const out = asBankError(err, this.location);
    if (isBankUnavailable(out)) {
      if (this.up) this.since = new Date().toISOString();
      this.up = false;
      this.lastError = out.reason;
    }
    return out;
  }

  /** Runs a driver call, turning an outage into a BankUnavailableError. */
  async guard<T>(p: Promise<T>): Promise<T> {
    try {
      const out = await p;
      this.ok();
      return out;
    } catch (err) {
      throw this.fail(err);
    }
  }
}

class PgSql implements Sql {
  readonly dialect = 'postgres' as const;
  over = false;
  private savepoints = 0;

  constructor(
    protected shared: Shared,
    /** The transaction's connection; undefined outside a transaction. */
    protected client?: Client,
  ) {}

  protected get pool(): pg.Pool {
    return this.shared.pool;
  }

  protected get cache(): Map<string, Translated> {
    return this.shared.cache;
  }

  get inTransaction(): boolean {
    return this.client !== undefined;
  }

  protected tr(sql: string): Translated {
    let t = this.cache.get(sql);
    if (!t) {
      t = translate(sql);
      if (this.cache.size >= STATEMENT_CACHE) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(sql, t);
    }
    return t;
  }

  protected runner(): pg.Pool | Client {
    if (this.over) throw new TransactionOverError('this transaction has already ended: use the bank, or run the statement inside it');
    return this.client ?? this.pool;
  }

  private async query<T>(sql: string, params?: Params): Promise<pg.QueryResult<T & pg.QueryResultRow>> {
    const t = this.tr(sql);
    return this.shared.guard(this.runner().query<T & pg.QueryResultRow>(t.text, values(t, params, sql)));
  }

  async all<T>(sql: string, params?: Params): Promise<T[]> {
    return (await this.query<T>(sql, params)).rows;
  }

  async get<T>(sql: string, params?: Params): Promise<T | undefined> {
    return (await this.query<T>(sql, params)).rows[0];
  }

  async run(sql: string, params?: Params): Promise<number> {
    return (await this.query(sql, params)).rowCount ?? 0;
  }

  async runMany(sql: string, rows: readonly Params[]): Promise<number> {
    if (!rows.length) return 0;
    const many = async (s: Sql) => {
      let n = 0;
      for (const r of rows) n += await s.run(sql, r);
      return n;
    };
    return this.inTransaction ? many(this) : this.transaction(many);
  }

  async *iterate<T>(sql: string, params?: Params): AsyncGenerator<T> {
    const t = this.tr(sql);
    const own = this.client ? undefined : await this.shared.guard(this.pool.connect());
    const client = this.client ?? own!;
    const cursor = client.query(new Cursor<T>(t.text, values(t, params, sql)));
    let broken: unknown;
    try {
      for (;;) {
        const rows = await this.shared.guard(cursor.read(ITERATE_BATCH)).catch((err: unknown) => {
          broken = err;
          throw err;
        });
        if (!rows.length) break;
        yield* rows;
      }
    } finally {
      const ended = await closeCursor(cursor, client);
      // a connection that failed is closed, not given back to the pool
      own?.release(isBankUnavailable(broken) ? (broken as Error) : ended);
    }
  }

  async exec(sql: string): Promise<void> {
    await this.shared.guard(this.runner().query(sql));
  }

  /** Rows into a table through COPY FROM STDIN (text format): the bulk path. */
  async copyRows(table: string, columns: readonly string[], rows: readonly (readonly unknown[])[]): Promise<number> {
    if (!rows.length) return 0;
    const copy = async (client: Client) => {
      const stream = client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
      await this.shared.guard(pipeline(Readable.from(copyLines(rows)), stream));
      return rows.length;
    };
    if (this.client) return copy(this.client);
    return this.transaction((tx) => copy((tx as PgSql).client!));
  }

  async transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    if (this.client) return this.savepoint(fn);
    const client = await this.shared.guard(this.pool.connect());
    const tx = new PgSql(this.shared, client);
    let broken: Error | undefined;
    try {
      await this.shared.guard(client.query('BEGIN'));
      try {
        const out = await fn(tx);
        await this.shared.guard(client.query('COMMIT'));
        return out;
      } catch (err) {
        if (isBankUnavailable(err)) broken = err;
        await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        throw err;
      }
    } catch (err) {
      // a COMMIT whose connection dropped: the outcome is unknown to us, the bank keeps it or not as a whole
      if (isBankUnavailable(err)) broken ??= err;
      throw err;
    } finally {
      tx.over = true;
      // a connection that failed is closed, not given back to the pool
      client.release(broken);
    }
  }

  private async savepoint<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    if (this.over) throw new TransactionOverError('this transaction has already ended');
    const client = this.client!;
    const name = `sp${++this.savepoints}`;
    await this.shared.guard(client.query(`SAVEPOINT ${name}`));
    try {
      const out = await fn(this);
      await this.shared.guard(client.query(`RELEASE SAVEPOINT ${name}`));
      return out;
    } catch (err) {
      await this.shared.guard(client.query(`ROLLBACK TO SAVEPOINT ${name}`));
      await this.shared.guard(client.query(`RELEASE SAVEPOINT ${name}`));
      throw err;
    } finally {
      this.savepoints--;
    }
  }
}

/**
 * Closes a cursor's portal, or says why it could not: pg-cursor's close() waits for the server's ReadyForQuery, which
 * never comes on a connection that has ended (a restart, pg_terminate_backend), so awaiting it alone hung a worker
 * for good. A cursor whose read failed has no portal left to close (the error ended it); a connection that ends while
 * closing gives up the wait. Returns the error to release the connection with (closed, not pooled), if any.
 */
async function closeCursor(cursor: Cursor<unknown>, client: Client): Promise<Error | undefined> {
  if ((cursor as unknown as { state: string }).state === 'error') return undefined;
  const conn = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
  return new Promise((resolve) => {
    const onEnd = () => resolve(new Error('the connection ended while a cursor was being closed'));
    conn.once('end', onEnd);
    cursor.close().then(
      () => {
        conn.removeListener('end', onEnd);
        resolve(undefined);
      },
      (err: Error) => {
        conn.removeListener('end', onEnd);
        resolve(err);
      },
    );
  });
}

/** COPY text format: tab-separated, \N for NULL, backslash escapes; BYTEA as \\x hex. */
function* copyLines(rows: readonly (readonly unknown[])[]): Generator<string> {
  let chunk = '';
  for (const r of rows) {
    chunk += r.map(copyValue).join('\t') + '\n';
    if (chunk.length > 1 << 16) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

function copyValue(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  if (v instanceof Uint8Array) return '\\\\x' + Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
  if (typeof v === 'boolean') return v ? 't' : 'f';
  return String(v).replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

export class PostgresBackend extends PgSql implements SqlBackend {
  readonly location: string;

  private constructor(shared: Shared) {
    super(shared);
    this.location = shared.location;
  }

  /** Connects (one connection tried at once). A server that is down or refusing is a BankUnavailableError (a worker
   *  waits for it); a wrong password, database or URL a UserError (waiting would not help). */
  static async connect(url: string, opts: { max?: number } = {}): Promise<PostgresBackend> {
    const location = redactUrl(url);
    // TCP keep-alive: a server that vanished without closing its connections (a network cut, a failed-over host) is
    // noticed by the kernel's probes instead of a statement hanging on a dead socket
    const pool = new pg.Pool({
      connectionString: url, max: opts.max ?? 8, types, application_name: 'capbridge', connectionTimeoutMillis: 30_000,
      keepAlive: true, keepAliveInitialDelayMillis: 10_000,
    });
    const shared = new Shared(pool, location);
    // An idle connection that drops (server restart, pg_terminate_backend) is an error event on the pool; a
    // checked-out one (a transaction between statements, a cursor) is an error event on the client: both are
    // listened to, so neither crashes the process. The next statement on that connection fails and is retried by
    // whoever owns the work (the bank is marked down until a statement succeeds).
    pool.on('error', (err) => shared.fail(err));
    pool.on('connect', (client) => client.on('error', (err) => shared.fail(err)));
    try {
      const c = await pool.connect();
      c.release();
    } catch (err) {
      await pool.end().catch(() => undefined);
      if (isConnectionFailure(err)) throw shared.fail(err);
      throw new UserError(`${location}: cannot connect to PostgreSQL: ${(err as Error).message}`);
    }
    return new PostgresBackend(shared);
  }

  async schemaVersion(): Promise<number> {
    const t = await this.get<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
    if (!t?.t) return 0;
    return Number((await this.get<{ v: number }>('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations'))!.v);
  }

  async databaseBytes(): Promise<number> {
    return Number((await this.get<{ n: number }>('SELECT pg_database_size(current_database()) AS n'))!.n);
  }

  /** Asks the server (SELECT 1, within timeoutMs) and says whether it answers; also what the last statements saw. */
  async health(timeoutMs = 3000): Promise<BankHealth> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs);
    });
    try {
      await Promise.race([this.get('SELECT 1 AS ok'), timeout]);
    } catch (err) {
      this.shared.fail(err);
    } finally {
      clearTimeout(timer);
    }
    const s = this.shared;
    return { kind: 'postgres', location: s.location, up: s.up, since: s.since, lastError: s.up ? null : s.lastError };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
