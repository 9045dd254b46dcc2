// The epipolar model: the 7- and 8-point solvers, plane and parallax, DEGENSAC's degeneracy test and LO-RANSAC on
// correspondences of a synthetic 3D scene seen by two cameras; then verification of features: a 3D scene
// verifies under the fundamental matrix where no homography holds, a copy stays a homography, unrelated or
// lattice-like matches do not verify; and a rendered 3D scene through the CLI stores model and matrix.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { Bank, CandidatesRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import {
  degenerateHomography,
  fitFundamental,
  fundamental7,
  fundamentalFromPlane,
  normalise,
  ransacFundamental,
  sampson2,
} from '../src/lib/geometry/epipolar.js';
import type { Features } from '../src/lib/image-index/features.js';
import { LshIndex, mulberry32 } from '../src/lib/image-index/lsh.js';
import { prepare } from '../src/lib/image-index/searcher.js';
import { searchParams } from '../src/lib/image-index/store.js';
import { rotationConsistent, verifyCandidate } from '../src/lib/image-index/verify.js';
import sharp from 'sharp';
import type { Config } from '../src/config/schema.js';
import { importManifest } from '../src/import/manifest.js';
import { lshParams } from '../src/lib/image-index/store.js';
import { searchProgressive, viewParams } from '../src/stages/match/views.js';
import { decodeGrey } from '../src/lib/sift/decode.js';
import { extractFeatures } from '../src/lib/sift/extract.js';
import { runCli, tempDir, writeManifest } from './helpers.js';
import { render3d, scene, solveHomography, write } from './lsh-helpers.js';
import { sceneSvg } from './sift-helpers.js';
import { featuresThenMatch } from './helpers/stages.js';

const { config } = loadConfig({});
const P = searchParams(config);

/** Two pinhole cameras (f = 500, 640 x 480): the second moved sideways and turned by `yaw` degrees. */
function cameras(yaw = 20) {
  const K = (X: number[]) => [500 * X[0]! / X[2]! + 320, 500 * X[1]! / X[2]! + 240];
  const a = (yaw * Math.PI) / 180;
  const c = Math.cos(a);
  const s = Math.sin(a);
  const t = [-1.5, 0.1, 0.3];
  return {
    p1: (X: number[]) => K(X),
    p2: (X: number[]) => K([c * X[0]! + s * X[2]! + t[0]!, X[1]! + t[1]!, -s * X[0]! + c * X[2]! + t[2]!]),
  };
}

/** n correspondences of a 3D scene: the first nPlane on the plane z = 6, the rest at depths 4..8. */
function scenePairs(n: number, nPlane: number, seed: number): Float64Array {
  const r = mulberry32(seed);
  const { p1, p2 } = cameras();
  const pts = new Float64Array(n * 4);
  for (let i = 0; i < n; i++) {
    const X = [(r() - 0.5) * 4, (r() - 0.5) * 3, i < nPlane ? 6 : 4 + r() * 4];
    pts.set([...p1(X), ...p2(X)], i * 4);
  }
  return pts;
}

const maxErr = (F: Float64Array, pts: Float64Array, idx: number[]) => Math.max(...idx.map((i) => Math.sqrt(sampson2(F, pts, i))));
const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);

