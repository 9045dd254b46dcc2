// Forward migrations, applied when a bank opens: each in its own transaction, each applied version recorded in
// schema_migrations (so a migration numbered below one already applied, from a layer that landed later, still
// runs). On SQLite, PRAGMA user_version keeps the highest too, for tools that read it.
import { migrations, type Migration } from './migrations/index.js';
import type { SqlBackend } from './sql.js';
import { UserError } from '../util/errors.js';

export const LATEST_SCHEMA_VERSION = migrations.length ? migrations[migrations.length - 1]!.version : 0;

/** Applies every migration of `list` not yet recorded in the database. */
export async function applyMigrations(db: SqlBackend, list: Migration[] = migrations): Promise<void> {
  const latest = list.length ? Math.max(...list.map((m) => m.version)) : 0;
  const current = await db.schemaVersion();
  if (current > latest) {
    throw new UserError(
      `${db.location}: database schema version ${current} is newer than this capbridge knows (${latest}); upgrade capbridge`,
    );
  }
  await db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set((await db.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => Number(r.version)));
  if (applied.size === 0 && current > 0 && db.dialect === 'sqlite') {
    // A database from before schema_migrations existed: everything up to user_version was applied.
    for (const m of list) if (m.version <= current) applied.add(m.version);
  }
  for (const m of [...list].sort((a, b) => a.version - b.version)) {
    if (applied.has(m.version)) continue;
    const up = db.dialect === 'postgres' ? m.pg : m.up;
    if (up === undefined) {
      throw new UserError(`${db.location}: migration ${m.version} (${m.name}) has no PostgreSQL form yet; this bank needs SQLite until it has one`);
    }
    // The transaction takes the write lock first (SQLite IMMEDIATE, a PostgreSQL advisory lock), so two
    // processes opening a fresh bank do not both migrate: the second finds the version recorded.
    await db.transaction(async (tx) => {
      if (tx.dialect === 'postgres') await tx.run('SELECT pg_advisory_xact_lock(7216016)');
      if (await tx.get('SELECT 1 FROM schema_migrations WHERE version = ?', [m.version])) return;
      if (typeof up === 'string') await tx.exec(up);
      else await up(tx);
      await tx.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, new Date().toISOString()]);
      if (tx.dialect === 'sqlite') await tx.exec(`PRAGMA user_version = ${Math.max(m.version, current)}`);
    });
  }
}
