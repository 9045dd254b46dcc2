// What a worker says and how it ends (issue 36, finding 7): attempts stopped by an outage are not failures (every
// job ends done, `--drain` exits 0); a job that fails for good is the one thing that makes it exit 1; and a worker
// alone never claims that "another worker" has its job (its lease is not renewed, nor reported, once the job failed).
import { expect } from 'chai';
import path from 'node:path';
import { Bank, JobsRepo, openImageBlobs } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import { importManifest } from '../src/import/manifest.js';
import type { Logger } from '../src/util/log.js';
import { Worker } from '../src/worker/worker.js';
import { tempDir } from './helpers.js';
import { startLocalS3, s3ImageSettings, type LocalS3 } from './helpers/s3.js';
import { harvestManifests, seedLexicon } from './helpers/scale.js';

/** A logger that keeps what it is told. */
function listener(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (msg: string) => lines.push(`${level}: ${msg}`);
  return { logger: { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') } as unknown as Logger, lines };
}

describe('worker: exit codes and lease messages that say what happened', function () {
  this.timeout(120_000);
  let s3: LocalS3;
  before(async () => {
    s3 = await startLocalS3();
  });
  after(async () => {
    await s3?.close();
  });

  function configWith(over: Partial<Config['worker']>): Config {
    const { config } = loadConfig({});
    config.sift.threads = 1;
    config.worker = { ...config.worker, batch: { features: 1, match: 1, pair: 1 }, pollSeconds: 0.1, ...over };
    return config;
  }

  it('features jobs stopped by an image store outage are given back and done later: no failure, nothing given up', async () => {
    const dir = tempDir('capbridge-wexit-');
    const manifests = await harvestManifests(dir, 1, 0);
    const settings = s3ImageSettings(s3, 'flaky-jobs', { maxAttempts: 1, timeoutMs: 2000 });
    const config = configWith({});
    seedLexicon(path.join(dir, 'data')); // the features stage counts captions into the IDF table
    const bank = await Bank.open(path.join(dir, 'data'), { blobs: await openImageBlobs(dir, settings) });
    try {
      for (const b of ['source', 'target'] as const) await importManifest(bank, { bank: b, manifest: manifests[b], config });
      s3.failNext(2, 503); // the first reads of the images fail (one try per request): the store is down, briefly
      const { logger, lines } = listener();
      // a features worker, stopped once every features job is done (the later stages are not this test's)
      const ac = new AbortController();
      const run = new Worker(bank, config, { stages: ['features'], concurrency: 1, logger, signal: ac.signal }).run();
      for (let i = 0; i < 600; i++) {
        const jobs = await bank.repo(JobsRepo).list();
        if (jobs.some((j) => j.stage === 'features') && jobs.filter((j) => j.stage === 'features').every((j) => j.state === 'done')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      ac.abort();
      const summary = await run;
      expect(summary.interrupted, lines.join('\n')).to.be.at.least(1);
      expect(summary).to.include({ failed: 0, gaveUp: 0 });
      expect((await bank.repo(JobsRepo).list()).filter((j) => j.stage === 'features').every((j) => j.state === 'done')).to.equal(true);
      expect(await bank.items.countByStatus(null, 'failed')).to.equal(0);
      expect(await bank.items.countByStatus(null, 'new')).to.equal(0);
    } finally {
      await bank.close();
    }
  });

  it('a worker alone whose job fails: no "another worker" in its log, and the job given up after its attempts is what it reports', async () => {
    const dir = tempDir('capbridge-wlease-');
    // a lease renewed every 250 ms and a pause of a second after each failure: the old heartbeat ran on through it
    const config = configWith({ leaseSeconds: 0.3, pollSeconds: 1 });
    const bank = await Bank.open(dir);
    try {
      await bank.transaction((tx) => tx.repo(JobsRepo).enqueueKeyed('crawl', ['"not a list of sites"']));
      const { logger, lines } = listener();
      const summary = await new Worker(bank, config, { stages: ['crawl'], concurrency: 1, drain: true, logger }).run();
      expect(lines.filter((l) => /another worker/.test(l)), lines.join('\n')).to.deep.equal([]);
      expect(lines.filter((l) => /lost the lease/.test(l)), lines.join('\n')).to.deep.equal([]);
      expect(summary).to.include({ failed: 5, gaveUp: 1 });
      expect(lines.some((l) => /failed 5 times: closed/.test(l)), lines.join('\n')).to.equal(true);
    } finally {
      await bank.close();
    }
  });
});
