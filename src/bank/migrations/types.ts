import type { Sql } from '../sql.js';

/**
 * A forward migration. `up` is the SQLite form: SQL text, or an async function for data changes SQL alone
 * cannot express (it gets the transaction's Sql). `pg` is the PostgreSQL form (types differ: BIGINT identities,
 * BYTEA, DOUBLE PRECISION); a bank on PostgreSQL refuses to open while a migration lacks it.
 */
export interface Migration {
  version: number;
  name: string;
  up: string | ((sql: Sql) => Promise<void>);
  pg?: string | ((sql: Sql) => Promise<void>);
}
