// The features stage: every item still 'new' gets features, computed once per distinct image, in parallel (worker
// threads), committed per batch. Items move to 'featured', or to 'failed' with the reason (the run goes on).
// Resumable: items are walked in id order by status, and a batch is committed in one transaction, so a killed
// run loses at most the batch in flight.
import type { Bank, BankName, BankTx, IdRange, Item } from '../../bank/index.js';
import { FeaturesRepo, TwinsRepo, isInfrastructureFailure, walkIds } from '../../bank/index.js';
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

/** A batch's images, planned: those with stored features, the pictures they reuse, the SIFT runs started. */
interface BatchPlan {
  banksOf: Map<string, BankName[]>;
  known: Set<string>;
  hashes: Map<string, PictureHash>;
  twinOf: Map<string, { of: string; bank: BankName; distance: number }>;
  jobs: Promise<Outcome>[];
}

/**
 * One run of the features stage: reads each image once per batch (an object store GET costs a round trip), reuses a
 * near-identical picture's features where its picture sits in the same place, sends the rest to SIFT, and commits a
 * batch in one transaction.
 */
class FeaturesRun {
  readonly summary: SiftStageSummary = { featured: 0, failed: 0, skipped: 0, twins: 0, misaligned: 0, images: 0, aborted: false, ms: 0 };
  private readonly pool: SiftPool;
  private readonly twins: Twins | null;
  /** Bytes read for the picture hash, kept for SIFT until the batch ends. */
  private readonly batchBytes = new Map<string, Buffer | Error>();
  /** The pictures copies were checked against, as the place check's greys: a wire photo has many copies, and its
   *  bytes would otherwise be read (an object store GET) and decoded again for each. */
  private readonly placed = new LRUCache<string, Uint8Array>({ max: 1024 });

