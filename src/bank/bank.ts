// The bank: a database (SQLite file in the data dir by default) and an image store. Every other layer reaches the
// database only through this object and the repositories in src/bank/ (SQL stays inside this folder); every
// repository method is async, so the SQLite and PostgreSQL backends serve the same calls.
//
// Writes that belong together go in one transaction, an async unit of work:
//   await bank.transaction(async (tx) => {
//     await tx.items.setStatus(id, 'featured');
//     await tx.repo(FeaturesRepo).put(sha, features, ms);
//   });
// Inside it, use `tx` (its repositories are bound to the transaction), never `bank`: on SQLite a statement
// through `bank` waits for the open transaction to end.
import fs from 'node:fs';
import path from 'node:path';
import { applyMigrations } from './db.js';
import { FolderBlobs, ImageStore, type ImageBlobs } from './image-store.js';
import { ItemsRepo } from './items.js';
import { MetaRepo } from './meta.js';
import type { BankHealth, Sql, SqlBackend } from './sql.js';
import { SqliteBackend } from './sqlite.js';
import { UserError } from '../util/errors.js';

export const DB_FILE = 'capbridge.db';

/** A repository class built on an Sql (the bank's, or a transaction's); see BankScope.repo(). */
export type RepoClass<T> = new (sql: Sql, scope: BankScope) => T;

/** What a repository is reached through: the bank itself, or one of its transactions. */
export class BankScope {
  private repos = new Map<RepoClass<unknown>, unknown>();
  readonly items: ItemsRepo;
  readonly meta: MetaRepo;
  readonly images: ImageStore;

  protected constructor(
    /** The connection (or transaction). Only code in src/bank/ may use it. */
    readonly sql: Sql,
    images: ImageStore,
    /** The bank this scope belongs to (itself for the bank). */
    root?: Bank,
  ) {
    this.root = root ?? (this as unknown as Bank);
    this.items = new ItemsRepo(sql);
    this.meta = new MetaRepo(sql);
    this.images = images;
  }

  readonly root: Bank;

  /** One instance of a repository class per scope. */
  repo<T>(cls: RepoClass<T>): T {
    let r = this.repos.get(cls as RepoClass<unknown>) as T | undefined;
    if (!r) {
      r = new cls(this.sql, this);
      this.repos.set(cls as RepoClass<unknown>, r);
    }
    return r;
  }

  /** Runs fn in one transaction: committed when it resolves, rolled back when it throws (a savepoint when
   *  called on a transaction). Use the `tx` it gets for every statement inside. */
  transaction<T>(fn: (tx: BankTx) => Promise<T>): Promise<T> {
    return this.sql.transaction((sql) => fn(sql === this.sql ? this : new BankScope(sql, this.images.withSql(sql), this.root)));
  }
}

export type BankTx = BankScope;

export interface BankOpenOptions {
  /** A PostgreSQL URL (postgres://…); default: the SQLite file in the data dir. */
  url?: string;
  /** Where image bytes live; default: the folder in the data dir. */
  blobs?: ImageBlobs;
}

export class Bank extends BankScope {
  readonly dataDir: string;
  readonly backend: SqlBackend;

  private constructor(dataDir: string, backend: SqlBackend, blobs: ImageBlobs) {
    super(backend, new ImageStore(blobs, backend));
    this.dataDir = dataDir;
    this.backend = backend;
  }

  /** Opens (creating) the bank of a data dir and applies pending migrations. */
  static async open(dataDir: string, opts: BankOpenOptions = {}): Promise<Bank> {
    const dir = path.resolve(dataDir);
    fs.mkdirSync(dir, { recursive: true });
    let backend: SqlBackend;
    if (opts.url) {
      if (!/^postgres(ql)?:\/\//.test(opts.url)) throw new UserError(`bank URL "${opts.url}": expected postgres://user@host:port/database`);
      // loaded only for a PostgreSQL bank: the embedded default does not pay for node-postgres
      const { PostgresBackend } = await import('./postgres.js');
      backend = await PostgresBackend.connect(opts.url);
    } else backend = SqliteBackend.open(path.join(dir, DB_FILE));
    try {
      await applyMigrations(backend);
    } catch (err) {
      await backend.close();
      throw err;
    }
    return new Bank(dir, backend, opts.blobs ?? new FolderBlobs(dir));
  }

  get dialect(): Sql['dialect'] {
    return this.backend.dialect;
  }

  /** Where the database is: the SQLite file, or the PostgreSQL URL without its password. */
  get location(): string {
    return this.backend.location;
  }

  schemaVersion(): Promise<number> {
    return this.backend.schemaVersion();
  }

  /** Whether the database answers now (PostgreSQL: SELECT 1 within timeoutMs), for /healthz and waiting workers. */
  health(timeoutMs?: number): Promise<BankHealth> {
    return this.backend.health(timeoutMs);
  }

  /** Bytes of the database (SQLite main file + WAL; PostgreSQL: the database's size). */
  databaseBytes(): Promise<number> {
    return this.backend.databaseBytes();
  }

  /** A path inside the data dir for a layer's own files (crawl queue, lexicon cache, exports...). */
  subdir(name: string): string {
    const dir = path.join(this.dataDir, name);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  }

  async close(): Promise<void> {
    await this.images.blobs.close?.();
    await this.backend.close();
  }
}
