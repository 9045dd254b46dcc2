// The wide-baseline stages' promise (src/stages/match/promise.ts): a shortlist's votes counted in the query's
// keypoints (each weighted as an exact copy's would be, in the same scan), so that match.views.minVotingKeypoints
// means the same whatever the index's vote weights (issue 35's one table gave ~0.7x the votes of the 8-table index,
// and a gate counted in votes let fewer scenes through; a larger bank gives lighter votes too).
import { expect } from 'chai';
import path from 'node:path';
import { Bank, FeaturesRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import { importManifest } from '../src/import/manifest.js';
import { computeMissingFeatures } from '../src/stages/features/index.js';
import { fuseRankings, rankAgainstIndex, shortlistPromise } from '../src/stages/match/index.js';
import { syncIndex } from '../src/lib/image-index/store.js';
import type { DirectVotes } from '../src/lib/image-index/index.js';
import { mulberry32 } from '../src/util/random.js';
import { tempDir, writeManifest } from './helpers.js';
import { TRANSFORMS, scene, write } from './lsh-helpers.js';

describe('match: the wide-baseline promise, counted in keypoints', function () {
  this.timeout(120_000);
  const { config } = loadConfig({});
  const gate = config.match.views.minVotingKeypoints;

  it('gives the same promise and the same gate decision when every vote and the copy are scaled alike', () => {
    const r = mulberry32(33);
    let passed = 0;
    for (let k = 0; k < 200; k++) {
      const keypoints = 100 + Math.floor(r() * 1900);
      const copy = keypoints * (1 + r() * 4);
      // a shortlist of 30 most-voted first, some near the gate and some far from it on either side
      const top = (copy / keypoints) * gate * (0.2 + r() * 2.5);
      const votes = Array.from({ length: 30 }, (_, i) => (i < 3 ? top / 3 : top / 3 / (1 + i * r())) * (0.9 + r() * 0.2)).sort((a, b) => b - a);
      const v: DirectVotes = { slots: votes.map((_, i) => i), votes, keypoints, copy };
      const p = shortlistPromise(v);
      if (p >= gate) passed++;
      for (const c of [0.01, 0.7, 1.35, 40]) {
        const scaled: DirectVotes = { ...v, votes: votes.map((x) => x * c), copy: copy * c };
        expect(shortlistPromise(scaled)).to.be.closeTo(p, 1e-9 * Math.max(1, p));
        expect(shortlistPromise(scaled) >= gate, `shortlist ${k} scaled by ${c}`).to.equal(p >= gate);
      }
      // the shortlist's order does not matter, only its three most-voted images
      expect(shortlistPromise({ ...v, votes: [...votes].reverse() })).to.be.closeTo(p, 1e-9 * Math.max(1, p));
    }
    expect(passed, 'both decisions occur').to.be.within(20, 180);
    // with burst-discounted votes (round 7), the promise counts them, for the three most-voted images
    const votes = [90, 60, 30, 20];
    const v: DirectVotes = { slots: [0, 1, 2, 3], votes, keypoints: 100, copy: 200 };
    expect(shortlistPromise(v)).to.be.closeTo(90, 1e-9);
    expect(shortlistPromise({ ...v, burst: [45, 60, 3, 20] })).to.be.closeTo(54, 1e-9);
    expect(shortlistPromise({ ...v, votes: [...votes].reverse(), burst: [20, 3, 60, 45] }), 'in any order').to.be.closeTo(54, 1e-9);
    expect(shortlistPromise({ slots: [1], votes: [5], keypoints: 10, copy: 0 }), 'nothing a copy could vote with').to.equal(0);
    expect(shortlistPromise({ slots: [], votes: [], keypoints: 10, copy: 100 })).to.equal(0);
  });

  it('on a real index (SQLite): a copy gathers the votes of many of its keypoints, a photo without counterpart of few, whatever lsh.maxBucket makes the votes', async () => {
    const dir = tempDir('capbridge-promise-');
    const t1 = await scene(401);
    writeManifest(path.join(dir, 'target.tsv'), [
      ['t1', write(dir, 't1.png', t1), '场景', 'https://example.org/zh/t1'],
      ...(await Promise.all([402, 403, 404].map(async (k) => [`d${k}`, write(dir, `d${k}.png`, await scene(k)), '无关的照片', `https://example.org/zh/d${k}`]))),
    ]);
    writeManifest(path.join(dir, 'source.tsv'), [
      ['copy', write(dir, 'copy.jpg', await TRANSFORMS.recompression!(t1)), 'The scene again.', 'https://example.org/en/copy'],
      ['none', write(dir, 'none.png', await scene(499)), 'A scene nobody else photographed.', 'https://example.org/en/none'],
    ]);
    const data = path.join(dir, 'data');
    const prepared = await Bank.open(data);
    try {
      for (const b of ['source', 'target'] as const) await importManifest(prepared, { bank: b, manifest: path.join(dir, `${b}.tsv`), config });
      await computeMissingFeatures(prepared, config, { threads: 1 });
    } finally {
      await prepared.close();
    }
    const seen: Record<'copy' | 'none', { top: number; copy: number; promise: number }[]> = { copy: [], none: [] };
    // lsh.maxBucket sets the bucket weights (ln(1 + maxBucket / size)): the votes change, the decision does not. (A
    // bank holds its in-memory index for its params' key, which maxBucket is not part of: one open per setting.)
    for (const maxBucket of [config.lsh.maxBucket, Math.round(config.lsh.maxBucket / 8)]) {
      const c: Config = { ...config, lsh: { ...config.lsh, maxBucket } };
      const bank = await Bank.open(data);
      try {
        const { handle } = await syncIndex(bank, c);
        for (const ext of ['copy', 'none'] as const) {
          const it = (await bank.items.get('source', ext))!;
          const q = (await bank.repo(FeaturesRepo).get(it.imageSha256))!;
          const r = await rankAgainstIndex(handle, c, q, 5);
          seen[ext].push({ top: r.votes.votes[0] ?? 0, copy: r.votes.copy, promise: shortlistPromise(r.votes) });
        }
      } finally {
        await bank.close();
      }
    }
    expect(seen.copy[1]!.copy / seen.copy[0]!.copy, 'another maxBucket, other votes').to.be.below(0.8);
    for (const ext of ['copy', 'none'] as const) {
      const [a, b] = seen[ext];
      expect(b!.top / a!.top, `${ext}: its votes change with maxBucket`).to.be.below(0.8);
      expect(b!.promise / a!.promise, `${ext}: its promise hardly moves`).to.be.within(0.9, 1.1);
      expect(b!.promise >= gate, `${ext}: nor does the gate's decision`).to.equal(a!.promise >= gate);
    }
    for (const s of seen.copy) {
      // the copy's keypoints vote for t1 much as an exact copy's would (JPEG moves some sketches and buckets)
      expect(s.top / s.copy).to.be.within(0.15, 1.2);
      expect(s.promise).to.be.at.least(4 * gate);
    }
    // another generated scene shares some strokes with the targets, far fewer than a copy
    for (const [i, s] of seen.none.entries()) expect(s.promise).to.be.below(seen.copy[i]!.promise / 4);
  });

  it('archive candidates: two rankings taken in turn, each ranking\'s best compared whatever the other says', () => {
    // 9 and 8 lead one ranking each and come first; 7, 5th in both, waits its turn (reciprocal rank put it first)
    expect(fuseRankings([[9, 1, 2, 3, 7], [8, 4, 5, 6, 7]], 3)).to.deep.equal([9, 8, 1]);
    // a slot met again is skipped, the turn goes on in that ranking
    expect(fuseRankings([[1, 2, 3], [1, 4, 3]], 4)).to.deep.equal([1, 4, 2, 3]);
    expect(fuseRankings([[1, 2], []], 5)).to.deep.equal([1, 2]);
    expect(fuseRankings([[1, 2]], 0)).to.deep.equal([]);
  });
});
