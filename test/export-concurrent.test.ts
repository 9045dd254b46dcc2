// Exports that cannot double (issue 36, finding 4): `export --new` runs started together (two daemons' scheduled
// exports and a manual one) claim what they write, so each sentence pair lands in exactly one of their files; an export
// that died leaves its claim to the next one once its lease ran out; a failed export gives its claim back.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ExportClaimsRepo, type Bank } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { exportPairs } from '../src/stages/export/export.js';
import { addItem, decision, storeDecisions } from './export-helpers.js';
import { runCli, tempDir } from './helpers.js';
import { forEachBackend } from './helpers/backends.js';

const N = 24;

/** N emitted caption pairs with distinct texts (one sentence pair each). */
async function fill(bank: Bank, dir: string): Promise<void> {
  const ds = [];
  for (let i = 0; i < N; i++) {
    const s = await addItem(bank, dir, 'source', `s${i}`, `Sentence number ${i} about the harbour fire.`, 100 + i);
    const t = await addItem(bank, dir, 'target', `t${i}`, `关于港口火灾的第${i}句话。`, 300 + i);
    ds.push(decision(s, t, `Sentence number ${i} about the harbour fire.`, `关于港口火灾的第${i}句话。`, 'com', 0.5));
  }
  await storeDecisions(bank, ds);
}

/** The English texts of a TSV export (header dropped). */
const texts = (file: string): string[] => fs.readFileSync(file, 'utf8').trim().split('\n').slice(1).filter(Boolean).map((l) => l.split('\t')[0]!);

forEachBackend('concurrent export --new', (b) => {
  const { config } = loadConfig({});

  it('three exports started together write each sentence pair exactly once', async () => {
    const dir = tempDir('capbridge-expc-');
    const bank = await b.open(dir);
    try {
      await fill(bank, dir);
      const outs = [0, 1, 2].map((k) => path.join(dir, `new-${k}.tsv`));
      const sums = await Promise.all(outs.map((out) => exportPairs(bank, config, { format: 'tsv', out, onlyNew: true })));
      const all = outs.flatMap(texts);
      expect(all).to.have.length(N);
      expect(new Set(all).size).to.equal(N);
      expect(sums.reduce((n, s) => n + s.records, 0)).to.equal(N);
      // and nothing is left for a fourth
      const more = await exportPairs(bank, config, { format: 'tsv', out: path.join(dir, 'after.tsv'), onlyNew: true });
      expect(more.records).to.equal(0);
    } finally {
      await bank.close();
    }
  });

  it('the claim of an export that died is taken over once its lease ran out; a failed export gives its claim back', async () => {
    const dir = tempDir('capbridge-expd-');
    const bank = await b.open(dir);
    try {
      await fill(bank, dir);
      const claims = bank.repo(ExportClaimsRepo);
      // an export still running (its lease holds) keeps what it claimed: another export writes none of it
      const live = await claims.claim({ formats: ['tsv'], paths: ['/running.tsv'], minLevel: 'com', leaseMs: 60_000 });
      expect(live.claimed).to.equal(N);
      expect((await exportPairs(bank, config, { format: 'tsv', out: path.join(dir, 'beside.tsv'), onlyNew: true })).records).to.equal(0);
      await claims.abandon(live.exportId);
      // an export that claimed everything and died: once its lease (1 ms) ran out, the next export takes its claim over
      const dead = await claims.claim({ formats: ['tsv'], paths: ['/nowhere.tsv'], minLevel: 'com', leaseMs: 1 });
      expect(dead.claimed).to.equal(N);
      await new Promise((r) => setTimeout(r, 20));
      expect((await exportPairs(bank, config, { format: 'tsv', out: path.join(dir, 'takeover.tsv'), onlyNew: true })).records).to.equal(N);
      // a failed export (its file cannot be put in place: the folder was removed meanwhile) gives its claim back
      await fill2(bank, dir);
      const gone = path.join(dir, 'gone');
      fs.mkdirSync(gone);
      const p = exportPairs(bank, config, { format: 'tsv', out: path.join(gone, 'x.tsv'), onlyNew: true });
      fs.rmSync(gone, { recursive: true });
      let failed: unknown;
      await p.catch((err: unknown) => (failed = err));
      expect(failed, 'the export into a removed folder did not fail').to.be.instanceOf(Error);
      expect((await exportPairs(bank, config, { format: 'tsv', out: path.join(dir, 'again.tsv'), onlyNew: true })).records).to.equal(2);
    } finally {
      await bank.close();
    }
  });

  if (b.name === 'postgres') {
    it('three `capbridge export --new` processes at once on one PostgreSQL bank: each pair in exactly one file', async function () {
      this.timeout(120_000);
      const dir = tempDir('capbridge-expp-');
      const url = (await b.url())!;
      const bank = await b.open(dir, { url });
      try {
        await fill(bank, dir);
      } finally {
        await bank.close();
      }
      const outs = [0, 1, 2].map((k) => path.join(dir, `cli-${k}.tsv`));
      const rs = await Promise.all(outs.map((out) => runCli(['--data', dir, '--bank', url, 'export', '--format', 'tsv', '--out', out, '--new', '--json'])));
      for (const r of rs) expect(r.code, r.stderr).to.equal(0);
      const all = outs.flatMap(texts);
      expect(all).to.have.length(N);
      expect(new Set(all).size).to.equal(N);
    });
  }
});

/** Two more pairs, after the first exports. */
async function fill2(bank: Bank, dir: string): Promise<void> {
  const ds = [];
  for (let i = N; i < N + 2; i++) {
    const s = await addItem(bank, dir, 'source', `s${i}`, `Another sentence ${i} on the flood.`, 100 + i);
    const t = await addItem(bank, dir, 'target', `t${i}`, `关于洪水的另一句话${i}。`, 300 + i);
    ds.push(decision(s, t, `Another sentence ${i} on the flood.`, `关于洪水的另一句话${i}。`, 'com', 0.5));
  }
  await storeDecisions(bank, ds);
}
