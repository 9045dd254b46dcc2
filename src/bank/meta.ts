// A small key/value table for watermarks and cursors (last export, last cycle, eval results).
import type { Sql } from './sql.js';

export class MetaRepo {
  constructor(private db: Sql) {}
  async get(key: string): Promise<string | undefined> {
    return (await this.db.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', [key]))?.value;
  }
  async set(key: string, value: string): Promise<void> {
    await this.db.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value', [key, value]);
  }
  async getJson<T>(key: string): Promise<T | undefined> {
    const v = await this.get(key);
    return v === undefined ? undefined : (JSON.parse(v) as T);
  }
  async setJson(key: string, value: unknown): Promise<void> {
    await this.set(key, JSON.stringify(value));
  }
}
