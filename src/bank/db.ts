// Opening the SQLite database: WAL (readers never block the writer), foreign keys on, and forward
// migrations applied at open, each in its own transaction, recorded in PRAGMA user_version.
import Database from 'better-sqlite3';
import { migrations, type Migration } from './migrations/index.js';
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
  applyMigrations(db, file, migrations);
}

/** Applies every migration of `list` not yet recorded in the database. */
export function applyMigrations(db: Database.Database, file: string, list: Migration[]): void {
  const latest = list.length ? Math.max(...list.map((m) => m.version)) : 0;
  const current = schemaVersion(db);
  if (current > latest) {
    throw new UserError(
      `${file}: database schema version ${current} is newer than this capbridge knows (${latest}); upgrade capbridge`,
    );
  }
  // Each applied version is recorded, so a migration numbered below one already applied (layers land in any
  // order) still runs. user_version keeps the highest, for tools that read it.
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set((db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]));
  if (applied.size === 0 && current > 0) {
    // A database from before schema_migrations existed: everything up to user_version was applied.
    for (const m of list) if (m.version <= current) applied.add(m.version);
  }
  for (const m of [...list].sort((a, b) => a.version - b.version)) {
    if (applied.has(m.version)) continue;
    // IMMEDIATE: take the write lock first, so two processes opening a fresh data dir do not both migrate.
    const apply = db.transaction(() => {
      if (db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version)) return;
      if (typeof m.up === 'string') db.exec(m.up);
      else m.up(db);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
      db.pragma(`user_version = ${Math.max(m.version, schemaVersion(db))}`);
    });
    apply.immediate();
  }
}