describe('lsh-index: epipolar geometry', () => {
  it('the 7-point solver gives an F through its sample that fits every point of the scene; 8-point least squares too', () => {
    const pts = scenePairs(60, 0, 1);
    const Fs = fundamental7(normalise(pts, 60), [0, 1, 2, 3, 4, 5, 6]);
    expect(Fs.length).to.be.oneOf([1, 3]);
    const best = Math.min(...Fs.map((F) => maxErr(F, pts, range(0, 60))));
    expect(best).to.be.lessThan(1e-6);
    for (const F of Fs) expect(maxErr(F, pts, range(0, 7))).to.be.lessThan(1e-6);
    expect(maxErr(fitFundamental(pts, range(0, 60))!, pts, range(0, 60))).to.be.lessThan(1e-6);
    expect(fitFundamental(pts, range(0, 7))).to.equal(null);
  });

  it('plane and parallax: a plane homography and two points off it give the scene F; DEGENSAC flags a sample of 6 on a plane', () => {
    const pts = scenePairs(60, 30, 2);
    // The plane's homography from its points (exact: the pairs are noise-free).
    const { p1, p2 } = cameras();
    const quad = [[-2, -1.5], [2, -1.5], [2, 1.5], [-2, 1.5]].map(([x, y]) => [...p1([x!, y!, 6]), ...p2([x!, y!, 6])]);
    const Hpts = Float64Array.from(quad.flat());
    const H = fitPlane(Hpts);
    const F = fundamentalFromPlane(H, pts, 40, 50)!;
    expect(maxErr(F, pts, range(0, 60))).to.be.lessThan(1e-5);
    const N = normalise(pts, 60);
    const deg = [0, 1, 2, 3, 4, 5, 45];
    const flagged = fundamental7(N, deg).map((G) => degenerateHomography(G, pts, deg, 1));
    expect(flagged.some((h) => h !== null)).to.equal(true);
    const fine = [30, 35, 40, 45, 50, 55, 59];
    expect(fundamental7(N, fine).every((G) => degenerateHomography(G, pts, fine, 1) === null)).to.equal(true);
  });

  it('LO-RANSAC finds the scene among 60% outliers, also when most of it is one plane', () => {
    for (const nPlane of [0, 45]) {
      const r = mulberry32(9 + nPlane);
      const good = scenePairs(60, nPlane, 3);
      const n = 150;
      const pts = new Float64Array(n * 4);
      for (let i = 0; i < n; i++) {
        if (i < 60) pts.set(Array.from(good.subarray(i * 4, i * 4 + 4), (v) => v + (r() - 0.5) * 0.8), i * 4);
        else pts.set([r() * 640, r() * 480, r() * 640, r() * 480], i * 4);
      }
      const res = ransacFundamental(pts, n, { threshold: 1.5, maxIterations: 2000 })!;
      expect(res.inliers.filter((i) => i < 60).length, `plane ${nPlane}`).to.be.at.least(55);
      expect(res.inliers.filter((i) => i >= 60).length, `plane ${nPlane}`).to.be.at.most(6);
    }
  });
});

/** The homography through 4 correspondences (x, y, u, v). */
function fitPlane(q: Float64Array): Float64Array {
  return Float64Array.from([...solveHomography([0, 1, 2, 3].map((i) => [q[i * 4]!, q[i * 4 + 1]!, q[i * 4 + 2]!, q[i * 4 + 3]!])), 1]);
}

/**
 * Query and target features from correspondences: keypoint i of each image at its correspondence, descriptors
 * shared (slightly perturbed), angles as a real camera pair gives them (the same up to a few degrees).
 */
function featurePair(pts: Float64Array, n: number, seed: number, angle?: (i: number) => [number, number]): [Features, Features] {
  const r = mulberry32(seed);
  const mk = (): Features => ({ width: 640, height: 480, scale: 1, count: n, keypoints: new Float32Array(n * 6), descriptors: new Uint8Array(n * 128) });
  const q = mk();
  const t = mk();
  for (let i = 0; i < n; i++) {
    const [aq, at] = angle ? angle(i) : [r() * 360, 0];
    q.keypoints.set([pts[i * 4]!, pts[i * 4 + 1]!, 4, aq, 0.05, 0], i * 6);
    t.keypoints.set([pts[i * 4 + 2]!, pts[i * 4 + 3]!, 4.4, angle ? at : (aq + 8 + r() * 10) % 360, 0.05, 0], i * 6);
    for (let j = 0; j < 128; j++) {
      const d = r() < 0.4 ? Math.floor(r() * 160) : Math.floor(r() * 12);
      q.descriptors[i * 128 + j] = d;
      t.descriptors[i * 128 + j] = Math.max(0, Math.min(255, d + Math.round((r() - 0.5) * 8)));
    }
  }
  return [q, t];
}

