// The bank's query interface: what every repository in src/bank/ talks to, implemented by the SQLite backend
// (sqlite.ts, better-sqlite3, the embedded default) and the PostgreSQL backend (postgres.ts, node-postgres).
// Only src/bank/ uses it; other layers call repositories, and write through `bank.transaction(async (tx) => …)`.
//
// SQL text is shared by both backends where it can be: parameters are `?` (positional, params an array) or
// `@name` (named, params an object); the PostgreSQL backend rewrites them to $1..$n. Column aliases in camelCase
// are double-quoted (`AS "extId"`) because PostgreSQL folds unquoted names to lower case. Where the dialects
// differ, a repository branches on `sql.dialect`.

export type Dialect = 'sqlite' | 'postgres';
export type Params = readonly unknown[] | Readonly<Record<string, unknown>>;

export interface Sql {
  readonly dialect: Dialect;
  /** Every row. */
  all<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T[]>;
  /** The first row, or undefined. */
  get<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T | undefined>;
  /** Runs a statement; returns the number of rows it changed. */
  run(sql: string, params?: Params): Promise<number>;
  /** Runs one statement once per parameter set (bulk writes); returns the rows changed in all. Call it inside a
   *  transaction when the writes must land together. */
  runMany(sql: string, rows: readonly Params[]): Promise<number>;
  /** Rows into a table (plain INSERTs, no conflict handling): COPY on PostgreSQL, one prepared INSERT per row
   *  on SQLite. Returns the rows written. */
  copyRows(table: string, columns: readonly string[], rows: readonly (readonly unknown[])[]): Promise<number>;
  /** Rows one at a time without holding them all. Outside a transaction they come from a snapshot taken when
   *  the walk starts (SQLite: a second, read-only connection; PostgreSQL: a cursor on its own connection), so the
   *  bank may be written while a long result is read. */
  iterate<T = Record<string, unknown>>(sql: string, params?: Params): AsyncIterable<T>;
  /** Several statements, no parameters (migrations). */
  exec(sql: string): Promise<void>;
  /** Runs fn in one transaction (committed when fn resolves, rolled back when it throws); inside a transaction,
   *  a savepoint. The Sql passed to fn is the only one bound to the transaction. */
  transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T>;
  /** True inside a transaction. */
  readonly inTransaction: boolean;
}

/** Whether the database answers, for /healthz and a worker waiting through an outage. */
export interface BankHealth {
  kind: 'sqlite' | 'postgres';
  /** The file, or the URL without its password. */
  location: string;
  up: boolean;
  /** Since when it is up (or down). */
  since: string;
  /** Why it is down (null when up). */
  lastError: string | null;
}

/** The connection of a bank: an Sql plus what only the bank itself needs. */
export interface SqlBackend extends Sql {
  /** Asks the database whether it answers (PostgreSQL: SELECT 1 within timeoutMs). */
  health(timeoutMs?: number): Promise<BankHealth>;
  /** Highest applied migration (PRAGMA user_version on SQLite, schema_migrations on PostgreSQL). */
  schemaVersion(): Promise<number>;
  /** Bytes the database takes (files on SQLite, pg_database_size on PostgreSQL). */
  databaseBytes(): Promise<number>;
  /** Where the data lives, for messages: a file path, or the URL without its password. */
  readonly location: string;
  close(): Promise<void>;
}

/** Thrown for a statement issued on a transaction's Sql after the transaction ended. */
export class TransactionOverError extends Error {}
