// The sift stage: every item still 'new' gets features, computed once per distinct image, in parallel (worker
// threads), committed per batch. Items move to 'featured', or to 'failed' with the reason (the run goes on).
// Resumable: items are walked in id order by status, and a batch is committed in one transaction, so a killed
// run loses at most the batch in flight.
import type { Bank } from '../bank/index.js';
import { FeaturesRepo } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../util/log.js';
import type { Progress } from '../util/progress.js';
import { errorMessage } from '../util/errors.js';
import { SiftPool, resolveThreads } from './pool.js';
import type { Features } from './types.js';

export interface SiftStageOptions {
  threads?: number;
  signal?: AbortSignal;
  progress?: Progress;
  logger?: Logger;
  /** Items per committed batch (default: 8 per thread, at least 16). */
  batchSize?: number;
}

export interface SiftStageSummary {
  /** Items moved to 'featured' whose image was computed in this run. */
  featured: number;
  /** Items moved to 'failed'. */
  failed: number;
  /** Items moved to 'featured' without work: their image already had stored features. */
  skipped: number;
  /** Distinct images computed in this run. */
  images: number;
  aborted: boolean;
  ms: number;
}

type Outcome = { sha: string; ok: true; features: Features; ms: number } | { sha: string; ok: false; reason: string };

export async function computeMissingFeatures(bank: Bank, config: Config, opts: SiftStageOptions = {}): Promise<SiftStageSummary> {
  const t0 = performance.now();
  const threads = resolveThreads(opts.threads, config.sift.threads);
  const batchSize = opts.batchSize ?? Math.max(16, threads * 8);
  const repo = bank.repo(FeaturesRepo);
  const summary: SiftStageSummary = { featured: 0, failed: 0, skipped: 0, images: 0, aborted: false, ms: 0 };
  const total = bank.items.countByStatus(null, 'new');
  opts.progress?.setTotal(total);
  opts.logger?.info(`sift: ${total} items to feature with ${threads} thread(s)`);
  const pool = new SiftPool(config.sift, threads);
  try {
    let afterId = 0;
    for (;;) {
      if (opts.signal?.aborted) {
        summary.aborted = true;
        break;
      }
      const items = bank.items.listByStatus(null, 'new', batchSize, afterId);
      if (!items.length) break;
      afterId = items[items.length - 1]!.id;
      const shas = [...new Set(items.map((i) => i.imageSha256))];
      const known = new Set(shas.filter((s) => repo.has(s)));
      const jobs: Promise<Outcome>[] = shas
        .filter((s) => !known.has(s))
        .map(async (sha): Promise<Outcome> => {
          try {
            let buf: Buffer;
            try {
              buf = bank.images.read(sha);
            } catch (err) {
              return { sha, ok: false, reason: `image file unavailable: ${errorMessage(err)}` };
            }
            const r = await pool.extract(buf);
            return { sha, ok: true, features: r.features, ms: r.ms };
          } catch (err) {
            return { sha, ok: false, reason: errorMessage(err) };
          }
        });
      const outcomes = await Promise.all(jobs);
      bank.transaction(() => {
        for (const sha of known) summary.skipped += bank.items.setStatusByImage(sha, 'new', 'featured');
        for (const o of outcomes) {
          if (o.ok) {
            repo.put(o.sha, o.features, o.ms);
            summary.images++;
            summary.featured += bank.items.setStatusByImage(o.sha, 'new', 'featured');
          } else {
            const n = bank.items.setStatusByImage(o.sha, 'new', 'failed', o.reason);
            summary.failed += n;
            opts.logger?.warn(`sift: image ${o.sha.slice(0, 12)} failed (${n} item(s)): ${o.reason}`);
          }
        }
      });
      opts.progress?.tick(items.length);
    }
  } finally {
    await pool.close();
  }
  summary.ms = Math.round(performance.now() - t0);
  return summary;
}
