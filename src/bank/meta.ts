// A small key/value table for watermarks and cursors (last export, last cycle, eval results).
import type Database from 'better-sqlite3';

export class MetaRepo {
  constructor(private db: Database.Database) {}
  get(key: string): string | undefined {
    return (this.db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
  }
  set(key: string, value: string): void {
    this.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(key, value);
  }
  getJson<T>(key: string): T | undefined {
    const v = this.get(key);
    return v === undefined ? undefined : (JSON.parse(v) as T);
  }
  setJson(key: string, value: unknown): void {
    this.set(key, JSON.stringify(value));
  }
}
