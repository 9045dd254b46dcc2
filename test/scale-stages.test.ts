// The pipeline's stages (src/stages: the registry every caller runs them through) over both bank backends: import
// (through the CLI, `--bank postgres://…` selecting the PostgreSQL bank) → features (SIFT and the targets' LSH codes)
// → match → pair on the embedded SQLite bank and on PostgreSQL; both end with the same pairs (the same levels and
// scores), and a second run changes nothing.
import { expect } from 'chai';
import path from 'node:path';
import { Bank, LshRepo, TermStatsRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { loadStage, warmStage } from '../src/stages/index.js';
import { runCli, tempDir } from './helpers.js';
import { forEachBackend } from './helpers/backends.js';
import { harvestManifests, pairsByExtId } from './helpers/scale.js';

describe('stages on both bank backends', function () {
  this.timeout(180_000);
  const dir = tempDir('capbridge-stages-');
  let manifests: { source: string; target: string };
  const results = new Map<string, string[]>();

  before(async () => {
    manifests = await harvestManifests(dir, 2, 1);
  });

  forEachBackend('import → match → pair through the CLI', (b) => {
    it('pairs every transformed copy with its scene, and a second run decides nothing again', async () => {
      const data = path.join(dir, `data-${b.name}`);
      const url = await b.url();
      const cli = async (...args: string[]) => {
        const r = await runCli(['--data', data, ...(url ? ['--db', url] : []), ...args, '--json']);
        expect(r.code, r.stderr).to.equal(0);
        return JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
      };
      expect((await cli('import', '--bank', 'source', '--manifest', manifests.source)).added).to.equal(2);
      expect((await cli('import', '--bank', 'target', '--manifest', manifests.target)).added).to.equal(3);
      const bank = await Bank.open(data, { url });
      try {
        const { config } = loadConfig({});
        const [features, match, pair] = [await loadStage('features'), await loadStage('match'), await loadStage('pair')];
        const f = await features(bank, config, { threads: 1 });
        expect(f).to.include({ stage: 'features', items: 5, failed: 0, aborted: false });
        expect(f.detail.indexed, 'the features stage indexes the targets').to.equal(3);
        expect(await bank.repo(LshRepo).countPending()).to.equal(0);
        // the features stage counts its items' captions into the IDF table (2 English, 3 Chinese)
        expect(f.detail.captionsCounted).to.equal(5);
        expect((await bank.repo(TermStatsRepo).load()).docs).to.deep.equal({ en: 2, zh: 3 });
        for (const b of ['source', 'target'] as const) expect(await bank.repo(TermStatsRepo).anyUncounted(b)).to.equal(false);
        expect(await bank.repo(TermStatsRepo).anyUncounted()).to.equal(false);
        // what an idle worker does ahead of the match and pair jobs: the index loaded, the lexicon loaded (nothing
        // is left to count, and nothing is counted twice)
        await warmStage('match', bank, config);
        await warmStage('pair', bank, config);
        expect((await bank.repo(TermStatsRepo).load()).docs).to.deep.equal({ en: 2, zh: 3 });
        const m = await match(bank, config, { threads: 1 });
        expect(m).to.include({ stage: 'match', items: 2, failed: 0, aborted: false });
        expect(m.detail.indexed, 'match only loads the index').to.equal(0);
        expect(m.detail.withCandidates).to.equal(2);
        const p = await pair(bank, config);
        expect(p).to.include({ stage: 'pair', items: 2, aborted: false });
        expect(p.detail.decided).to.be.at.least(2);
        expect((await match(bank, config, { threads: 1 })).items, 'nothing left to match').to.equal(0);
        expect((await pair(bank, config)).detail.decided, 'nothing left to decide').to.equal(0);
        expect(bank.dialect).to.equal(b.name);
        const pairs = await pairsByExtId(bank);
        for (const i of [1, 2]) expect(pairs.some((x) => x.startsWith(`s${i}→t${i} `)), `s${i} → t${i} in ${pairs.join('; ')}`).to.equal(true);
        expect(pairs.some((x) => x.includes('→d1')), 'the unrelated photo is never paired').to.equal(false);
        results.set(b.name, pairs);
        if (results.has('sqlite') && results.has('postgres')) expect(results.get('postgres')).to.deep.equal(results.get('sqlite'));
      } finally {
        await bank.close();
      }
    });
  });
});
