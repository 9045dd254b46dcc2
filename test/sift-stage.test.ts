// The sift stage on a temp bank: features per distinct image, bad images marked failed while the run goes on,
// resumable after an abort; and the features/index commands' output.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import sharp from 'sharp';
import { Bank, FeaturesRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { computeMissingFeatures } from '../src/stages/features/stage.js';
import { scenePng } from './sift-helpers.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

async function addItem(bank: Bank, extId: string, buf: Buffer): Promise<string> {
  const rec = await bank.images.prepare(buf);
  await bank.transaction(async (tx) => {
    await tx.images.record(rec);
    await tx.items.upsert({ bank: 'source', extId, caption: '', lang: null, captionStatus: 'empty', captionReason: null, imageSha256: rec.sha256 });
  });
  return rec.sha256;
}

describe('sift: the stage (computeMissingFeatures)', function () {
  this.timeout(60000);
  let dir: string;
  let bank: Bank;
  const config = loadConfig({}).config;
  const shas: string[] = [];
  let badSha = '';

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-'));
    bank = await Bank.open(dir);
    for (let i = 0; i < 4; i++) shas.push(await addItem(bank, `s${i}`, await scenePng(300, 220, 10 + i)));
    // Same image as s0 under another id: computed once.
    await addItem(bank, 'dup', await scenePng(300, 220, 10));
    // A JPEG whose header probes fine but whose data is cut: stored, then fails in the stage.
    const jpg = await sharp(await scenePng(300, 220, 50)).jpeg().toBuffer();
    badSha = await addItem(bank, 'bad', jpg.subarray(0, 700));
  });
  after(async () => {
    await bank.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('stops between batches on abort and resumes without redoing committed work', async () => {
    const ac = new AbortController();
    let ticks = 0;
    const progress = { tick: () => { if (++ticks === 1) ac.abort(); }, setTotal: () => {}, stop: () => {} };
    const first = await computeMissingFeatures(bank, config, { threads: 1, batchSize: 2, signal: ac.signal, progress });
    expect(first.aborted).to.equal(true);
    expect(first.images).to.equal(2);
    expect((await bank.items.countByStatus(null, 'featured'))).to.equal(3); // s0, s1 and dup (same image as s0)
    const repo = bank.repo(FeaturesRepo);
    const createdBefore = (await repo.get(shas[0]!))!.createdAt;

    const second = await computeMissingFeatures(bank, config, { threads: 2, batchSize: 2 });
    expect(second.aborted).to.equal(false);
    expect(second.images).to.equal(2); // s2, s3: the bad one fails, s0/s1 are not recomputed
    expect(second.featured).to.equal(2);
    expect(second.failed).to.equal(1);
    expect((await repo.get(shas[0]!))!.createdAt).to.equal(createdBefore);
    expect((await bank.items.countByStatus(null, 'new'))).to.equal(0);
  });

  it('marks the bad image failed with a reason and stores good features compactly', async () => {
    const bad = (await bank.items.get('source', 'bad'))!;
    expect(bad.status).to.equal('failed');
    expect(bad.statusReason).to.match(/truncated|corrupt|decode/i);
    const repo = bank.repo(FeaturesRepo);
    expect(await repo.has(badSha)).to.equal(false);
    for (const sha of shas) {
      const f = (await repo.get(sha))!;
      expect(f.count).to.be.greaterThan(20);
      expect(f.keypoints.length).to.equal(f.count * 6);
      expect(f.descriptors.length).to.equal(f.count * 128);
      expect(await repo.storedBytes(sha)).to.equal(f.count * (24 + 128));
    }
    // 1000 keypoints would take 152,000 bytes: under the 160 KB budget.
    expect(1000 * (24 + 128)).to.be.at.most(160 * 1024);
  });

  it('round-trips features through the repository exactly', async () => {
    const repo = bank.repo(FeaturesRepo);
    const f = (await repo.get(shas[1]!))!;
    await repo.put('x'.repeat(64), f, 12.5);
    const g = (await repo.get('x'.repeat(64)))!;
    expect(Array.from(g.keypoints)).to.deep.equal(Array.from(f.keypoints));
    expect(Buffer.from(g.descriptors).equals(Buffer.from(f.descriptors))).to.equal(true);
    expect([g.width, g.height, g.scale, g.ms]).to.deep.equal([f.width, f.height, f.scale, 12.5]);
    expect(await repo.delete('x'.repeat(64))).to.equal(true);
    expect(await repo.has('x'.repeat(64))).to.equal(false);
  });

  it('a second run has nothing to do', async () => {
    const again = await computeMissingFeatures(bank, config, { threads: 2 });
    expect([again.featured, again.failed, again.images]).to.deep.equal([0, 0, 0]);
  });

  it('`capbridge features --json` prints the summary', async () => {
    await addItem(bank, 'late', await scenePng(200, 160, 77));
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--data', dir, 'features', '--json', '--threads', '1'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).to.equal(0);
    const s = JSON.parse(r.stdout.trim());
    expect(s).to.include({ featured: 1, failed: 0, images: 1 });
  });
});

describe('sift: `capbridge keypoints`', function () {
  this.timeout(60000);
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('prints one JSON line per file in input order; a bad file gives an error line and exit code 1', async () => {
    const a = path.join(dir, 'a.png');
    const b = path.join(dir, 'b.txt');
    const c = path.join(dir, 'c.jpg');
    fs.writeFileSync(a, await scenePng(300, 200, 5));
    fs.writeFileSync(b, 'hello, not an image');
    fs.writeFileSync(c, await sharp(await scenePng(900, 600, 6)).jpeg().toBuffer());
    for (const threads of ['1', '2']) {
      const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'keypoints', a, b, c, '--threads', threads], { cwd: ROOT, encoding: 'utf8' });
      expect(r.status).to.equal(1);
      const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
      expect(lines.map((l) => l.file)).to.deep.equal([a, b, c]);
      expect(lines[0]).to.include({ width: 300, height: 200 });
      expect(lines[0].keypoints).to.be.a('number').greaterThan(20);
      expect(lines[1].error).to.match(/not a readable image/);
      expect(lines[2]).to.include({ width: 640, height: 427 });
      expect(lines[2].ms).to.be.a('number');
    }
  });

  it('--descriptors gives the keypoint list and base64 n x 128 descriptors', async () => {
    const a = path.join(dir, 'd.png');
    fs.writeFileSync(a, await scenePng(240, 180, 8));
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'features', '--descriptors', '--json', a], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).to.equal(0);
    const line = JSON.parse(r.stdout.trim());
    expect(line.keypoints).to.be.an('array');
    const n = line.keypoints.length;
    expect(n).to.be.greaterThan(10);
    expect(line.keypoints[0]).to.have.length(4);
    expect(Buffer.from(line.descriptors, 'base64').length).to.equal(n * 128);
  });
});
