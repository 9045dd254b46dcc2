import type Database from 'better-sqlite3';

/** A forward migration: SQL text, or a function for data changes SQL alone cannot express. */
export interface Migration {
  version: number;
  name: string;
  up: string | ((db: Database.Database) => void);
}
