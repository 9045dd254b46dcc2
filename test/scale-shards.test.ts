// Target shards (issue 35): the index split by target item id range, a match job per window and shard that only votes,
// each source's voted images of every shard verified once as one shortlist by the job completing the window (round 5),
// the wide-baseline stages' results merged per source. On real SQLite and PostgreSQL banks: one process with lsh.shards 3 and two in-process
// workers sharing the shard jobs end with the candidates and pairs of the unsharded run, and give the wide-baseline
// stages (views, archive matching: cheap settings, every unconfident source hopeful) to the same sources, decided
// once over every shard's plain search (a source confident on its own shard gets none on the others); the queue gives a worker the
// jobs of the shards it holds first; the merge drops mirrored hits once any shard is confident; a changed index
// representation is re-encoded in place, resumably, without sending any source back to matching.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { Bank, CandidatesRepo, JobsRepo, LshRepo, MatchPartialsRepo, type CandidateInput, type LshRow, type MatchPartial } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import { runPairing } from '../src/stages/pair/pairing.js';
import { importManifest } from '../src/import/manifest.js';
import { mergePartials, parseShardKey, storedPlan } from '../src/stages/match/shards.js';
import { runFeatures } from '../src/stages/features/stage.js';
import { observeSourceCosts, observeSourceRankings, runMatch } from '../src/stages/match/stage.js';
import { dropIndexes, indexTargets, openIndex, paramsKey } from '../src/lib/image-index/store.js';
import { countBuckets } from '../src/lib/image-index/lsh.js';
import { schedule } from '../src/worker/schedule.js';
import { Worker } from '../src/worker/worker.js';
import { tempDir } from './helpers.js';
import { forEachBackend, postgresBackend, sqliteBackend, type TestBackend } from './helpers/backends.js';
import { pgUnavailable } from './helpers/postgres.js';
import { EN, harvestManifests, pairsByExtId } from './helpers/scale.js';
import { scene, write } from './lsh-helpers.js';

// The wide-baseline stages on every unconfident source (no promise gate), at a fraction of their default cost.
const defaults = loadConfig({}).config;
const views = defaults.match.views;
const base: Config = {
  ...defaults,
  match: {
    ...defaults.match,
    views: { ...views, minVotingKeypoints: 0, tilts: [2.83], rotations: 2, keypointsPerView: 200, denseKeypoints: 0,
      archive: { ...views.archive, candidates: 2, maxTilt: 2, targetMaxTilt: 2, keypointsPerView: 300, targetKeypointsPerView: 300 } },
  },
};
const withLsh = (c: Config, lsh: Partial<Config['lsh']>, batch = 2): Config => ({ ...c, lsh: { ...c.lsh, ...lsh }, sift: { ...c.sift, threads: 1 }, worker: { ...c.worker, batch: { ...c.worker.batch, match: batch }, pollSeconds: 0.05 } });

/** Every source's candidates as "source → target rank score", sorted. */
async function candidatesOf(bank: Bank): Promise<string[]> {
  const out: string[] = [];
  for await (const c of bank.repo(CandidatesRepo).iterateJoined()) out.push(`${c.sourceExtId}→${c.targetExtId} #${c.rank} ${c.imageScore} ${c.inliers}`);
  return out.sort();
}

async function harvest(b: TestBackend, dir: string, name: string, manifests: { source: string; target: string }, config: Config, url?: string): Promise<Bank> {
  const bank = url ? await Bank.open(path.join(dir, name), { url }) : await b.open(path.join(dir, name));
  for (const k of ['target', 'source'] as const) await importManifest(bank, { bank: k, manifest: manifests[k], config });
  await runFeatures(bank, config, { threads: 1 });
  return bank;
}

