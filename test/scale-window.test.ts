// lsh.window (the news case): with a window of N days a source keeps only the targets harvested within N days of
// it; without a window (0, the default) every target is a candidate. A target outside the window takes no place in
// the shortlist, and a match run's index holds only the targets within the window of its oldest pending source.
import { expect } from 'chai';
import path from 'node:path';
import { Bank, CandidatesRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { openIndex } from '../src/lib/image-index/store.js';
import { tempDir } from './helpers.js';
import { TRANSFORMS, scene } from './lsh-helpers.js';
import { featuresThenMatch } from './helpers/stages.js';

const DAY = 86_400_000;

async function add(bank: Bank, b: 'source' | 'target', extId: string, png: Buffer, fetchedAt: string): Promise<number> {
  const rec = await bank.images.prepare(png);
  return bank.transaction(async (tx) => {
    await tx.images.record(rec);
    const { id } = await tx.items.upsert({
      bank: b, extId, caption: b === 'source' ? 'A crowd in the square.' : '广场上的人群。', lang: b === 'source' ? 'eng' : 'cmn',
      captionStatus: 'ok', captionReason: null, imageSha256: rec.sha256, pageUrl: `https://${b}.example/${extId}`, fetchedAt,
    });
    return id;
  });
}

describe('lsh.window', function () {
  this.timeout(120_000);
  it('matches a source only against targets harvested within the window; 0 keeps every target', async () => {
    const now = Date.now();
    const png = await scene(700);
    const copy = await TRANSFORMS.crop!(png);
    const names: Record<number, string> = {};
    const run = async (window: number) => {
      const bank = await Bank.open(path.join(tempDir('capbridge-window-'), 'data'));
      try {
        const s = await add(bank, 'source', 's1', png, new Date(now).toISOString());
        names[await add(bank, 'target', 'near', copy, new Date(now - 2 * DAY).toISOString())] = 'near';
        names[await add(bank, 'target', 'old', png, new Date(now - 40 * DAY).toISOString())] = 'old';
        const { config } = loadConfig({});
        config.lsh.window = window;
        await featuresThenMatch(bank, config, { threads: 1 });
        return (await bank.repo(CandidatesRepo).listFor(s)).map((c) => names[c.targetItemId]).sort();
      } finally {
        await bank.close();
      }
    };
    expect(await run(0)).to.deep.equal(['near', 'old']);
    expect(await run(7)).to.deep.equal(['near']);
  });

  it('a target outside the window takes no shortlist place, and the index holds only the window of the oldest pending source', async () => {
    const now = Date.now();
    const png = await scene(710);
    const bank = await Bank.open(path.join(tempDir('capbridge-window-'), 'data'));
    try {
      const { config } = loadConfig({});
      config.lsh.window = 7;
      config.lsh.shortlist = 1; // the old, identical photo has the most votes: it would take the only place
      const s = await add(bank, 'source', 's1', png, new Date(now).toISOString());
      const near = await add(bank, 'target', 'near', await TRANSFORMS.crop!(png), new Date(now - 2 * DAY).toISOString());
      await add(bank, 'target', 'old', png, new Date(now - 40 * DAY).toISOString());
      await add(bank, 'target', 'older', await TRANSFORMS.rotation!(png), new Date(now - 90 * DAY).toISOString());
      const m = await featuresThenMatch(bank, config, { threads: 1 });
      expect((await bank.repo(CandidatesRepo).listFor(s)).map((c) => c.targetItemId)).to.deep.equal([near]);
      expect(m.indexedImages, 'the targets older than the window are not held').to.equal(1);
      // a source harvested 45 days ago needs the old targets back: its run holds them again
      await add(bank, 'source', 's2', png, new Date(now - 45 * DAY).toISOString());
      const m2 = await featuresThenMatch(bank, config, { threads: 1 });
      expect(m2.indexedImages).to.equal(2); // old (5 days from s2) and near (43 days: outside, but newer than the floor)
      expect(m2.sources).to.equal(1);
      // a source 60 days old: its window holds only a mirrored copy (62 days), while the identical photo of 40 days ago,
      // out of its window, is held in memory (newer than the floor) and has the most votes: it must not take the place
      const weak = await add(bank, 'target', 'weak', await TRANSFORMS.mirror!(png), new Date(now - 62 * DAY).toISOString());
      const s3 = await add(bank, 'source', 's3', png, new Date(now - 60 * DAY).toISOString());
      await featuresThenMatch(bank, config, { threads: 1 });
      expect((await bank.repo(CandidatesRepo).listFor(s3)).map((c) => c.targetItemId)).to.deep.equal([weak]);
      expect((await bank.repo(CandidatesRepo).listFor(s)).map((c) => c.targetItemId)).to.deep.equal([near]);
      // without the window, the whole index is held again
      expect((await openIndex(bank, { ...config, lsh: { ...config.lsh, window: 0 } })).index.size).to.equal(4);
    } finally {
      await bank.close();
    }
  });
});
