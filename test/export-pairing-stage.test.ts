// runPairing over real candidate rows (the lsh-index layer's table, migration 3): emitted pairs, idempotent
// re-runs, re-decision after a caption change, withdrawal when a candidate disappears.
import path from 'node:path';
import { expect } from 'chai';
import { Bank, CandidatesRepo, PairsRepo, type CandidateInput } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { runPairing } from '../src/stages/pair/pairing.js';
import type { CaptionScorer as Scorer } from '../src/lib/comparability/index.js';
import { tempDir } from './helpers.js';
import { addItem, taggedScorer } from './export-helpers.js';

const config = loadConfig({}).config;
// Decision rules only: the level is read from the Chinese caption.
const scorer: Scorer = taggedScorer();

describe('pairing stage over candidates', () => {
  it('emits, re-runs idempotently, re-decides a changed caption, drops a vanished candidate', async () => {
    const dir = tempDir();
    const bank = await Bank.open(path.join(dir, 'data'));
    try {
      const s1 = await addItem(bank, dir, 'source', 's1', 'Boats in the harbour.', 1);
      const s2 = await addItem(bank, dir, 'source', 's2', '', 2); // empty caption: image search only
      const t1 = await addItem(bank, dir, 'target', 't1', '港口的船 [par]', 3);
      const t2 = await addItem(bank, dir, 'target', 't2', '港口 [pse]', 4);
      const t3 = await addItem(bank, dir, 'target', 't3', '港口的船只 [com]', 5);
      const H = [1, 0, 0, 0, 1, 0, 0, 0, 1];
      const cand = (targetItemId: number, rank: number, imageScore: number, matches: number, inliers: number): CandidateInput => ({
        targetItemId, rank, imageScore, matches, inliers, homography: H, mirrored: false, pairs: null,
      });
      const at = new Date().toISOString();
      const cands = bank.repo(CandidatesRepo);
      const s1cands = [cand(t1, 0, 0.9, 120, 80), cand(t2, 1, 0.8, 100, 60), cand(t3, 2, 0.05, 30, 13)]; // t3: image score below match.minScore
      await cands.replaceFor(s1, s1cands, at);
      await cands.replaceFor(s2, [cand(t1, 0, 0.9, 120, 80)], at);
      const first = await runPairing(bank, config, { scorer });
      expect(first.decided).to.equal(4);
      expect(first.emitted).to.equal(1);
      expect(first.notEmitted).to.deep.equal({ caption: 1, image: 1, level: 1, filter: 0 });
      const repo = bank.repo(PairsRepo);
      expect((await repo.get(s1, t1))?.emitted).to.equal(1);
      // nothing changed: nothing decided again
      const second = await runPairing(bank, config, { scorer });
      expect(second.decided).to.equal(0);
      expect((await repo.count(true)) + (await repo.count(false))).to.equal(4);
      // a caption changes: that source is re-decided, no row is added
      await bank.items.upsert({ bank: 'target', extId: 't2', caption: '港口的船 [com]', lang: 'cmn', captionStatus: 'ok', captionReason: null, imageSha256: (await bank.items.byId(t2))!.imageSha256 });
      const third = await runPairing(bank, config, { scorer });
      expect(third.sources).to.equal(1);
      expect((await repo.get(s1, t2))?.emitted).to.equal(1);
      expect((await repo.count(true)) + (await repo.count(false))).to.equal(4);
      // the source is re-matched without t1: its decision goes
      await cands.replaceFor(s1, s1cands.slice(1), at);
      await runPairing(bank, config, { scorer });
      expect(await repo.get(s1, t1)).to.equal(undefined);
      expect(await repo.count(true)).to.equal(1);
    } finally {
      await bank.close();
    }
  });
});
