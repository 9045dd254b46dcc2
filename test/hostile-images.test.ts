// Hostile images in the bank (issue 18, finding 1): an image 1 px on a side after the downscale (1x1, 1000x1,
// 2000x3, a 1x1 GIF frame, in every decoder) and decompression bombs of every decoder, stored as an older bank or a
// crawl may hold them (past the import bounds). `match` goes on for every other item: each hostile item fails with
// its reason, the others are matched; `search --image` and the review page's POST /api/search refuse such a query
// with a clear error (exit 1 / 400), never a crash of the whole run or a 500.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Bank, CandidatesRepo, StatsRepo, type BankName } from '../src/bank/index.js';
import { computeMissingFeatures } from '../src/stages/features/stage.js';
import { loadConfig } from '../src/config/load.js';
import { createReviewServer } from '../src/review/index.js';
import { retakeJpeg, sceneJpeg } from '../src/demo/scenes.js';
import { tempDir } from './helpers.js';
import { runInProcess } from './review-helpers.js';
import { FORMATS, bombs, degenerate, gifWithTinyFrame, storeItem } from './helpers/hostile-images.js';
import { featuresThenMatch } from './helpers/stages.js';

const DEGENERATE: Array<[number, number]> = [[1, 1], [1000, 1], [2000, 3]];

