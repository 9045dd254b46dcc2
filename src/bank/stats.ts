// Counts for `capbridge stats` and the daemon's metrics: per bank and status, caption checks,
// failures by reason, database and image-store size.
import type Database from 'better-sqlite3';
import { BANKS, type BankName } from './items.js';
import type { Bank } from './bank.js';
import { CrawlRepo, type CrawlStats } from './crawl.js';

export interface BankCounts {
  items: number;
  byStatus: Record<string, number>;
  captions: Record<string, number>;
  failures: Record<string, number>;
  captionProblems: Record<string, number>;
}

export interface BankStats {
  dataDir: string;
  schemaVersion: number;
  banks: Record<BankName, BankCounts>;
  images: { files: number; bytes: number };
  database: { path: string; bytes: number };
  /** The crawl frontier: URLs by kind and state, pending retries, given up, failures by class and reason. */
  crawl: CrawlStats;
}

export class StatsRepo {
  constructor(private db: Database.Database, private bank: Bank) {}

  bankCounts(bank: BankName): BankCounts {
    const rows = (sql: string) => this.db.prepare(sql).all(bank) as Array<{ k: string | null; n: number }>;
    const toObj = (list: Array<{ k: string | null; n: number }>) => Object.fromEntries(list.map((r) => [r.k ?? '', r.n]));
    const byStatus = toObj(rows('SELECT status AS k, COUNT(*) AS n FROM items WHERE bank = ? GROUP BY status ORDER BY status'));
    return {
      items: Object.values(byStatus).reduce((a, b) => a + b, 0),
      byStatus,
      captions: toObj(rows('SELECT caption_status AS k, COUNT(*) AS n FROM items WHERE bank = ? GROUP BY caption_status ORDER BY caption_status')),
      failures: toObj(
        rows(`SELECT COALESCE(status_reason, 'unknown') AS k, COUNT(*) AS n FROM items WHERE bank = ? AND status = 'failed'
              GROUP BY k ORDER BY n DESC LIMIT 50`),
      ),
      captionProblems: toObj(
        rows(`SELECT COALESCE(caption_reason, caption_status) AS k, COUNT(*) AS n FROM items
              WHERE bank = ? AND caption_status NOT IN ('ok', 'empty') GROUP BY k ORDER BY n DESC LIMIT 50`),
      ),
    };
  }

  all(): BankStats {
    return {
      dataDir: this.bank.dataDir,
      schemaVersion: this.bank.schemaVersion,
      banks: Object.fromEntries(BANKS.map((b) => [b, this.bankCounts(b)])) as Record<BankName, BankCounts>,
      images: this.bank.images.totals(),
      database: { path: this.bank.dbPath, bytes: this.bank.databaseBytes() },
      crawl: this.bank.repo(CrawlRepo).stats(),
    };
  }
}
