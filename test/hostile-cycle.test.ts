// Failure isolation over a whole daemon cycle (issue 18): a bank where some items are hostile (degenerate images,
// a decompression bomb, a truncated JPEG, an image file gone from the store), stored as an older bank or a crawl
// may hold them, runs features → match → pair with every stage ok: every other item is processed, every hostile one
// is failed with its reason, and the reasons are shown by `stats`, /metrics and the review page's stats. A caption
// pair whose scoring throws (a fault injected into the real scorer) is stored failed with its reason and the stage
// goes on; it is decided again only when its input changes (or pair --all).
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Bank, CandidatesRepo, StatsRepo, type BankName } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { runCycle } from '../src/daemon/cycle.js';
import { DaemonMetrics } from '../src/daemon/metrics.js';
import { createReviewServer } from '../src/review/index.js';
import { createScorer, type Scorer } from '../src/lib/comparability/index.js';
import { runPairing } from '../src/stages/pair/pairing.js';
import { retakeJpeg, sceneJpeg } from '../src/demo/scenes.js';
import { createLogger } from '../src/util/log.js';
import { tempDir } from './helpers.js';
import { testLexicon, testLexiconDir } from './helpers/comparability.js';
import { runInProcess, SCENES } from './review-helpers.js';
import { degenerate, pngBomb, storeItem } from './helpers/hostile-images.js';