describe('hostile input: images in the bank (match, search, review search)', function () {
  this.timeout(120000);
  let dir: string;
  let bank: Bank;
  const { config } = loadConfig();
  const hostile: Array<{ id: string; reason: RegExp; buf: Buffer }> = [];

  const add = (b: BankName, extId: string, buf: Buffer, caption: string) => storeItem(bank, b, extId, buf, caption);

  before(async () => {
    dir = tempDir('capbridge-hostile-images-');
    bank = await Bank.open(path.join(dir, 'data'));
    for (const f of FORMATS) {
      for (const [w, h] of DEGENERATE) {
        hostile.push({ id: `${f}-${w}x${h}`, buf: await degenerate(f, w, h), reason: new RegExp(`^image too small: ${w}x${h}.*, a side below sift.minSide 16$`) });
      }
    }
    hostile.push({ id: 'gif-frame-1x1', buf: await gifWithTinyFrame(), reason: /^image too small: 1x1, a side below sift.minSide 16$/ });
    for (const b of await bombs()) hostile.push({ id: `bomb-${b.format}`, buf: b.buf, reason: /^image too large: \d+x\d+ = \d+ pixels exceeds sift.maxPixels 50000000$/ });
    // good sources and targets (the demo's scenes, retaken), hostile sources between them
    for (let i = 0; i < 3; i++) {
      await add('source', `good-${i}`, await sceneJpeg(500 + i), 'Rescue workers search the rubble after the earthquake.');
      for (const h of hostile.slice(i * 8, (i + 1) * 8)) await add('source', h.id, h.buf, 'A dog runs on the beach.');
      await add('target', `zh-${i}`, await retakeJpeg(500 + i, 'crop'), '救援人员在地震后的废墟中搜寻。');
    }
    for (const h of hostile.slice(24)) await add('source', h.id, h.buf, 'A dog runs on the beach.');
    // and hostile targets: they must not keep the index from being built
    await add('target', 'zh-1x1', hostile[0]!.buf, '一只狗。');
    await add('target', 'zh-bomb', hostile[hostile.length - 1]!.buf, '一只狗。');
  });
  after(async () => {
    await bank.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('match goes on: every hostile item fails with its reason, every good source is matched', async () => {
    expect(hostile.length).to.equal(FORMATS.length * 3 + 1 + FORMATS.length);
    const summary = await featuresThenMatch(bank, config, { threads: 1 });
    expect(summary.aborted).to.equal(false);
    for (const h of hostile) {
      const item = (await bank.items.get('source', h.id))!;
      expect(item.status, h.id).to.equal('failed');
      expect(item.statusReason, h.id).to.match(h.reason);
    }
    expect((await bank.items.get('target', 'zh-1x1'))!.status).to.equal('failed');
    expect((await bank.items.get('target', 'zh-bomb'))!.status).to.equal('failed');
    const cands = bank.repo(CandidatesRepo);
    for (let i = 0; i < 3; i++) {
      const s = (await bank.items.get('source', `good-${i}`))!;
      const top = (await cands.listFor(s.id))[0];
      expect(top, `good-${i} has a candidate`).to.not.equal(undefined);
      expect(top!.targetItemId, `good-${i} matched its retake`).to.equal((await bank.items.get('target', `zh-${i}`))!.id);
    }
    // a second run (and every daemon cycle) goes through too, and asks nothing of the failed items again
    const again = await featuresThenMatch(bank, config, { threads: 1 });
    expect(again.featureFailures).to.equal(0);
  });

  it('a source whose search throws (damaged stored features) fails with the reason; the others are matched; retried only with --retry-failed', async () => {
    await add('source', 'damaged', await sceneJpeg(510), 'Rescue workers search the rubble after the earthquake.');
    await add('target', 'zh-new', await retakeJpeg(503, 'crop'), '救援人员在地震后的废墟中搜寻。'); // a new target: every source is pending again
    await computeMissingFeatures(bank, config, { threads: 1 });
    const sha = (await bank.items.get('source', 'damaged'))!.imageSha256;
    await bank.sql.run('UPDATE features SET descriptors = zeroblob(10) WHERE sha256 = ?', [sha]);
    const s1 = await featuresThenMatch(bank, config, { threads: 1 });
    expect(s1.aborted).to.equal(false);
    expect(s1.failed).to.equal(1);
    const damaged = (await bank.items.get('source', 'damaged'))!;
    expect(damaged.status).to.equal('failed');
    expect(damaged.statusReason).to.match(/^match: features of image [0-9a-f]{12} are damaged: \d+ keypoints but \d+ keypoint bytes \/ 10 descriptor bytes$/);
    expect(s1.sources).to.equal(3); // the good sources, ranked again against the new target
    for (let i = 0; i < 3; i++) expect((await bank.repo(CandidatesRepo).listFor((await bank.items.get('source', `good-${i}`))!.id)).length, `good-${i}`).to.be.above(0);
    // stats show it with its reason
    const stats = await bank.repo(StatsRepo).all();
    expect(stats.banks.source.failures[damaged.statusReason!]).to.equal(1);
    // a rerun does not try it again
    const s2 = await featuresThenMatch(bank, config, { threads: 1 });
    expect(s2.failed + s2.sources).to.equal(0);
    // the input repaired (features recomputed from the image) and --retry-failed: it is matched
    await bank.sql.run('DELETE FROM features WHERE sha256 = ?', [sha]);
    const s3 = await featuresThenMatch(bank, config, { threads: 1, retryFailed: true });
    expect(s3.failed).to.equal(0);
    expect((await bank.items.get('source', 'damaged'))!.status).to.equal('featured');
    expect((await bank.items.get('source', 'good-0'))!.status).to.equal('featured');
    // the hostile images were tried again too, and failed again with the same reasons
    for (const h of hostile) expect((await bank.items.get('source', h.id))!.statusReason, h.id).to.match(h.reason);
  });

  it('search --image of a degenerate image or a bomb exits 1 naming the file and the reason', async () => {
    for (const h of [hostile[1]!, hostile[2]!, hostile.find((x) => x.id === 'gif-frame-1x1')!, hostile.find((x) => x.id === 'bomb-png')!]) {
      const file = path.join(dir, `${h.id}.img`);
      fs.writeFileSync(file, h.buf);
      const res = await runInProcess(['search', '--data', path.join(dir, 'data'), '--image', file, '--json']);
      expect(res.code, h.id).to.equal(1);
      expect(res.stderr, h.id).to.include(`capbridge: ${file}: image`);
      expect(res.stderr.split('\n').find((l) => l.startsWith('capbridge:'))!.slice(`capbridge: ${file}: `.length), h.id).to.match(h.reason);
    }
  });

  it('POST /api/search of a degenerate image or a bomb is a 400 with the reason, and the server goes on', async () => {
    const app = createReviewServer(bank, config, { host: '127.0.0.1', token: '' });
    await app.ready();
    try {
      for (const h of hostile) {
        const res = await app.inject({ method: 'POST', url: '/api/search?top=3', headers: { 'content-type': 'application/octet-stream' }, payload: h.buf });
        expect(res.statusCode, h.id).to.equal(400);
        expect(res.json().message, h.id).to.match(new RegExp(`^search: ${h.reason.source.slice(1)}`));
      }
      const good = await app.inject({ method: 'POST', url: '/api/search?top=3', headers: { 'content-type': 'image/jpeg' }, payload: await sceneJpeg(501) });
      expect(good.statusCode).to.equal(200);
      expect(good.json().results[0].extId).to.equal('zh-1');
    } finally {
      await app.close();
    }
  });
});
