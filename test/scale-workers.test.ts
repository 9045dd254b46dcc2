// The scale-out mode on a real PostgreSQL bank: two `capbridge worker` processes share the jobs of one harvest;
// one is killed with -9 while it holds a job. Its job is claimed again after the lease, nothing is lost or stored
// twice, and the pairs at the end are those of one SQLite process over the same harvest. The surviving worker's
// /healthz reports its claims.
import { expect } from 'chai';
import path from 'node:path';
import { Bank, CandidatesRepo, JobsRepo, LshRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { runCycle } from '../src/daemon/cycle.js';
import { runPairing } from '../src/stages/pair/pairing.js';
import { createLogger } from '../src/util/log.js';
import { runCli, tempDir } from './helpers.js';
import { pgUnavailable, startPg } from './helpers/postgres.js';
import { harvestManifests, pairsByExtId, SMALL_JOBS_ENV, startWorker } from './helpers/scale.js';
import { featuresThenMatch } from './helpers/stages.js';

const ENV = SMALL_JOBS_ENV;

describe('workers on a PostgreSQL bank', function () {
  this.timeout(240_000);
  const why = pgUnavailable();
  if (why) {
    it(`skipped: ${why}`, function () {
      this.skip();
    });
    return;
  }
  const dir = tempDir('capbridge-workers-');
  let manifests: { source: string; target: string };
  let reference: string[];

  before(async () => {
    manifests = await harvestManifests(dir, 2, 1);
    // the reference: one SQLite process over the same harvest
    const data = path.join(dir, 'sqlite');
    for (const b of ['source', 'target'] as const) {
      const r = await runCli(['--data', data, 'import', '--bank', b, '--manifest', manifests[b]]);
      expect(r.code, r.stderr).to.equal(0);
    }
    const bank = await Bank.open(data);
    try {
      const { config } = loadConfig({});
      await featuresThenMatch(bank, config, { threads: 1 });
      await runPairing(bank, config);
      reference = await pairsByExtId(bank);
    } finally {
      await bank.close();
    }
    expect(reference.filter((p) => p.includes('emitted') && !p.includes('not emitted')).length, reference.join('; ')).to.be.at.least(1);
  });

  it('two workers, one killed with -9 holding a job: its job is retaken after the lease, the pairs are those of one process', async () => {
    const url = await (await startPg()).createDatabase();
    const data = path.join(dir, 'pg');
    for (const b of ['source', 'target'] as const) {
      const r = await runCli(['--data', data, '--db', url, 'import', '--bank', b, '--manifest', manifests[b]]);
      expect(r.code, r.stderr).to.equal(0);
    }
    const bank = await Bank.open(data, { url });
    try {
      const jobs = bank.repo(JobsRepo);
      // the daemon in scale-out mode only schedules: its cycle queues the features jobs and runs no stage itself
      const config = loadConfig({}).config;
      config.worker.batch = { features: 1, match: 1, pair: 1 };
      const cycle = await runCycle(bank, config, { logger: createLogger('error'), stages: ['features', 'match', 'pair'] });
      expect(cycle.stages.map((x) => x.stage)).to.deep.equal(['features']);
      expect(cycle.stages[0]!.summary).to.include({ stage: 'features', jobs: 5, scaleOut: true });
      expect(await bank.items.countByStatus(null, 'new')).to.equal(5);
      const a = startWorker(data, url, ENV);
      const b = startWorker(data, url, ENV, ['--port', '0']);
      // kill A as soon as it holds a job
      const aName = `:${a.child.pid}`;
      let victim: number | null = null;
      for (let i = 0; i < 1200 && victim === null; i++) {
        const held = (await jobs.list()).find((j) => j.leased && j.worker?.endsWith(aName));
        if (held) victim = held.id;
        else await new Promise((r) => setTimeout(r, 50));
      }
      expect(victim, 'worker A never claimed a job').to.not.equal(null);
      a.child.kill('SIGKILL');
      // B's /healthz while it works
      let listening = '';
      for (let i = 0; i < 200 && !listening; i++) {
        listening = /listening on (http:\/\/\S+)/.exec(b.stderr())?.[1] ?? '';
        if (!listening) await new Promise((r) => setTimeout(r, 50));
      }
      expect(listening, b.stderr()).to.not.equal('');
      {
        const h = (await (await fetch(`${listening}/healthz`)).json()) as { id: string; stages: string[]; summary: { claims: number } };
        expect(h.id).to.match(new RegExp(`:${b.child.pid}$`));
        expect(h.stages).to.deep.equal(['features', 'match', 'pair']);
        expect(h.summary.claims).to.be.a('number');
        const metrics = await (await fetch(`${listening}/metrics`)).text();
        expect(metrics).to.include('capbridge_worker_claims_total');
        expect(metrics).to.include('capbridge_queue_lag_seconds');
      }
      const ra = await a.out;
      expect(ra.signal).to.equal('SIGKILL');
      const rb = await b.out;
      expect(rb.code, rb.stderr).to.equal(0);
      const sb = JSON.parse(rb.stdout.trim().split('\n').pop()!) as { claims: number; failed: number };
      expect(sb.failed).to.equal(0);
      // every job done; the victim's was claimed again (by B) after its lease ran out
      const all = await jobs.list();
      expect(all.length).to.be.at.least(5 + 2 + 2); // features (5 items), match (2 sources), pair (2 sources with candidates)
      expect(all.every((j) => j.state === 'done'), JSON.stringify(all)).to.equal(true);
      const retaken = all.find((j) => j.id === victim)!;
      expect(retaken.attempts).to.be.at.least(2);
      expect(retaken.worker).to.match(new RegExp(`:${b.child.pid}$`));
      // nothing stored twice, and the same pairs as one SQLite process
      const cands = bank.repo(CandidatesRepo);
      for (const ext of ['s1', 's2']) {
        const list = await cands.listFor((await bank.items.get('source', ext))!.id);
        expect(new Set(list.map((c) => c.targetItemId)).size).to.equal(list.length);
      }
      expect(await pairsByExtId(bank)).to.deep.equal(reference);
      expect(await bank.items.countByStatus(null, 'new')).to.equal(0);
      // the features jobs indexed the targets, each once: no target's codes were written twice (a second writing
      // would raise the watermark and send every source back to be matched again)
      expect(await bank.repo(LshRepo).sequence()).to.equal(await bank.items.count('target'));
    } finally {
      await bank.close();
    }
  });
});
