// The SQLite backend of the bank (the embedded default): better-sqlite3 behind the async Sql interface.
// better-sqlite3 is synchronous, so a call completes before its promise is returned; what the async interface
// adds is the transaction as a unit of work that may await: while one is open on the connection, statements
// from other async flows of this process wait for it (they would otherwise run inside it), so a transaction's
// own statements must go through the Sql it was given. Iteration outside a transaction reads through a second,
// read-only connection (a WAL snapshot), so writes may go on while a long result is streamed.
import Database from 'better-sqlite3';
import fs from 'node:fs';
import { UserError } from '../util/errors.js';
import { TransactionOverError, type BankHealth, type Params, type Sql, type SqlBackend } from './sql.js';

const STATEMENT_CACHE = 400;
/** How long a statement waits for another flow's transaction before it is called a deadlock. */
const LOCK_WAIT_MS = 120_000;

class Connection {
  readonly stmts = new Map<string, Database.Statement>();
  /** Resolves when the open transaction ends; null when none is open. */
  held: Promise<void> | null = null;
  private reader: Database.Database | undefined;

  constructor(readonly db: Database.Database, readonly file: string) {}

  stmt(sql: string): Database.Statement {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      if (this.stmts.size >= STATEMENT_CACHE) this.stmts.delete(this.stmts.keys().next().value!);
      this.stmts.set(sql, s);
    }
    return s;
  }

  readStmt(sql: string): Database.Statement {
    if (!this.reader) {
      this.reader = new Database(this.file, { readonly: true, fileMustExist: true });
      this.reader.pragma('busy_timeout = 10000');
    }
    return this.reader.prepare(sql);
  }

  /** Resolves when the open transaction ends (rejects after LOCK_WAIT_MS: most likely a `bank` call inside the
   *  transaction's own unit of work). Callers loop `while (held) await wait()` and then act in the same tick, so no
   *  other flow can open a transaction in between. */
  async wait(): Promise<void> {
    const held = this.held;
    if (!held) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `${this.file}: a statement waited ${LOCK_WAIT_MS / 1000} s for a transaction of this process to end ` +
                '(inside bank.transaction(async (tx) => …), use tx, not bank)',
            ),
          ),
        LOCK_WAIT_MS,
      );
      timer.unref?.();
    });
    try {
      await Promise.race([held, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.stmts.clear();
    if (this.reader?.open) this.reader.close();
    if (this.db.open) this.db.close();
  }
}

/** better-sqlite3's arguments: positional values spread, or one object of named values. */
const bind = (params: Params | undefined): unknown[] => (params === undefined ? [] : Array.isArray(params) ? (params as unknown[]) : [params]);

class SqliteSql implements Sql {
  readonly dialect = 'sqlite' as const;
  /** Set when this Sql's transaction has ended (tx Sql only). */
  over = false;
  private savepoints = 0;

  constructor(protected conn: Connection, readonly inTransaction: boolean) {}

  /** A finished transaction's Sql refuses statements. */
  private check(): void {
    if (this.over) throw new TransactionOverError('this transaction has already ended: use the bank, or run the statement inside it');
  }

  async all<T>(sql: string, params?: Params): Promise<T[]> {
    if (this.inTransaction) this.check();
    else while (this.conn.held) await this.conn.wait();
    const s = this.conn.stmt(sql);
    return s.all(...bind(params)) as T[];
  }

  async get<T>(sql: string, params?: Params): Promise<T | undefined> {
    if (this.inTransaction) this.check();
    else while (this.conn.held) await this.conn.wait();
    const s = this.conn.stmt(sql);
    return s.get(...bind(params)) as T | undefined;
  }

  async run(sql: string, params?: Params): Promise<number> {
    if (this.inTransaction) this.check();
    else while (this.conn.held) await this.conn.wait();
    const s = this.conn.stmt(sql);
    return s.run(...bind(params)).changes;
  }

  async runMany(sql: string, rows: readonly Params[]): Promise<number> {
    if (this.inTransaction) this.check();
    else while (this.conn.held) await this.conn.wait();
    if (!rows.length) return 0;
    const s = this.conn.stmt(sql);
    let n = 0;
    const many = () => {
      for (const r of rows) n += s.run(...bind(r)).changes;
    };
    // outside a transaction the rows still land together (and fast: one commit, not one per row)
    if (this.inTransaction) many();
    else this.conn.db.transaction(many)();
    return n;
  }

  copyRows(table: string, columns: readonly string[], rows: readonly (readonly unknown[])[]): Promise<number> {
    return this.runMany(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`, rows);
  }

  async *iterate<T>(sql: string, params?: Params): AsyncGenerator<T> {
    if (this.inTransaction) this.check();
    else while (this.conn.held) await this.conn.wait();
    if (this.inTransaction) {
      // the transaction's own connection sees its uncommitted rows; read them at once (the connection cannot
      // write while a statement iterates)
      const s = this.conn.stmt(sql);
      yield* s.all(...bind(params)) as T[];
      return;
    }
    const s = this.conn.readStmt(sql);
    yield* s.iterate(...bind(params)) as IterableIterator<T>;
  }

  async exec(sql: string): Promise<void> {
    if (this.inTransaction) this.check();
    else while (this.conn.held) await this.conn.wait();
    this.conn.db.exec(sql);
  }

  async transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    if (this.inTransaction) {
      this.check();
      const name = `sp${++this.savepoints}`;
      this.conn.db.exec(`SAVEPOINT ${name}`);
      try {
        const out = await fn(this);
        this.conn.db.exec(`RELEASE ${name}`);
        return out;
      } catch (err) {
        this.conn.db.exec(`ROLLBACK TO ${name}`);
        this.conn.db.exec(`RELEASE ${name}`);
        throw err;
      } finally {
        this.savepoints--;
      }
    }
    while (this.conn.held) await this.conn.wait();
    let release!: () => void;
    this.conn.held = new Promise<void>((r) => (release = r));
    const tx = new SqliteSql(this.conn, true);
    try {
      // IMMEDIATE: the write lock is taken up front (another process waits busy_timeout for it)
      this.conn.db.exec('BEGIN IMMEDIATE');
      try {
        const out = await fn(tx);
        this.conn.db.exec('COMMIT');
        return out;
      } catch (err) {
        if (this.conn.db.inTransaction) this.conn.db.exec('ROLLBACK');
        throw err;
      }
    } finally {
      tx.over = true;
      this.conn.held = null;
      release();
    }
  }
}

export class SqliteBackend extends SqliteSql implements SqlBackend {
  readonly location: string;

  private constructor(conn: Connection) {
    super(conn, false);
    this.location = conn.file;
  }

  /** Opens (creating) the database file: WAL (readers never block the writer), foreign keys on. */
  static open(file: string): SqliteBackend {
    let db: Database.Database;
    try {
      db = new Database(file);
    } catch (err) {
      throw new UserError(`${file}: cannot open database: ${(err as Error).message}`);
    }
    db.pragma('busy_timeout = 10000');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    return new SqliteBackend(new Connection(db, file));
  }

  async schemaVersion(): Promise<number> {
    return this.conn.db.pragma('user_version', { simple: true }) as number;
  }

  async setSchemaVersion(v: number): Promise<void> {
    this.conn.db.pragma(`user_version = ${Math.trunc(v)}`);
  }

  /** An embedded file answers while the process runs; a file that cannot be read says why. */
  async health(): Promise<BankHealth> {
    try {
      this.conn.db.prepare('SELECT 1').get();
      return { kind: 'sqlite', location: this.location, up: true, since: this.openedAt, lastError: null };
    } catch (err) {
      return { kind: 'sqlite', location: this.location, up: false, since: new Date().toISOString(), lastError: (err as Error).message };
    }
  }

  private readonly openedAt = new Date().toISOString();

  async databaseBytes(): Promise<number> {
    let total = 0;
    for (const suffix of ['', '-wal', '-shm']) {
      try {
        total += fs.statSync(this.conn.file + suffix).size;
      } catch {
        /* absent */
      }
    }
    return total;
  }

  async close(): Promise<void> {
    while (this.conn.held) await this.conn.held.catch(() => undefined);
    this.conn.close();
  }
}