/** Every (i, j) pair: exhaustive candidates, grouped by query keypoint. */
const allPairs = (n: number) => range(0, n).flatMap((i) => range(0, n).flatMap((j) => [i, j]));

describe('lsh-index: verification under two models', () => {
  it('a 3D scene with no dominant plane verifies under the fundamental matrix; a homography explains a fraction of it', () => {
    const [q, t] = featurePair(scenePairs(80, 0, 4), 80, 5);
    const v = verifyCandidate(prepare(q), prepare(t), allPairs(80), P);
    expect(v.model).to.equal('fundamental');
    expect(v.inliers).to.be.at.least(72);
    expect(v.score).to.be.greaterThan(0.5);
    expect(v.F).to.have.length(9);
    for (let i = 0; i < v.pairs.length; i += 4) {
      const one = Float64Array.from(v.pairs.subarray(i, i + 4));
      expect(Math.sqrt(sampson2(v.F!, one, 0))).to.be.lessThan(config.match.epipolar.threshold);
    }
    const hOnly = verifyCandidate(prepare(q), prepare(t), allPairs(80), { ...P, epipolar: { ...P.epipolar!, enabled: false } });
    expect(hOnly.inliers).to.be.at.most(v.inliers / 2);
  });

  it('guided matching finds along the epipolar lines the matches a look-alike elsewhere took from the ratio test', () => {
    const n = 80;
    const rivals = 30;
    const [q, t0] = featurePair(scenePairs(n, 0, 4), n, 5);
    // The first 30 target keypoints each have a look-alike at a random place (a repeated window, a second
    // gargoyle; here the same descriptor): Lowe's test over the whole image refuses them; along the epipolar line the look-alike is gone.
    const r = mulberry32(11);
    const t: Features = { ...t0, count: n + rivals, keypoints: new Float32Array((n + rivals) * 6), descriptors: new Uint8Array((n + rivals) * 128) };
    t.keypoints.set(t0.keypoints);
    t.descriptors.set(t0.descriptors);
    for (let i = 0; i < rivals; i++) {
      t.keypoints.set([r() * 640, r() * 480, ...t0.keypoints.subarray(i * 6 + 2, i * 6 + 6)], (n + i) * 6);
      t.descriptors.set(t0.descriptors.subarray(i * 128, i * 128 + 128), (n + i) * 128);
    }
    const cand = range(0, n).flatMap((i) => range(0, n + rivals).flatMap((j) => [i, j]));
    const plain = verifyCandidate(prepare(q), prepare(t), cand, { ...P, epipolar: { ...P.epipolar!, guided: false } });
    const guided = verifyCandidate(prepare(q), prepare(t), cand, { ...P, epipolar: { ...P.epipolar!, guided: true } });
    expect(plain.model).to.equal('fundamental');
    expect(plain.inliers).to.be.at.most(n - rivals + 2);
    expect(guided.model).to.equal('fundamental');
    expect(guided.inliers).to.be.at.least(n - 8);
    expect(guided.score).to.be.greaterThan(plain.score);
  });

  it('a copy under one homography stays a homography', () => {
    const r = mulberry32(6);
    const n = 80;
    const pts = new Float64Array(n * 4);
    for (let i = 0; i < n; i++) {
      const x = r() * 600;
      const y = r() * 440;
      pts.set([x, y, 0.8 * x + 30, 0.8 * y + 20], i * 4);
    }
    const [q, t] = featurePair(pts, n, 7);
    const v = verifyCandidate(prepare(q), prepare(t), allPairs(n), P);
    expect(v.model).to.equal('homography');
    expect(v.inliers).to.equal(n);
    expect(v.F).to.equal(null);
  });

  it('unrelated matches, and matches on a lattice (rows of windows, lines of text), do not verify', () => {
    const r = mulberry32(8);
    const n = 60;
    const random = new Float64Array(n * 4).map((_, k) => (k % 2 ? r() * 480 : r() * 640));
    const [q1, t1] = featurePair(random, n, 9, () => [0, r() * 20]);
    expect(verifyCandidate(prepare(q1), prepare(t1), allPairs(n), P).score).to.equal(0);
    // Upright repeated elements on 3 rows: each query element matched to a random element of the target's rows,
    // every match upright. Many epipolar geometries (horizontal lines) explain a good share by chance.
    const lattice = new Float64Array(n * 4);
    for (let i = 0; i < n; i++) {
      const row = i % 3;
      lattice.set([40 + (i % 20) * 28, 120 + row * 120, 40 + Math.floor(r() * 20) * 28, 100 + Math.floor(r() * 3) * 130], i * 4);
    }
    const [q2, t2] = featurePair(lattice, n, 10, () => [90, 90 + (r() - 0.5) * 10]);
    const v = verifyCandidate(prepare(q2), prepare(t2), allPairs(n), P);
    expect(v.score, `${v.model} ${v.inliers}/${v.matches} ${v.reason}`).to.equal(0);
  });

  it('the rotation window keeps the matches near the dominant rotation, across the 0/360 wrap', () => {
    const sim = new Float64Array(20);
    const deg = [355, 2, 8, 350, 359, 5, 180, 90, 270, 10];
    deg.forEach((d, i) => (sim[2 * i + 1] = (d * Math.PI) / 180));
    const { keep } = rotationConsistent(sim, 10, 45);
    expect(keep).to.deep.equal([0, 1, 2, 3, 4, 5, 9]);
  });
});

