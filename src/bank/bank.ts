// The bank: one data directory, one SQLite database and one image store. Every other layer reaches the
// database only through this object and the repositories in src/bank/ (SQL stays inside this folder, so a
// PostgreSQL bank can replace it behind the same methods).
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { openDatabase, schemaVersion } from './db.js';
import { ImageStore } from './image-store.js';
import { ItemsRepo } from './items.js';
import { MetaRepo } from './meta.js';

export const DB_FILE = 'capbridge.db';

/** A repository class built on the bank's connection; see Bank.repo(). */
export type RepoClass<T> = new (db: Database.Database, bank: Bank) => T;

export class Bank {
  readonly dataDir: string;
  readonly dbPath: string;
  /** The connection. Only code in src/bank/ may use it. */
  readonly sql: Database.Database;
  readonly images: ImageStore;
  readonly items: ItemsRepo;
  readonly meta: MetaRepo;
  private repos = new Map<RepoClass<unknown>, unknown>();

  private constructor(dataDir: string, sql: Database.Database) {
    this.dataDir = dataDir;
    this.dbPath = path.join(dataDir, DB_FILE);
    this.sql = sql;
    this.images = new ImageStore(dataDir, sql);
    this.items = new ItemsRepo(sql);
    this.meta = new MetaRepo(sql);
  }

  static open(dataDir: string): Bank {
    const dir = path.resolve(dataDir);
    fs.mkdirSync(dir, { recursive: true });
    return new Bank(dir, openDatabase(path.join(dir, DB_FILE)));
  }

  /** One shared instance of a repository class per bank (repositories keep prepared statements). */
  repo<T>(cls: RepoClass<T>): T {
    let r = this.repos.get(cls as RepoClass<unknown>) as T | undefined;
    if (!r) {
      r = new cls(this.sql, this);
      this.repos.set(cls as RepoClass<unknown>, r);
    }
    return r;
  }

  /** Runs fn in one transaction (IMMEDIATE: the write lock is taken up front). */
  transaction<T>(fn: () => T): T {
    return this.sql.transaction(fn).immediate();
  }

  get schemaVersion(): number {
    return schemaVersion(this.sql);
  }

  /** Bytes of the database files (main + WAL). */
  databaseBytes(): number {
    let total = 0;
    for (const suffix of ['', '-wal', '-shm']) {
      try {
        total += fs.statSync(this.dbPath + suffix).size;
      } catch {
        /* absent */
      }
    }
    return total;
  }

  /** A path inside the data dir for a layer's own files (crawl queue, lexicon cache, exports...). */
  subdir(name: string): string {
    const dir = path.join(this.dataDir, name);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  }

  close(): void {
    if (this.sql.open) this.sql.close();
  }
}
