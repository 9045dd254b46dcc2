// Opening the SQLite database: WAL (readers never block the writer), foreign keys on, and forward
// migrations applied at open, each in its own transaction, recorded in PRAGMA user_version.
import Database from 'better-sqlite3';
import { migrations } from './migrations/index.js';
import { UserError } from '../util/errors.js';

export function openDatabase(file: string, opts: { readonly?: boolean } = {}): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
  } catch (err) {
    throw new UserError(`${file}: cannot open database: ${(err as Error).message}`);
  }
  db.pragma('busy_timeout = 10000');
  if (!opts.readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
  }
  db.pragma('foreign_keys = ON');
  if (!opts.readonly) migrate(db, file);
  return db;
}

export function schemaVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

export const LATEST_SCHEMA_VERSION = migrations.length ? migrations[migrations.length - 1]!.version : 0;

function migrate(db: Database.Database, file: string): void {
  const current = schemaVersion(db);
  if (current > LATEST_SCHEMA_VERSION) {
    throw new UserError(
      `${file}: database schema version ${current} is newer than this capbridge knows (${LATEST_SCHEMA_VERSION}); upgrade capbridge`,
    );
  }
  for (const m of migrations) {
    if (m.version <= current) continue;
    // IMMEDIATE: take the write lock first, so two processes opening a fresh data dir do not both migrate.
    const apply = db.transaction(() => {
      if (schemaVersion(db) >= m.version) return;
      if (typeof m.up === 'string') db.exec(m.up);
      else m.up(db);
      db.pragma(`user_version = ${m.version}`);
    });
    apply.immediate();
  }
}
