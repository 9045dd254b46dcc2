// The scheduler of the scale-out mode: turns the bank's pending rows into jobs (one stage over one range of item
// ids) for `capbridge worker` processes to claim. Stages go in pipeline order, one round at a time: match jobs are
// queued only when no features job is open (a source is matched against every featured target), pair jobs only
// when no match job is open. One scheduler at a time (a PostgreSQL advisory lock; others skip the round), so it can
// run in every idle worker and in the daemon without queuing a range twice.
import { CandidatesRepo, JobsRepo, LshRepo, MatchPartialsRepo, PairsRepo, SCHEDULED_STAGES, type BankScope, type IdRange, type ScheduledStage } from '../bank/index.js';
import type { Bank } from '../bank/index.js';
import type { Config } from '../config/schema.js';

/** Most item ids one round looks at per stage (the next round takes the rest). */
const ROUND_MAX = 100_000;
const PAGE = 1000;

export interface ScheduleResult {
  /** The stage that got jobs this round, or null. */
  stage: ScheduledStage | null;
  jobs: number;
  /** A stage whose open jobs hold the later stages back (null when none is open). */
  waitingFor: ScheduledStage | null;
  /** False when another process was scheduling (nothing done). */
  scheduled: boolean;
}

/** Pending item ids of a stage, in id order, after `afterId`. */
async function pendingIds(tx: BankScope, stage: ScheduledStage, afterId: number): Promise<number[]> {
  if (stage === 'features') return (await tx.items.listByStatus(null, 'new', PAGE, afterId)).map((i) => i.id);
  if (stage === 'match') {
    const seq = await tx.repo(LshRepo).sequence();
    return (await tx.repo(CandidatesRepo).pendingSources(seq, afterId, PAGE)).map((s) => s.id);
  }
  return tx.repo(PairsRepo).pendingSources(afterId, PAGE, false, 0);
}

/** Consecutive runs of `size` pending ids as id ranges. */
export function chunkRanges(ids: readonly number[], size: number): IdRange[] {
  const out: IdRange[] = [];
  for (let i = 0; i < ids.length; i += size) out.push({ first: ids[i]!, last: ids[Math.min(ids.length, i + size) - 1]! });
  return out;
}

/** One scheduling round: queues the jobs of the first stage (in pipeline order) that has pending rows and no open
 *  jobs, unless an earlier stage still has open jobs. */
export async function schedule(bank: Bank, config: Config): Promise<ScheduleResult> {
  return bank.transaction(async (tx) => {
    const jobs = tx.repo(JobsRepo);
    if (!(await jobs.tryLockScheduler())) return { stage: null, jobs: 0, waitingFor: null, scheduled: false };
    for (const stage of SCHEDULED_STAGES) {
      if (await jobs.open(stage)) return { stage: null, jobs: 0, waitingFor: stage, scheduled: true };
      const ids: number[] = [];
      for (let after = 0; ids.length < ROUND_MAX; ) {
        const page = await pendingIds(tx, stage, after);
        if (!page.length) break;
        ids.push(...page);
        after = page[page.length - 1]!;
      }
      if (!ids.length) continue;
      const ranges = chunkRanges(ids, config.worker.batch[stage]);
      // A sharded index (issue 35): one match job per window and shard, keyed by the shard; the shard jobs of a window
      // merge its sources as the last of them finishes.
      const shards = stage === 'match' ? await import('../stages/match/index.js') : null; // loaded only here (the index layer)
      const plan = shards ? await shards.currentPlan(tx, config) : null;
      if (plan && shards) {
        const { shardKey } = shards;
        await tx.repo(MatchPartialsRepo).dropOtherPlans(plan.id);
        const keyed = ranges.flatMap((range) => plan.ranges.map((shard) => ({ range, key: shardKey(plan, shard) })));
        await jobs.enqueueKeyedRanges(stage, keyed);
        return { stage, jobs: keyed.length, waitingFor: stage, scheduled: true };
      }
      await jobs.enqueue(stage, ranges);
      return { stage, jobs: ranges.length, waitingFor: stage, scheduled: true };
    }
    return { stage: null, jobs: 0, waitingFor: null, scheduled: true };
  });
}
