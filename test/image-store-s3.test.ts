// Images in an S3-compatible object store, against a real local server (s3rver on 127.0.0.1, started here): the
// whole pipeline (import → features → match → pair) with the bytes in the bucket and the review page serving them
// from it; the same bank as with the folder store; idempotent puts; a missing object's clear error; transient
// server failures retried by the SDK up to images.s3.maxAttempts, and beyond that the stage stopping without
// failing any item; the store chosen by images.store / --images on the command line.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import sharp from 'sharp';
import { Bank, CandidatesRepo, checkImages, copyImages, FeaturesRepo, FolderBlobs, PairsRepo, type ImageStoreError, openImageBlobs, type ImageBlobs, type ImageStoreSettings } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { importManifest } from '../src/import/manifest.js';
import { computeMissingFeatures } from '../src/stages/features/stage.js';
import { runPairing } from '../src/stages/pair/pairing.js';
import { createScorer } from '../src/lib/comparability/index.js';
import { createReviewServer } from '../src/review/index.js';
import { retakeJpeg, sceneJpeg, type Retake } from '../src/demo/scenes.js';
import { testLexicon, testLexiconDir } from './helpers/comparability.js';
import { runCli, tempDir, writeManifest } from './helpers.js';
import { createContext } from '../src/commands/context.js';
import { startLocalS3, s3ImageSettings, type LocalS3 } from './helpers/s3.js';
import { featuresThenMatch } from './helpers/stages.js';

const { config } = loadConfig();
const SCENES = [
  { en: 'Rescue workers search the rubble after the earthquake in Sichuan.', zh: '救援人员在四川地震后的废墟中搜寻。' },
  { en: 'Fans wave flags as the national team arrives at the airport.', zh: '球迷在国家队抵达机场时挥舞旗帜。' },
  { en: 'A farmer harvests rice in a flooded field.', zh: '一位农民在被洪水淹没的田里收割水稻。' },
];

/** A labelled set on disk: the photos of three scenes, the Chinese outlet's copies re-taken; two manifests. */
async function writeSet(dir: string): Promise<void> {
  const retakes: Retake[] = ['crop', 'scale', 'rotate'];
  const src: string[][] = [];
  const tgt: string[][] = [];
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < SCENES.length; i++) {
    fs.writeFileSync(path.join(dir, `en-${i}.jpg`), await sceneJpeg(401 + i));
    fs.writeFileSync(path.join(dir, `zh-${i}.jpg`), await retakeJpeg(401 + i, retakes[i]!));
    src.push([`en-${i}`, `en-${i}.jpg`, SCENES[i]!.en, `https://news.example.org/story/${i}`]);
    tgt.push([`zh-${i}`, `zh-${i}.jpg`, SCENES[i]!.zh, `https://news.example.cn/story/${i}`]);
  }
  writeManifest(path.join(dir, 'source.tsv'), src);
  writeManifest(path.join(dir, 'target.tsv'), tgt);
}

async function importSet(bank: Bank, set: string) {
  await importManifest(bank, { bank: 'source', manifest: path.join(set, 'source.tsv'), config });
  await importManifest(bank, { bank: 'target', manifest: path.join(set, 'target.tsv'), config });
}

/** The whole pipeline over a store: import, features, match (with views), pairing. */
async function runPipeline(dataDir: string, blobs: ImageBlobs, set: string): Promise<Bank> {
  const bank = await Bank.open(dataDir, { blobs });
  await importSet(bank, set);
  await computeMissingFeatures(bank, config, { threads: 1 });
  await featuresThenMatch(bank, config, { threads: 1 });
  fs.cpSync(testLexiconDir(), path.join(dataDir, 'lexicon'), { recursive: true });
  await runPairing(bank, config, { scorer: await createScorer(config, { bank, cacheDir: testLexiconDir() }) });
  return bank;
}

