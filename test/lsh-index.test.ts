// Unit tests of the index and the verifier on synthetic data: homography fitting and RANSAC, the mirror
// permutation, the index's add/remove/merge and determinism, the sanity checks and the score.
import { expect } from 'chai';
import { concatFeatures, MIRROR, mirrorFeatures, rootSift } from '../src/lib/image-index/descriptors.js';
import { fitHomography, frameAgrees, homographyFrom4, ransacHomography, transferError2 } from '../src/lib/geometry/geometry.js';
import { CODE_BITS, LshIndex, bucketSpan, countBuckets, makeProjections, mulberry32, popcount, probeCodes, project, projectJs, STRIDE, type LshParams } from '../src/lib/image-index/lsh.js';
import { RECOLLIDE_POSE_CHECK, burstCounts, exactVotes, indexSource, prepare, search, shardVotePass, sketchCollisions, sketchCollisionsJs, targetSketches, topK, verifyShortlist, votePass, type ShardVotedPass, type VotedPass } from '../src/lib/image-index/searcher.js';
import { autoBits } from '../src/lib/image-index/store.js';
import { partScan, partsInWebAssembly, wasmNearestTwo, wasmProject, wasmSketchCollisions } from '../src/lib/image-index/wasm.js';
import { MEAN_ROOTSIFT } from '../src/lib/image-index/mean-rootsift.js';
import { homographySane, imageScore, poseSupport, ratioMatches, ratioMatchesJs, verifyCandidate } from '../src/lib/image-index/verify.js';
import type { Features } from '../src/lib/image-index/features.js';

const H0 = Float64Array.of(0.9, 0.1, 12, -0.08, 1.05, -7, 0.0002, -0.0001, 1);
const mapH = (H: Float64Array, x: number, y: number) => {
  const w = H[6]! * x + H[7]! * y + H[8]!;
  return [(H[0]! * x + H[1]! * y + H[2]!) / w, (H[3]! * x + H[4]! * y + H[5]!) / w] as const;
};

/** Random features: clustered descriptors (like real SIFT) and keypoints spread over w x h. */
function randomFeatures(seed: number, n = 400, w = 400, h = 300): Features {
  const r = mulberry32(seed);
  const kp = new Float32Array(n * 6);
  const d = new Uint8Array(n * 128);
  for (let i = 0; i < n; i++) {
    kp.set([r() * w, r() * h, 2 + r() * 10, r() * 360, 0.05, 0], i * 6);
    for (let j = 0; j < 128; j++) d[i * 128 + j] = r() < 0.4 ? Math.floor(r() * 160) : Math.floor(r() * 12);
  }
  return { width: w, height: h, scale: 1, count: n, keypoints: kp, descriptors: d };
}

/** The same keypoints moved by H, descriptors slightly perturbed, plus some fresh keypoints. */
function warped(f: Features, H: Float64Array, seed: number): Features {
  const r = mulberry32(seed);
  const kp = new Float32Array(f.keypoints);
  const d = new Uint8Array(f.descriptors);
  for (let i = 0; i < f.count; i++) {
    const [x, y] = mapH(H, kp[i * 6]!, kp[i * 6 + 1]!);
    kp[i * 6] = x + (r() - 0.5);
    kp[i * 6 + 1] = y + (r() - 0.5);
    for (let j = 0; j < 128; j++) d[i * 128 + j] = Math.max(0, Math.min(255, d[i * 128 + j]! + Math.round((r() - 0.5) * 8)));
  }
  return { ...f, keypoints: kp, descriptors: d };
}

const PARAMS: LshParams = { bits: 12, probes: 24, maxBucket: 600, seed: 1 };
const BOX = { x0: 0, y0: 0, x1: 400, y1: 300 };
const SP = { ratio: 0.8, ransacThreshold: 4, ransacIterations: 1000, minInliers: 12, farDistance: 0.6, shortlist: 10, mirror: true, mirrorShortlist: 5, confidentScore: 0.3, voteHamming: 8, matchHamming: 12, recollide: 5, recollideHamming: 20 };

/** 40 exact correspondences under H0: x, y, u, v per point over a 400 x 300 image. */
function exactPairs(seed: number): Float64Array {
  const pts = new Float64Array(40 * 4);
  const r = mulberry32(seed);
  for (let i = 0; i < 40; i++) {
    const x = r() * 400;
    const y = r() * 300;
    const [u, v] = mapH(H0, x, y);
    pts.set([x, y, u, v], i * 4);
  }
  return pts;
}

