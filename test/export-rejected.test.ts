import path from 'node:path';
import fs from 'node:fs';
import { expect } from 'chai';
import { Bank } from '../src/bank/index.js';
import { ReviewsRepo } from '../src/bank/reviews.js';
import { loadConfig } from '../src/config/load.js';
import { exportPairs } from '../src/stages/export/export.js';
import { tempDir } from './helpers.js';
import { addItem, decision, storeDecisions } from './export-helpers.js';

describe('export: linguists\' rejections', () => {
  it('a pair rejected on the review page is left out of the default export, and kept by --reviewed rejected', async () => {
    const dir = tempDir();
    const bank = await Bank.open(path.join(dir, 'data'));
    const s1 = await addItem(bank, dir, 'source', 's1', 'A dog runs on the beach.', 1);
    const t1 = await addItem(bank, dir, 'target', 't1', '一只狗在海滩上奔跑。', 2);
    const s2 = await addItem(bank, dir, 'source', 's2', 'Two men ride horses.', 3);
    const t2 = await addItem(bank, dir, 'target', 't2', '两个男人骑着马。', 4);
    await storeDecisions(bank, [decision(s1, t1, 'A dog runs on the beach.', '一只狗在海滩上奔跑。', 'par', 0.8), decision(s2, t2, 'Two men ride horses.', '两个男人骑着马。', 'par', 0.7)]);
    await bank.repo(ReviewsRepo).set({ sourceItemId: s2, targetItemId: t2, verdict: 'rejected', en: 'Two men ride horses.', zh: '两个男人骑着马。' });
    const { config } = loadConfig({ env: {} });
    const out = path.join(dir, 'all.tsv');
    await exportPairs(bank, config, { format: 'tsv', out, minLevel: 'com', onlyNew: false });
    const rows = fs.readFileSync(out, 'utf8').trim().split('\n').slice(1);
    expect(rows.map((r) => r.split('\t')[0])).to.deep.equal(['A dog runs on the beach.']);
    const rej = path.join(dir, 'rejected.tsv');
    await exportPairs(bank, config, { format: 'tsv', out: rej, minLevel: 'com', onlyNew: false, reviewed: 'rejected' });
    expect(fs.readFileSync(rej, 'utf8').trim().split('\n').slice(1).map((r) => r.split('\t')[0])).to.deep.equal(['Two men ride horses.']);
    await bank.close();
  });
});
