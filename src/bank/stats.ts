// Counts for `capbridge stats` and the daemon's metrics: per bank and status, caption checks,
// failures by reason, database and image-store size.
import type { Sql } from './sql.js';
import { BANKS, type BankName } from './items.js';
import type { BankScope } from './bank.js';
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
  /** Caption pairs whose scoring failed (reason 'failed: …'), by reason. */
  pairs: { failed: number; failures: Record<string, number> };
}

/** A failure reason's kind, for metrics labels: its text before the first colon or parenthesis ('image too small',
 *  'match', 'views', 'failed'), so the label set stays small however many items fail. */
export function failureKind(reason: string): string {
  return reason.split(/[:(]/)[0]!.trim().slice(0, 60) || 'unknown';
}

export class StatsRepo {
  constructor(private db: Sql, private scope: BankScope) {}

  async bankCounts(bank: BankName): Promise<BankCounts> {
    const rows = (sql: string) => this.db.all<{ k: string | null; n: number }>(sql, [bank]);
    const toObj = (list: Array<{ k: string | null; n: number }>) => Object.fromEntries(list.map((r) => [r.k ?? '', Number(r.n)]));
    const byStatus = toObj(await rows('SELECT status AS k, COUNT(*) AS n FROM items WHERE bank = ? GROUP BY status ORDER BY status'));
    return {
      items: Object.values(byStatus).reduce((a, b) => a + b, 0),
      byStatus,
      captions: toObj(await rows('SELECT caption_status AS k, COUNT(*) AS n FROM items WHERE bank = ? GROUP BY caption_status ORDER BY caption_status')),
      failures: toObj(
        await rows(`SELECT COALESCE(status_reason, 'unknown') AS k, COUNT(*) AS n FROM items WHERE bank = ? AND status = 'failed'
              GROUP BY k ORDER BY n DESC LIMIT 50`),
      ),
      captionProblems: toObj(
        await rows(`SELECT COALESCE(caption_reason, caption_status) AS k, COUNT(*) AS n FROM items
              WHERE bank = ? AND caption_status NOT IN ('ok', 'empty') GROUP BY k ORDER BY n DESC LIMIT 50`),
      ),
    };
  }

  /** Caption pairs stored as failed (their scoring threw), by reason. */
  async pairFailures(): Promise<{ failed: number; failures: Record<string, number> }> {
    const list = await this.db.all<{ k: string; n: number }>(
      `SELECT reason AS k, COUNT(*) AS n FROM pairs WHERE emitted = 0 AND reason LIKE 'failed:%' GROUP BY reason ORDER BY n DESC LIMIT 50`,
    );
    const failed = await this.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM pairs WHERE emitted = 0 AND reason LIKE 'failed:%'`);
    return { failed: Number(failed?.n ?? 0), failures: Object.fromEntries(list.map((r) => [r.k, Number(r.n)])) };
  }

  async all(): Promise<BankStats> {
    const bank = this.scope.root;
    const banks = {} as Record<BankName, BankCounts>;
    for (const b of BANKS) banks[b] = await this.bankCounts(b);
    return {
      dataDir: bank.dataDir,
      schemaVersion: await bank.schemaVersion(),
      banks,
      images: await bank.images.totals(),
      database: { path: bank.location, bytes: await bank.databaseBytes() },
      crawl: await this.scope.repo(CrawlRepo).stats(),
      pairs: await this.pairFailures(),
    };
  }
}
