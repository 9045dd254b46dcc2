// Search with synthesised query views (src/stages/match/views.ts): a frontal scene whose only counterpart is a
// strongly foreshortened copy. The plain search does not verify it; the progressive search, which adds tilted
// views of the query, ranks it first with a homography that maps the query onto the copy, while distractors stay
// at score 0. Confident queries skip the views; `match` uses them through the bank's image store.
import { expect } from 'chai';
import path from 'node:path';
import { Bank, CandidatesRepo, DenseViewsRepo, LshRepo } from '../src/bank/index.js';
import { computeMissingFeatures } from '../src/stages/features/stage.js';
import { loadConfig } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import { decodeGrey } from '../src/lib/sift/decode.js';
import { extractFeatures } from '../src/lib/sift/extract.js';
import { fitHomography } from '../src/lib/geometry/geometry.js';
import { LshIndex } from '../src/lib/image-index/lsh.js';
import { prepare, search } from '../src/lib/image-index/searcher.js';
import { ViewPool, observeSourceCosts } from '../src/stages/match/stage.js';
import { createReviewServer } from '../src/review/server.js';
import { lshParams, searchParams } from '../src/lib/image-index/store.js';
import { inThreadViews, poolViews, searchProgressive, viewParams, withOwnViews, type TargetViews } from '../src/stages/match/views.js';
import { archiveCompare, archiveMatch, archiveParams, archiveVerifyParams, denseViews } from '../src/stages/match/archive.js';
import { concatFeatures } from '../src/lib/image-index/descriptors.js';
import { siftParams } from '../src/lib/sift/extract.js';
import { asiftSpecs, viewFeatures, viewSpecs } from '../src/lib/sift/views.js';
import { mulberry32 } from '../src/util/random.js';
import { SiftPool } from '../src/lib/sift/pool.js';
import { unverified, type Prepared } from '../src/lib/image-index/verify.js';
import { importManifest } from '../src/import/manifest.js';
import { tempDir, writeManifest } from './helpers.js';
import { H, W, perspective, scene, write } from './lsh-helpers.js';
import { featuresThenMatch } from './helpers/stages.js';

// The scene's rectangle [0,360]x[0,270] lands on this quadrilateral: squashed about 3.6x across, with perspective.
const CORNERS: [number, number][] = [[130, 20], [230, 45], [230, H - 45], [130, H - 20]];

/** Where the perspective copy puts a scene point: the homography from the image rectangle to CORNERS. */
const WARP = fitHomography(Float64Array.from([[0, 0], [W, 0], [W, H], [0, H]].flatMap(([x, y], i) => [x!, y!, ...CORNERS[i]!])), [0, 1, 2, 3])!;
function onCopy(x: number, y: number): [number, number] {
  const w = WARP[6]! * x + WARP[7]! * y + WARP[8]!;
  return [(WARP[0]! * x + WARP[1]! * y + WARP[2]!) / w, (WARP[3]! * x + WARP[4]! * y + WARP[5]!) / w];
}

