// Running a suite against both bank backends: SQLite (a file in a temp data dir) and PostgreSQL (a new database
// on the throwaway server of ./postgres.ts). `forEachBackend('title', (b) => { ... b.open(dir) ... })` declares the
// suite once per backend; the PostgreSQL copy is skipped, with the reason, where the server cannot run.
import { Bank, type BankOpenOptions } from '../../src/bank/index.js';
import { pgUnavailable, startPg } from './postgres.js';

export type BackendName = 'sqlite' | 'postgres';

export interface TestBackend {
  name: BackendName;
  /** Opens a bank whose data dir is `dir` (SQLite file in it; on PostgreSQL a fresh database per call unless `url`). */
  open(dir: string, opts?: BankOpenOptions): Promise<Bank>;
  /** A URL for a fresh database (PostgreSQL), or undefined (SQLite). */
  url(): Promise<string | undefined>;
}

export const sqliteBackend: TestBackend = {
  name: 'sqlite',
  open: (dir, opts) => Bank.open(dir, opts),
  url: async () => undefined,
};

export const postgresBackend: TestBackend = {
  name: 'postgres',
  url: async () => (await startPg()).createDatabase(),
  open: async (dir, opts = {}) => Bank.open(dir, { ...opts, url: opts.url ?? (await (await startPg()).createDatabase()) }),
};

export function forEachBackend(title: string, fn: (b: TestBackend) => void): void {
  for (const b of [sqliteBackend, postgresBackend]) {
    describe(`${title} [${b.name}]`, function () {
      if (b.name === 'postgres') {
        const why = pgUnavailable();
        if (why) {
          it(`skipped: ${why}`, function () {
            this.skip();
          });
          return;
        }
        this.timeout(Math.max(this.timeout(), 60000));
      }
      fn(b);
    });
  }
}