/** What a bank decided, without timestamps: items, features (by digest), candidates, pairs. */
async function snapshot(bank: Bank): Promise<unknown> {
  const noTimes = (o: object) => Object.fromEntries(Object.entries(o).filter(([k]) => !/At$/.test(k)));
  const items = [...(await bank.items.list('source', 100)), ...(await bank.items.list('target', 100))].map(noTimes);
  const features: Record<string, string> = {};
  for (const i of items) {
    const f = (await bank.repo(FeaturesRepo).get(i.imageSha256 as string))!;
    features[i.imageSha256 as string] = `${f.count} ${f.width}x${f.height} ${crypto.createHash('sha256').update(f.descriptors).update(new Uint8Array(f.keypoints.buffer)).digest('hex')}`;
  }
  const candidates = [];
  for await (const c of bank.repo(CandidatesRepo).iterateJoined()) candidates.push(noTimes({ ...c, source: null, target: null }));
  const pairs = [...(await bank.repo(PairsRepo).list({ limit: 1000 })), ...(await bank.repo(PairsRepo).list({ limit: 1000, emitted: false }))].map(noTimes);
  return { items, features, candidates, pairs };
}

const objectKeys = (s3: LocalS3, prefix = '') => s3.keys(prefix);

describe('images in an S3-compatible store (a local s3rver on 127.0.0.1)', function () {
  this.timeout(120_000);
  let s3: LocalS3;
  let dir: string;
  let set: string;
  const open: Bank[] = [];
  const openBank = async (dataDir: string, settings: ImageStoreSettings) => {
    const bank = await Bank.open(dataDir, { blobs: await openImageBlobs(dataDir, settings) });
    open.push(bank);
    return bank;
  };

  before(async () => {
    s3 = await startLocalS3();
    dir = tempDir('capbridge-s3-');
    set = path.join(dir, 'set');
    await writeSet(set);
  });
  after(async () => {
    for (const b of open) await b.close().catch(() => {});
    await s3?.close();
  });

  it('runs import → features → match → pair with the images only in the bucket, decides the same bank as the folder store, and the review page serves them from the bucket', async () => {
    testLexicon();
    const s3Dir = path.join(dir, 'on-s3');
    const settings = s3ImageSettings(s3, 'pipeline/');
    const bank = await runPipeline(s3Dir, await openImageBlobs(s3Dir, settings), set);
    open.push(bank);
    const folderBank = await runPipeline(path.join(dir, 'on-folder'), new FolderBlobs(path.join(dir, 'on-folder')), set);
    open.push(folderBank);

    // the bytes are in the bucket under the prefix, by content hash, and nowhere in the data dir
    expect(fs.existsSync(path.join(s3Dir, 'images'))).to.equal(false);
    const keys = await objectKeys(s3, 'pipeline/');
    const expected: string[] = [];
    for (let i = 0; i < SCENES.length; i++) {
      for (const f of [`en-${i}.jpg`, `zh-${i}.jpg`]) {
        const sha = crypto.createHash('sha256').update(fs.readFileSync(path.join(set, f))).digest('hex');
        expected.push(`pipeline/images/${sha.slice(0, 2)}/${sha}.jpg`);
      }
    }
    expect(keys).to.deep.equal(expected.sort());

    // the same decisions as the folder store, and real ones: each English photo's re-take is its first candidate
    const snap = (await snapshot(bank)) as { candidates: Array<{ sourceExtId: string; targetExtId: string; rank: number }>; pairs: unknown[] };
    expect(snap).to.deep.equal(await snapshot(folderBank));
    for (let i = 0; i < SCENES.length; i++) {
      expect(snap.candidates.find((c) => c.sourceExtId === `en-${i}` && c.rank === 1)?.targetExtId, `en-${i}`).to.equal(`zh-${i}`);
    }
    expect(snap.pairs.length).to.be.greaterThan(0);

    // the review page: /image streams the stored bytes from the bucket, /thumb is made from them
    const app = createReviewServer(bank, config, { host: '127.0.0.1', token: '' });
    try {
      const item = (await bank.items.get('target', 'zh-1'))!;
      const before = s3.requests.length;
      const full = await app.inject({ method: 'GET', url: `/image/${item.imageSha256}` });
      expect(full.statusCode).to.equal(200);
      expect(full.headers['content-type']).to.equal('image/jpeg');
      expect(full.rawPayload.equals(fs.readFileSync(path.join(set, 'zh-1.jpg')))).to.equal(true);
      expect(Number(full.headers['content-length'])).to.equal(full.rawPayload.length);
      const thumb = await app.inject({ method: 'GET', url: `/thumb/${item.imageSha256}` });
      expect(thumb.statusCode).to.equal(200);
      const meta = await sharp(thumb.rawPayload).metadata();
      expect(meta.format).to.equal('jpeg');
      expect(Math.max(meta.width!, meta.height!)).to.equal(200);
      const key = `/${s3.bucket}/pipeline/images/${item.imageSha256.slice(0, 2)}/${item.imageSha256}.jpg`;
      expect(s3.requests.slice(before).filter((r) => r.method === 'GET' && r.path === key)).to.have.length(2);
    } finally {
      await app.close();
    }
  });

  it('stores an image once: a second import of the same bytes, and a put over an existing key, leave one object with the same bytes', async () => {
    const dataDir = path.join(dir, 'twice');
    const bank = await openBank(dataDir, s3ImageSettings(s3, 'twice'));
    await importSet(bank, set);
    const keys = await objectKeys(s3, 'twice/');
    expect(keys).to.have.length(2 * SCENES.length);
    const before = s3.requests.length;
    await importSet(bank, set); // the images are known: no upload
    expect(s3.requests.slice(before).filter((r) => r.method === 'PUT')).to.deep.equal([]);
    const rec = (await bank.images.get((await bank.items.get('source', 'en-0'))!.imageSha256))!;
    const bytes = fs.readFileSync(path.join(set, 'en-0.jpg'));
    await bank.images.blobs.put(rec.path, bytes); // the same key again: the same bytes
    expect(await objectKeys(s3, 'twice/')).to.deep.equal(keys);
    expect((await bank.images.read(rec.sha256)).equals(bytes)).to.equal(true);
    expect(await bank.images.blobs.has(rec.path, rec.bytes)).to.equal(true);
    expect(await bank.images.blobs.has(rec.path, rec.bytes + 1)).to.equal(false);
  });

  it('names the bucket, the key and the reason when an object is missing: features fail that image alone, /image is a 404 saying so', async () => {
    const dataDir = path.join(dir, 'missing');
    const bank = await openBank(dataDir, s3ImageSettings(s3, 'missing'));
    await importSet(bank, set);
    const gone = (await bank.images.get((await bank.items.get('target', 'zh-2'))!.imageSha256))!;
    await s3.remove(`missing/${gone.path}`);

    const err = await bank.images.read(gone.sha256).then(() => null, (e: unknown) => e);
    expect(err).to.have.property('name', 'ImageStoreError');
    const e = err as ImageStoreError;
    expect(e.missing).to.equal(true);
    expect(e.transient).to.equal(false);
    expect(e.message).to.include(`s3://${s3.bucket}/missing/${gone.path}`);
    expect(e.message).to.match(/NoSuchKey/);

    const app = createReviewServer(bank, config, { host: '127.0.0.1', token: '' });
    try {
      const r = await app.inject({ method: 'GET', url: `/image/${gone.sha256}` });
      expect(r.statusCode).to.equal(404);
      expect(r.json().message).to.include(`s3://${s3.bucket}/missing/${gone.path}`);
      expect((await app.inject({ method: 'GET', url: `/thumb/${gone.sha256}` })).statusCode).to.equal(404);
    } finally {
      await app.close();
    }

    const summary = await computeMissingFeatures(bank, config, { threads: 1 });
    expect(summary.failed).to.equal(1);
    expect(summary.featured).to.equal(2 * SCENES.length - 1);
    const failed = (await bank.items.get('target', 'zh-2'))!;
    expect(failed.status).to.equal('failed');
    expect(failed.statusReason).to.include(`s3://${s3.bucket}/missing/${gone.path}`).and.to.match(/NoSuchKey/);
  });

  it('rides out transient server failures with the SDK retries (images.s3.maxAttempts); past them a stage stops with the reason and fails no item, and the next run resumes', async () => {
    const dataDir = path.join(dir, 'flaky');
    const bank = await openBank(dataDir, s3ImageSettings(s3, 'flaky', { maxAttempts: 3 }));
    // a 503 then a reset connection on the uploads of the import: retried, nothing lost
    s3.failNext(2, 503);
    const before = s3.requests.length;
    await importManifest(bank, { bank: 'source', manifest: path.join(set, 'source.tsv'), config });
    expect(s3.requests.slice(before, before + 3).map((r) => r.failed)).to.deep.equal([true, true, false]);
    s3.failNext(2, 'reset');
    await importManifest(bank, { bank: 'target', manifest: path.join(set, 'target.tsv'), config });
    expect(await bank.items.countByStatus(null, 'new')).to.equal(2 * SCENES.length);
    expect(await objectKeys(s3, 'flaky/')).to.have.length(2 * SCENES.length);

    // reads: two failures then the object, within 3 attempts
    const sha = (await bank.items.get('source', 'en-0'))!.imageSha256;
    s3.failNext(2, 503);
    expect((await bank.images.read(sha)).equals(fs.readFileSync(path.join(set, 'en-0.jpg')))).to.equal(true);

    // the server down for longer than the retries: the stage stops, every item is still new, none failed
    s3.failNext(1000, 503);
    const err = await computeMissingFeatures(bank, config, { threads: 1 }).then(() => null, (e: unknown) => e);
    expect(err).to.have.property('name', 'ImageStoreError');
    expect((err as ImageStoreError).transient).to.equal(true);
    expect((err as Error).message).to.match(/s3:\/\/capbridge-test\/flaky\/images\/[0-9a-f]{2}\/[0-9a-f]{64}\.jpg/).and.to.match(/HTTP 503/).and.to.match(/3 attempt\(s\) of 3/);
    expect(await bank.items.countByStatus(null, 'failed')).to.equal(0);
    expect(await bank.items.countByStatus(null, 'new')).to.equal(2 * SCENES.length);
    s3.failNext(0, 503);
    const summary = await computeMissingFeatures(bank, config, { threads: 1 });
    expect(summary.failed).to.equal(0);
    expect(await bank.items.countByStatus(null, 'featured')).to.equal(2 * SCENES.length);
  });

  it('is chosen by --images s3://bucket/prefix (and CAPBRIDGE_IMAGES__* settings) on the command line; the bank refuses a run on another store until images copy moves them; a bad store is refused naming it', async () => {
    const dataDir = path.join(dir, 'cli');
    const env = {
      CAPBRIDGE_IMAGES__S3__ENDPOINT: s3.endpoint,
      CAPBRIDGE_IMAGES__S3__FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    };
    const r = await runCli(['--data', dataDir, '--images', `s3://${s3.bucket}/cli/run`, 'import', '--bank', 'source', '--manifest', path.join(set, 'source.tsv'), '--json'], { env });
    expect(r.code, r.stderr).to.equal(0);
    expect(await objectKeys(s3, 'cli/run/images/')).to.have.length(SCENES.length);
    expect(fs.existsSync(path.join(dataDir, 'images'))).to.equal(false);

    // the bank records where its images are: a run pointed elsewhere is refused before it fails items as missing
    const elsewhere = createContext({ data: dataDir });
    const refused = await elsewhere.bank.then(() => null, (e: unknown) => e);
    await elsewhere.close();
    // both stores named in full: the bucket and prefix at the endpoint, and this machine's folder
    expect((refused as Error)?.message).to.match(
      new RegExp(
        `^this bank's images are in s3://${s3.bucket}/cli/run at ${s3.endpoint.replace(/[.]/g, '\\.')}, but this run uses the folder ${path.join(dataDir, 'images')} on \\S+ ` +
          '\\(store id [0-9a-f-]{36}\\) \\(--images / images\\.store, images\\.s3\\.\\*\\): point it at the bank\'s store, or copy them first with ' +
          '`capbridge images copy --to folder` \\(which records the new store\\)$',
      ),
    );

    // images copy --to folder brings them into the data dir and records it: the folder run is accepted now
    const back = await runCli(['--data', dataDir, '--images', `s3://${s3.bucket}/cli/run`, 'images', 'copy', '--to', 'folder', '--json'], { env });
    expect(back.code, back.stderr).to.equal(0);
    expect(JSON.parse(back.stdout)).to.include({ images: SCENES.length, copied: SCENES.length, missing: 0, to: path.join(dataDir, 'images') });
    const home = createContext({ data: dataDir });
    const bank = await home.bank;
    expect((await bank.images.read((await bank.items.get('source', 'en-1'))!.imageSha256)).equals(fs.readFileSync(path.join(set, 'en-1.jpg')))).to.equal(true);
    await home.close();

    // a store that cannot be: refused before anything is opened, naming the setting and the reason
    expect(() => createContext({ data: dataDir, images: 's3://Not_A_Bucket/x' })).to.throw(/--images: .*"Not_A_Bucket" is not a valid bucket name/);
    expect(() => createContext({ data: dataDir, images: 'ftp://x' })).to.throw(/--images: expected folder, s3, or s3:\/\/bucket\/prefix/);
    expect(() => loadConfig({ env: { CAPBRIDGE_IMAGES__STORE: 's3' } })).to.throw(/images\.s3\.bucket is empty/);
    expect(() => loadConfig({ env: { CAPBRIDGE_IMAGES__S3__ENDPOINT: 'not a url' } })).to.throw(/images\.s3\.endpoint/);
  });
  it('moves a folder bank\'s images into the bucket (images copy: resumable, idempotent, lost objects named) and checks the store holds them (images check)', async () => {
    const dataDir = path.join(dir, 'moved');
    const folderBank = await openBank(dataDir, { ...s3ImageSettings(s3, ''), store: 'folder' });
    await importSet(folderBank, set);
    // one object lost from the folder before the copy: reported by name, the rest copied
    const lost = (await folderBank.images.get((await folderBank.items.get('target', 'zh-0'))!.imageSha256))!;
    const lostBytes = fs.readFileSync(path.join(dataDir, lost.path));
    fs.rmSync(path.join(dataDir, lost.path));
    const to = await openImageBlobs(dataDir, s3ImageSettings(s3, 'moved'));
    const first = await copyImages(folderBank, to, { concurrency: 3 });
    expect(first).to.include({ images: 2 * SCENES.length, copied: 2 * SCENES.length - 1, present: 0, missing: 1, aborted: false });
    expect(first.missingObjects).to.deep.equal([path.join(dataDir, lost.path)]);
    fs.writeFileSync(path.join(dataDir, lost.path), lostBytes);
    const before = s3.requests.length;
    const again = await copyImages(folderBank, to);
    expect(again).to.include({ copied: 1, present: 2 * SCENES.length - 1, missing: 0 });
    expect(s3.requests.slice(before).filter((r) => r.method === 'PUT')).to.have.length(1);
    await to.close?.();
    expect(await objectKeys(s3, 'moved/')).to.have.length(2 * SCENES.length);

    // the same bank now reads from the bucket (its folder gone): check passes; a lost object is named
    await folderBank.close();
    open.splice(open.indexOf(folderBank), 1);
    const bank = await openBank(dataDir, s3ImageSettings(s3, 'moved'));
    expect(await checkImages(bank)).to.include({ images: 2 * SCENES.length, present: 2 * SCENES.length, missing: 0 });
    fs.rmSync(path.join(dataDir, 'images'), { recursive: true });
    expect((await bank.images.read(lost.sha256)).equals(lostBytes)).to.equal(true);
    await s3.remove(`moved/${lost.path}`);
    const check = await checkImages(bank);
    expect(check).to.include({ present: 2 * SCENES.length - 1, missing: 1 });
    expect(check.missingObjects[0]).to.include(lost.path);
    const env = { CAPBRIDGE_IMAGES__S3__ENDPOINT: s3.endpoint, CAPBRIDGE_IMAGES__S3__FORCE_PATH_STYLE: 'true' };
    const cli = await runCli(['--data', dataDir, '--images', `s3://${s3.bucket}/moved`, 'images', 'check'], { env });
    expect(cli.code).to.equal(1);
    expect(cli.stdout).to.include(`images check: ${2 * SCENES.length} images in s3://${s3.bucket}/moved at ${s3.endpoint}: ${2 * SCENES.length - 1} present, 1 missing`);
    expect(cli.stdout).to.include(`missing: ${lost.path}`);
  });
});
