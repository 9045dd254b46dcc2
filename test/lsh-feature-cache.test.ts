// Verification reads a shortlisted target's features; on a PostgreSQL bank each read is a round trip and ~1 ms of
// CPU on each side, and the same targets come back in many shortlists (over 20 reads per source in bench:scale).
// The index handle keeps the stored features of the targets verified last, within lsh.featureCacheMB, least
// recently used dropped, and the prepared (RootSIFT) features of the very last ones.
import { expect } from 'chai';
import path from 'node:path';
import { Bank, FeaturesRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { IndexHandle, featureBytes, lshParams, openIndex } from '../src/lib/image-index/store.js';
import { tempDir } from './helpers.js';
import { scene } from './lsh-helpers.js';
import { featuresThenMatch } from './helpers/stages.js';

describe('lsh-index: target features held for verification', function () {
  this.timeout(120_000);
  it('reads a target from the bank once while it is held, drops the least recently used past the byte bound, and a bound of 0 holds none', async () => {
    const bank = await Bank.open(path.join(tempDir('capbridge-fcache-'), 'data'));
    try {
      const { config } = loadConfig({});
      for (const [i, seed] of [720, 721, 722].entries()) {
        const rec = await bank.images.prepare(await scene(seed));
        await bank.transaction(async (tx) => {
          await tx.images.record(rec);
          await tx.items.upsert({ bank: 'target', extId: `t${i}`, caption: '广场上的人群。', lang: 'cmn', captionStatus: 'ok', captionReason: null, imageSha256: rec.sha256 });
        });
      }
      await featuresThenMatch(bank, config, { threads: 1 }); // features and LSH codes of the three targets (no source yet)
      const params = (await openIndex(bank, config)).index.params;
      expect(lshParams(config, 0).probes).to.equal(params.probes);
      const bytes: number[] = [];
      const probe = new IndexHandle(bank, params);
      await probe.refresh();
      for (const slot of [0, 1, 2]) {
        const f = (await bank.repo(FeaturesRepo).get(probe.slot(slot)!.sha))!;
        bytes.push(featureBytes(f)); // keypoints, descriptors and the sketches kept beside them
      }
      // room for the two largest of the three, not for all; prepared features of the last image only
      const sorted = [...bytes].sort((a, b) => b - a);
      const h = new IndexHandle(bank, params, -Infinity, sorted[0]! + sorted[1]!, 1);
      await h.refresh();
      const first = await h.load(0);
      expect(first!.f.count).to.be.greaterThan(50);
      expect(await h.load(0)).to.equal(first); // the prepared features themselves
      expect(h.reads).to.deep.equal({ memory: 1, bank: 1 });
      await h.load(1);
      await h.load(0); // held as stored features: prepared again, not read
      expect(h.reads).to.deep.equal({ memory: 2, bank: 2 });
      await h.load(2); // over the bound: the least recently used (1) goes, unless the three fit
      expect(h.cachedBytes).to.be.at.most(h.cacheBytes);
      await h.load(0);
      expect(h.reads).to.deep.equal({ memory: 3, bank: 3 });
      await h.load(1);
      const threeFit = bytes[0]! + bytes[1]! + bytes[2]! <= h.cacheBytes;
      expect(h.reads).to.deep.equal(threeFit ? { memory: 4, bank: 3 } : { memory: 3, bank: 4 });
      // the same answers from the bank every time when nothing is held
      const none = new IndexHandle(bank, params, -Infinity, 0, 1);
      await none.refresh();
      for (const slot of [0, 1, 0, 1]) expect((await none.load(slot))!.vecs).to.deep.equal((await h.load(slot))!.vecs);
      expect(none.reads).to.deep.equal({ memory: 0, bank: 4 });
      expect(none.cachedBytes).to.equal(0);
    } finally {
      await bank.close();
    }
  });
});
