// lsh.window (the news case): with a window of N days a source keeps only the targets harvested within N days of
// it; without a window (0, the default) every target is a candidate.
import { expect } from 'chai';
import path from 'node:path';
import { Bank, CandidatesRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { runMatch } from '../src/lsh-index/stage.js';
import { tempDir } from './helpers.js';
import { TRANSFORMS, scene } from './lsh-helpers.js';

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
        await runMatch(bank, config, { threads: 1 });
        return (await bank.repo(CandidatesRepo).listFor(s)).map((c) => names[c.targetItemId]).sort();
      } finally {
        await bank.close();
      }
    };
    expect(await run(0)).to.deep.equal(['near', 'old']);
    expect(await run(7)).to.deep.equal(['near']);
  });
});