describe('lsh-index: search with synthesised query views', function () {
  this.timeout(120_000);
  const { config } = loadConfig({});
  // archive matching only where a test asks for it (its own tests below, and test/match-archive.test.ts)
  config.match.views.archive.candidates = 0;
  let queryPng: Buffer;
  let index: LshIndex;
  let prep: Prepared[];

  before(async () => {
    queryPng = await scene(11);
    const targets = [await perspective(queryPng, CORNERS), ...(await Promise.all([12, 13, 14].map(scene)))];
    prep = (await Promise.all(targets.map((b) => extractFeatures(b, config)))).map(prepare);
    index = new LshIndex(lshParams(config));
    for (const p of prep) index.add(index.codes(p.vecs, p.f.count));
    index.merge();
  });

  const grey = (buf: Buffer) => () => decodeGrey(buf, { maxSide: config.sift.maxSide, maxPixels: config.sift.maxPixels });

  it('verifies a strongly foreshortened copy the plain search misses, and maps the query onto it', async () => {
    const q = await extractFeatures(queryPng, config);
    const plain = await search(index, (s) => prep[s], q, searchParams(config));
    const plainTarget = plain.hits.find((h) => h.slot === 0);
    expect(plainTarget?.score ?? 0, 'plain score of the copy').to.equal(0);

    const r = await searchProgressive(index, (s) => prep[s], q, searchParams(config), viewParams(config), config.sift, grey(queryPng));
    expect(r.usedViews).to.equal(true);
    expect(r.views.count).to.equal(config.match.views.tilts.length * config.match.views.rotations);
    expect(r.views.keypoints).to.be.greaterThan(0);
    const top = r.hits[0]!;
    expect(top.slot, 'the copy ranks first').to.equal(0);
    expect(top.score).to.be.greaterThan(config.match.minScore);
    expect(top.inliers).to.be.at.least(config.match.minInliers);
    for (const h of r.hits.slice(1)) expect(h.score, `distractor ${h.slot}`).to.equal(0);
    // The homography (query detection px -> copy px; both images are at detection size) follows the warp.
    const Hm = top.H!;
    for (const [x, y] of [[180, 135], [90, 70], [270, 200]] as const) {
      const w = Hm[6]! * x + Hm[7]! * y + Hm[8]!;
      const [u, v] = onCopy(x, y);
      expect((Hm[0]! * x + Hm[1]! * y + Hm[2]!) / w).to.be.closeTo(u, 4);
      expect((Hm[3]! * x + Hm[4]! * y + Hm[5]!) / w).to.be.closeTo(v, 4);
    }
    // Inlier pairs are in the query's own frame: they map onto the copy by the known warp.
    for (let i = 0; i < top.pairs.length; i += 4) {
      const [u, v] = onCopy(top.pairs[i]!, top.pairs[i + 1]!);
      expect(Math.hypot(u - top.pairs[i + 2]!, v - top.pairs[i + 3]!)).to.be.lessThan(config.match.ransacThreshold + 1);
    }
  });

  it('gives the same hits with the views computed on worker threads', async () => {
    const q = await extractFeatures(queryPng, config);
    const here = await searchProgressive(index, (s) => prep[s], q, searchParams(config), viewParams(config), config.sift, grey(queryPng));
    const pool = new SiftPool(config.sift, 2);
    try {
      const there = await searchProgressive(index, (s) => prep[s], q, searchParams(config), viewParams(config), config.sift, grey(queryPng), poolViews(pool));
      expect(there.usedViews).to.equal(true);
      expect(there.views.keypoints).to.equal(here.views.keypoints);
      expect(there.hits).to.deep.equal(here.hits);
      expect(there.shortlist).to.deep.equal(here.shortlist);
    } finally {
      await pool.close();
    }
  });

  it('a ViewPool starts workers only when views run, falls back to this thread when they fail, and stops', async () => {
    const g = await grey(queryPng)();
    const specs = viewSpecs(config.match.views.tilts, 2).slice(0, 3);
    const args = [g, specs, siftParams(config.sift), 200, config.match.views.maxSide] as const;
    const want = await inThreadViews(...args);
    const vp = new ViewPool(config, 2);
    try {
      expect(vp.started).to.equal(false);
      expect(await vp.run(...args)).to.deep.include({ views: want.views });
      expect(vp.started).to.equal(true);
      // Bad input is the caller's error: no fallback.
      const bad = await Promise.resolve(vp.run({ ...g, width: 0 }, specs, args[2], 200, args[4])).catch((e: Error) => e);
      expect(bad).to.be.instanceOf(RangeError);
      // Workers that fail (here: a pool whose workers are gone) do not fail the query: same features, this thread.
      await (vp as unknown as { pool: { close(): Promise<void> } }).pool.close();
      expect(await vp.run(...args)).to.deep.include({ views: want.views });
    } finally {
      await vp.close();
    }
    expect(vp.started).to.equal(false);
    expect(await vp.run(...args)).to.deep.include({ views: want.views });
    expect(vp.started, 'no new workers after close').to.equal(false);
  });

  it('is progressive: a confident plain query and disabled views synthesise nothing', async () => {
    const dup = await extractFeatures(await perspective(queryPng, CORNERS), config);
    let called = 0;
    const r = await searchProgressive(index, (s) => prep[s], dup, searchParams(config), viewParams(config), config.sift, () => {
      called++;
      return undefined;
    });
    expect(r.hits[0]!.slot).to.equal(0);
    expect(r.hits[0]!.score).to.be.at.least(config.match.views.confidence);
    expect(r.usedViews).to.equal(false);
    const q = await extractFeatures(queryPng, config);
    const off = await searchProgressive(index, (s) => prep[s], q, searchParams(config), { ...viewParams(config), enabled: false }, config.sift, () => {
      called++;
      return undefined;
    });
    expect(off.usedViews).to.equal(false);
    expect(off.hits.find((h) => h.slot === 0)?.score ?? 0).to.equal(0);
    expect(called).to.equal(0);
  });

  // Two-sided views: the wall seen steeply from the side (squashed ~3x across) in one photo and steeply from below
  // (squashed ~4x down) in the other; no view of one photo undoes both, views of both do.
  const SIDE: [number, number][] = [[130, 20], [230, 45], [230, 250], [130, 270]];
  const BELOW: [number, number][] = [[20, 100], [340, 120], [320, 170], [40, 190]];

  /** One wall seen from the side (the query) and from below (slot 0), and three other walls from below, indexed. */
  async function wallFromTwoSides() {
    const base = await scene(21);
    const qb = await perspective(base, SIDE);
    const targets = [await perspective(base, BELOW), ...(await Promise.all([22, 23, 24].map(async (k) => perspective(await scene(k), BELOW))))];
    const tp = (await Promise.all(targets.map((b) => extractFeatures(b, config)))).map(prepare);
    const idx = new LshIndex(lshParams(config));
    for (const p of tp) idx.add(idx.codes(p.vecs, p.f.count));
    idx.merge();
    return { qb, targets, tp, idx, q: await extractFeatures(qb, config) };
  }

  it('verifies a plane seen steeply from two sides only with views of both photos, and distractors stay at 0', async () => {
    const { qb, targets, tp, idx, q } = await wallFromTwoSides();
    const asked: number[] = [];
    const targetViews: TargetViews = async (slot, specs, kpv, maxSide) => {
      asked.push(slot);
      const { views } = await inThreadViews(await grey(targets[slot]!)(), specs, siftParams(config.sift), kpv, maxSide);
      return concatFeatures(tp[slot]!.f, [tp[slot]!.f, ...views]);
    };
    const one = await searchProgressive(idx, (s) => tp[s], q, searchParams(config), { ...viewParams(config), targetViews: 0 }, config.sift, grey(qb), undefined, undefined, targetViews);
    expect(one.usedViews).to.equal(true);
    expect(one.hits.find((h) => h.slot === 0)?.score ?? 0, 'query views alone').to.equal(0);
    expect(asked).to.deep.equal([]);
    const two = await searchProgressive(idx, (s) => tp[s], q, searchParams(config), { ...viewParams(config), targetViews: 8 }, config.sift, grey(qb), undefined, undefined, targetViews);
    expect(asked.length, 'each candidate asked once').to.equal(new Set(asked).size);
    expect(asked.length).to.be.within(1, 8);
    expect(two.views.targets).to.equal(1);
    const top = two.hits[0]!;
    expect(top.slot, 'the same wall ranks first').to.equal(0);
    expect(top.score).to.be.greaterThan(config.match.minScore);
    expect(top.inliers).to.be.at.least(config.match.minInliers);
    for (const h of two.hits.slice(1)) expect(h.score, `distractor ${h.slot}`).to.equal(0);
    // each inlier is its own place on both sides: pooled copies of a point (a few pixels apart) count once
    const apart = (o: number) => {
      for (let i = 0; i < top.pairs.length; i += 4)
        for (let j = i + 4; j < top.pairs.length; j += 4)
          if (Math.hypot(top.pairs[i + o]! - top.pairs[j + o]!, top.pairs[i + o + 1]! - top.pairs[j + o + 1]!) < config.match.views.poolRadius) return false;
      return true;
    };
    expect(apart(0) && apart(2)).to.equal(true);
  });

  it('archive matching verifies the same wall with ASIFT views of both photos and exact pairs, distractors at 0', async () => {
    const { qb, targets, tp, idx, q } = await wallFromTwoSides();
    const a = { ...archiveParams(config), candidates: 4, maxTilt: 4, keypointsPerView: 400 };
    const sp = siftParams(config.sift);
    const asked: number[] = [];
    const targetDense = async (slot: number) => {
      asked.push(slot);
      return denseViews((await grey(targets[slot]!)())!, tp[slot]!.f, a.maxTilt, a.keypointsPerView, a.maxSide, sp, inThreadViews);
    };
    const plain = await search(idx, (s) => tp[s], q, searchParams(config));
    expect(plain.hits.find((h) => h.slot === 0)?.score ?? 0, 'the plain search does not verify it').to.equal(0);
    // every target a candidate (the plain search shortlists only the images its keypoints reached)
    const cands = [3, 2, 1, 0].map((slot) => ({ ...unverified('not matched'), slot, votes: 0, mirrored: false }));
    const qd = await denseViews((await grey(qb)())!, q, a.maxTilt, a.keypointsPerView, a.maxSide, sp, inThreadViews);
    const r = await archiveMatch(qd, cands, a, archiveVerifyParams(searchParams(config), a, config.match.views.poolRadius), targetDense);
    expect([...asked].sort()).to.deep.equal([0, 1, 2, 3]);
    expect(r.candidates).to.equal(4);
    expect(r.keypoints).to.be.greaterThan(q.count * 4);
    expect(r.hits.map((h) => h.slot), 'the same wall, and no distractor').to.deep.equal([0]);
    const top = r.hits[0]!;
    expect(top.model, 'archive matching verifies planes only').to.equal('homography');
    expect(top.score).to.be.greaterThan(config.match.minScore);
    expect(top.inliers).to.be.at.least(config.match.minInliers);
  });

  it('archive matching does not verify unrelated night photos of one size through their views\' frames', () => {
    // Dark photos with scattered lights: most of what SIFT finds in a view of one is the view's frame, which is
    // the same for every photo of that size; with a grey fill those frames matched under the identity
    // (retrieval-wxbs: night queries verified other night photos by 16-28 such inliers; here 10-16 a pair).
    const night = (seed: number): Uint8Array => {
      const r = mulberry32(seed);
      const g = new Float32Array(W * H).fill(12);
      for (let k = 0; k < 40; k++) {
        const cx = r() * W, cy = r() * H, s = 1 + r() * 4, a = 80 + r() * 170;
        for (let y = Math.max(0, Math.floor(cy - 4 * s)); y < Math.min(H, cy + 4 * s); y++)
          for (let x = Math.max(0, Math.floor(cx - 4 * s)); x < Math.min(W, cx + 4 * s); x++) g[y * W + x]! += a * Math.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * s * s));
      }
      return Uint8Array.from(g, (v) => Math.min(255, v + r() * 6));
    };
    const a = archiveParams(config);
    const specs = asiftSpecs(4);
    const dense = [1, 2, 3].map((seed) => concatFeatures({ width: W, height: H, scale: 1 }, viewFeatures({ grey: night(seed), width: W, height: H }, specs, siftParams(config.sift), 400, 1024).views));
    const p = archiveVerifyParams(searchParams(config), a, config.match.views.poolRadius);
    for (const [i, j] of [[0, 1], [0, 2], [1, 2]] as const) {
      expect(archiveCompare(prepare(dense[i]!), dense[j]!, a, p).score, `night ${i} vs ${j}`).to.equal(0);
      // and no consensus beyond chance with the inlier bar at RANSAC's minimum (5-6 measured)
      expect(archiveCompare(prepare(dense[i]!), dense[j]!, a, { ...p, minInliers: 4 }).inliers, `night ${i} vs ${j} inliers`).to.be.below(9);
    }
  });

  it('match takes a candidate\'s own views from the bank\'s image store', async () => {
    const dir = tempDir('capbridge-views-two-');
    const base = await scene(21);
    writeManifest(path.join(dir, 'source.tsv'), [['s1', write(dir, 's1.png', await perspective(base, SIDE)), 'A wall seen from the side.', 'https://example.org/en/s1']]);
    writeManifest(path.join(dir, 'target.tsv'), [
      ['t1', write(dir, 't1.png', await perspective(base, BELOW)), '从下面看的墙', 'https://example.org/zh/t1'],
      ...(await Promise.all([22, 23, 24].map(async (k) => [`d${k}`, write(dir, `d${k}.png`, await perspective(await scene(k), BELOW)), '无关的照片', `https://example.org/zh/d${k}`]))),
    ]);
    // 0: query views only; 8: two-sided views; 'archive': archive matching alone (its dense views of t1 from the store;
    // it subsumes the views search, archive.views 'none')
    for (const n of [0, 8, 'archive'] as const) {
      // minVotingKeypoints 0: one source, whose shortlist's votes are not what this is about
      const v = { ...config.match.views, minVotingKeypoints: 0 };
      const c: Config = { ...config, match: { ...config.match, views: n === 'archive' ? { ...v, targetViews: 0, archive: { ...v.archive, views: 'none', candidates: 4, maxTilt: 4, keypointsPerView: 400, targetMaxTilt: 4, targetKeypointsPerView: 400 } } : { ...v, targetViews: n, archive: { ...v.archive, candidates: 0 } } } };
      const bank = await Bank.open(path.join(dir, `data${n}`));
      try {
        for (const b of ['source', 'target'] as const) await importManifest(bank, { bank: b, manifest: path.join(dir, `${b}.tsv`), config: c });
        const s = await featuresThenMatch(bank, c, { threads: 1 });
        expect(s.viewed).to.equal(n === 'archive' ? 0 : 1);
        const list = await bank.repo(CandidatesRepo).listFor((await bank.items.get('source', 's1'))!.id);
        if (!n) expect(list, 'query views only').to.deep.equal([]);
        else {
          expect(list.map((x) => x.rank)).to.deep.equal([1]);
          expect((await bank.items.byId(list[0]!.targetItemId))!.extId).to.equal('t1');
          expect(list[0]!.inliers).to.be.at.least(config.match.minInliers);
        }
        if (n === 'archive') {
          expect(s.archived).to.equal(1);
          expect(s.denseComputed, 'the candidates\' dense views, computed once').to.be.within(1, 4);
          expect((await bank.repo(DenseViewsRepo).size()).images).to.equal(s.denseComputed);
          // another source showing the same wall, in a later run: its candidates' dense views come from the bank
          writeManifest(path.join(dir, 'source2.tsv'), [['s2', path.join(dir, 's1.png'), 'The wall from the side again.', 'https://example.org/en/s2']]);
          await importManifest(bank, { bank: 'source', manifest: path.join(dir, 'source2.tsv'), config: c });
          const again = await featuresThenMatch(bank, c, { threads: 1 });
          expect(again.archived).to.equal(1);
          expect(again.denseComputed).to.equal(0);
          const l2 = await bank.repo(CandidatesRepo).listFor((await bank.items.get('source', 's2'))!.id);
          expect(l2.map((x) => x.targetItemId)).to.deep.equal(list.map((x) => x.targetItemId));
        }
      } finally {
        await bank.close();
      }
    }
  });

  it('match reads the source image from the bank and stores the copy only with views on', async () => {
    const dir = tempDir('capbridge-views-');
    const src = [['s1', write(dir, 's1.png', queryPng), 'A wall seen from the front.', 'https://example.org/en/s1']];
    const tgt = [
      ['t1', write(dir, 't1.png', await perspective(queryPng, CORNERS)), '从侧面看的墙', 'https://example.org/zh/t1'],
      ['d1', write(dir, 'd1.png', await scene(12)), '无关的照片', 'https://example.org/zh/d1'],
    ];
    writeManifest(path.join(dir, 'source.tsv'), src);
    writeManifest(path.join(dir, 'target.tsv'), tgt);
    for (const [name, cfg] of [['off', false], ['on', true]] as const) {
      const data = path.join(dir, name);
      // minVotingKeypoints 0: the gate is not what this is about (a two-target bank's steep wall gathers few voting keypoints)
      const c: Config = { ...config, match: { ...config.match, views: { ...config.match.views, enabled: cfg, minVotingKeypoints: 0 } } };
      const bank = await Bank.open(data);
      try {
        for (const b of ['source', 'target'] as const) {
          const r = await importManifest(bank, { bank: b, manifest: path.join(dir, `${b}.tsv`), config: c });
          expect(r.added, b).to.equal(b === "source" ? 1 : 2);
        }
        const s = await featuresThenMatch(bank, c);
        expect(s.sources).to.equal(1);
        expect(s.viewed, name).to.equal(cfg ? 1 : 0);
        const list = (await bank.repo(CandidatesRepo).listFor((await bank.items.get('source', 's1'))!.id));
        if (!cfg) expect(list, 'plain match').to.deep.equal([]);
        else {
          expect(list).to.have.length(1);
          expect((await bank.items.byId(list[0]!.targetItemId))!.extId).to.equal('t1');
          expect(list[0]!.inliers).to.be.at.least(config.match.minInliers);
        }
      } finally {
        await bank.close();
      }
    }
  });

  it('the review server keeps one views pool across searches and stops it when it closes', async () => {
    const dir = tempDir('capbridge-views-serve-');
    writeManifest(path.join(dir, 'target.tsv'), [
      ['t1', write(dir, 't1.png', await perspective(queryPng, CORNERS)), '从侧面看的墙', 'https://example.org/zh/t1'],
      ['d1', write(dir, 'd1.png', await scene(12)), '无关的照片', 'https://example.org/zh/d1'],
    ]);
    const bank = await Bank.open(path.join(dir, 'data'));
    const app = createReviewServer(bank, config, { host: '127.0.0.1', token: '' });
    try {
      await importManifest(bank, { bank: 'target', manifest: path.join(dir, 'target.tsv'), config });
      await computeMissingFeatures(bank, config, { threads: 1 });
      const views = () => (app as unknown as { searchViews: ViewPool | undefined }).searchViews;
      expect(views(), 'no pool before a search').to.equal(undefined);
      const ask = async () => {
        const r = await app.inject({ method: 'POST', url: '/api/search', headers: { 'content-type': 'application/octet-stream' }, payload: queryPng });
        expect(r.statusCode).to.equal(200);
        return (r.json() as { results: { extId: string }[] }).results.map((x) => x.extId);
      };
      // the frontal wall needs views to find its oblique copy: the pool's threads start, and stay for the next search
      expect(await ask()).to.deep.equal(['t1']);
      const first = views()!;
      expect(first.started).to.equal(true);
      expect(await ask()).to.deep.equal(['t1']);
      expect(views()).to.equal(first);
      expect(first.started).to.equal(true);
      await app.close();
      expect(first.started, 'stopped with the server').to.equal(false);
    } finally {
      await app.close();
      await bank.close();
    }
  });

  it('match gives views to at most the run\'s budget of sources, after every plain search', async () => {
    const dir = tempDir('capbridge-views-budget-');
    // Four sources, none confident: the frontal wall (its copy is only found with views) and three unrelated
    // scenes. With a budget of 1 % (at least one source), one source gets views.
    const src = [['s1', write(dir, 's1.png', queryPng), 'A wall seen from the front.', 'https://example.org/en/s1']];
    for (const k of [31, 32, 33]) src.push([`u${k}`, write(dir, `u${k}.png`, await scene(k)), 'Another place.', `https://example.org/en/u${k}`]);
    const tgt = [
      ['t1', write(dir, 't1.png', await perspective(queryPng, CORNERS)), '从侧面看的墙', 'https://example.org/zh/t1'],
      ['d1', write(dir, 'd1.png', await scene(12)), '无关的照片', 'https://example.org/zh/d1'],
    ];
    writeManifest(path.join(dir, 'source.tsv'), src);
    writeManifest(path.join(dir, 'target.tsv'), tgt);
    const c: Config = { ...config, match: { ...config.match, views: { ...config.match.views, budget: 0.01, minVotingKeypoints: 0 } } }; // the budget, not the gate
    const bank = await Bank.open(path.join(dir, 'data'));
    try {
      for (const b of ['source', 'target'] as const) await importManifest(bank, { bank: b, manifest: path.join(dir, `${b}.tsv`), config: c });
      const seen: { itemId: number; viewed: boolean }[] = [];
      const stop = observeSourceCosts((x) => seen.push(x));
      const s = await featuresThenMatch(bank, c, { threads: 1 }).finally(stop);
      expect(s.sources).to.equal(4);
      expect(s.viewed).to.equal(1);
      expect(seen.filter((x) => x.viewed)).to.have.length(1);
      expect(seen.filter((x) => !x.viewed)).to.have.length(4); // every source's plain search is reported
    } finally {
      await bank.close();
    }
  });

  it('the views budget is spent per window of worker.batch.match sources: one run and per-window jobs end alike', async () => {
    const dir = tempDir('capbridge-views-window-');
    const src = [['s1', write(dir, 's1.png', queryPng), 'A wall seen from the front.', 'https://example.org/en/s1']];
    for (const k of [31, 32, 33]) src.push([`u${k}`, write(dir, `u${k}.png`, await scene(k)), 'Another place.', `https://example.org/en/u${k}`]);
    src.push(['s2', write(dir, 's2.png', queryPng), 'The wall again.', 'https://example.org/en/s2']);
    const tgt = [
      ['t1', write(dir, 't1.png', await perspective(queryPng, CORNERS)), '从侧面看的墙', 'https://example.org/zh/t1'],
      ['d1', write(dir, 'd1.png', await scene(12)), '无关的照片', 'https://example.org/zh/d1'],
    ];
    writeManifest(path.join(dir, 'source.tsv'), src);
    writeManifest(path.join(dir, 'target.tsv'), tgt);
    // windows of 2: {s1, u31} {u32, u33} {s2}; twins off so that s2 is searched on its own in its window
    const c: Config = { ...config, worker: { ...config.worker, batch: { ...config.worker.batch, match: 2 } }, sift: { ...config.sift, twins: { ...config.sift.twins, enabled: false } }, match: { ...config.match, views: { ...config.match.views, budget: 0.01, denseBudget: 0, minVotingKeypoints: 0 } } }; // the budget, not the gate
    const outcome = async (name: string, jobs: boolean) => {
      const bank = await Bank.open(path.join(dir, name));
      try {
        for (const b of ['source', 'target'] as const) await importManifest(bank, { bank: b, manifest: path.join(dir, `${b}.tsv`), config: c });
        let viewed = 0;
        if (!jobs) viewed = (await featuresThenMatch(bank, c, { threads: 1 })).viewed;
        else {
          // as the scheduler queues match jobs for workers: consecutive pending source ids, worker.batch.match each
          await computeMissingFeatures(bank, c, { threads: 1 }); // the features jobs, all done before any match job
          const seq = await bank.repo(LshRepo).sequence();
          const ids = (await bank.repo(CandidatesRepo).pendingSources(seq, 0, 100)).map((x) => x.id);
          expect(ids).to.have.length(5);
          for (let i = 0; i < ids.length; i += 2) viewed += (await featuresThenMatch(bank, c, { threads: 1, idRange: { first: ids[i]!, last: ids[Math.min(ids.length, i + 2) - 1]! } })).viewed;
        }
        const cands: string[] = [];
        for (const ext of ['s1', 'u31', 'u32', 'u33', 's2']) {
          const it = (await bank.items.get('source', ext))!;
          for (const x of await bank.repo(CandidatesRepo).listFor(it.id)) cands.push(`${ext}→${(await bank.items.byId(x.targetItemId))!.extId} ${x.inliers}`);
        }
        return { viewed, cands };
      } finally {
        await bank.close();
      }
    };
    const one = await outcome('one', false);
    const perJob = await outcome('jobs', true);
    // one view per window that has a hopeful source (a budget of 1 % is at least one), not one per run
    expect(one.viewed).to.be.at.least(2);
    expect(perJob).to.deep.equal(one);
  });
});