describe('lsh-index: a 3D scene through the CLI', function () {
  this.timeout(120_000);
  const dir = tempDir('capbridge-epipolar-');
  const data = path.join(dir, 'data');

  it('match stores the two photos of one scene as a fundamental-matrix candidate; the export says which model', async () => {
    write(dir, 'a.jpg', await render3d({ centre: [0, 0, 0], yaw: 0, focal: 330 }));
    write(dir, 'b.jpg', await render3d({ centre: [2.2, 0.3, 0.8], yaw: -14, focal: 330 }));
    for (let k = 0; k < 3; k++) write(dir, `d${k}.png`, await scene(700 + k));
    writeManifest(path.join(dir, 'source.tsv'), [['s1', path.join(dir, 'a.jpg'), 'A building seen from the square.', '']]);
    writeManifest(path.join(dir, 'target.tsv'), [
      ['t1', path.join(dir, 'b.jpg'), '从另一侧看的建筑', ''],
      ...[0, 1, 2].map((k) => [`d${k}`, path.join(dir, `d${k}.png`), `无关${k}`, '']),
    ]);
    for (const b of ['source', 'target']) expect((await runCli(['--data', data, 'import', '--bank', b, '--manifest', path.join(dir, `${b}.tsv`)])).code).to.equal(0);
    const m = await runCli(['--data', data, 'match', '--json']);
    expect(m.code, m.stderr).to.equal(0);
    const bank = await Bank.open(data);
    try {
      const list = await bank.repo(CandidatesRepo).listFor((await bank.items.get('source', 's1'))!.id);
      expect(await Promise.all(list.map(async (c) => (await bank.items.byId(c.targetItemId))!.extId))).to.deep.equal(['t1']);
      const c = list[0]!;
      expect(c.model).to.equal('fundamental');
      expect(c.fundamental).to.have.length(9);
      // The stored pairs (original pixels) lie on the stored matrix's epipolar lines.
      const F = Float64Array.from(c.fundamental!);
      for (let i = 0; i < c.pairs!.length; i += 4) expect(Math.sqrt(sampson2(F, Float64Array.from(c.pairs!.subarray(i, i + 4)), 0))).to.be.lessThan(3);
    } finally {
      await bank.close();
    }
    const out = path.join(dir, 'cand.jsonl');
    expect((await runCli(['--data', data, 'export', '--format', 'jsonl', '--candidates', '--out', out])).code).to.equal(0);
    expect(JSON.parse(fs.readFileSync(out, 'utf8').trim().split('\n')[0]!)).to.include({ source_id: 's1', target_id: 't1', model: 'fundamental' });
  });
});

/**
 * A query whose 1000 strongest keypoints all lie in its busy left half, and a target showing only its faint right
 * half: the plain query has nothing in common with the target, the dense one (2000 keypoints) does.
 */
