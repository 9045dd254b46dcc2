// Archive matching's parts (src/stages/match/archive.ts, wide.ts; src/bank/dense-views.ts): a target's dense views
// kept in the bank, compactly, once per image; the a-contrario test of a frame-checked homography (verify.ts
// homographyLogNfa), which tells a plane's inliers from the chance consensus of dense unrelated keypoints.
import { expect } from 'chai';
import path from 'node:path';
import { Bank, CandidatesRepo, DenseViewsRepo, LshRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import { importManifest } from '../src/import/manifest.js';
import { computeMissingFeatures } from '../src/stages/features/stage.js';
import { featuresThenMatch } from './helpers/stages.js';
import { archiveParams, archiveVerifyParams, denseViews, inThreadViews, observeSourceCosts, preselect } from '../src/stages/match/index.js';
import { prepare, searchParams } from '../src/lib/image-index/index.js';
import { denseKey, denseSiftParams } from '../src/stages/match/archive.js';
import { decodeGrey } from '../src/lib/sift/index.js';
import { asiftSpecs } from '../src/lib/sift/index.js';
import { extractFeatures } from '../src/lib/sift/extract.js';
import type { Features } from '../src/lib/image-index/features.js';
import { homographyLogNfa } from '../src/lib/image-index/verify.js';
import { archiveCandidates, inlierFloor, verifiedBy } from '../src/stages/match/archive.js';
import { chooseArchive } from '../src/stages/match/choice.js';
import { rulesOf } from '../src/stages/pair/index.js';
import { mulberry32 } from '../src/util/random.js';
import { forEachBackend } from './helpers/backends.js';
import { tempDir, writeManifest } from './helpers.js';
import { perspective, scene, write } from './lsh-helpers.js';

function randomFeatures(n: number, seed: number): Features {
  const r = mulberry32(seed);
  const keypoints = new Float32Array(n * 6);
  const descriptors = new Uint8Array(n * 128);
  for (let i = 0; i < n; i++) {
    keypoints.set([r() * 639, r() * 479, 1 + r() * 60, r() * 360, r(), -1], i * 6);
    for (let j = 0; j < 128; j++) descriptors[i * 128 + j] = Math.floor(r() * 256);
  }
  return { width: 640, height: 480, scale: 0.5, count: n, keypoints, descriptors };
}

forEachBackend('dense views of targets kept in the bank', (b) => {
  it('keeps x, y, size to 1/16 px and the angle to 2^-16 of a turn, descriptors exactly; a second write keeps the first', async () => {
    const bank = await b.open(path.join(tempDir('capbridge-dense-'), 'data'));
    try {
      const repo = bank.repo(DenseViewsRepo);
      const f = randomFeatures(500, 7);
      expect(await repo.get('a'.repeat(64), 'k1')).to.equal(undefined);
      await repo.put('a'.repeat(64), 'k1', f, 12.5);
      const g = (await repo.get('a'.repeat(64), 'k1'))!;
      expect([g.width, g.height, g.scale, g.count]).to.deep.equal([640, 480, 0.5, 500]);
      expect(Buffer.from(g.descriptors).equals(Buffer.from(f.descriptors))).to.equal(true);
      for (let i = 0; i < f.count; i++) {
        for (let c = 0; c < 3; c++) expect(Math.abs(g.keypoints[i * 6 + c]! - f.keypoints[i * 6 + c]!)).to.be.at.most(1 / 32 + 1e-6);
        const d = Math.abs(((g.keypoints[i * 6 + 3]! - f.keypoints[i * 6 + 3]! + 540) % 360) - 180);
        expect(d).to.be.at.most(360 / 65536);
      }
      // another key is another row; the same key written again (another worker) keeps the row there
      expect(await repo.get('a'.repeat(64), 'k2')).to.equal(undefined);
      await repo.put('a'.repeat(64), 'k1', randomFeatures(10, 8), 1);
      expect((await repo.get('a'.repeat(64), 'k1'))!.count).to.equal(500);
      expect(await repo.size()).to.deep.equal({ images: 1, bytes: 500 * 136 });
    } finally {
      await bank.close();
    }
  });
});

describe('archive matching: the dense views\' SIFT (archive.upsample)', function () {
  this.timeout(60_000);
  it('describes dense views without the initial upsampling when told, keyed apart from the upsampled ones', async () => {
    const { config } = loadConfig({});
    const png = await scene(21);
    const plain = await extractFeatures(png, config);
    const g = await decodeGrey(png, { maxSide: config.sift.maxSide, maxPixels: config.sift.maxPixels, minSide: config.sift.minSide });
    const a = archiveParams(config);
    const smallest = async (upsample: boolean) => {
      const sp = denseSiftParams(config, { upsample });
      expect(sp.upsample).to.equal(upsample);
      const f = await denseViews(g, plain, 1, 400, a.maxSide, sp, inThreadViews);
      expect(f.count).to.be.greaterThan(50);
      let min = Infinity;
      for (let i = 0; i < f.count; i++) min = Math.min(min, f.keypoints[i * 6 + 2]!);
      return { min, key: denseKey(asiftSpecs(1), 400, a.maxSide, sp) };
    };
    const up = await smallest(true);
    const plainScale = await smallest(false);
    // the upsampled octave holds the finest keypoints (half the size of the first octave's); without it none is that fine
    expect(plainScale.min).to.be.greaterThan(up.min * 1.5);
    expect(plainScale.key).to.not.equal(up.key);
  });
});

describe('archive matching: candidates preselected one-sided (archive.preselect)', function () {
  this.timeout(60_000);
  it('compares first the candidate whose plain features already agree with the query\'s dense views, wherever the rankings put it', async () => {
    const { config } = loadConfig({});
    const a = { ...archiveParams(config), candidates: 2 };
    const verify = archiveVerifyParams(searchParams(config), a, config.match.views.poolRadius);
    const sp = denseSiftParams(config, a);
    const features = async (png: Buffer) => {
      const f = await extractFeatures(png, config);
      const g = await decodeGrey(png, { maxSide: config.sift.maxSide, maxPixels: config.sift.maxPixels, minSide: config.sift.minSide });
      return { f, g };
    };
    const base = await scene(31);
    // the same scene seen obliquely (the target), and three other scenes
    const same = await features(await perspective(base, [[40, 10], [330, 40], [320, 230], [30, 260]]));
    const others = await Promise.all([32, 33, 34].map(async (s) => (await features(await scene(s))).f));
    const q = await features(base);
    const qa = prepare(await denseViews(q.g, q.f, 3, 500, a.maxSide, sp, inThreadViews));
    const plainOf = new Map<number, Features>([[0, others[0]!], [1, others[1]!], [2, others[2]!], [3, same.f]]);
    const cands = [0, 1, 2, 3].map((slot) => ({ slot, votes: 10 - slot }));
    const chosen = await preselect(qa, cands, a, verify, async (slot) => plainOf.get(slot));
    expect(chosen.map((c) => c.slot)).to.deep.equal([3, 0]);
    // without it (no plain features to look at, or no more candidates than compared) the rankings' order stands
    expect((await preselect(qa, cands, a, verify, async () => undefined)).map((c) => c.slot)).to.deep.equal([0, 1]);
  });
});

describe('archive matching: a source whose search verified a target below the score (archive.verified)', () => {
  const { config } = loadConfig({});
  const hit = (slot: number, score: number, inliers: number, votes: number) => ({ slot, score, inliers, votes, matches: 20, mirrored: false }) as unknown as Parameters<typeof archiveCandidates>[0][number];
  it('reaches archive matching whatever its promise, and the target it verified is compared first', () => {
    const sources = [
      { id: 1, evidence: null, promise: 5.8, verified: true },
      { id: 2, evidence: null, promise: 5.8, verified: false },
      { id: 3, evidence: null, promise: 30, verified: false },
    ];
    expect(chooseArchive(sources, 50, config).map((s) => s.id)).to.deep.equal([3, 1]);
    const off: Config = { ...config, match: { ...config.match, views: { ...config.match.views, archive: { ...config.match.views.archive, verified: false } } } };
    expect(chooseArchive(sources, 50, off).map((s) => s.id)).to.deep.equal([3]);
    // the verified target (slot 22, 13 inliers, score 0.075) first, before the votes' rankings; a hit that did not
    // verify (score 0) keeps its place in them
    const hits = [hit(7, 0, 0, 9), hit(22, 0.075, 13, 2)];
    const cands = archiveCandidates(hits, [7, 8, 9], [9, 10], 3, true);
    expect(cands.map((c) => c.slot)).to.deep.equal([22, 7, 9, 8]);
    expect(cands[0]!.votes).to.equal(2);
    // with archive.verified off, the rankings alone (taken in turn) say what is compared
    expect(archiveCandidates(hits, [7, 8, 9], [9, 10], 3, false).map((c) => c.slot)).to.deep.equal([7, 9, 8]);
  });
});

describe('archive matching: the a-contrario test of a frame-checked homography', () => {
  /** n matches: the first k on the plane x' = 1.2 x + 30, y' = 1.2 y + 10 (frames agreeing), the rest random. */
  function geometry(n: number, k: number, seed: number) {
    const r = mulberry32(seed);
    const pts = new Float64Array(n * 4), sim = new Float64Array(n * 2), ang = new Float64Array(n * 2), size = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const x = r() * 600, y = r() * 440, a = r() * 360, s = 2 + r() * 20;
      const on = i < k;
      pts.set(on ? [x, y, 1.2 * x + 30, 1.2 * y + 10] : [x, y, r() * 760, r() * 560], i * 4);
      ang.set([a, on ? a : r() * 360], i * 2);
      sim.set([on ? 1.2 : 0.25 + r() * 4, 0], i * 2);
      size[i] = s;
    }
    return { pts, sim, ang, size };
  }
  const H = Float64Array.from([1.2, 0, 30, 0, 1.2, 10, 0, 0, 1]);
  const frames = { angleTolerance: 30, scaleTolerance: 1 };

  it('finds a plane of 16 among 300 dense matches far beyond chance, and 6 among 300 not', () => {
    const sixteen = homographyLogNfa(H, geometry(300, 16, 1), 300, 16, 8, frames);
    expect(sixteen.logNfa).to.be.below(-5);
    const six = homographyLogNfa(H, geometry(300, 6, 2), 300, 6, 8, frames);
    expect(six.logNfa).to.be.above(0);
    // the chance of one random pairing agreeing in position and frame is small, and measured, not assumed
    expect(sixteen.chance).to.be.below(0.01);
  });

  it('counts every pairing of the matches: 10 inliers among 300 are beyond chance, though 4,096 sampled pairings could not say so', () => {
    const ten = homographyLogNfa(H, geometry(300, 10, 4), 300, 10, 8, frames);
    // about one random pairing in 20,000 agrees here: a sample of 4,096 floored it at 1/4,096 (NFA 10^1 for these 10)
    expect(ten.chance).to.be.below(1 / 4096 / 2);
    expect(ten.logNfa).to.be.below(-2);
    // and a wrong model keeps what random pairings give it: the same 300 matches, H shifted off the plane
    const off = Float64Array.from([1.2, 0, 230, 0, 1.2, -110, 0, 0, 1]);
    expect(homographyLogNfa(off, geometry(300, 10, 4), 300, 6, 8, frames).logNfa).to.be.above(0);
  });

  it('stores an archive hit (verified by the test: it carries its NFA) from archive.minInliers, a plain one from match.minInliers', () => {
    const { config } = loadConfig({});
    const c: Config = { ...config, match: { ...config.match, minInliers: 12, views: { ...config.match.views, archive: { ...config.match.views.archive, minInliers: 9 } } } };
    expect(inlierFloor(c, { logNfa: -4.6 })).to.equal(9);
    expect(inlierFloor(c, {})).to.equal(12);
    // the candidate records which rule stored it, and the pair stage re-checks it against that rule's floor
    expect([verifiedBy({ logNfa: -4.6 }), verifiedBy({})]).to.deep.equal(['archive', 'search']);
    expect(rulesOf(c).minInliers).to.deep.equal({ search: 12, archive: 9 });
  });

  it('weighs structure: keypoints crowded where the plane maps them make a random pairing agree far more often', () => {
    // the matches off the plane: query points in one small blob, target points in a blob around where H takes it,
    // paired at random (a lattice of look-alikes): each is no inlier, but any pairing of them nearly is
    const crowded = geometry(300, 16, 3);
    const r = mulberry32(9);
    for (let i = 16; i < 300; i++) {
      const x = 100 + r() * 6, y = 100 + r() * 6;
      crowded.pts.set([x, y, 150 + r() * 6, 130 + r() * 6], i * 4);
      crowded.sim[i * 2] = 1.2;
      crowded.ang[i * 2 + 1] = crowded.ang[i * 2]!;
    }
    const spread = homographyLogNfa(H, geometry(300, 16, 3), 300, 16, 8, frames);
    const dense = homographyLogNfa(H, crowded, 300, 16, 8, frames);
    expect(dense.chance).to.be.above(10 * spread.chance);
    expect(dense.logNfa).to.be.above(spread.logNfa);
  });
});