  constructor(private bank: Bank, private config: Config, threads: number, private logger?: Logger) {
    this.pool = new SiftPool(config.sift, threads);
    this.twins = config.sift.twins.enabled ? new Twins(bank.repo(TwinsRepo), config) : null;
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private async read(sha: string): Promise<Buffer | Error> {
    const had = this.batchBytes.get(sha);
    if (had) return had;
    try {
      return await this.bank.images.read(sha);
    } catch (err) {
      // The store itself failing (an object store unreachable after its retries) or the bank (the image's row is
      // read from it) is no fault of the image: stop here, nothing of this batch is committed, and the next run
      // resumes with these items still new.
      if (isInfrastructureFailure(err)) throw err;
      return new Error(`image file unavailable: ${errorMessage(err)}`);
    }
  }

  /** Whether a copy's picture sits where the picture it would reuse does (sift.twins.maxShift); false when unsure. */
  private async inPlace(copy: Buffer, ofSha: string): Promise<boolean> {
    let a = this.placed.get(ofSha);
    const of = a ? null : await this.read(ofSha); // the store failing stops the stage (read throws), as elsewhere
    if (of instanceof Error) return false;
    try {
      if (!a) this.placed.set(ofSha, (a = await alignmentGrey(of!, this.config.sift)));
      return misalignment(a, await alignmentGrey(copy, this.config.sift)) / ALIGN_SIDE <= this.config.sift.twins.maxShift;
    } catch {
      return false;
    }
  }

  private async extract(sha: string): Promise<Outcome> {
    const buf = await this.read(sha);
    if (buf instanceof Error) return { sha, ok: false, reason: buf.message };
    try {
      const r = await this.pool.extract(buf);
      return { sha, ok: true, features: r.features, ms: r.ms };
    } catch (err) {
      return { sha, ok: false, reason: errorMessage(err) };
    }
  }

  /** Pictures first: an image near-identical to a picture of its bank (or to an image of this batch sent to SIFT
   *  before it) reuses that picture's features; the others start their SIFT run. */
  private async plan(items: Item[]): Promise<BatchPlan> {
    const banksOf = new Map<string, BankName[]>();
    for (const i of items) {
      const b = banksOf.get(i.imageSha256) ?? [];
      if (!b.includes(i.bank)) b.push(i.bank);
      banksOf.set(i.imageSha256, b);
    }
    const shas = [...banksOf.keys()];
    const known = await this.bank.repo(FeaturesRepo).which(shas);
    const plan: BatchPlan = { banksOf, known, hashes: new Map(), twinOf: new Map(), jobs: [] };
    const inBatch = this.twins ? new Twins(null, this.config) : null; // images of this batch sent to SIFT
    for (const sha of shas.filter((s) => !known.has(s))) {
      const h = this.twins ? await this.hashOf(sha) : undefined;
      if (h) {
        plan.hashes.set(sha, h);
        const banks = banksOf.get(sha)!;
        if (await this.reuse(sha, h, banks, inBatch!, plan)) continue;
        await inBatch!.add(sha, h, detectionWidth(h, this.config), banks);
      }
      plan.jobs.push(this.extract(sha));
    }
    return plan;
  }

  private async hashOf(sha: string): Promise<PictureHash | undefined> {
    const buf = await this.read(sha);
    this.batchBytes.set(sha, buf);
    return buf instanceof Error ? undefined : await pictureHash(buf, this.config.sift).catch(() => undefined);
  }

  /** Whether the image reuses a picture (recorded in the plan): a near-identical one that sits in the same place. */
  private async reuse(sha: string, h: PictureHash, banks: BankName[], inBatch: Twins, plan: BatchPlan): Promise<boolean> {
    const hit = (await this.twins!.find(h, banks)) ?? (await inBatch.find(h, banks));
    if (!hit) return false;
    // a near-identical picture lends its features only if it sits in the same place (not a slight crop)
    if (!(await this.inPlace(this.batchBytes.get(sha) as Buffer, hit.of.sha))) {
      this.summary.misaligned++;
      return false;
    }
    plan.twinOf.set(sha, { of: hit.of.sha, bank: hit.bank, distance: hit.distance });
    return true;
  }

  /** The SIFT outcomes of a plan; a twin of an image whose SIFT failed gets its own run. */
  private async outcomes(plan: BatchPlan): Promise<Outcome[]> {
    const outcomes = await Promise.all(plan.jobs);
    const ok = new Set(outcomes.filter((o) => o.ok).map((o) => o.sha));
    const orphans: string[] = [];
    for (const [sha, t] of plan.twinOf) if (!ok.has(t.of) && !(await this.bank.repo(FeaturesRepo).has(t.of))) orphans.push(sha);
    for (const sha of orphans) plan.twinOf.delete(sha);
    outcomes.push(...(await Promise.all(orphans.map((sha) => this.extract(sha)))));
    this.batchBytes.clear();
    return outcomes;
  }

  /** Features, reuses and failures of one batch in one transaction; the pictures computed go to the twins index. */
  async runBatch(items: Item[]): Promise<void> {
    const plan = await this.plan(items);
    const outcomes = await this.outcomes(plan);
    const added: { sha: string; h: PictureHash; width: number }[] = [];
    await this.bank.transaction(async (tx) => {
      for (const sha of plan.known) this.summary.skipped += await tx.items.setStatusByImage(sha, 'new', 'featured');
      for (const o of outcomes) {
        const h = await this.commitOutcome(tx, o, plan);
        if (h && o.ok) added.push({ sha: o.sha, h, width: o.features.width });
      }
      for (const [sha, t] of plan.twinOf) {
        await tx.repo(TwinsRepo).putHash(sha, plan.hashes.get(sha)!);
        await tx.repo(TwinsRepo).putTwin({ sha256: sha, ofSha256: t.of, bank: t.bank, distance: t.distance });
        this.summary.twins++;
        this.summary.featured += await tx.items.setStatusByImage(sha, 'new', 'featured');
      }
    });
    // committed: later batches may reuse these pictures (the index loads through the bank, not the transaction)
    for (const a of added) await this.twins!.add(a.sha, a.h, a.width, plan.banksOf.get(a.sha)!);
  }

  /** Stores one SIFT outcome (features, or the items failed with the reason); the picture hash stored with it. */
  private async commitOutcome(tx: BankTx, o: Outcome, plan: BatchPlan): Promise<PictureHash | undefined> {
    if (!o.ok) {
      const n = await tx.items.setStatusByImage(o.sha, 'new', 'failed', o.reason);
      this.summary.failed += n;
      this.logger?.warn(`sift: image ${o.sha.slice(0, 12)} failed (${n} item(s)): ${o.reason}`);
      return undefined;
    }
    await tx.repo(FeaturesRepo).put(o.sha, o.features, o.ms);
    const h = plan.hashes.get(o.sha);
    if (h) await tx.repo(TwinsRepo).putHash(o.sha, h);
    this.summary.images++;
    this.summary.featured += await tx.items.setStatusByImage(o.sha, 'new', 'featured');
    return h;
  }
}

/** SIFT for every item still 'new' (in `idRange` when given), batch by batch: see FeaturesRun. */
export async function computeMissingFeatures(bank: Bank, config: Config, opts: SiftStageOptions = {}): Promise<SiftStageSummary> {
  const t0 = performance.now();
  const threads = resolveThreads(opts.threads, config.sift.threads);
  const batchSize = opts.batchSize ?? Math.max(16, threads * 8);
  const total = await bank.items.countByStatus(null, 'new');
  opts.progress?.setTotal(total);
  opts.logger?.info(`sift: ${total} items to feature with ${threads} thread(s)`);
  const run = new FeaturesRun(bank, config, threads, opts.logger);
  try {
    for await (const items of walkIds((after) => bank.items.listByStatus(null, 'new', batchSize, after), opts, (i) => i.id)) {
      await run.runBatch(items);
      opts.progress?.tick(items.length);
    }
  } finally {
    await run.close();
  }
  return { ...run.summary, aborted: opts.signal?.aborted === true, ms: Math.round(performance.now() - t0) };
}

/** What the features stage did: SIFT (computeMissingFeatures), the LSH codes it wrote, the captions it counted. */
export interface FeaturesSummary extends SiftStageSummary {
  /** Target items whose LSH codes this run wrote. */
  indexed: number;
  /** Captions counted into the IDF table. */
  captionsCounted: number;
}

export interface FeaturesOptions extends SiftStageOptions {
  /** A progress bar for re-encoding the index's stored codes, made only when a changed representation needs it. */
  reencodeProgress?: (total: number) => Progress;
}

/**
 * The features stage: SIFT for every new item (in `idRange` when given, a worker's job), then the LSH codes of the
 * target items it featured (indexTargets), then its items' captions into the IDF table. Indexing and counting here,
 * where the work is split into small jobs, leave the match stage only loading the index rows and the pairing stage
 * nothing to count: their jobs start together on every worker, and each would otherwise find the same rows pending.
 */
export async function runFeatures(bank: Bank, config: Config, opts: FeaturesOptions = {}): Promise<FeaturesSummary> {
  const s = await computeMissingFeatures(bank, config, opts);
  if (s.aborted) return { ...s, indexed: 0, captionsCounted: 0 };
  const t0 = performance.now();
  const { indexTargets } = await import('../../lib/image-index/index.js');
  const { indexed } = await indexTargets(bank, config, { signal: opts.signal, logger: opts.logger, idRange: opts.idRange, reencodeProgress: opts.reencodeProgress });
  if (opts.signal?.aborted) return { ...s, indexed, captionsCounted: 0, aborted: true, ms: Math.round(s.ms + performance.now() - t0) };
  // about 2 ms a caption, spread over the features jobs, which run in parallel, instead of waiting for the pairing
  const { updateIdf } = await import('../../lib/comparability/index.js');
  const { added } = await updateIdf(bank, config, { idRange: opts.idRange, signal: opts.signal });
  return { ...s, indexed, captionsCounted: added.source + added.target, aborted: opts.signal?.aborted === true, ms: Math.round(s.ms + performance.now() - t0) };
}