describe('hostile input: one daemon cycle over a bank with hostile items', function () {
  this.timeout(180000);
  let dir: string;
  let data: string;
  let bank: Bank;
  const { config } = loadConfig();
  const hostile: Array<{ bank: BankName; id: string; reason: RegExp }> = [];

  const add = (b: BankName, extId: string, buf: Buffer, caption: string) => storeItem(bank, b, extId, buf, caption);

  before(async () => {
    dir = tempDir('capbridge-hostile-cycle-');
    data = path.join(dir, 'data');
    bank = await Bank.open(data);
    testLexicon();
    fs.cpSync(testLexiconDir(), path.join(data, 'lexicon'), { recursive: true });
    for (let i = 0; i < SCENES.length; i++) {
      await add('source', `en-${i}`, await sceneJpeg(301 + i), SCENES[i]!.en);
      await add('target', `zh-${i}`, await retakeJpeg(301 + i, 'crop'), SCENES[i]!.zh);
    }
    const jpeg = await sceneJpeg(399);
    const cases: Array<[BankName, string, Buffer, RegExp]> = [
      ['source', 'dot', await degenerate('png', 1, 1), /^image too small: 1x1, a side below sift.minSide 16$/],
      ['source', 'strip', await degenerate('webp', 2000, 3), /^image too small: 2000x3 \(640x1 after the downscale to sift.maxSide 640\), a side below sift.minSide 16$/],
      ['source', 'bomb', pngBomb(), /^image too large: 100000x100000 = 10000000000 pixels exceeds sift.maxPixels 50000000$/],
      ['target', 'cut', jpeg.subarray(0, Math.floor(jpeg.length / 3)), /^truncated or corrupt image data \(jpeg\)/],
    ];
    for (const [b, id, buf, reason] of cases) {
      await add(b, id, buf, b === 'source' ? 'A dog runs on the beach.' : '一只狗在海滩上跑。');
      hostile.push({ bank: b, id, reason });
    }
    // an item whose image file has gone from the store since it was stored
    const gone = await add('source', 'gone', await sceneJpeg(398), 'A cat sleeps.');
    fs.rmSync(path.join(data, gone.path));
    hostile.push({ bank: 'source', id: 'gone', reason: /^image file unavailable: / });
  });
  after(async () => {
    await bank.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('features, match and pair all end ok; every good item is processed, every hostile one failed with its reason', async () => {
    const metrics = new DaemonMetrics(bank);
    const report = await runCycle(bank, config, { logger: createLogger('error'), stages: ['features', 'match', 'pair'], metrics });
    expect(report.stages.map((s) => `${s.stage} ${s.result}${s.error ? ` ${s.error}` : ''}`)).to.deep.equal(['features ok', 'match ok', 'pair ok']);
    expect(report.ok).to.equal(true);
    for (const h of hostile) {
      const item = (await bank.items.get(h.bank, h.id))!;
      expect(item.status, h.id).to.equal('failed');
      expect(item.statusReason, h.id).to.match(h.reason);
    }
    for (let i = 0; i < SCENES.length; i++) {
      const s = (await bank.items.get('source', `en-${i}`))!;
      expect(s.status, `en-${i}`).to.equal('featured');
      const top = (await bank.repo(CandidatesRepo).listFor(s.id))[0];
      expect(top?.targetItemId, `en-${i} matched its retake`).to.equal((await bank.items.get('target', `zh-${i}`))!.id);
      const decided = await bank.sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM pairs WHERE source_item_id = ?', [s.id]);
      expect(Number(decided!.n), `en-${i} decided`).to.be.above(0);
    }
    // where the reasons are shown: stats, /metrics, the review page
    const stats = await runInProcess(['stats', '--data', data]);
    expect(stats.code).to.equal(0);
    expect(stats.stdout).to.include('failed 1: image too small: 1x1, a side below sift.minSide 16');
    expect(stats.stdout).to.match(/failed 1: truncated or corrupt image data \(jpeg\)/);
    const text = await metrics.registry.metrics();
    expect(text).to.include('capbridge_failures{scope="source",kind="image too small"} 2');
    expect(text).to.include('capbridge_failures{scope="source",kind="image too large"} 1');
    expect(text).to.include('capbridge_failures{scope="target",kind="truncated or corrupt image data"} 1');
    expect(text).to.include('capbridge_items{bank="source",status="failed"} 4');
    const app = createReviewServer(bank, config, { host: '127.0.0.1', token: '' });
    try {
      const page = await app.inject({ method: 'GET', url: '/stats' });
      expect(page.statusCode).to.equal(200);
      expect(page.body).to.include('id="failures"');
      expect(page.body).to.include('image too small: 1x1, a side below sift.minSide 16');
    } finally {
      await app.close();
    }
    // a rerun leaves the failed items alone; index --retry-failed tries them again, and they fail again with the same reasons
    const again = await runInProcess(['index', '--data', data, '--json']);
    expect(JSON.parse(again.stdout)).to.include({ failed: 0, featured: 0 });
    const retried = await runInProcess(['index', '--data', data, '--json', '--retry-failed']);
    expect(retried.code, retried.stderr).to.equal(0);
    expect(JSON.parse(retried.stdout)).to.include({ failed: hostile.length, featured: 0 });
    for (const h of hostile) expect((await bank.items.get(h.bank, h.id))!.statusReason, h.id).to.match(h.reason);
    // the daemon too: its cycles leave failed items alone unless it starts with --retry-failed
    const at = async () => Promise.all(hostile.map(async (h) => (await bank.items.get(h.bank, h.id))!.statusAt));
    const t0 = await at();
    const cycle = await runInProcess(['daemon', '--data', data, '--once', '--json']);
    expect(cycle.code, cycle.stderr).to.equal(0);
    expect(await at(), 'failed items untouched').to.deep.equal(t0);
    const retriedCycle = await runInProcess(['daemon', '--data', data, '--once', '--json', '--retry-failed']);
    expect(retriedCycle.code, retriedCycle.stderr).to.equal(0);
    expect(retriedCycle.stderr).to.include(`${hostile.length} failed item(s) sent back to be tried again`);
    const t1 = await at();
    hostile.forEach((h, i) => expect(t1[i]! > t0[i]!, `${h.id} tried again`).to.equal(true));
    for (const h of hostile) expect((await bank.items.get(h.bank, h.id))!, h.id).to.include({ status: 'failed' }).and.satisfy((it: { statusReason: string }) => h.reason.test(it.statusReason));
  });

  it('a caption pair whose scoring throws is stored failed with the reason, the others decided; decided again only with pair --all', async () => {
    const real = await createScorer(config, { bank, dataDir: data });
    // the real scorer, with a fault injected for one caption
    const faulty = new Proxy(real, {
      get(target, key) {
        if (key === 'align') {
          return (en: string, zh: string) => {
            if (en === SCENES[1]!.en) throw new RangeError('injected: the segmenter gave up');
            return target.align(en, zh);
          };
        }
        const v = Reflect.get(target, key, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as Scorer;
    const s1 = await runPairing(bank, config, { scorer: faulty, all: true });
    expect(s1.failed).to.equal(1);
    expect(s1.decided).to.be.above(1);
    const en1 = (await bank.items.get('source', 'en-1'))!.id;
    const row = await bank.sql.get<{ reason: string; emitted: number }>('SELECT reason, emitted FROM pairs WHERE source_item_id = ? ORDER BY id LIMIT 1', [en1]);
    expect(row).to.deep.equal({ reason: 'failed: scoring: injected: the segmenter gave up', emitted: 0 });
    const en0 = (await bank.items.get('source', 'en-0'))!.id;
    const ok = await bank.sql.get<{ reason: string | null; emitted: number }>('SELECT reason, emitted FROM pairs WHERE source_item_id = ? ORDER BY id LIMIT 1', [en0]);
    expect(ok!.emitted, 'the par scene is still emitted').to.equal(1);
    expect((await bank.repo(StatsRepo).all()).pairs).to.deep.equal({ failed: 1, failures: { 'failed: scoring: injected: the segmenter gave up': 1 } });
    // nothing changed: a normal run does not decide it again
    const s2 = await runPairing(bank, config, { scorer: real });
    expect(s2.sources).to.equal(0);
    // pair --all does, and with the fault gone it is decided
    const s3 = await runPairing(bank, config, { scorer: real, all: true });
    expect(s3.failed).to.equal(0);
    expect((await bank.repo(StatsRepo).all()).pairs.failed).to.equal(0);
  });
});
