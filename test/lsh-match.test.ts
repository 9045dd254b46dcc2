// End to end: generated scenes and their transformed copies are found at rank 1 among distractors through the
// CLI (import, match, search, export), unrelated images get nothing, the index persists across reopen, follows
// added and removed items, and match resumes and re-matches stale sources.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { Bank, CandidatesRepo, LshRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import { lshParams, paramsKey, syncIndex } from '../src/lib/image-index/store.js';
import { runCli, tempDir, writeManifest } from './helpers.js';
import { TRANSFORMS, scene, write } from './lsh-helpers.js';
import { featuresThenMatch } from './helpers/stages.js';

describe('lsh-index: match and search end to end', function () {
  this.timeout(120_000);
  const dir = tempDir('capbridge-lsh-');
  const data = path.join(dir, 'data');
  const names = Object.keys(TRANSFORMS);
  const { config } = loadConfig({});

  before(async function () {
    const src: string[][] = [];
    const tgt: string[][] = [];
    // Sources 1..6 have a transformed copy among the targets; source 7 has none.
    for (let i = 0; i < names.length; i++) {
      const png = await scene(100 + i);
      src.push([`s${i + 1}`, write(dir, `s${i + 1}.png`, png), `Scene ${i + 1} seen by a photographer.`]);
      tgt.push([`t${i + 1}`, write(dir, `t${i + 1}.jpg`, await TRANSFORMS[names[i]!]!(png)), `场景${i + 1}的${names[i]}照片`]);
    }
    src.push(['s7', write(dir, 's7.png', await scene(300)), 'A scene nobody else photographed.']);
    for (let k = 0; k < 4; k++) tgt.push([`d${k + 1}`, write(dir, `d${k + 1}.png`, await scene(200 + k)), `无关的照片${k + 1}`]);
    writeManifest(path.join(dir, 'source.tsv'), src.map((r) => [r[0]!, r[1]!, r[2]!, `https://example.org/en/${r[0]}`]));
    writeManifest(path.join(dir, 'target.tsv'), tgt.map((r) => [r[0]!, r[1]!, r[2]!, `https://example.org/zh/${r[0]}`]));
    for (const b of ['source', 'target']) {
      const r = await runCli(['--data', data, 'import', '--bank', b, '--manifest', path.join(dir, `${b}.tsv`), '--json']);
      expect(r.code, r.stderr).to.equal(0);
    }
  });

  it('match --json ranks every transformed copy first and gives the unrelated source nothing', async () => {
    const r = await runCli(['--data', data, 'match', '--json']);
    expect(r.code, r.stderr).to.equal(0);
    const s = JSON.parse(r.stdout);
    expect(s.sources).to.equal(7);
    expect(s.indexedImages).to.equal(10);
    const bank = await Bank.open(data);
    try {
      const repo = bank.repo(CandidatesRepo);
      for (let i = 0; i < names.length; i++) {
        const sid = (await bank.items.get('source', `s${i + 1}`))!.id;
        const list = await repo.listFor(sid);
        expect(list.length, `${names[i]}: no candidate`).to.be.greaterThan(0);
        expect((await bank.items.byId(list[0]!.targetItemId))!.extId, names[i]).to.equal(`t${i + 1}`);
        expect(list[0]!.imageScore, names[i]).to.be.greaterThan(0.2).and.at.most(1);
        expect(list[0]!.inliers).to.be.at.least(config.match.minInliers);
        expect(list[0]!.homography, `${names[i]} ${list[0]!.model} ${list[0]!.inliers}/${list[0]!.matches}`).to.have.length(9);
        expect(list[0]!.pairs!.length).to.equal(list[0]!.inliers * 4);
        expect(list[0]!.mirrored, names[i]).to.equal(names[i] === 'mirror');
        // Unrelated distractors never appear.
        for (const c of list) expect((await bank.items.byId(c.targetItemId))!.extId).to.match(/^t/);
      }
      expect(await repo.listFor((await bank.items.get('source', 's7'))!.id)).to.deep.equal([]);
      // The homography of the scaled copy maps source pixels to target pixels (scale 220/360).
      const sc = (await repo.listFor((await bank.items.get('source', `s${names.indexOf('scale') + 1}`))!.id))[0]!;
      const Hm = sc.homography!;
      const map = (x: number, y: number) => {
        const w = Hm[6]! * x + Hm[7]! * y + Hm[8]!;
        return [(Hm[0]! * x + Hm[1]! * y + Hm[2]!) / w, (Hm[3]! * x + Hm[4]! * y + Hm[5]!) / w];
      };
      const [u, v] = map(200, 150);
      expect(u).to.be.closeTo((200 * 220) / 360, 2);
      expect(v).to.be.closeTo((150 * 165) / 270, 2);
    } finally {
      await bank.close();
    }
  });

  it('match again does nothing: every source is up to date', async () => {
    const r = await runCli(['--data', data, 'match', '--json']);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout).sources).to.equal(0);
  });

  it('search --image --json returns the ranked target with caption and provenance', async () => {
    const r = await runCli(['--data', data, 'search', '--image', path.join(dir, 's2.png'), '--top', '3', '--json']);
    expect(r.code, r.stderr).to.equal(0);
    const out = JSON.parse(r.stdout);
    expect(out.results[0].target_id).to.equal('t2');
    expect(out.results[0].caption).to.contain('场景2');
    expect(out.results[0].provenance.pageUrl).to.equal('https://example.org/zh/t2');
    expect(out.results.length).to.be.at.most(3);
    const none = await runCli(['--data', data, 'search', '--image', path.join(dir, 's7.png'), '--json']);
    expect(JSON.parse(none.stdout).results).to.deep.equal([]);
    const bad = await runCli(['--data', data, 'search', '--image', path.join(dir, 'nope.png')]);
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.contain('nope.png');
  });

  it('export --format jsonl --candidates writes one line per candidate with ids, captions and provenance', async () => {
    const out = path.join(dir, 'cand.jsonl');
    const r = await runCli(['--data', data, 'export', '--format', 'jsonl', '--candidates', '--out', out]);
    expect(r.code, r.stderr).to.equal(0);
    const lines = fs.readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const first = lines.find((l) => l.source_id === 's1' && l.rank === 1);
    expect(first).to.include({ target_id: 't1' });
    expect(first.source_caption).to.contain('Scene 1');
    expect(first.target_caption).to.contain('场景1');
    expect(first.target_provenance.pageUrl).to.equal('https://example.org/zh/t1');
    expect(first.image_score).to.be.greaterThan(0);
  });

  it('the index persists across reopen, and follows added and removed targets; stale sources are re-matched', async () => {
    let bank = await Bank.open(data);
    try {
      const { summary } = await syncIndex(bank, config);
      expect(summary.indexed, 'nothing re-indexed on reopen').to.equal(0);
      expect(summary.images).to.equal(10);
      expect((await bank.repo(LshRepo).signature()).count).to.equal(10);
    } finally {
      await bank.close();
    }
    // A new target: the copy of s7's scene. Every source is stale now; s7 finds it.
    const png = await scene(300);
    write(dir, 't7.jpg', await TRANSFORMS.rotation!(png));
    writeManifest(path.join(dir, 'target2.tsv'), [['t7', path.join(dir, 't7.jpg'), '场景七', 'https://example.org/zh/t7']]);
    expect((await runCli(['--data', data, 'import', '--bank', 'target', '--manifest', path.join(dir, 'target2.tsv')])).code).to.equal(0);
    bank = await Bank.open(data);
    try {
      const s = await featuresThenMatch(bank, config, { batchSize: 2 });
      expect(s.indexed).to.equal(1);
      expect(s.sources).to.equal(7);
      const list = (await bank.repo(CandidatesRepo).listFor((await bank.items.get('source', 's7'))!.id));
      expect((await bank.items.byId(list[0]!.targetItemId))!.extId).to.equal('t7');
      // A removed target leaves the index and the candidates.
      expect((await bank.items.remove('target', 't7'))).to.equal(true);
      const { summary } = await syncIndex(bank, config);
      expect(summary.images).to.equal(10);
      expect((await bank.repo(CandidatesRepo).listFor((await bank.items.get('source', 's7'))!.id))).to.deep.equal([]);
    } finally {
      await bank.close();
    }
  });

  it('indexing again writes nothing: a target already indexed with its image keeps its row and the watermark', async () => {
    const bank = await Bank.open(data);
    try {
      const repo = bank.repo(LshRepo);
      const seq = await repo.sequence();
      const rows: Awaited<ReturnType<LshRepo['rowsAfter']>> extends AsyncGenerator<infer R> ? R[] : never = [];
      for await (const r of repo.rowsAfter(0)) rows.push(r);
      expect(rows.length).to.be.at.least(2);
      const again = rows.slice(0, 2).map((r) => ({ itemId: r.itemId, imageSha256: r.imageSha256, count: r.count, codes: r.codes }));
      expect(await bank.transaction((tx) => tx.repo(LshRepo).putMany(again, paramsKey(lshParams(config))))).to.equal(0);
      expect(await repo.sequence()).to.equal(seq);
      // other parameters (another seed) are a new row
      expect(await bank.transaction((tx) => tx.repo(LshRepo).putMany(again.slice(0, 1), 'other-params'))).to.equal(1);
      expect(await repo.sequence()).to.equal(seq + 1);
      await syncIndex(bank, config); // puts the row back as it was (drops the other parameters' row, indexes anew)
      expect(await repo.countPending()).to.equal(0);
    } finally {
      await bank.close();
    }
  });

  it('match is resumable: an aborted run keeps its finished windows, and the next run searches the open window again whole', async () => {
    const bank = await Bank.open(data);
    try {
      // Touch the index (a new target) so every source is stale again.
      const png = await scene(301);
      write(dir, 't8.png', png);
      writeManifest(path.join(dir, 'target3.tsv'), [['t8', path.join(dir, 't8.png'), '另一张', '']]);
      await bank.close();
      expect((await runCli(['--data', data, 'import', '--bank', 'target', '--manifest', path.join(dir, 'target3.tsv')])).code).to.equal(0);
      const b2 = await Bank.open(data);
      // windows of 2 sources, batches of 1: stopped after the first source of the second window
      const c: Config = { ...config, worker: { ...config.worker, batch: { ...config.worker.batch, match: 2 } } };
      const ac = new AbortController();
      let ticks = 0;
      const first = await featuresThenMatch(b2, c, {
        batchSize: 1,
        signal: ac.signal,
        progress: { tick: () => ++ticks === 3 && ac.abort(), setTotal() {}, stop() {} },
      });
      expect(first.aborted).to.equal(true);
      expect(first.sources).to.equal(3);
      // the first window is done; the second was stopped before its views: its searched source is pending again
      const seq = await b2.repo(LshRepo).sequence();
      expect(await b2.repo(CandidatesRepo).countPending(seq)).to.equal(5);
      const second = await featuresThenMatch(b2, c, { batchSize: 1 });
      expect(second.aborted).to.equal(false);
      expect(second.sources).to.equal(5);
      expect(await b2.repo(CandidatesRepo).countPending(seq)).to.equal(0);
      const list = (await b2.repo(CandidatesRepo).listFor((await b2.items.get('source', 's1'))!.id));
      expect((await b2.items.byId(list[0]!.targetItemId))!.extId).to.equal('t1');
      await b2.close();
    } finally {
      await bank.close();
    }
  });
});
