// The features stage: every item still 'new' gets features, computed once per distinct image, in parallel (worker
// threads), committed per batch. Items move to 'featured', or to 'failed' with the reason (the run goes on).
// Resumable: items are walked in id order by status, and a batch is committed in one transaction, so a killed
// run loses at most the batch in flight.
import type { Bank, BankName, IdRange } from '../../bank/index.js';
import { FeaturesRepo, TwinsRepo, isInfrastructureFailure } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../util/log.js';
import type { Progress } from '../../util/progress.js';
import { errorMessage } from '../../util/errors.js';
import { LRUCache } from 'lru-cache';
import { SiftPool, resolveThreads } from '../../lib/sift/index.js';
import { ALIGN_SIDE, alignmentGrey, misalignment, pictureHash, TwinIndex, type PictureHash } from '../../lib/sift/index.js';
import type { Features } from '../../lib/sift/index.js';

export interface SiftStageOptions {
  threads?: number;
  signal?: AbortSignal;
  progress?: Progress;
  logger?: Logger;
  /** Items per committed batch (default: 8 per thread, at least 16). */
  batchSize?: number;
  /** Only items with ids in this range (a worker's job); default all. */
  idRange?: IdRange;
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
  /** Near-identical pictures (hash, aspect, thumbnail) refused because the copy's picture sits elsewhere (a slight crop): SIFT ran. */
  misaligned: number;
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

  private async index(bank: BankName): Promise<TwinIndex<Canonical>> {
    let ix = this.indexes.get(bank);
    if (!ix) {
      const fresh = new TwinIndex<Canonical>();
      if (this.repo) for await (const r of this.repo.featuredHashes(bank)) fresh.add({ sha: r.sha256, detectionWidth: r.detectionWidth }, { ...r.hash });
      // another caller may have loaded it meanwhile: keep the first
      ix = this.indexes.get(bank) ?? fresh;
      this.indexes.set(bank, ix);
    }
    return ix;
  }

  /** A picture of one of the banks that h is a near-identical copy of, and whose detection frame is not much
   *  smaller than the one h would get (a thumbnail does not lend its features to a larger copy). */
  async find(h: PictureHash, banks: BankName[]): Promise<{ of: Canonical; bank: BankName; distance: number } | null> {
    const own = detectionWidth(h, this.config);
    for (const bank of banks) {
      const hit = (await this.index(bank)).find(h, this.config.sift.twins, (c) => c.detectionWidth >= 0.8 * own);
      if (hit) return { of: hit.key, bank, distance: hit.distance };
    }
    return null;
  }

