// The sift stage: every item still 'new' gets features, computed once per distinct image, in parallel (worker
// threads), committed per batch. Items move to 'featured', or to 'failed' with the reason (the run goes on).
// Resumable: items are walked in id order by status, and a batch is committed in one transaction, so a killed
// run loses at most the batch in flight.
import type { Bank, BankName } from '../bank/index.js';
import { FeaturesRepo, TwinsRepo } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../util/log.js';
import type { Progress } from '../util/progress.js';
import { errorMessage } from '../util/errors.js';
import { SiftPool, resolveThreads } from './pool.js';
import { pictureHash, TwinIndex, type PictureHash } from './twins.js';
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
  /** Distinct images that reused the features of a near-identical picture of their bank (SIFT runs saved). */
  twins: number;
  /** Distinct images computed in this run. */
  images: number;
  aborted: boolean;
  ms: number;
}

type Outcome = { sha: string; ok: true; features: Features; ms: number } | { sha: string; ok: false; reason: string };

/** A picture a new image may reuse: its sha256 and the width of its detection frame. */
interface Canonical {
  sha: string;
  detectionWidth: number;
}

/**
 * Near-identical pictures per bank for one stage run: loaded from the bank's hashes on first use, grown with the
 * images computed in this run (or, without a repository, only the images added).
 */
class Twins {
  private indexes = new Map<BankName, TwinIndex<Canonical>>();
  /** repo: the bank's hashes to start from (null: start empty). */
  constructor(private repo: TwinsRepo | null, private config: Config) {}

  private index(bank: BankName): TwinIndex<Canonical> {
    let ix = this.indexes.get(bank);
    if (!ix) {
      ix = new TwinIndex<Canonical>();
      if (this.repo) for (const r of this.repo.featuredHashes(bank)) ix.add({ sha: r.sha256, detectionWidth: r.detectionWidth }, { ...r.hash });
      this.indexes.set(bank, ix);
    }
    return ix;
  }

  /** A picture of one of the banks that h is a near-identical copy of, and whose detection frame is not much
   *  smaller than the one h would get (a thumbnail does not lend its features to a larger copy). */
  find(h: PictureHash, banks: BankName[]): { of: Canonical; bank: BankName; distance: number } | null {
    const own = detectionWidth(h, this.config);
    for (const bank of banks) {
      const hit = this.index(bank).find(h, this.config.sift.twins, (c) => c.detectionWidth >= 0.8 * own);
      if (hit) return { of: hit.key, bank, distance: hit.distance };
    }
    return null;
  }

  add(sha: string, h: PictureHash, width: number, banks: BankName[]): void {
    for (const bank of banks) this.index(bank).add({ sha, detectionWidth: width }, h);
  }
}

/** The detection width an image of this original size gets (sift.maxSide). */
function detectionWidth(h: { width: number; height: number }, config: Config): number {
  return Math.round(h.width * Math.min(1, config.sift.maxSide / Math.max(h.width, h.height)));
}

export async function computeMissingFeatures(bank: Bank, config: Config, opts: SiftStageOptions = {}): Promise<SiftStageSummary> {
  const t0 = performance.now();
  const threads = resolveThreads(opts.threads, config.sift.threads);
  const batchSize = opts.batchSize ?? Math.max(16, threads * 8);
  const repo = bank.repo(FeaturesRepo);
  const twinsRepo = bank.repo(TwinsRepo);
  const summary: SiftStageSummary = { featured: 0, failed: 0, skipped: 0, twins: 0, images: 0, aborted: false, ms: 0 };
  const total = bank.items.countByStatus(null, 'new');
  opts.progress?.setTotal(total);
  opts.logger?.info(`sift: ${total} items to feature with ${threads} thread(s)`);
  const pool = new SiftPool(config.sift, threads);
  const twins = config.sift.twins.enabled ? new Twins(twinsRepo, config) : null;
  const read = (sha: string): Buffer | Error => {
    try {
      return bank.images.read(sha);
    } catch (err) {
      return new Error(`image file unavailable: ${errorMessage(err)}`);
    }
  };
  const extract = async (sha: string): Promise<Outcome> => {
    const buf = read(sha);
    if (buf instanceof Error) return { sha, ok: false, reason: buf.message };
    try {
      const r = await pool.extract(buf);
      return { sha, ok: true, features: r.features, ms: r.ms };
    } catch (err) {
      return { sha, ok: false, reason: errorMessage(err) };
    }
  };
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
      const banksOf = new Map<string, BankName[]>();
      for (const i of items) {
        const b = banksOf.get(i.imageSha256) ?? [];
        if (!b.includes(i.bank)) b.push(i.bank);
        banksOf.set(i.imageSha256, b);
      }
      const shas = [...banksOf.keys()];
      const known = new Set(shas.filter((s) => repo.has(s)));
      const todo = shas.filter((s) => !known.has(s));
      // Pictures first: an image near-identical to a picture of its bank (or to an image of this batch sent to
      // SIFT before it) reuses that picture's features.
      const hashes = new Map<string, PictureHash>();
      const twinOf = new Map<string, { of: string; bank: BankName; distance: number }>();
      const inBatch = twins ? new Twins(null, config) : null; // images of this batch sent to SIFT
      const jobs: Promise<Outcome>[] = [];
      for (const sha of todo) {
        let h: PictureHash | undefined;
        if (twins) {
          const buf = read(sha);
          h = buf instanceof Error ? undefined : await pictureHash(buf, config.sift).catch(() => undefined);
        }
        if (h) {
          hashes.set(sha, h);
          const banks = banksOf.get(sha)!;
          const hit = twins!.find(h, banks) ?? inBatch!.find(h, banks);
          if (hit) {
            twinOf.set(sha, { of: hit.of.sha, bank: hit.bank, distance: hit.distance });
            continue;
          }
          inBatch!.add(sha, h, detectionWidth(h, config), banks);
        }
        jobs.push(extract(sha));
      }
      const outcomes = await Promise.all(jobs);
      const ok = new Set(outcomes.filter((o) => o.ok).map((o) => o.sha));
      // A twin of an image of this batch whose SIFT failed gets its own run.
      const orphans = [...twinOf].filter(([, t]) => !ok.has(t.of) && !repo.has(t.of)).map(([sha]) => sha);
      for (const sha of orphans) twinOf.delete(sha);
      outcomes.push(...(await Promise.all(orphans.map(extract))));
      bank.transaction(() => {
        for (const sha of known) summary.skipped += bank.items.setStatusByImage(sha, 'new', 'featured');
        for (const o of outcomes) {
          if (o.ok) {
            repo.put(o.sha, o.features, o.ms);
            const h = hashes.get(o.sha);
            if (h) {
              twinsRepo.putHash(o.sha, h);
              twins!.add(o.sha, h, o.features.width, banksOf.get(o.sha)!);
            }
            summary.images++;
            summary.featured += bank.items.setStatusByImage(o.sha, 'new', 'featured');
          } else {
            const n = bank.items.setStatusByImage(o.sha, 'new', 'failed', o.reason);
            summary.failed += n;
            opts.logger?.warn(`sift: image ${o.sha.slice(0, 12)} failed (${n} item(s)): ${o.reason}`);
          }
        }
        for (const [sha, t] of twinOf) {
          twinsRepo.putHash(sha, hashes.get(sha)!);
          twinsRepo.putTwin({ sha256: sha, ofSha256: t.of, bank: t.bank, distance: t.distance });
          summary.twins++;
          summary.featured += bank.items.setStatusByImage(sha, 'new', 'featured');
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