async function faintHalf(): Promise<{ query: Buffer; target: Buffer }> {
  const left = await sharp(Buffer.from(sceneSvg(320, 480, 41, 2500))).flatten().png().toBuffer();
  const right = await sharp(Buffer.from(sceneSvg(320, 480, 42, 600))).flatten().linear(0.35, 83).png().toBuffer();
  const query = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#808080' } })
    .composite([{ input: left, left: 0, top: 0 }, { input: right, left: 320, top: 0 }])
    .png()
    .toBuffer();
  const target = await sharp(query).extract({ left: 320, top: 0, width: 320, height: 480 }).resize(256, 384).jpeg({ quality: 90 }).toBuffer();
  return { query, target };
}

describe('lsh-index: the dense query', function () {
  this.timeout(120_000);

  it('described again with more keypoints, a non-confident query finds what its strongest keypoints missed', async () => {
    const { query, target } = await faintHalf();
    const fq = await extractFeatures(query, config);
    const ft = await extractFeatures(target, config);
    expect(fq.count).to.equal(config.sift.maxKeypoints);
    expect(Array.from({ length: fq.count }, (_, i) => fq.keypoints[i * 6]!).filter((x) => x > 320 * fq.scale)).to.have.length(0);
    const idx = new LshIndex(lshParams(config, 0));
    const pt = prepare(ft);
    idx.add(idx.codes(pt.vecs, ft.count));
    const g = await decodeGrey(query, { maxSide: config.sift.maxSide, maxPixels: config.sift.maxPixels });
    const vp = { ...viewParams(config), tilts: [] };
    const plain = await searchProgressive(idx, () => pt, fq, P, { ...vp, denseKeypoints: 0 }, config.sift, () => g);
    expect(plain.hits[0]?.score ?? 0).to.equal(0);
    const dense = await searchProgressive(idx, () => pt, fq, P, vp, config.sift, () => g);
    expect(dense.usedViews).to.equal(true);
    expect(dense.views.keypoints).to.be.greaterThan(fq.count);
    expect(dense.hits[0]!.score).to.be.greaterThan(0.5);
  });

  it('match gives the dense search alone to match.views.denseBudget of the sources, beyond the views budget', async () => {
    const dir = tempDir('capbridge-dense-');
    const { query, target } = await faintHalf();
    const src = [['s1', write(dir, 's1.png', query), 'Half of it is faint.', '']];
    for (const k of [31, 32, 33]) src.push([`u${k}`, write(dir, `u${k}.png`, await scene(k)), 'Another place.', '']);
    writeManifest(path.join(dir, 'source.tsv'), src);
    writeManifest(path.join(dir, 'target.tsv'), [['t1', write(dir, 't1.jpg', target), '淡的一半', ''], ['d1', write(dir, 'd1.png', await scene(12)), '无关', '']]);
    const c: Config = { ...config, match: { ...config.match, views: { ...config.match.views, budget: 0.01, denseBudget: 1, minVotingKeypoints: 0, archive: { ...config.match.views.archive, views: 'before' } } } }; // every unconfident source hopeful, the views before archive matching (which would otherwise take half of them): this is about the views budgets
    const bank = await Bank.open(path.join(dir, 'data'));
    try {
      for (const b of ['source', 'target'] as const) await importManifest(bank, { bank: b, manifest: path.join(dir, `${b}.tsv`), config: c });
      const s = await featuresThenMatch(bank, c, { threads: 1 });
      expect(s.viewed, 'one source with views, the three others with the dense search').to.equal(4);
      const list = await bank.repo(CandidatesRepo).listFor((await bank.items.get('source', 's1'))!.id);
      expect(await Promise.all(list.map(async (x) => (await bank.items.byId(x.targetItemId))!.extId))).to.deep.equal(['t1']);
      for (const u of [31, 32, 33]) expect(await bank.repo(CandidatesRepo).listFor((await bank.items.get('source', `u${u}`))!.id)).to.deep.equal([]);
    } finally {
      await bank.close();
    }
  });
});