  async add(sha: string, h: PictureHash, width: number, banks: BankName[]): Promise<void> {
    for (const bank of banks) (await this.index(bank)).add({ sha, detectionWidth: width }, h);
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
  const summary: SiftStageSummary = { featured: 0, failed: 0, skipped: 0, twins: 0, misaligned: 0, images: 0, aborted: false, ms: 0 };
  const total = await bank.items.countByStatus(null, 'new');
  opts.progress?.setTotal(total);
  opts.logger?.info(`sift: ${total} items to feature with ${threads} thread(s)`);
  const pool = new SiftPool(config.sift, threads);
  const twins = config.sift.twins.enabled ? new Twins(twinsRepo, config) : null;
  // Bytes read for the picture hash are kept for SIFT until the batch ends: one read per image (an object store
  // GET costs a round trip).
  const batchBytes = new Map<string, Buffer | Error>();
  const read = async (sha: string): Promise<Buffer | Error> => {
    const had = batchBytes.get(sha);
    if (had) return had;
    try {
      return await bank.images.read(sha);
    } catch (err) {
      // The store itself failing (an object store unreachable after its retries) or the bank (the image's row is
      // read from it) is no fault of the image: stop here, nothing of this batch is committed, and the next run
      // resumes with these items still new.
      if (isInfrastructureFailure(err)) throw err;
      return new Error(`image file unavailable: ${errorMessage(err)}`);
    }
  };
  // The pictures copies were checked against, as the place check's greys: a wire photo has many copies, and its
  // bytes would otherwise be read (an object store GET) and decoded again for each.
  const placed = new LRUCache<string, Uint8Array>({ max: 1024 });
  /** Whether a copy's picture sits where the picture it would reuse does (sift.twins.maxShift); false when unsure. */
  const inPlace = async (copy: Buffer, ofSha: string): Promise<boolean> => {
    let a = placed.get(ofSha);
    const of = a ? null : await read(ofSha); // the store failing stops the stage (read throws), as elsewhere
    if (of instanceof Error) return false;
    try {
      if (!a) placed.set(ofSha, (a = await alignmentGrey(of!, config.sift)));
      return misalignment(a, await alignmentGrey(copy, config.sift)) / ALIGN_SIDE <= config.sift.twins.maxShift;
    } catch {
      return false;
    }
  };
  const extract = async (sha: string): Promise<Outcome> => {
    const buf = await read(sha);
    if (buf instanceof Error) return { sha, ok: false, reason: buf.message };
    try {
      const r = await pool.extract(buf);
      return { sha, ok: true, features: r.features, ms: r.ms };
    } catch (err) {
      return { sha, ok: false, reason: errorMessage(err) };
    }
  };
  try {
    const range = opts.idRange;
    let afterId = range ? range.first - 1 : 0;
    for (;;) {
      if (opts.signal?.aborted) {
        summary.aborted = true;
        break;
      }
      const items = (await bank.items.listByStatus(null, 'new', batchSize, afterId)).filter((i) => !range || i.id <= range.last);
      if (!items.length) break;
      afterId = items[items.length - 1]!.id;
      const banksOf = new Map<string, BankName[]>();
      for (const i of items) {
        const b = banksOf.get(i.imageSha256) ?? [];
        if (!b.includes(i.bank)) b.push(i.bank);
        banksOf.set(i.imageSha256, b);
      }
      const shas = [...banksOf.keys()];
      const known = await repo.which(shas);
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
          const buf = await read(sha);
          batchBytes.set(sha, buf);
          h = buf instanceof Error ? undefined : await pictureHash(buf, config.sift).catch(() => undefined);
        }
        if (h) {
          hashes.set(sha, h);
          const banks = banksOf.get(sha)!;
          let hit = (await twins!.find(h, banks)) ?? (await inBatch!.find(h, banks));
          // a near-identical picture lends its features only if it sits in the same place (not a slight crop)
          if (hit && !(await inPlace(batchBytes.get(sha) as Buffer, hit.of.sha))) {
            hit = null;
            summary.misaligned++;
          }
          if (hit) {
            twinOf.set(sha, { of: hit.of.sha, bank: hit.bank, distance: hit.distance });
            continue;
          }
          await inBatch!.add(sha, h, detectionWidth(h, config), banks);
        }
        jobs.push(extract(sha));
      }
      const outcomes = await Promise.all(jobs);
      const ok = new Set(outcomes.filter((o) => o.ok).map((o) => o.sha));
      // A twin of an image of this batch whose SIFT failed gets its own run.
      const orphans: string[] = [];
      for (const [sha, t] of twinOf) if (!ok.has(t.of) && !(await repo.has(t.of))) orphans.push(sha);
      for (const sha of orphans) twinOf.delete(sha);
      outcomes.push(...(await Promise.all(orphans.map(extract))));
      batchBytes.clear();
      const added: { sha: string; h: PictureHash; width: number }[] = [];
      await bank.transaction(async (tx) => {
        const feats = tx.repo(FeaturesRepo);
        const twinRows = tx.repo(TwinsRepo);
        for (const sha of known) summary.skipped += await tx.items.setStatusByImage(sha, 'new', 'featured');
        for (const o of outcomes) {
          if (o.ok) {
            await feats.put(o.sha, o.features, o.ms);
            const h = hashes.get(o.sha);
            if (h) {
              await twinRows.putHash(o.sha, h);
              added.push({ sha: o.sha, h, width: o.features.width });
            }
            summary.images++;
            summary.featured += await tx.items.setStatusByImage(o.sha, 'new', 'featured');
          } else {
            const n = await tx.items.setStatusByImage(o.sha, 'new', 'failed', o.reason);
            summary.failed += n;
            opts.logger?.warn(`sift: image ${o.sha.slice(0, 12)} failed (${n} item(s)): ${o.reason}`);
          }
        }
        for (const [sha, t] of twinOf) {
          await twinRows.putHash(sha, hashes.get(sha)!);
          await twinRows.putTwin({ sha256: sha, ofSha256: t.of, bank: t.bank, distance: t.distance });
          summary.twins++;
          summary.featured += await tx.items.setStatusByImage(sha, 'new', 'featured');
        }
      });
      // committed: later batches may reuse these pictures (the index loads through the bank, not the transaction)
      for (const a of added) await twins!.add(a.sha, a.h, a.width, banksOf.get(a.sha)!);
      opts.progress?.tick(items.length);
    }
  } finally {
    await pool.close();
  }
  summary.ms = Math.round(performance.now() - t0);
  return summary;
}

/** What the features stage did: SIFT (computeMissingFeatures), the LSH codes it wrote, the captions it counted. */
export interface FeaturesSummary extends SiftStageSummary {
  /** Target items whose LSH codes this run wrote. */
  indexed: number;
  /** Captions counted into the IDF table. */
  captionsCounted: number;
}

/**
 * The features stage: SIFT for every new item (in `idRange` when given, a worker's job), then the LSH codes of the
 * target items it featured (indexTargets), then its items' captions into the IDF table. Indexing and counting here,
 * where the work is split into small jobs, leave the match stage only loading the index rows and the pairing stage
 * nothing to count: their jobs start together on every worker, and each would otherwise find the same rows pending.
 */
export async function runFeatures(bank: Bank, config: Config, opts: SiftStageOptions = {}): Promise<FeaturesSummary> {
  const s = await computeMissingFeatures(bank, config, opts);
  if (s.aborted) return { ...s, indexed: 0, captionsCounted: 0 };
  const t0 = performance.now();
  const { indexTargets } = await import('../../lib/image-index/index.js');
  const { indexed } = await indexTargets(bank, config, { signal: opts.signal, logger: opts.logger, idRange: opts.idRange });
  if (opts.signal?.aborted) return { ...s, indexed, captionsCounted: 0, aborted: true, ms: Math.round(s.ms + performance.now() - t0) };
  // about 2 ms a caption, spread over the features jobs, which run in parallel, instead of waiting for the pairing
  const { updateIdf } = await import('../../lib/comparability/index.js');
  const { added } = await updateIdf(bank, config, { idRange: opts.idRange, signal: opts.signal });
  return { ...s, indexed, captionsCounted: added.source + added.target, aborted: opts.signal?.aborted === true, ms: Math.round(s.ms + performance.now() - t0) };
}
