// Work once per picture: perceptual hashes tell a republished copy (another size or JPEG quality) from another
// photo, the features stage reuses the picture's features instead of running SIFT, the index holds the picture
// once, and the match stage records every item of both banks that shows it.
import { expect } from 'chai';
import path from 'node:path';
import sharp from 'sharp';
import { Bank, CandidatesRepo, FeaturesRepo, LshRepo, TwinsRepo, type Item } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { computeMissingFeatures } from '../src/stages/features/stage.js';
import { importManifest } from '../src/import/manifest.js';
import { ALIGN_SIDE, alignmentGrey, hashDistance, misalignment, nearIdentical, pictureHash, TwinIndex } from '../src/lib/sift/twins.js';
import { runCli, tempDir, writeManifest } from './helpers.js';
import { TRANSFORMS, scene, write } from './lsh-helpers.js';
import { featuresThenMatch } from './helpers/stages.js';

describe('sift: near-identical pictures (work once per picture)', function () {
  this.timeout(180_000);
  const { config } = loadConfig({});
  const p = config.sift.twins;
  const limits = { maxPixels: config.sift.maxPixels };

  it('a copy at another size and JPEG quality is near-identical; a crop, a rotation, a mirror or another scene is not', async () => {
    const png = await scene(501);
    const a = await pictureHash(png, limits);
    const copy = await pictureHash(await sharp(png).resize(250, 188).jpeg({ quality: 55 }).toBuffer(), limits);
    const toned = await pictureHash(await sharp(png).linear(1.2, -20).jpeg({ quality: 70 }).toBuffer(), limits);
    expect(nearIdentical(a, copy, p), `distance ${hashDistance(a, copy)}`).to.not.equal(null);
    expect(nearIdentical(a, toned, p), `distance ${hashDistance(a, toned)}`).to.not.equal(null);
    expect(copy.width).to.equal(250);
    for (const name of ['crop', 'rotation', 'perspective', 'mirror']) {
      const other = await pictureHash(await TRANSFORMS[name]!(png), limits);
      expect(nearIdentical(a, other, p), name).to.equal(null);
    }
    for (let seed = 502; seed < 508; seed++) expect(nearIdentical(a, await pictureHash(await scene(seed), limits), p), `scene ${seed}`).to.equal(null);
    // The index finds it through any of the eight bytes.
    const ix = new TwinIndex<string>();
    ix.add('a', a);
    for (let seed = 510; seed < 520; seed++) ix.add(`s${seed}`, await pictureHash(await scene(seed), limits));
    expect(ix.find(copy, p)?.key).to.equal('a');
    expect(ix.find(await pictureHash(await scene(530), limits), p)).to.equal(null);
  });

  it('a slight crop passes the hash, aspect and thumbnail checks but not the place check; a resized copy passes all', async () => {
    const png = await scene(540);
    const { width: w, height: h } = await sharp(png).metadata();
    const a = await pictureHash(png, limits);
    const grey = await alignmentGrey(png, limits);
    const resized = await sharp(png).resize(250, 188).jpeg({ quality: 55 }).toBuffer();
    const shift = async (buf: Buffer) => misalignment(grey, await alignmentGrey(buf, limits)) / ALIGN_SIDE;
    expect(await shift(resized)).to.be.at.most(p.maxShift);
    for (const [name, box] of [
      ['left 1.5 %', { left: Math.round(w! * 0.015), top: 0, width: w! - Math.round(w! * 0.015), height: h! }],
      ['centre 1 %', { left: Math.round(w! * 0.01), top: Math.round(h! * 0.01), width: w! - 2 * Math.round(w! * 0.01), height: h! - 2 * Math.round(h! * 0.01) }],
    ] as const) {
      const crop = await sharp(png).extract(box).jpeg({ quality: 80 }).toBuffer();
      expect(nearIdentical(a, await pictureHash(crop, limits), p), `${name}: a hash twin`).to.not.equal(null);
      expect(await shift(crop), name).to.be.greaterThan(p.maxShift);
    }
  });

  it('the features stage gives a slight crop its own SIFT run and lends the picture\'s features to a resized copy', async () => {
    const dir = tempDir('capbridge-twins-crop-');
    const png = await scene(541);
    const { width: w, height: h } = await sharp(png).metadata();
    const dx = Math.round(w! * 0.015);
    writeManifest(path.join(dir, 'target.tsv'), [
      ['t1', write(dir, 't1.png', png), '原图', 'https://example.cn/t1'],
      ['t2', write(dir, 't2.jpg', await sharp(png).resize(270, 203).jpeg({ quality: 60 }).toBuffer()), '缩小的转载', 'https://example.cn/t2'],
      ['t3', write(dir, 't3.jpg', await sharp(png).extract({ left: dx, top: 0, width: w! - dx, height: h! }).jpeg({ quality: 80 }).toBuffer()), '裁掉一条边', 'https://example.cn/t3'],
    ]);
    const bank = await Bank.open(path.join(dir, 'data'));
    try {
      await importManifest(bank, { bank: 'target', manifest: path.join(dir, 'target.tsv'), config });
      const s = await computeMissingFeatures(bank, config, { threads: 1 });
      expect(s).to.include({ images: 2, twins: 1, misaligned: 1, failed: 0 });
      const sha = async (ext: string) => (await bank.items.get('target', ext))!.imageSha256;
      const twins = bank.repo(TwinsRepo);
      expect((await twins.twinOf(await sha('t2')))?.ofSha256).to.equal(await sha('t1'));
      expect(await twins.twinOf(await sha('t3'))).to.equal(undefined);
      expect((await bank.repo(FeaturesRepo).get(await sha('t3')))!.twinOf ?? null).to.equal(null);
    } finally {
      await bank.close();
    }
  });

  it('refuses a decompression bomb from its header', async () => {
    const big = await sharp({ create: { width: 4000, height: 4000, channels: 3, background: "#000" } }).png().toBuffer();
    let err: Error | null = null;
    await pictureHash(big, { maxPixels: 1_000_000 }).catch((e: Error) => (err = e));
    expect(String(err)).to.match(/too large/);
  });

  it('features once per picture, the picture indexed once, every item that shows it recorded', async () => {
    const dir = tempDir('capbridge-twins-');
    const data = path.join(dir, 'data');
    const png = await scene(600);
    // Target bank: the picture, a smaller recompressed copy of it, an exact duplicate, and two other scenes.
    // Source bank: a phone-like crop of the picture (a real match) and two republished copies of that crop.
    const crop = await TRANSFORMS.crop!(png);
    const tgt = [
      ['t1', write(dir, 't1.png', png), '原图'],
      ['t2', write(dir, 't2.jpg', await sharp(png).resize(270, 203).jpeg({ quality: 60 }).toBuffer()), '缩小的转载'],
      ['t3', write(dir, 't3.png', png), '同一文件'],
      ['d1', write(dir, 'd1.png', await scene(601)), '无关'],
      ['d2', write(dir, 'd2.png', await scene(602)), '无关'],
    ];
    const src = [
      ['s1', write(dir, 's1.jpg', crop), 'The picture, cropped.'],
      ['s2', write(dir, 's2.jpg', await sharp(crop).resize(300, 231).jpeg({ quality: 70 }).toBuffer()), 'The same, republished smaller.'],
      ['s3', write(dir, 's3.png', await scene(603)), 'Nothing like it.'],
    ];
    writeManifest(path.join(dir, 'source.tsv'), src.map((r) => [r[0]!, r[1]!, r[2]!, `https://example.org/${r[0]}`]));
    writeManifest(path.join(dir, 'target.tsv'), tgt.map((r) => [r[0]!, r[1]!, r[2]!, `https://example.cn/${r[0]}`]));
    for (const b of ['source', 'target']) {
      const r = await runCli(['--data', data, 'import', '--bank', b, '--manifest', path.join(dir, `${b}.tsv`), '--json']);
      expect(r.code, r.stderr).to.equal(0);
    }
    const bank = await Bank.open(data);
    try {
      const summary = await featuresThenMatch(bank, config, { threads: 1 });
      // SIFT ran for t1, d1, d2, s1, s3: t2 reused t1's features, s2 reused s1's (t3 is t1's very file).
      expect(summary.twins).to.equal(2);
      const twins = bank.repo(TwinsRepo);
      const items = new Map<string, Item>();
      for (const it of [...(await bank.items.list('source', 100)), ...(await bank.items.list('target', 100))]) items.set(`${it.bank}:${it.extId}`, it);
      const id = (b: 'source' | 'target', ext: string) => items.get(`${b}:${ext}`)!;
      expect((await twins.twinOf(id('target', 't2').imageSha256))?.ofSha256).to.equal(id('target', 't1').imageSha256);
      expect((await twins.twinOf(id('source', 's2').imageSha256))?.ofSha256).to.equal(id('source', 's1').imageSha256);
      const feats = bank.repo(FeaturesRepo);
      const f1 = (await feats.get(id('target', 't1').imageSha256))!;
      const f2 = (await feats.get(id('target', 't2').imageSha256))!;
      expect(f2.count).to.equal(f1.count);
      expect(f2.twinOf).to.equal(id('target', 't1').imageSha256);
      expect(f1.width / f2.scale).to.be.closeTo(270, 0.5); // t2's original pixels
      // read together (FeaturesRepo.getMany: the merge's batched read), a twin's as get gives it
      const many = await feats.getMany([id('target', 't2').imageSha256, id('target', 't1').imageSha256]);
      expect(many.get(id('target', 't1').imageSha256)).to.deep.equal(f1);
      expect(many.get(id('target', 't2').imageSha256)).to.deep.equal(f2);
      // The index holds t1, d1, d2: one row per picture.
      expect(summary.indexedImages).to.equal(3);
      expect((await bank.repo(LshRepo).signature()).count).to.equal(3);
      // s1 is searched, s2 takes its candidates: both list t1, t2 and t3, and nothing else.
      expect(summary.reused).to.equal(1);
      const cands = bank.repo(CandidatesRepo);
      const c1 = await cands.listFor(id('source', 's1').id);
      const c2 = await cands.listFor(id('source', 's2').id);
      const extOf = new Map([...items.values()].map((it) => [it.id, it.extId]));
      const ext = (l: typeof c1) => l.map((c) => extOf.get(c.targetItemId)!).sort();
      expect(ext(c1)).to.deep.equal(['t1', 't2', 't3']);
      expect(ext(c2)).to.deep.equal(['t1', 't2', 't3']);
      expect(await cands.listFor(id('source', 's3').id)).to.have.length(0);
      // Each candidate is in its own items' pixels: the homography of s2 -> t2 maps s2's centre where s1 -> t1
      // maps s1's, scaled by the two copies' sizes.
      const at = (H: number[], x: number, y: number) => [(H[0]! * x + H[1]! * y + H[2]!) / (H[6]! * x + H[7]! * y + H[8]!), (H[3]! * x + H[4]! * y + H[5]!) / (H[6]! * x + H[7]! * y + H[8]!)];
      const h11 = c1.find((c) => extOf.get(c.targetItemId) === 't1')!.homography!;
      const h22 = c2.find((c) => extOf.get(c.targetItemId) === 't2')!.homography!;
      const [x1, y1] = at(h11, 195, 150); // s1 is 390x300
      const [x2, y2] = at(h22, 150, 115.5); // s2 is 300x231
      expect(x2).to.be.closeTo(x1 * 0.75, 1.5); // t2 is 270 px wide, t1 360
      expect(y2).to.be.closeTo(y1 * 0.75, 1.5);
      for (const c of c2) expect(c.pairs!.length).to.equal(c.inliers * 4);
      // A second run has nothing to do and changes nothing.
      const again = await featuresThenMatch(bank, config, { threads: 1 });
      expect(again.twins).to.equal(0);
      expect(again.sources).to.equal(0);
    } finally {
      await bank.close();
    }
  });
});