describe('target shards', function () {
  this.timeout(600_000);
  const dir = tempDir('capbridge-shards-');
  let manifests: { source: string; target: string };
  before(async () => {
    manifests = await harvestManifests(dir, 3, 2);
    // a source without a counterpart after s1: the windows of 2 are {s1, u1} and {s2, s3}
    const rows = fs.readFileSync(manifests.source, 'utf8').trim().split('\n');
    rows.splice(2, 0, ['u1', write(dir, 'u1.png', await scene(700)), EN[3]!, 'https://example.org/en/u1'].join('\t'));
    fs.writeFileSync(manifests.source, rows.join('\n') + '\n');
  });

  /** Which sources got which wide-baseline stage ("views:id", "archive:id", each once) while `fn` ran, and what each
   *  source's search ranked ("plain:id" / "archive:id" -> its shortlist's items and votes and its promise, or archive
   *  matching's candidates in the order compared). */
  async function wideStages(fn: () => Promise<unknown>, rankings?: Map<string, string>): Promise<string[]> {
    const seen = new Set<string>();
    const stop = observeSourceCosts((c) => void ((c.stage === 'views' || c.stage === 'archive') && seen.add(`${c.stage}:${c.itemId}`)));
    const stopRankings = observeSourceRankings((r) => void rankings?.set(`${r.kind}:${r.itemId}`, JSON.stringify([r.ranked, r.promise])));
    try {
      await fn();
    } finally {
      stop();
      stopRankings();
    }
    return [...seen].sort();
  }
  const sorted = (m: Map<string, string>) => [...m].sort((a, b) => a[0].localeCompare(b[0]));

  // The unsharded runs (SQLite) are the references: candidates and pairs do not depend on the backend. With archive
  // matching off (candidates 0), the unconfident source gets the views search instead: the workers' case.
  type Reference = { cand: string[]; pairs: string[]; wide: string[]; rankings: Map<string, string> };
  const ref = (): Reference => ({ cand: [], pairs: [], wide: [], rankings: new Map() });
  const reference = ref();
  const viewsReference = ref();
  const viewsBase: Config = { ...base, match: { ...base.match, views: { ...base.match.views, archive: { ...base.match.views.archive, candidates: 0 } } } };
  let workersUrl: string | undefined;
  describe('one process and workers over a sharded index', () => {
    before(async () => {
      await (await harvest(sqliteBackend, dir, 'whole', manifests, withLsh(base, {}))).close();
      fs.cpSync(path.join(dir, 'whole'), path.join(dir, 'whole-views'), { recursive: true });
      for (const [name, config, r] of [['whole', base, reference], ['whole-views', viewsBase, viewsReference]] as const) {
        const whole = await Bank.open(path.join(dir, name));
        try {
          r.wide = await wideStages(() => runMatch(whole, withLsh(config, {}), { threads: 1 }), r.rankings);
          await runPairing(whole, config);
          r.cand = await candidatesOf(whole);
          r.pairs = await pairsByExtId(whole);
          expect(await storedPlan(whole)).to.equal(null);
        } finally {
          await whole.close();
        }
      }
    });
    it('one process (SQLite) with lsh.shards 3 ends with the unsharded run\'s candidates and pairs, and keeps no partial result', async () => {
      for (const i of [1, 2, 3]) expect(reference.cand.some((c) => c.startsWith(`s${i}→t${i} #1 `)), reference.cand.join('; ')).to.equal(true);
      expect(reference.wide.some((w) => w.startsWith('archive:')), 'the unconfident source reaches archive matching').to.equal(true);
      const config = withLsh(base, { shards: 3 });
      const bank = await harvest(sqliteBackend, dir, 'one', manifests, config);
      try {
        let sources = 0;
        const rankings = new Map<string, string>();
        const wide = await wideStages(async () => (sources = (await runMatch(bank, config, { threads: 1 })).sources), rankings);
        expect(wide, 'the same sources get the same stages as the unsharded run').to.deep.equal(reference.wide);
        // the shards' votes add up to one index's exactly: the same shortlists, votes and promise, and archive matching
        // compares the same candidates in the same order
        expect([...reference.rankings.keys()].some((k) => k.startsWith('archive:'))).to.equal(true);
        expect(sorted(rankings)).to.deep.equal(sorted(reference.rankings));
        const plan = (await storedPlan(bank))!;
        expect(plan.ranges).to.have.length(3);
        expect(plan.ranges[2]!.last).to.equal(Number.MAX_SAFE_INTEGER);
        expect(sources, 'each source searched once per shard').to.equal(4 * 3);
        expect(await bank.repo(MatchPartialsRepo).count()).to.equal(0);
        await runPairing(bank, config);
        expect(await candidatesOf(bank)).to.deep.equal(reference.cand);
        expect(await pairsByExtId(bank)).to.deep.equal(reference.pairs);
        expect((await runMatch(bank, config, { threads: 1 })).sources, 'nothing left to match').to.equal(0);
      } finally {
        dropIndexes(bank);
        await bank.close();
      }
    });

    it('two workers (PostgreSQL) share the window x shard jobs, prefer the shards they hold, and end with the same candidates and pairs (the views search once per picture)', async function () {
      const why = pgUnavailable();
      if (why) return this.skip();
      expect(viewsReference.wide.some((w) => w.startsWith('views:')), 'the unconfident source gets the views search').to.equal(true);
      const config = withLsh(viewsBase, { shards: 3 });
      const url = (workersUrl = await postgresBackend.url());
      const first = await Bank.open(path.join(dir, 'pg-workers'), { url });
      for (const k of ['target', 'source'] as const) await importManifest(first, { bank: k, manifest: manifests[k], config });
      await runFeatures(first, config, { threads: 1 });
      const round = await schedule(first, config);
      expect(round.stage).to.equal('match');
      expect(round.jobs, '2 windows of 2 sources x 3 shards').to.equal(6);
      const second = await Bank.open(path.join(dir, 'pg-workers'), { url });
      try {
        const workers = [first, second].map((bk, k) => new Worker(bk, config, { stages: ['match', 'pair'], concurrency: 1, drain: true, id: `w${k}`, threads: 1 }));
        const rankings = new Map<string, string>();
        const wide = await wideStages(() => Promise.all(workers.map((w) => w.run())), rankings);
        expect(wide, 'the same sources get the same stages as the unsharded run').to.deep.equal(viewsReference.wide);
        expect(sorted(rankings), 'the same shortlists, votes and promise').to.deep.equal(sorted(viewsReference.rankings));
        expect(await first.repo(MatchPartialsRepo).count()).to.equal(0);
        // each holds the shards it loaded (every shard by one of them at least)
        const held = workers.map((w) => w.state.shards);
        expect(new Set(held.flat()).size, JSON.stringify(held)).to.equal(3);
        const jobs = await first.repo(JobsRepo).list();
        const matchJobs = jobs.filter((j) => j.stage === 'match');
        expect(matchJobs.every((j) => parseShardKey(j.key!) !== null)).to.equal(true);
        expect(matchJobs.filter((j) => parseShardKey(j.key!)!.phase === 'wide'), 'the wide phase of the window with the unconfident source, on each shard').to.have.length(3);
        expect(await candidatesOf(first)).to.deep.equal(viewsReference.cand);
        expect(await pairsByExtId(first)).to.deep.equal(viewsReference.pairs);
      } finally {
        dropIndexes(first);
        dropIndexes(second);
        await first.close();
        await second.close();
      }
    });
  });

  forEachBackend('a changed index representation', (b) => {
    it('re-encodes the stored codes in place, resumably, keeping row ids and the watermark of additions', async function () {
      // a matched bank (SQLite: the unsharded run's; PostgreSQL: the workers'): re-encoding must not send its sources
      // back to matching
      const config = withLsh(base, b.name === 'sqlite' ? {} : { shards: 3 });
      if (b.name === 'postgres' && !workersUrl) return this.skip();
      const bank = b.name === 'sqlite' ? await Bank.open(path.join(dir, 'whole')) : await Bank.open(path.join(dir, 'pg-workers'), { url: workersUrl });
      try {
        const repo = bank.repo(LshRepo);
        const key = paramsKey(config.lsh);
        const rows0: LshRow[] = [];
        for await (const r of repo.rowsAfter(0)) rows0.push(r);
        const seq = await repo.sequence();
        // rows as the index before issue 35 wrote them: 8 tables' codes and the sketch (40 bytes a keypoint)
        await bank.transaction(async (tx) => {
          for (const r of rows0) await tx.repo(LshRepo).recode(r.id, 'srht-v3:t8:c24:s1', r.count, new Uint32Array(r.count * 10).fill(7));
        });
        expect(await repo.countOtherParams(key)).to.equal(rows0.length);
        // killed after the first batch of one row (the last: the rows below it are re-encoded after an index loaded
        // it), the rest is re-encoded by the next run
        const ac = new AbortController();
        let ticks = 0;
        const progress = () => ({ tick: () => (++ticks === 1 ? ac.abort() : undefined), setTotal: () => undefined, stop: () => undefined });
        const origBatch = LshRepo.prototype.otherParams;
        LshRepo.prototype.otherParams = function (p, after) {
          return origBatch.call(this, p, Math.max(after, rows0[rows0.length - 2]!.id), 1);
        };
        try {
          expect((await indexTargets(bank, config, { signal: ac.signal, reencodeProgress: progress })).reencoded).to.equal(1);
        } finally {
          LshRepo.prototype.otherParams = origBatch;
        }
        expect(await repo.countOtherParams(key)).to.equal(rows0.length - 1);
        // an index opened meanwhile holds the rows already re-encoded only, and is loaded anew once the rest are
        expect((await openIndex(bank, config)).index.size).to.equal(1);
        expect((await indexTargets(bank, config, {})).reencoded).to.equal(rows0.length - 1);
        expect((await openIndex(bank, config)).index.size).to.equal(rows0.length);
        const after: LshRow[] = [];
        for await (const r of repo.rowsAfter(0)) after.push(r);
        expect(after.map((r) => [r.id, r.itemId, Array.from(r.codes)])).to.deep.equal(rows0.map((r) => [r.id, r.itemId, Array.from(r.codes)]));
        expect(await repo.sequence()).to.equal(seq);
        expect(await bank.repo(CandidatesRepo).countPending(seq), 'no source is due for matching again').to.equal(0);
      } finally {
        dropIndexes(bank);
        await bank.close();
      }
    });
  });

  forEachBackend('bucket counts per shard kept in the bank', (b) => {
    it("a shard's whole-index bucket sizes are the sum of each range's stored counts: another process reads no other range's codes, and a changed range is counted again", async function () {
      const config = withLsh(base, { shards: 3 });
      if (b.name === 'postgres' && !workersUrl) return this.skip();
      const open = () => (b.name === 'sqlite' ? Bank.open(path.join(dir, 'whole')) : Bank.open(path.join(dir, 'pg-workers'), { url: workersUrl }));
      const key = paramsKey(config.lsh);
      const rows: LshRow[] = [];
      let bank = await open();
      for await (const r of bank.repo(LshRepo).rowsAfter(0, undefined, key)) rows.push(r);
      const ids = rows.map((r) => r.itemId).sort((x, y) => x - y);
      // two ranges no stored plan has (an earlier test's runs kept counts for theirs: 0..c, c+1..OPEN_END)
      const mid = ids[Math.floor(ids.length / 2)]!;
      const plan = [{ first: -1, last: mid - 1 }, { first: mid, last: Number.MAX_SAFE_INTEGER - 1 }];
      const truth = (bits: number, list: LshRow[]) => {
        const sizes = new Uint32Array(1 << bits);
        for (const r of list) countBuckets(sizes, r.codes, bits);
        return sizes;
      };
      // which ranges' codes a process reads (rowsAfter: a shard's load, and counting)
      const read: string[] = [];
      const orig = LshRepo.prototype.rowsAfter;
      LshRepo.prototype.rowsAfter = function (after, range, params) {
        read.push(range ? `${range.first}` : 'all');
        return orig.call(this, after, range, params);
      };
      try {
        const first = await openIndex(bank, config, -Infinity, plan[1], plan);
        const bits = first.index.params.bits;
        expect(Array.from(first.index.bucketSizes!)).to.deep.equal(Array.from(truth(bits, rows)));
        expect(read, 'the first process loads its shard, then counts each range once').to.deep.equal([`${mid}`, '-1', `${mid}`]);
        for (const r of plan) expect((await bank.repo(LshRepo).bucketCounts(key, bits, r))?.rows).to.equal(rows.filter((x) => x.itemId >= r.first && x.itemId <= r.last).length);
        dropIndexes(bank);
        await bank.close();
        // another process (a new bank handle: nothing counted in memory) loading shard 0 reads only shard 0's codes
        bank = await open();
        read.length = 0;
        const second = await openIndex(bank, config, -Infinity, plan[0], plan);
        expect(read).to.deep.equal(['-1']);
        expect(Array.from(second.index.bucketSizes!)).to.deep.equal(Array.from(truth(bits, rows)));
        // a range whose rows changed (its last item indexed again with other codes: a new row) is counted again, and
        // only it: the rows added since it was counted, then (a row gone) all of it
        const changed = rows.filter((r) => r.itemId >= mid).at(-1)!;
        const other = rows.find((r) => r.itemId < mid)!;
        const put = (r: LshRow, sha: string) => bank.transaction((tx) => tx.repo(LshRepo).putMany([{ itemId: r.itemId, imageSha256: sha, count: r.count, codes: r.codes }], key));
        await put({ ...changed, count: other.count, codes: other.codes }, other.imageSha256);
        dropIndexes(bank);
        read.length = 0;
        const third = await openIndex(bank, config, -Infinity, plan[0], plan);
        expect(read).to.deep.equal(['-1', `${mid}`, `${mid}`]);
        expect(Array.from(third.index.bucketSizes!)).to.deep.equal(Array.from(truth(bits, [...rows.filter((r) => r !== changed), other])));
        await put(changed, changed.imageSha256); // as it was (later tests read this bank)
      } finally {
        LshRepo.prototype.rowsAfter = orig;
        dropIndexes(bank);
        await bank.close();
      }
    });
  });

  it('the queue gives a worker the jobs of the shards it holds first, and any job when none is left', async () => {
    const bank = await Bank.open(path.join(dir, 'claims'));
    try {
      const jobs = bank.repo(JobsRepo);
      await jobs.enqueueKeyedRanges('match', [
        { range: { first: 1, last: 2 }, key: '0-10@abc' },
        { range: { first: 1, last: 2 }, key: '11-20@abc' },
        { range: { first: 3, last: 4 }, key: '0-10@abc' },
        { range: { first: 3, last: 4 }, key: '11-20@abc' },
      ]);
      const a = await jobs.claim(['match'], 'w', 60_000, ['11-20@']);
      const c = await jobs.claim(['match'], 'w', 60_000, ['11-20@']);
      const d = await jobs.claim(['match'], 'w', 60_000, ['11-20@']);
      expect([a!.key, a!.first, c!.key, c!.first, d!.key, d!.first]).to.deep.equal(['11-20@abc', 1, '11-20@abc', 3, '0-10@abc', 1]);
      expect((await jobs.claim(['match'], 'w', 60_000, ['1-2@']))!.key, 'a prefix is a whole range').to.equal('0-10@abc');
    } finally {
      await bank.close();
    }
  });

  it('the merge ranks the shards\' pictures by score, keeps a picture\'s twins together, and drops mirrored hits when a shard was confident', () => {
    const c = (t: number, rank: number, score: number, mirrored = false): CandidateInput => ({ targetItemId: t, rank, imageScore: score, matches: 20, inliers: 15, homography: null, mirrored, pairs: null });
    const part = (shard: string, confident: boolean, cands: CandidateInput[]): MatchPartial => ({ sourceItemId: 1, shard, plan: 'p', imageSha256: 'x', seq: 1, confident, candidates: cands });
    const merged = mergePartials([part('0-9', false, [c(3, 1, 0.5), c(4, 1, 0.5), c(5, 2, 0.3, true)]), part('10-19', true, [c(12, 1, 0.9), c(11, 2, 0.5)])], 3);
    expect(merged.map((m) => `${m.targetItemId}#${m.rank}`)).to.deep.equal(['12#1', '3#2', '4#2', '11#3']);
    const noConfident = mergePartials([part('0-9', false, [c(5, 1, 0.3, true)]), part('10-19', false, [c(12, 1, 0.25)])], 5);
    expect(noConfident.map((m) => `${m.targetItemId}#${m.rank}`)).to.deep.equal(['5#1', '12#2']);
    // one search verifies its whole shortlist: an image another shard verified with fewer votes than a confident hit
    // is kept (4: 20 votes < 50), as one search keeps it
    const voted = (p: MatchPartial, shortlist: [number, number][]): MatchPartial => ({ ...p, wide: { picture: 'x', searched: true, sure: p.confident, evidence: null, top: [], shortlist } });
    const kept = mergePartials([voted(part('0-9', false, [c(3, 1, 0.25), c(4, 2, 0.22)]), [[3, 80], [4, 20]]), voted(part('10-19', true, [c(12, 1, 0.9)]), [[12, 50]])], 5, 0.3);
    expect(kept.map((m) => `${m.targetItemId}#${m.rank}`)).to.deep.equal(['12#1', '3#2', '4#3']);
    // a twin (13, after its head 3 at the same rank) goes with its head's place in the shortlist
    expect(mergePartials([voted(part('0-9', false, [c(3, 1, 0.25), c(13, 1, 0.25), c(4, 2, 0.22)]), [[3, 80], [4, 20]]), voted(part('10-19', false, [c(12, 1, 0.28)]), [[12, 50]])], 5, 0.3, 2).map((m) => `${m.targetItemId}#${m.rank}`)).to.deep.equal(['12#1', '3#2', '13#2']);
    // one search verifies the 2 most-voted images of all shards' shortlists together: 4 (20 votes) was not among them
    expect(mergePartials([voted(part('0-9', false, [c(3, 1, 0.25), c(4, 2, 0.22)]), [[3, 80], [4, 20]]), voted(part('10-19', false, [c(12, 1, 0.28)]), [[12, 50]])], 5, 0.3, 2).map((m) => m.targetItemId)).to.deep.equal([12, 3]);
  });
});
