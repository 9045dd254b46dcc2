// The fault suite, in process (issue 36): what a bank outage does to the bank's connections and to the stages, on the
// real PostgreSQL the tests start. A connection dropped under a transaction never crashes the process; a stage whose
// statement meets a dropped connection stops without marking the item failed, and a rerun gives what one
// uninterrupted run gives.
import { expect } from 'chai';
import path from 'node:path';
import { Bank } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { runPairing } from '../src/stages/pair/index.js';
import { importManifest } from '../src/import/manifest.js';
import { runFeatures } from '../src/stages/features/index.js';
import { observeSourceCosts, runMatch } from '../src/stages/match/index.js';
import { tempDir } from './helpers.js';
import { terminateSessions } from './helpers/pg-cluster.js';
import { pgUnavailable, startPg } from './helpers/postgres.js';
import { harvestManifests, pairsByExtId, seedLexicon } from './helpers/scale.js';

const dbName = (url: string) => new URL(url).pathname.slice(1);
/** The bank's outage error, recognised by name as the stages do. */
const isBankUnavailable = (err: unknown): boolean => err instanceof Error && err.name === 'BankUnavailableError';

/** Waits until the bank answers again (as a worker does): pooled connections whose sessions were terminated fail
 *  their next statement until the pool has dropped them all. */
async function settle(bank: Bank): Promise<void> {
  for (let i = 0; i < 50; i++) {
    if ((await bank.health()).up && (await bank.health()).up) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the bank did not answer again within 10 s');
}

describe('fault suite: the bank drops connections (PostgreSQL)', function () {
  this.timeout(180_000);
  const why = pgUnavailable();
  if (why) {
    it(`skipped: ${why}`, function () {
      this.skip();
    });
    return;
  }
  const dir = tempDir('capbridge-faults-');
  const { config } = loadConfig({});
  config.sift.threads = 1;

  it('a connection terminated while a transaction holds it: the transaction fails naming PostgreSQL, the process lives on (finding 1)', async () => {
    const url = await (await startPg()).createDatabase();
    const bank = await Bank.open(path.join(dir, 'tx'), { url });
    const { port } = await startPg();
    try {
      let caught: unknown;
      try {
        await bank.transaction(async (tx) => {
          await tx.meta.set('k', 'v');
          // the server ends this session while the transaction waits between two statements (the connection is
          // checked out of the pool and idle): node-postgres emits 'error' on the client, which must be listened to
          expect(terminateSessions(port, dbName(url))).to.be.at.least(1);
          await new Promise((r) => setTimeout(r, 300));
          await tx.meta.set('k2', 'v2');
        });
      } catch (err) {
        caught = err;
      }
      expect(isBankUnavailable(caught), String(caught)).to.equal(true);
      expect((caught as Error).message).to.match(/^the bank \(PostgreSQL at postgres:\/\/capbridge@127\.0\.0\.1:\d+\/\w+\) is unavailable: /);
      await settle(bank);
      // nothing of the transaction stayed, and the bank serves the next statement on a new connection
      expect(await bank.meta.get('k')).to.equal(undefined);
      await bank.meta.set('after', '1');
      expect(await bank.meta.get('after')).to.equal('1');
      expect((await bank.health()).up).to.equal(true);
      // idle pooled connections terminated: no crash either, the next statement reconnects
      terminateSessions(port, dbName(url));
      await new Promise((r) => setTimeout(r, 300));
      await settle(bank);
      expect(await bank.meta.get('after')).to.equal('1');
    } finally {
      await bank.close();
    }
  });

  it('a connection terminated under a streaming read (iterate), between reads or before the first: the read fails naming PostgreSQL, never hangs (the clean-clone CI hang)', async () => {
    const url = await (await startPg()).createDatabase();
    const bank = await Bank.open(path.join(dir, 'it'), { url });
    const { port } = await startPg();
    try {
      await bank.transaction(async (tx) => {
        for (let i = 0; i < 1200; i++) await tx.meta.set(`k${String(i).padStart(4, '0')}`, 'v');
      });
      // a read of more than one batch (500 rows), its session ended after the first batch, then before any batch
      for (const after of [1, 0]) {
        let seen = 0;
        let caught: unknown;
        const t0 = Date.now();
        try {
          if (after === 0) {
            const rows = bank.sql.iterate<{ key: string }>('SELECT key FROM meta WHERE key LIKE ? ORDER BY key', ['k%'])[Symbol.asyncIterator]();
            const first = rows.next();
            terminateSessions(port, dbName(url));
            await first;
            for (let r = await rows.next(); !r.done; r = await rows.next()) seen++;
          } else {
            for await (const _ of bank.sql.iterate<{ key: string }>('SELECT key FROM meta WHERE key LIKE ? ORDER BY key', ['k%'])) {
              if (++seen === 1) terminateSessions(port, dbName(url));
              await new Promise((r) => setTimeout(r, 0));
            }
          }
        } catch (err) {
          caught = err;
        }
        expect(isBankUnavailable(caught), `after ${after}: ${String(caught)} (${seen} rows)`).to.equal(true);
        expect(Date.now() - t0).to.be.below(20_000);
        await settle(bank);
      }
      // the bank serves the next read in full on a new connection
      let n = 0;
      for await (const _ of bank.sql.iterate('SELECT key FROM meta WHERE key LIKE ?', ['k%'])) n++;
      expect(n).to.equal(1200);
    } finally {
      await bank.close();
    }
  });

  it('connections terminated during match: the stage stops, no source is marked failed, a rerun gives the uninterrupted pairs (finding 2)', async () => {
    const manifests = await harvestManifests(path.join(dir, 'h'), 2, 1);
    const load = async (data: string, url?: string) => {
      seedLexicon(data);
      const bank = await Bank.open(data, { url });
      for (const b of ['source', 'target'] as const) await importManifest(bank, { bank: b, manifest: manifests[b], config });
      await runFeatures(bank, config, { threads: 1 });
      return bank;
    };
    const ref = await load(path.join(dir, 'ref'));
    let reference: string[];
    try {
      await runMatch(ref, config, { threads: 1 });
      await runPairing(ref, config);
      reference = await pairsByExtId(ref);
    } finally {
      await ref.close();
    }
    expect(reference.some((p) => / emitted$/.test(p)), reference.join('; ')).to.equal(true);

    const url = await (await startPg()).createDatabase();
    const { port } = await startPg();
    const bank = await load(path.join(dir, 'pg'), url);
    try {
      let cut = 0;
      let caught: unknown;
      try {
        // after the first source's search, every session of the bank is terminated at once (synchronously: the
        // pool has not seen it when the next source's features are read)
        const stop = observeSourceCosts(() => void (cut++ === 0 && terminateSessions(port, dbName(url))));
        await runMatch(bank, config, { threads: 1 }).finally(stop);
      } catch (err) {
        caught = err;
      }
      expect(cut).to.be.at.least(1);
      expect(isBankUnavailable(caught), String(caught)).to.equal(true);
      await settle(bank);
      expect(await bank.items.countByStatus(null, 'failed')).to.equal(0);
      // the next run resumes: the same pairs as one uninterrupted SQLite run
      const again = await runMatch(bank, config, { threads: 1 });
      expect(again.failed).to.equal(0);
      await runPairing(bank, config);
      expect(await pairsByExtId(bank)).to.deep.equal(reference);
      expect(await bank.items.countByStatus(null, 'failed')).to.equal(0);
    } finally {
      await bank.close();
    }
  });
});