describe('lsh-index: geometry', () => {
  it('fits a homography exactly from 4 points and in least squares from many', () => {
    const pts = exactPairs(3);
    for (const idx of [[0, 1, 2, 3], Array.from({ length: 40 }, (_, i) => i)]) {
      const H = fitHomography(pts, idx)!;
      for (let i = 0; i < 40; i++) expect(transferError2(H, pts, i)).to.be.lessThan(1e-6);
    }
  });

  it('the 4-point minimal solver gives the same homography as the DLT, and null on a collapsed quad', () => {
    const pts = exactPairs(7);
    for (let k = 0; k < 10; k++) {
      const s = [4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3];
      const H = homographyFrom4(pts, s)!;
      const D = fitHomography(pts, s)!;
      for (let i = 0; i < 9; i++) expect(H[i]).to.be.closeTo(D[i]!, 1e-6 * Math.max(1, Math.abs(D[i]!)));
      for (let i = 0; i < 40; i++) expect(transferError2(H, pts, i)).to.be.lessThan(1e-6);
    }
    const flat = Float64Array.from([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
    expect(homographyFrom4(flat, [0, 1, 2, 3])).to.equal(null);
  });

  it('RANSAC finds the inliers among 60% outliers', () => {
    const r = mulberry32(5);
    const n = 100;
    const pts = new Float64Array(n * 4);
    for (let i = 0; i < n; i++) {
      const x = r() * 400;
      const y = r() * 300;
      const [u, v] = i < 40 ? mapH(H0, x, y) : [r() * 400, r() * 300];
      pts.set([x, y, u + (r() - 0.5), v + (r() - 0.5)], i * 4);
    }
    const res = ransacHomography(pts, n, { threshold: 3, maxIterations: 2000 })!;
    expect(res.inliers.filter((i) => i < 40).length).to.be.at.least(38);
    expect(res.inliers.filter((i) => i >= 40).length).to.be.at.most(3);
  });

  it('with keypoint frames, RANSAC finds a small plane among chance consensus by position, and frameAgrees says why', () => {
    // A plane under strong perspective (s0047 of retrieval-wxbs: 16 inliers of 314 matches): 20 matches in one
    // patch whose keypoint frames follow HP's local map; 150 matches between two small dense patches, orientations
    // and sizes at random (lights at night, a texture: a wrong model gathers chance inliers there by position
    // alone); 330 matches anywhere.
    const HP = Float64Array.of(0.55, 0.05, 140, -0.12, 0.9, 30, -0.0011, 0.0002, 1);
    const r = mulberry32(17);
    const n = 500;
    const pts = new Float64Array(n * 4), sim = new Float64Array(n * 2), ang = new Float64Array(n * 2);
    const frameOf = (x: number, y: number, th: number): [number, number] => {
      // direction th carried by HP's Jacobian at (x, y), and its local scale
      const e = 1e-3, [u0, v0] = mapH(HP, x, y), [u1, v1] = mapH(HP, x + e, y), [u2, v2] = mapH(HP, x, y + e);
      const J = [(u1 - u0) / e, (u2 - u0) / e, (v1 - v0) / e, (v2 - v0) / e];
      const c = Math.cos((th * Math.PI) / 180), sn = Math.sin((th * Math.PI) / 180);
      return [(Math.atan2(J[2]! * c + J[3]! * sn, J[0]! * c + J[1]! * sn) * 180) / Math.PI, Math.sqrt(J[0]! * J[3]! - J[1]! * J[2]!)];
    };
    for (let i = 0; i < n; i++) {
      const th = r() * 360, sz = 2 + r() * 8;
      let x: number, y: number, u: number, v: number, tt: number, ts: number;
      if (i < 20) {
        x = 200 + r() * 80; y = 120 + r() * 70;
        [u, v] = mapH(HP, x, y);
        u += r() - 0.5; v += r() - 0.5;
        const [a, k] = frameOf(x, y, th);
        tt = a + (r() - 0.5) * 20; ts = sz * k * (0.8 + 0.4 * r());
      } else if (i < 170) {
        x = 40 + r() * 40; y = 40 + r() * 40; u = 300 + r() * 30; v = 220 + r() * 30; tt = r() * 360; ts = 2 + r() * 8;
      } else {
        x = r() * 400; y = r() * 300; u = r() * 400; v = r() * 300; tt = r() * 360; ts = 2 + r() * 8;
      }
      pts.set([x, y, u, v], i * 4);
      sim.set([ts / sz, ((tt - th) * Math.PI) / 180], i * 2);
      ang.set([th, tt], i * 2);
    }
    const plain = ransacHomography(pts, n, { threshold: 4, maxIterations: 2000, sim })!;
    // by position alone, a wrong model through the dense patches wins
    expect(plain.inliers.filter((i) => i >= 20 && i < 170).length, 'chance consensus in the patches').to.be.at.least(12);
    expect(plain.inliers.filter((i) => i < 20).length).to.be.at.most(2);
    const frames = { sim, ang, angleTolerance: 30, scaleTolerance: 1 };
    const res = ransacHomography(pts, n, { threshold: 4, maxIterations: 2000, sim, frames })!;
    expect(res.inliers.filter((i) => i < 20).length, 'the plane').to.be.at.least(18);
    expect(res.inliers.filter((i) => i >= 20).length, 'anything else').to.be.at.most(2);
    expect(frameAgrees(HP, pts, 3, frames)).to.equal(true);
    const turned = { ...frames, ang: Float64Array.from(ang, (a, k) => (k === 7 ? a + 90 : a)) };
    expect(frameAgrees(HP, pts, 3, turned), 'orientation a quarter turn off').to.equal(false);
    const grown = { ...frames, sim: Float64Array.from(sim, (a, k) => (k === 6 ? a * 3 : a)) };
    expect(frameAgrees(HP, pts, 3, grown), 'size three times').to.equal(false);
  });

  it('rejects orientation flips and extreme perspective; the score is 0 below minInliers and at most 1', () => {
    expect(homographySane(H0, BOX).ok).to.equal(true);
    expect(homographySane(Float64Array.of(-1, 0, 400, 0, 1, 0, 0, 0, 1), BOX).ok).to.equal(false);
    expect(homographySane(Float64Array.of(1, 0, 0, 0, 1, 0, 0.01, 0, 1), BOX).ok).to.equal(false);
    // Both photos' views pooled (a plane seen steeply from two sides): w may vary up to 10x over the inliers and
    // the area scale is taken where they are; a flip, a map through the horizon, or a squash to a line is still refused.
    const steep = Float64Array.of(1, 0, 0, 0, 1, 0, 0.0085, 0, 1);
    expect(homographySane(steep, BOX).ok, 'strict').to.equal(false);
    expect(homographySane(steep, BOX, true).ok, 'pooled').to.equal(true);
    expect(homographySane(Float64Array.of(-1, 0, 400, 0, 1, 0, 0, 0, 1), BOX, true).ok).to.equal(false);
    expect(homographySane(Float64Array.of(1, 0, 0, 0, 1, 0, -0.01, 0, 1), BOX, true).ok).to.equal(false);
    expect(homographySane(Float64Array.of(0.001, 0, 0, 0, 1, 0, 0, 0, 1), BOX, true).ok).to.equal(false);
    expect(imageScore(11, 20, 0.8, 1, SP)).to.equal(0);
    const s = imageScore(300, 320, 0.9, 0.5, SP);
    expect(s).to.be.greaterThan(0.8).and.at.most(1);
    expect(imageScore(20, 200, 0.1, 3.5, SP)).to.be.lessThan(s);
  });

  it('judges the perspective where the inliers are: an oblique plane in the middle of a wide frame verifies', () => {
    // w = 1 + 0.0085 x: across the 400-pixel frame w goes 1 -> 4.4 (refused as extreme), across the matched
    // region x 150..250 only 2.3 -> 3.1 (a cover seen at a steep angle on a table).
    const H = Float64Array.of(1, 0, 0, 0, 1, 0, 0.0085, 0, 1);
    expect(homographySane(H, BOX).ok).to.equal(false);
    const q = randomFeatures(40, 60);
    const r = mulberry32(41);
    const t: Features = { ...q, keypoints: new Float32Array(q.keypoints) };
    for (let i = 0; i < 60; i++) {
      const x = 150 + r() * 100;
      const y = 100 + r() * 100;
      q.keypoints[i * 6] = x;
      q.keypoints[i * 6 + 1] = y;
      const [u, v] = mapH(H, x, y);
      t.keypoints[i * 6] = u;
      t.keypoints[i * 6 + 1] = v;
    }
    const cand = Array.from({ length: 60 }, (_, i) => [i, i]).flat();
    const v = verifyCandidate(prepare(q), prepare(t), cand, SP);
    expect(v.inliers).to.equal(60);
    expect(v.reason).to.equal(undefined);
    expect(v.score).to.be.greaterThan(0);
  });
});

describe('lsh-index: descriptors and index', () => {
  it('the mirror permutation is an involution and mirroring twice gives the features back', () => {
    for (let j = 0; j < 128; j++) expect(MIRROR[MIRROR[j]!]).to.equal(j);
    const f = randomFeatures(1, 20);
    const back = mirrorFeatures(mirrorFeatures(f));
    expect(Array.from(back.descriptors)).to.deep.equal(Array.from(f.descriptors));
    expect(back.keypoints[0]).to.be.closeTo(f.keypoints[0]!, 1e-3);
    const v = rootSift(f.descriptors, f.count);
    let n2 = 0;
    for (let j = 0; j < 128; j++) n2 += v[j]! ** 2;
    expect(n2).to.be.closeTo(1, 1e-5);
  });

  it('codes are deterministic across instances (a reopened index is the same index)', () => {
    const f = prepare(randomFeatures(2, 50));
    const a = new LshIndex(PARAMS).codes(f.vecs, 50);
    const b = new LshIndex(PARAMS).codes(f.vecs, 50);
    expect(Array.from(a)).to.deep.equal(Array.from(b));
    expect(a.length).to.equal(50 * STRIDE);
  });

  it('finds a warped copy among distractors, and forgets removed images (before and after merge)', async () => {
    const idx = new LshIndex(PARAMS);
    const prepared: ReturnType<typeof prepare>[] = [];
    const base = randomFeatures(10);
    const imgs = [randomFeatures(11), warped(base, H0, 12), randomFeatures(13), randomFeatures(14)];
    for (const f of imgs) {
      const p = prepare(f);
      prepared.push(p);
      idx.add(idx.codes(p.vecs, f.count));
    }
    const run = () => search(idx, (s) => prepared[s], base, SP);
    let r = await run();
    expect(r.hits[0]!.slot).to.equal(1);
    expect(r.hits[0]!.score).to.be.greaterThan(0.3);
    for (const h of r.hits.slice(1)) expect(h.score).to.equal(0);
    idx.merge();
    r = await run();
    expect(r.hits[0]!.slot).to.equal(1);
    idx.remove(1);
    expect(idx.size).to.equal(3);
    r = await run();
    expect(r.shortlist).to.not.include(1);
    for (const h of r.hits) expect(h.score).to.equal(0);
    idx.merge();
    expect((await run()).shortlist).to.not.include(1);
  });

  it("shares each query keypoint's vote among the images it reaches: a distinctive match outranks a common one", async () => {
    // The query's first 40 keypoints are in image 0 only; its next 80 in each of images 1..6 (a logo or
    // lettering every cover carries). Whole votes would put the six first (80 > 40); shared votes count
    // each of those 80 keypoints a sixth for each image.
    const q = randomFeatures(30, 200);
    const part = (f: Features, from: number, to: number): Features => ({
      ...f, count: to - from,
      keypoints: f.keypoints.slice(from * 6, to * 6), descriptors: f.descriptors.slice(from * 128, to * 128),
    });
    const imgs = [concatFeatures(q, [part(q, 0, 40), randomFeatures(31, 200)])];
    for (let i = 1; i <= 6; i++) imgs.push(concatFeatures(q, [part(q, 40, 120), randomFeatures(31 + i * 7, 200)]));
    const idx = new LshIndex(PARAMS);
    const prepared = imgs.map((f) => prepare(f));
    for (const p of prepared) idx.add(idx.codes(p.vecs, p.f.count));
    const r = await search(idx, (s) => prepared[s], q, { ...SP, mirror: false });
    expect(r.shortlist[0]).to.equal(0);
    const votes = new Map(r.hits.map((h) => [h.slot, h.votes]));
    for (let s = 1; s <= 6; s++) expect(votes.get(s)!).to.be.greaterThan(0).and.lessThan(votes.get(0)! / 2);
  });

  it('with lsh.recollideVoters, a shortlisted copy outvoted by chance images is re-matched by the keypoints that voted for it', async () => {
    // Six chance images top the votes (one lucky keypoint each) and a warped copy of the query comes seventh with
    // more voting keypoints; none has collisions enough to verify (all lost in skipped buckets). lsh.recollide 5
    // re-matches the best-voted five only; recollideVoters 1 takes the image most keypoints (two at least) voted for next.
    const q = prepare(randomFeatures(40));
    const images = [...Array.from({ length: 6 }, (_, i) => randomFeatures(41 + i)), warped(q.f, H0, 47)].map((f) => prepare(f));
    const idx = new LshIndex(PARAMS);
    for (const t of images) idx.add(idx.codes(t.vecs, t.f.count));
    const voted = (voting: number[]) => ({ shortlist: [0, 1, 2, 3, 4, 5, 6], votes: [7, 6, 5, 4, 3, 2, 1], voting, coll: images.map(() => []), sketches: idx.sketches(q.vecs, q.f.count), keypoints: q.f.count });
    const copyScore = async (recollideVoters: number, voting = [1, 1, 1, 2, 1, 1, 9]) => {
      const hits = await verifyShortlist(indexSource(idx, (s) => images[s]), q, voted(voting), { ...SP, recollideVoters }, false);
      return hits.find((h) => h.slot === 6)!.score;
    };
    expect(await copyScore(0)).to.equal(0);
    expect(await copyScore(1)).to.be.greaterThan(SP.confidentScore);
    // by voting keypoints, not by position: the copy with fewer voters than image 5 is not the one taken
    expect(await copyScore(1, [1, 1, 1, 1, 1, 3, 2])).to.equal(0);
    expect(await copyScore(2, [1, 1, 1, 1, 1, 3, 2])).to.be.greaterThan(SP.confidentScore);
    // an image only one keypoint voted for is never taken (a lone collision)
    expect(await copyScore(8, [1, 1, 1, 1, 1, 1, 1])).to.equal(0);
  });

  it('with lsh.reprobe, a query that found nothing confident votes again over more buckets; a confident one does not', async () => {
    // One probe a keypoint (its own bucket) among narrow buckets: a copy whose descriptors moved keeps few collisions,
    // and two decoys holding 60 of the query's own descriptors at random places outvote it for the shortlist of two;
    // the re-matches are off, so that only the buckets decide. Voting again over 24 buckets a keypoint, the copy's
    // votes pass the decoys' and it verifies.
    const q = randomFeatures(70);
    const r = mulberry32(71);
    const moved: Features = { ...q, descriptors: q.descriptors.map((v) => Math.max(0, Math.min(255, v + Math.round((r() - 0.5) * 40)))) };
    const decoy = (seed: number): Features => {
      const f = randomFeatures(seed);
      f.descriptors.set(q.descriptors.subarray(0, 60 * 128));
      return f;
    };
    const images = [decoy(72), decoy(73), warped(moved, H0, 74), randomFeatures(75), randomFeatures(76)].map((f) => prepare(f));
    const idx = new LshIndex({ ...PARAMS, bits: 22, probes: 1 });
    for (const t of images) idx.add(idx.codes(t.vecs, t.f.count));
    const sp = { ...SP, shortlist: 2, recollide: 0, recollideVoters: 0 };
    const run = (reprobe: number, f = q) => search(idx, (s) => images[s], f, { ...sp, reprobe });
    const off = await run(0);
    expect(off.shortlist).to.not.include(2);
    expect(off.hits.some((h) => h.score >= SP.confidentScore)).to.equal(false);
    const on = await run(24);
    expect(on.hits[0]!.slot).to.equal(2);
    expect(on.hits[0]!.score).to.be.greaterThan(SP.confidentScore);
    expect(on.scan.buckets).to.be.greaterThan(off.scan.buckets);
    // the copy itself is confident in the direct pass: no mirror pass, no reprobe pass (the same buckets scanned)
    const [a, b] = [await run(0, images[2]!.f), await run(24, images[2]!.f)];
    expect(b.mirrorPass).to.equal(false);
    expect(b.scan.buckets).to.equal(a.scan.buckets);
    // not above the index's own probes: no such pass
    expect((await run(1)).scan.buckets).to.equal(off.scan.buckets);
  });

  it('the frame check of the re-matches (poseCheck) refuses matches whose keypoint frames disagree and keeps a copy\'s verdict', async () => {
    // A warped copy keeps its keypoints' frames (orientation and size move together); "shuffled" has the copy's
    // descriptors and positions, so RANSAC finds the same homography, but each keypoint's angle and size drawn anew
    // which no real view change gives (an unrelated image's chance matches look like this). Paired by full sketch.
    const q = prepare(randomFeatures(60));
    const copy = warped(q.f, H0, 61);
    const r = mulberry32(62);
    const kp = new Float32Array(copy.keypoints);
    for (let i = 0; i < copy.count; i++) (kp[i * 6 + 2] = 2 + r() * 30), (kp[i * 6 + 3] = r() * 360);
    // (60 of them, among 340 keypoints of no match: a chance group of agreeing frames grows with the matches)
    const part = (f: Features, to: number): Features => ({ ...f, count: to, keypoints: f.keypoints.slice(0, to * 6), descriptors: f.descriptors.slice(0, to * 128) });
    const shuffled = concatFeatures(copy, [part({ ...copy, keypoints: kp }, 60), randomFeatures(63, 340)]);
    // the copy turned by 90 degrees and twice the size: frames agree among themselves, so it passes as well
    const turned = { ...copy, width: 600, height: 800, keypoints: copy.keypoints.map((v, i) => (i % 6 === 0 ? 600 - 2 * copy.keypoints[i + 1]! : i % 6 === 1 ? 2 * copy.keypoints[i - 1]! : i % 6 === 2 ? 2 * v : i % 6 === 3 ? (v + 90) % 360 : v)) };
    const idx = new LshIndex(PARAMS);
    const qs = idx.sketches(q.vecs, q.f.count);
    const verdicts = (f: Features) => {
      const t = prepare(f);
      const c = sketchCollisions(qs, q.f.count, idx.sketches(t.vecs, t.f.count), 20);
      return [verifyCandidate(q, t, c, SP), verifyCandidate(q, t, c, { ...SP, poseCheck: RECOLLIDE_POSE_CHECK })] as const;
    };
    for (const f of [copy, turned]) {
      const [off, on] = verdicts(f);
      expect(off.score).to.be.greaterThan(SP.confidentScore);
      expect([on.score, on.inliers]).to.deep.equal([off.score, off.inliers]);
    }
    const [off, on] = verdicts(shuffled);
    expect(off.score).to.be.greaterThan(0);
    expect(on.score).to.equal(0);
    expect(on.reason).to.match(/agree in rotation and scale/);
    // poseSupport: the largest group agreeing with one match's frame
    const sim = new Float64Array(40);
    for (let i = 0; i < 20; i++) sim.set(i < 13 ? [1.5 * (1 + 0.05 * (i % 3)), 0.3 + 0.1 * (i % 4)] : [0.3 + i * 0.4, i * 1.1], 2 * i);
    expect(poseSupport(sim, 20, 45, 0.5)).to.be.within(13, 14);
    expect(poseSupport(sim, 13, 45, 0.5)).to.equal(13);
  });

  it('the ratio test stops measuring a pair once it cannot be nearer than the second neighbour, with the same matches', () => {
    // verifyCandidate's `matches` is the ratio test's one-to-one matches: computed here by measuring every pair in full.
    const q = prepare(randomFeatures(70));
    const idx = new LshIndex(PARAMS);
    const qs = idx.sketches(q.vecs, q.f.count);
    const full = (a: number, b: Float32Array, bo: number) => {
      let s = 0;
      for (let j = 0; j < 128; j++) s += q.vecs[a * 128 + j]! * b[bo + j]!;
      return Math.sqrt(Math.max(0, 2 - 2 * s));
    };
    for (const f of [warped(q.f, H0, 71), randomFeatures(72), concatFeatures(q.f, [warped(q.f, H0, 73), randomFeatures(74)])]) {
      const t = prepare(f);
      const c = sketchCollisions(qs, q.f.count, idx.sketches(t.vecs, t.f.count), 24);
      const good: { ti: number; d: number }[] = [];
      for (let k = 0; k < c.length / 2; ) {
        const qi = c[2 * k]!;
        let d1 = Infinity, d2 = SP.farDistance, t1 = -1;
        for (; k < c.length / 2 && c[2 * k] === qi; k++) {
          const d = full(qi, t.vecs, c[2 * k + 1]! * 128);
          if (d < d1) (d2 = Math.min(d2, d1)), (d1 = d), (t1 = c[2 * k + 1]!);
          else if (d < d2) d2 = d;
        }
        if (t1 >= 0 && d1 / d2 < SP.ratio) good.push({ ti: t1, d: d1 });
      }
      const oneToOne = new Set([...good].sort((a, b) => a.d - b.d).map((g) => g.ti)).size;
      expect(c.length).to.be.greaterThan(200);
      expect(verifyCandidate(q, t, c, SP).matches).to.equal(oneToOne);
    }
  });

  it('a target\'s sketches are kept beside its features: computed once per features and index', () => {
    const f = randomFeatures(80);
    const a = new LshIndex(PARAMS);
    const b = new LshIndex({ ...PARAMS, seed: 2 });
    const s1 = targetSketches(a, prepare(f));
    expect(targetSketches(a, prepare(f))).to.equal(s1); // another prepared object of the same features
    const p = prepare(f);
    expect(Array.from(s1)).to.deep.equal(Array.from(a.sketches(p.vecs, p.f.count)));
    const sb = targetSketches(b, p);
    expect(Array.from(sb)).to.deep.equal(Array.from(b.sketches(p.vecs, p.f.count)));
    expect(Array.from(sb)).to.not.deep.equal(Array.from(s1));
  });

  it('with lsh.voteSigma a keypoint\'s vote goes mostly to the image whose sketch is closest (Hamming weighting)', async () => {
    // The query's first 60 keypoints are in image 0 unchanged and in images 1..6 with noisy descriptors (near the
    // Hamming bound): shared alike, image 0 gets a seventh of each of those votes; weighted, most of them.
    const q = randomFeatures(50, 200);
    const part = (f: Features, to: number): Features => ({ ...f, count: to, keypoints: f.keypoints.slice(0, to * 6), descriptors: f.descriptors.slice(0, to * 128) });
    const noisy = (f: Features, seed: number): Features => {
      const r = mulberry32(seed);
      return { ...f, descriptors: f.descriptors.map((d) => Math.max(0, Math.min(255, d + Math.round((r() - 0.5) * 40)))) };
    };
    const imgs = [concatFeatures(q, [part(q, 60), randomFeatures(51, 200)])];
    for (let i = 1; i <= 6; i++) imgs.push(concatFeatures(q, [noisy(part(q, 60), 60 + i), randomFeatures(51 + i * 7, 200)]));
    const idx = new LshIndex(PARAMS);
    const prepared = imgs.map((f) => prepare(f));
    for (const p of prepared) idx.add(idx.codes(p.vecs, p.f.count));
    const ratio = async (voteSigma: number) => {
      const r = await search(idx, (s) => prepared[s], q, { ...SP, mirror: false, voteHamming: 12, voteSigma });
      const votes = new Map(r.hits.map((h) => [h.slot, h.votes]));
      return votes.get(0)! / Math.max(...[1, 2, 3, 4, 5, 6].map((s) => votes.get(s) ?? 0));
    };
    const flat = await ratio(0);
    const weighted = await ratio(4);
    expect(weighted).to.be.greaterThan(2 * flat);
    expect(weighted).to.be.greaterThan(3);
  });

  it("a sharded index's votes, merged by exactVotes, are the whole index's exactly (buckets skipped and weighed by the whole index's sizes)", () => {
    // 24 images sharing parts of the query (and of each other) in 3 shards by image number; maxBucket low enough that
    // some of the query's buckets are over it in the whole index and under it in every shard
    const q = randomFeatures(40, 300);
    // its keypoints 245 and 246: one element twice (a burst), which three images share (a bucket under maxBucket)
    for (let i = 246; i < 247; i++) q.descriptors.copyWithin(i * 128, 245 * 128, 246 * 128);
    const part = (f: Features, from: number, to: number): Features => ({ ...f, count: to - from, keypoints: f.keypoints.slice(from * 6, to * 6), descriptors: f.descriptors.slice(from * 128, to * 128) });
    const imgs = Array.from({ length: 24 }, (_, i) => concatFeatures(q, [part(q, (i * 11) % 250, (i * 11) % 250 + 20 + (i % 5) * 6), randomFeatures(41 + i, 150)]));
    const params = { ...PARAMS, maxBucket: 12 };
    const codes = imgs.map((f) => {
      const p = prepare(f);
      return new LshIndex(params).codes(p.vecs, p.f.count);
    });
    const whole = new LshIndex(params);
    codes.forEach((c, i) => whole.setTieKey(whole.add(c), i));
    const sizes = new Uint32Array(1 << params.bits);
    for (const c of codes) countBuckets(sizes, c, params.bits);
    const shards = [0, 1, 2].map((k) => {
      const idx = new LshIndex(params);
      const imageOf: number[] = [];
      codes.forEach((c, i) => {
        if (i % 3 !== k) return;
        const slot = idx.add(c);
        idx.setTieKey(slot, i);
        imageOf[slot] = i;
      });
      idx.useBucketSizes(sizes);
      return { idx, imageOf };
    });
    const pq = prepare(q);
    // votes shared alike, and weighted by sketch distance (lsh.voteSigma); with the index's probes and with more (the
    // reprobe pass, lsh.reprobe)
    const settings = [undefined, 48].flatMap((probes) => [{ ...SP, shortlist: 5, voteSigma: 0 }, { ...SP, shortlist: 5, voteHamming: 10, voteSigma: 4 }].map((sp) => ({ probes, sp })));
    for (const { probes, sp } of settings) {
      const all = votePass(whole, pq, { ...sp, shortlist: 24 }, false, { probes });
      expect(all.stats.skippedBuckets, 'some buckets over maxBucket in the whole index').to.be.greaterThan(0);
      const wholeVotes = new Map(all.shortlist.map((s, i) => [s, all.votes[i]!]));
      const passes = shards.map((s) => shardVotePass(s.idx, pq, sp, false, { probes }) as ShardVotedPass);
      const images = passes.flatMap((v, k) => v.shortlist.map((slot) => shards[k]!.imageOf[slot]!));
      const merged = exactVotes(passes.map((v) => v.keypointVotes), passes.flatMap((v) => v.voters), sp.voteSigma);
      images.forEach((img, i) => expect(merged[i], `image ${img}, sigma ${sp.voteSigma ?? 0}`).to.equal(wholeVotes.get(img)));
      // and so are the burst-discounted votes (the promise's): every shard records the query's bursts alike
      const wholeBurst = new Map(all.shortlist.map((s, i) => [s, all.burst[i]!]));
      const mergedBurst = exactVotes(passes.map((v) => v.keypointVotes), passes.flatMap((v) => v.voters), sp.voteSigma, true);
      images.forEach((img, i) => expect(mergedBurst[i], `image ${img}, bursts`).to.equal(wholeBurst.get(img)));
      expect(mergedBurst.some((b, i) => b < merged[i]!), 'some keypoint is in a burst').to.equal(true);
      for (const v of passes) expect(v.copy).to.equal(all.copy);
      // the whole index's shortlist of 5 is the 5 most-voted of the shards' reports, by their exact votes
      const top = images.map((img, i) => ({ img, v: merged[i]! })).sort((a, b) => b.v - a.v || a.img - b.img).slice(0, 5).map((x) => x.img);
      expect(top).to.deep.equal(votePass(whole, pq, sp, false, { probes }).shortlist);
      if (probes) expect(all.stats.buckets).to.be.greaterThan(votePass(whole, pq, sp, false).stats.buckets);
      if (!probes) continue;
      // the reprobe pass resumed from the direct pass's record (ScanRecord) votes exactly as one scanning every bucket
      const pick = (v: VotedPass) => ({ shortlist: v.shortlist, votes: v.votes, voting: v.voting, burst: v.burst, coll: v.coll, copy: v.copy, ...('voters' in v ? { voters: (v as ShardVotedPass).voters, kv: (v as ShardVotedPass).keypointVotes } : {}) });
      const rec = votePass(whole, pq, { ...sp, shortlist: 24 }, false, { record: true }).record!;
      const resumed = votePass(whole, pq, { ...sp, shortlist: 24 }, false, { probes, resume: rec });
      expect(pick(resumed)).to.deep.equal(pick(all));
      expect(resumed.stats.buckets, 'only the buckets it adds').to.be.lessThan(all.stats.buckets);
      shards.forEach((s, k) => {
        const again = shardVotePass(s.idx, pq, sp, false, { probes, resume: shardVotePass(s.idx, pq, sp, false, { record: true }).record! });
        expect(pick(again), `shard ${k}`).to.deep.equal(pick(passes[k]!));
      });
    }
    // a record of another generation of the index (an image added since) is not resumed: the scan starts over
    const stale = votePass(whole, pq, { ...SP, shortlist: 24 }, false, { record: true }).record!;
    whole.add(codes[0]!);
    const fresh = votePass(whole, pq, { ...SP, shortlist: 24 }, false, { probes: 48 });
    const fromStale = votePass(whole, pq, { ...SP, shortlist: 24 }, false, { probes: 48, resume: stale });
    expect(fromStale.shortlist).to.deep.equal(fresh.shortlist);
    expect(fromStale.votes).to.deep.equal(fresh.votes);
    expect(fromStale.stats.buckets).to.equal(fresh.stats.buckets);
  });

  it("counts a burst of the query's near-identical keypoints as one keypoint in the burst-discounted votes (Jegou et al. 2009)", () => {
    // the query: 200 distinct keypoints, then one descriptor repeated 30 times (a texture's repeated element, its
    // copies slightly perturbed); target A holds the distinct ones, target B that descriptor once among random ones
    const distinct = randomFeatures(70, 200);
    const element = randomFeatures(71, 1);
    const r = mulberry32(72);
    const texture: Features = {
      ...element,
      count: 30,
      keypoints: Float32Array.from({ length: 30 * 6 }, (_, i) => (i % 6 === 0 ? (i / 6) * 10 : element.keypoints[i % 6]!)),
      descriptors: Uint8Array.from({ length: 30 * 128 }, (_, i) => Math.max(0, Math.min(255, element.descriptors[i % 128]! + (r() < 0.1 ? 1 : 0)))),
    };
    const q = concatFeatures(distinct, [distinct, texture]);
    const idx = new LshIndex(PARAMS);
    for (const f of [distinct, concatFeatures(element, [element, randomFeatures(73, 150)])]) {
      const p = prepare(f);
      idx.add(idx.codes(p.vecs, p.f.count));
    }
    const pq = prepare(q);
    const pr = idx.probe(pq.vecs, q.count);
    const m = burstCounts(pr.probes, PARAMS.probes, pr.sketches, q.count, SP.voteHamming);
    expect(Math.min(...m.subarray(200)), 'the repeated element: one burst').to.be.at.least(25);
    expect(m.subarray(0, 200).filter((x) => x > 1).length, 'distinct keypoints: hardly any').to.be.below(10);
    const v = votePass(idx, pq, SP, false);
    const a = v.shortlist.indexOf(0);
    const b = v.shortlist.indexOf(1);
    expect(v.burst[a]! / v.votes[a]!, 'distinct keypoints keep their votes').to.be.above(0.95);
    expect(v.votes[b]!, 'the texture votes for B').to.be.above(0);
    expect(v.burst[b]! / v.votes[b]!, 'a burst of 30 votes about as one keypoint').to.be.below(0.1);
  });

  it('verifies a mirrored copy through the mirror pass only', async () => {
    const base = randomFeatures(20);
    const mir = mirrorFeatures(base);
    const idx = new LshIndex(PARAMS);
    const p = prepare(mir);
    idx.add(idx.codes(p.vecs, mir.count));
    const withMirror = await search(idx, () => p, base, SP);
    expect(withMirror.hits[0]!.mirrored).to.equal(true);
    expect(withMirror.hits[0]!.score).to.be.greaterThan(0.3);
    const without = await search(idx, () => p, base, { ...SP, mirror: false });
    expect(without.hits.every((h) => h.score === 0)).to.equal(true);
    void verifyCandidate;
  });
  it('a batch load holds the same entries as image-by-image adds, in the bucket of their code, and a wider bucket width reuses the stored codes', () => {
    // 120 images x 500 random codes: above the 50,000-keypoint threshold of the bulk path.
    const r = mulberry32(31);
    const packs = Array.from({ length: 120 }, () => Uint32Array.from({ length: 500 * STRIDE }, () => Math.floor(r() * 2 ** 32)));
    // every (bucket, entry, sketch) of an index, sorted
    const content = (idx: LshIndex) => {
      const out: string[] = [];
      const { segments, delta } = idx.buckets;
      for (const sg of segments)
        for (let c = 0; c < sg.offsets.length - 1; c++) {
          const { data, from, to, ids } = bucketSpan(sg, c);
          for (let k = from; k < to; k++) if (idx.isAlive(data[ids + k]! >>> 11)) out.push(`${c}:${data[ids + k]}:${data[2 * k]}:${data[2 * k + 1]}`);
        }
      for (const [c, arr] of delta ?? []) for (let k = 0; k < arr.length; k += 3) if (idx.isAlive(arr[k]! >>> 11)) out.push(`${c}:${arr[k]}:${arr[k + 1]}:${arr[k + 2]}`);
      return out.sort();
    };
    const one = new LshIndex(PARAMS);
    for (const p of packs) one.add(p);
    one.remove(7);
    const beforeMerge = content(one);
    one.merge();
    const bulk = new LshIndex(PARAMS);
    expect(bulk.addBatch(packs)).to.deep.equal(packs.map((_, i) => i));
    bulk.remove(7);
    expect(content(one)).to.deep.equal(beforeMerge);
    expect(content(bulk)).to.deep.equal(beforeMerge);
    expect(beforeMerge.length).to.equal(119 * 500);
    // each entry is its image's keypoint, in the bucket of its code, with its sketch
    for (const line of beforeMerge.slice(0, 2000)) {
      const [c, e, lo, hi] = line.split(':').map(Number);
      const code = packs[e! >>> 11]!.subarray((e! & 2047) * STRIDE);
      expect([code[0]! & 0xfff, code[1], code[2]]).to.deep.equal([c, lo, hi]);
    }
    // The same stored codes bucketed 16 bits wide: entry (slot, kp) sits in bucket code & 0xffff.
    const wide = new LshIndex({ ...PARAMS, bits: 16 });
    wide.addBatch(packs);
    for (const line of content(wide).slice(0, 2000)) {
      const [c, e] = line.split(':').map(Number);
      expect(packs[e! >>> 11]![(e! & 2047) * STRIDE]! & 0xffff).to.equal(c);
    }
    expect(autoBits(1000)).to.equal(12);
    expect(autoBits(75_000_000)).to.equal(19);
    expect(autoBits(1e12)).to.equal(CODE_BITS);
  });

  it('segments held in parts by bucket range hold and search as one array: a merge empties its sources part by part; repeated searches (reused vote arrays) agree', async () => {
    // 60 images of 400 keypoints, among them a warped copy of the query; parts of at most 2,000 entries (the default is
    // 4M): a segment of 24,000 entries in 16 parts
    const base = randomFeatures(40);
    const imgs = Array.from({ length: 60 }, (_, i) => (i === 37 ? warped(base, H0, 41) : randomFeatures(100 + i)));
    const prepared = imgs.map((f) => prepare(f));
    const build = (partEntries?: number) => {
      const idx = new LshIndex(PARAMS, partEntries);
      prepared.forEach((p, i) => {
        idx.add(idx.codes(p.vecs, p.f.count));
        if (i % 13 === 12) idx.merge();
      });
      idx.remove(5);
      idx.merge();
      return idx;
    };
    const whole = build();
    const parted = build(2000);
    expect(whole.buckets.segments.every((s) => s.parts.length === 1)).to.equal(true);
    expect(Math.max(...parted.buckets.segments.map((s) => s.parts.length))).to.be.at.least(8);
    const entries = (idx: LshIndex) =>
      idx.buckets.segments.flatMap((sg) => Array.from({ length: sg.offsets.length - 1 }, (_, c) => {
        const { data, from, to, ids } = bucketSpan(sg, c);
        return [...Array.from(data.subarray(ids + from, ids + to)), ...Array.from(data.subarray(2 * from, 2 * to))].join(',');
      }));
    expect(entries(parted)).to.deep.equal(entries(whole));
    const run = (idx: LshIndex, q: Features) => search(idx, (s) => prepared[s], q, { ...SP, voteSigma: 4 });
    const a = await run(whole, base);
    expect(a.hits[0]!.slot).to.equal(37);
    const b = await run(parted, base);
    expect(b.shortlist).to.deep.equal(a.shortlist);
    expect(b.votes).to.deep.equal(a.votes);
    // another query between two runs of the same one: the vote arrays kept between scans carry nothing over
    const vp = () => votePass(parted, prepare(base), { ...SP, voteSigma: 4 }, false);
    const v1 = vp();
    await run(parted, imgs[12]!);
    expect((await run(parted, base)).votes).to.deep.equal(a.votes);
    const v2 = vp();
    expect([v2.shortlist, v2.votes, v2.voting, v2.burst]).to.deep.equal([v1.shortlist, v1.votes, v1.voting, v1.burst]);
    expect(v1.voting[0]).to.be.above(0);
    // a merge of two segments empties each source's parts (the index holds one copy of the entries at the end)
    const two = new LshIndex(PARAMS, 2000);
    two.addBatch(prepared.slice(0, 30).map((p) => two.codes(p.vecs, p.f.count)));
    two.merge();
    const first = two.buckets.segments[0]!;
    two.addBatch(prepared.slice(30).map((p) => two.codes(p.vecs, p.f.count)));
    two.merge();
    expect(two.buckets.segments).to.have.length(1);
    expect(first.parts.every((d) => d.length === 0)).to.equal(true);
    const sizes = two.buckets.segments[0]!.parts.map((d) => d.length / STRIDE);
    expect(sizes.length).to.equal(16); // 24,000 entries in parts made for 2,000: the next power of two
    expect(sizes.reduce((x, y) => x + y, 0)).to.equal(two.keypoints);
  });

  it('the projections by the WebAssembly kernel are the JavaScript loop\'s bit for bit (one round and several)', () => {
    const vecs = concatFeatures(randomFeatures(7), [randomFeatures(7), randomFeatures(8, 300)]);
    const p = prepare(vecs);
    for (const signs of [makeProjections(1), Float32Array.from({ length: 3 * 128 }, (_, i) => (mulberry32(i + 9)() < 0.5 ? -1 : 1))]) {
      const js = projectJs(p.vecs, p.f.count, signs);
      const w = wasmProject(p.vecs, p.f.count, signs, MEAN_ROOTSIFT)!;
      expect(w.length).to.equal(p.f.count * signs.length);
      expect(Buffer.from(w.buffer, w.byteOffset, w.byteLength).equals(Buffer.from(js.buffer, js.byteOffset, js.byteLength))).to.equal(true);
      expect(project(p.vecs, 5, signs)).to.deep.equal(js.subarray(0, 5 * signs.length));
    }
  });

  it('the vote scan in WebAssembly over parts in their own memories meets what the JavaScript loop meets, in order, also over buckets past one call\'s room', () => {
    // 2 buckets (bits 1) of ~12,000 entries each, none skipped, every entry within the ratio test's bound (matchHamming
    // 64): each bucket is scanned in several kernel calls, and an entry skipped or met twice at their seams shows
    const params: LshParams = { bits: 1, probes: 2, maxBucket: 100_000, seed: 1 };
    const prepared = Array.from({ length: 60 }, (_, i) => prepare(i === 37 ? warped(randomFeatures(40), H0, 41) : randomFeatures(100 + i)));
    const build = (wasm: boolean) => {
      partsInWebAssembly(wasm);
      try {
        const idx = new LshIndex(params);
        idx.addBatch(prepared.map((p) => idx.codes(p.vecs, p.f.count)));
        idx.merge();
        return idx;
      } finally {
        partsInWebAssembly(true);
      }
    };
    const inWasm = build(true);
    const inJs = build(false);
    const parts = (idx: LshIndex) => idx.buckets.segments.flatMap((s) => s.parts);
    expect(parts(inWasm).every((d) => partScan(d) !== undefined)).to.equal(true);
    expect(parts(inJs).some((d) => partScan(d) !== undefined)).to.equal(false);
    expect(parts(inWasm).map((d) => Array.from(d).join())).to.deep.equal(parts(inJs).map((d) => Array.from(d).join()));
    const largest = Math.max(...inWasm.buckets.segments.flatMap((s) => Array.from(s.offsets.subarray(1), (o, b) => o - s.offsets[b]!)));
    expect(largest).to.be.above(2 * partScan(parts(inWasm)[0]!)!.cap);
    const sp = { ...SP, voteSigma: 4, voteHamming: 10, matchHamming: 64 };
    const q = prepare(randomFeatures(40));
    const a = votePass(inWasm, q, sp, false, { record: true });
    const b = votePass(inJs, q, sp, false, { record: true });
    expect(a.shortlist[0]).to.equal(37);
    expect(a.record!.e.length).to.equal(a.stats.scanned);
    for (const k of ['shortlist', 'votes', 'voting', 'burst', 'coll', 'copy'] as const) expect(a[k], k).to.deep.equal(b[k]);
    expect([a.stats, Array.from(a.record!.h), Array.from(a.record!.e), Array.from(a.record!.at)]).to.deep.equal([b.stats, Array.from(b.record!.h), Array.from(b.record!.e), Array.from(b.record!.at)]);
  });

  it('compact merges every segment and the delta into one, and a scan then meets the same entries in the same order', async () => {
    const prepared = Array.from({ length: 60 }, (_, i) => prepare(i === 37 ? warped(randomFeatures(40), H0, 41) : randomFeatures(100 + i)));
    const idx = new LshIndex(PARAMS, 2000);
    idx.addBatch(prepared.slice(0, 40).map((p) => idx.codes(p.vecs, p.f.count)));
    idx.merge(); // a segment of 16,000 entries
    idx.addBatch(prepared.slice(40, 55).map((p) => idx.codes(p.vecs, p.f.count)));
    idx.merge(); // 6,000: kept apart (under half the one before)
    for (const p of prepared.slice(55)) idx.add(idx.codes(p.vecs, p.f.count)); // the delta
    expect(idx.buckets.segments.length).to.equal(2);
    expect(idx.buckets.delta).to.not.equal(null);
    const sp = { ...SP, voteSigma: 4, voteHamming: 10 };
    const q = prepare(randomFeatures(40));
    const before = votePass(idx, q, sp, false, { record: true });
    const hitsBefore = (await search(idx, (s) => prepared[s], randomFeatures(40), sp)).hits;
    const gen = idx.generation;
    const olds = idx.buckets.segments;
    idx.compact();
    expect(idx.buckets.segments.length).to.equal(1);
    expect(idx.buckets.delta).to.equal(null);
    expect(idx.generation).to.be.above(gen);
    expect(olds.every((sg) => sg.parts.every((d) => d.length === 0))).to.equal(true); // freed as copied
    expect(idx.buckets.segments[0]!.offsets.at(-1)).to.equal(60 * 400);
    const after = votePass(idx, q, sp, false, { record: true });
    expect(before.shortlist[0]).to.equal(37);
    for (const k of ['shortlist', 'votes', 'voting', 'burst', 'coll', 'copy'] as const) expect(after[k], k).to.deep.equal(before[k]);
    expect([Array.from(after.record!.h), Array.from(after.record!.e)]).to.deep.equal([Array.from(before.record!.h), Array.from(before.record!.e)]);
    expect((await search(idx, (s) => prepared[s], randomFeatures(40), sp)).hits).to.deep.equal(hitsBefore);
    // (removed images' entries are dropped by it, and the buckets' weights then count the live entries alone)
    idx.remove(3);
    idx.compact();
    expect(idx.buckets.segments[0]!.offsets.at(-1)).to.equal(59 * 400);
  });

  it('growing by many additions keeps few segments, and removing images drops their entries', () => {
    const r = mulberry32(33);
    const idx = new LshIndex(PARAMS);
    const live = new Set<number>();
    for (let i = 0; i < 600; i++) {
      live.add(idx.add(Uint32Array.from({ length: 300 * STRIDE }, () => Math.floor(r() * 2 ** 32))));
      if (i % 7 === 3) {
        const victim = [...live][Math.floor(r() * live.size)]!;
        idx.remove(victim);
        live.delete(victim);
      }
    }
    idx.merge();
    const { segments } = idx.buckets;
    // log-structured: segments hold sizes that at least halve from the first (few of them)
    expect(segments.length).to.be.at.most(Math.ceil(Math.log2((600 * 300) / 50_000)) + 2);
    let held = 0;
    for (const sg of segments) for (const data of sg.parts) for (let k = (data.length / 3) * 2; k < data.length; k++) if (idx.isAlive(data[k]! >>> 11)) held++;
    expect(held).to.equal(live.size * 300);
    expect(idx.size).to.equal(live.size);
    expect(idx.keypoints).to.equal(live.size * 300);
  });

  it('probes each keypoint\'s own bucket first, then buckets across its least certain bits, likeliest first', () => {
    const pr = Float32Array.from({ length: 16 }, (_, b) => (b % 2 ? 1 : -1) * (b === 3 ? 0.01 : b === 9 ? 0.02 : b === 5 ? 0.03 : 1 + b));
    const codes = probeCodes(pr, 1, 12, 6, 16);
    const own = Array.from(pr.subarray(0, 12)).reduce((c, v, b) => (v > 0 ? c | (1 << b) : c), 0);
    // flips by sum of squares: {3}, {9}, {3,9}, {5}, {3,5}
    expect(Array.from(codes)).to.deep.equal([own, own ^ 8, own ^ 512, own ^ 8 ^ 512, own ^ 32, own ^ 8 ^ 32]);
  });

  it('sketch collisions list exactly the keypoint pairs within the Hamming bound, grouped by query keypoint', () => {
    const r = mulberry32(41);
    const qs = Uint32Array.from({ length: 2 * 40 }, () => Math.floor(r() * 2 ** 32));
    const ts = Uint32Array.from({ length: 2 * 60 }, (_, i) => (i < 20 ? qs[i]! ^ (1 << (i % 32)) : Math.floor(r() * 2 ** 32)));
    const c = sketchCollisions(qs, 40, ts, 12);
    const want: number[] = [];
    for (let q = 0; q < 40; q++)
      for (let t = 0; t < 60; t++)
        if (popcount(qs[2 * q]! ^ ts[2 * t]!) + popcount(qs[2 * q + 1]! ^ ts[2 * t + 1]!) <= 12) want.push(q, t);
    expect(Array.from(c)).to.deep.equal(want);
    expect(want.length / 2).to.be.at.least(10); // the 10 planted near-copies (2 bits apart) at least
  });
  it('sketch collisions by the WebAssembly kernel are the JavaScript loop\'s, also when they outgrow its first buffer', () => {
    const r = mulberry32(43);
    const qs = Uint32Array.from({ length: 2 * 700 }, () => Math.floor(r() * 2 ** 32));
    const ts = Uint32Array.from({ length: 2 * 900 }, (_, i) => (i < 400 ? qs[i]! ^ (1 << (i % 32)) : Math.floor(r() * 2 ** 32)));
    for (const h of [0, 12, 20, 32, 40, 64]) {
      const w = wasmSketchCollisions(qs, 700, ts, h);
      expect(w, 'this Node has WebAssembly').to.not.equal(null);
      const js = sketchCollisionsJs(qs, 700, ts, h);
      expect(w!.length).to.equal(js.length);
      expect(Buffer.from(w!.buffer, w!.byteOffset, w!.byteLength).equals(Buffer.from(js.buffer, js.byteOffset, js.byteLength)), `maxH ${h}`).to.equal(true);
    }
    expect(wasmSketchCollisions(qs, 700, ts, 64)!.length).to.equal(2 * 700 * 900); // every pair: past the first buffer
  });
  it('the ratio test by the WebAssembly kernel gives the JavaScript loop\'s matches, distances and ratios', () => {
    const r = mulberry32(44);
    const unit = (v: Float32Array) => {
      for (let i = 0; i < v.length; i += 128) {
        const s = Math.hypot(...v.subarray(i, i + 128));
        for (let j = i; j < i + 128; j++) v[j] = v[j]! / s;
      }
      return v;
    };
    // RootSIFT-like (non-negative, skewed) vectors; 300 target keypoints near copies of query keypoints
    const qv = unit(Float32Array.from({ length: 770 * 128 }, () => r() ** 3));
    const tv = unit(Float32Array.from({ length: 760 * 128 }, (_, i) => (i < 300 * 128 ? Math.max(0, qv[i]! + 0.05 * (r() - 0.5)) : r() ** 3)));
    const cand: number[] = [];
    for (let q = 0; q < 770; q++) for (let t = 0; t < 760; t++) if (r() < 0.05 || (q === t && q < 300)) cand.push(q, t);
    cand.push(769, 3, 769, 3); // a pair met twice in one run
    const Q = { f: { count: 770 } as Features, vecs: qv };
    const T = { f: { count: 760 } as Features, vecs: tv };
    expect(wasmNearestTwo(qv, 770, tv, 760, cand, 0.6), 'this Node has WebAssembly').to.not.equal(null);
    for (const far of [0.6, 0.9, 2]) {
      const js = ratioMatchesJs(Q, T, cand, far, 0.8, 0);
      const w = ratioMatches(Q, T, cand, far, 0.8, 0);
      expect(js.length, `far ${far}`).to.be.at.least(250);
      expect(w, `far ${far}`).to.deep.equal(js);
    }
  });
  it('topK gives the k largest positive votes, ties by slot, as a full sort would', () => {
    const r = mulberry32(5);
    for (let trial = 0; trial < 200; trial++) {
      const n = Math.floor(r() * 300);
      const v = new Float32Array(n);
      for (let i = 0; i < n; i++) v[i] = r() < 0.3 ? 0 : Math.floor(r() * 20);
      const k = Math.floor(r() * 40);
      const ref = Array.from(v.keys()).filter((i) => v[i]! > 0).sort((a, b) => v[b]! - v[a]! || a - b).slice(0, k);
      expect(topK(v, k)).to.deep.equal(ref);
    }
  });
  it('topK ranks equal votes by the tie keys when given (the item ids: a shortlist independent of load order)', () => {
    const r = mulberry32(6);
    for (let trial = 0; trial < 200; trial++) {
      const n = Math.floor(r() * 300);
      const v = new Float32Array(n);
      for (let i = 0; i < n; i++) v[i] = r() < 0.3 ? 0 : Math.floor(r() * 5);
      const key = Float64Array.from(v.keys(), () => Math.floor(r() * 1e6));
      const k = Math.floor(r() * 40);
      const ref = Array.from(v.keys()).filter((i) => v[i]! > 0).sort((a, b) => v[b]! - v[a]! || key[a]! - key[b]! || a - b).slice(0, k);
      expect(topK(v, k, key)).to.deep.equal(ref);
      // the same votes with the slots in another order give the same keys in the same order
      const perm = Array.from(v.keys()).sort(() => r() - 0.5);
      const v2 = Float32Array.from(perm, (i) => v[i]!);
      const key2 = Float64Array.from(perm, (i) => key[i]!);
      const top2 = topK(v2, k, key2).map((j) => key2[j]!);
      if (new Set(key).size === n) expect(top2).to.deep.equal(ref.map((i) => key[i]!));
    }
  });
});