describe('match: archive matching within each window\'s budget', function () {
  this.timeout(300_000);
  // One wall seen steeply from the side (sources s1, s2) and from below (t1): only dense views of both photos verify
  // it; u31 is another place; d22..d24 are other walls from below.
  const SIDE: [number, number][] = [[130, 20], [230, 45], [230, 250], [130, 270]];
  const BELOW: [number, number][] = [[20, 100], [340, 120], [320, 170], [40, 190]];

  async function setup(dir: string) {
    const base = await scene(21);
    const side = write(dir, 's1.png', await perspective(base, SIDE));
    writeManifest(path.join(dir, 'source.tsv'), [
      ['s1', side, 'A wall seen from the side.', 'https://example.org/en/s1'],
      ['u31', write(dir, 'u31.png', await scene(31)), 'Another place.', 'https://example.org/en/u31'],
      ['s2', side, 'The wall again.', 'https://example.org/en/s2'],
    ]);
    writeManifest(path.join(dir, 'target.tsv'), [
      ['t1', write(dir, 't1.png', await perspective(base, BELOW)), '从下面看的墙', 'https://example.org/zh/t1'],
      ...(await Promise.all([22, 23, 24].map(async (k) => [`d${k}`, write(dir, `d${k}.png`, await perspective(await scene(k), BELOW)), '无关的照片', `https://example.org/zh/d${k}`]))),
    ]);
  }

  it('reaches the promising unconfident sources of each window alike in one run and in per-window jobs, and finds the wall', async () => {
    const dir = tempDir('capbridge-archive-window-');
    await setup(dir);
    const { config: base } = loadConfig({});
    // windows of 2 sources: {s1, u31} {s2}; the views off (this is about archive matching); twins off so that s2 is
    // searched in its own window
    const c: Config = {
      ...base,
      worker: { ...base.worker, batch: { ...base.worker.batch, match: 2 } },
      sift: { ...base.sift, twins: { ...base.sift.twins, enabled: false } },
      match: { ...base.match, views: { ...base.match.views, enabled: false, minVotingKeypoints: 0, archive: { ...base.match.views.archive, candidates: 4, budget: 1, maxTilt: 4, keypointsPerView: 400, targetMaxTilt: 4, targetKeypointsPerView: 400 } } },
    };
    const outcome = async (name: string, jobs: boolean, cfg: Config) => {
      const bank = await Bank.open(path.join(dir, name));
      try {
        for (const b of ['source', 'target'] as const) await importManifest(bank, { bank: b, manifest: path.join(dir, `${b}.tsv`), config: cfg });
        let archived = 0;
        const reached: number[] = [];
        const viewedIds: number[] = [];
        const stop = observeSourceCosts((x) => (x.stage === 'archive' ? reached.push(x.itemId) : x.stage === 'views' && viewedIds.push(x.itemId)));
        try {
          if (!jobs) archived = (await featuresThenMatch(bank, cfg, { threads: 1 })).archived;
          else {
            await computeMissingFeatures(bank, cfg, { threads: 1 });
            const seq = await bank.repo(LshRepo).sequence();
            const ids = (await bank.repo(CandidatesRepo).pendingSources(seq, 0, 100)).map((x) => x.id);
            for (let i = 0; i < ids.length; i += 2) archived += (await featuresThenMatch(bank, cfg, { threads: 1, idRange: { first: ids[i]!, last: ids[Math.min(ids.length, i + 2) - 1]! } })).archived;
          }
        } finally {
          stop();
        }
        const cands: string[] = [];
        for (const ext of ['s1', 'u31', 's2']) {
          const it = (await bank.items.get('source', ext))!;
          for (const x of await bank.repo(CandidatesRepo).listFor(it.id)) cands.push(`${ext}→${(await bank.items.byId(x.targetItemId))!.extId} ${x.inliers} ${x.verifiedBy}`);
        }
        const extOf = (ids: number[]) => Promise.all(ids.map(async (id) => (await bank.items.byId(id))!.extId));
        return { archived, reached: await extOf(reached), viewed: await extOf(viewedIds), cands };
      } finally {
        await bank.close();
      }
    };
    const one = await outcome('one', false, c);
    expect(one.reached, 'each unconfident source of each window').to.include.members(['s1', 's2']);
    expect(one.cands.filter((x) => x.startsWith('s1→t1') || x.startsWith('s2→t1'))).to.have.length(2);
    // stored as archive matching's (candidates.verified_by): the pair stage re-checks them at archive.minInliers
    expect(one.cands.filter((x) => x.includes('→t1')).every((x) => x.endsWith(' archive')), one.cands.join('; ')).to.equal(true);
    expect(one.cands.filter((x) => !x.includes('→t1')), 'no unrelated candidate').to.deep.equal([]);
    expect(await outcome('jobs', true, c)).to.deep.equal(one);
    // a budget of one source a window, and a promise no shortlist reaches: none
    const none = await outcome('none', false, { ...c, match: { ...c.match, views: { ...c.match.views, minVotingKeypoints: 1e9 } } });
    expect(none.archived).to.equal(0);
    expect(none.cands).to.deep.equal([]);
    // the views on too (one source a window): before archive matching (the views reach the wall's sources, which
    // stay unconfident), or archive matching first, which subsumes them ('none': the views go to no source it took)
    const viewsOn = (order: Config['match']['views']['archive']['views']): Config => ({ ...c, match: { ...c.match, views: { ...c.match.views, enabled: true, budget: 1, archive: { ...c.match.views.archive, views: order } } } });
    const before = await outcome('before', false, viewsOn('before'));
    expect(before.viewed).to.include.members(['s1', 's2']);
    const first = await outcome('first', false, viewsOn('none'));
    expect(first.reached).to.include.members(['s1', 's2']);
    expect(first.viewed.filter((x) => first.reached.includes(x)), 'no views for a source archive matching took').to.deep.equal([]);
    expect(first.cands.filter((x) => x.startsWith('s1→t1') || x.startsWith('s2→t1'))).to.have.length(2);
  });
});
