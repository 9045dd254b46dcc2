// The kd-forest (src/lib/image-index/kdforest.ts) archive matching pairs descriptors with: against brute force on
// clustered unit vectors like RootSIFT's, its nearest neighbours are the true ones for nearly every query at the
// default checks and for every query with checks covering the set; pairs come grouped by query, nearest first.
import { expect } from 'chai';
import { DEFAULT_KD, KdForest } from '../src/lib/image-index/kdforest.js';
import { mulberry32 } from '../src/util/random.js';

const D = 128;

/** count unit vectors around `centres` random centres (non-negative, as RootSIFT is). */
function clustered(count: number, centres: Float32Array, rnd: () => number, noise: number): Float32Array {
  const nc = centres.length / D;
  const a = new Float32Array(count * D);
  for (let i = 0; i < count; i++) {
    const c = Math.floor(rnd() * nc);
    let s = 0;
    for (let j = 0; j < D; j++) {
      const v = Math.max(0, centres[c * D + j]! + (rnd() - 0.5) * noise);
      a[i * D + j] = v;
      s += v * v;
    }
    for (let j = 0; j < D; j++) a[i * D + j]! /= Math.sqrt(s) || 1;
  }
  return a;
}

function bruteForce(rows: Float32Array, n: number, q: Float32Array, qi: number, k: number): number[] {
  const d: [number, number][] = [];
  for (let r = 0; r < n; r++) {
    let s = 0;
    for (let j = 0; j < D; j++) s += (q[qi * D + j]! - rows[r * D + j]!) ** 2;
    d.push([s, r]);
  }
  return d.sort((x, y) => x[0] - y[0]).slice(0, k).map((x) => x[1]);
}

describe('lsh-index: kd-forest nearest neighbours', () => {
  const rnd = mulberry32(7);
  const centres = new Float32Array(200 * D).map(() => rnd() ** 3);
  const n = 3000;
  const rows = clustered(n, centres, rnd, 0.3);
  // queries: a third are a row with a little noise (the match exists), the rest fresh draws
  const nq = 300;
  const queries = clustered(nq, centres, rnd, 0.3);
  for (let i = 0; i < nq; i += 3) {
    const r = Math.floor(rnd() * n);
    let s = 0;
    for (let j = 0; j < D; j++) s += (queries[i * D + j] = Math.max(0, rows[r * D + j]! + (rnd() - 0.5) * 0.02)) ** 2;
    for (let j = 0; j < D; j++) queries[i * D + j]! /= Math.sqrt(s);
  }
  const truth = Array.from({ length: nq }, (_, i) => bruteForce(rows, n, queries, i, 2));

  it('finds the true nearest neighbour of nearly every query at the default checks, and the planted copies all', () => {
    const f = new KdForest(rows, D, n);
    const pairs = f.knnPairs(queries, nq, 2);
    expect(pairs.length).to.equal(nq * 2 * 2);
    let first = 0, planted = 0;
    for (let i = 0; i < nq; i++) {
      expect(pairs[4 * i], 'grouped by query, in order').to.equal(i);
      expect(pairs[4 * i + 2]).to.equal(i);
      if (pairs[4 * i + 1] === truth[i]![0]) (first++, i % 3 === 0 && planted++);
    }
    expect(planted, 'a near copy is always found').to.equal(nq / 3);
    expect(first / nq, `recall@1 at ${DEFAULT_KD.checks} checks`).to.be.greaterThan(0.85);
  });

  it('is exhaustive when checks cover the set: the k nearest, nearest first, with their squared distances', () => {
    const f = new KdForest(rows, D, n, { ...DEFAULT_KD, checks: n });
    const ids = new Int32Array(2), ds = new Float64Array(2);
    let exact = 0;
    for (let i = 0; i < nq; i++) {
      expect(f.knn(queries, i * D, 2, ids, ds)).to.equal(2);
      expect(ds[0]).to.be.at.most(ds[1]!);
      if (ids[0] === truth[i]![0] && ids[1] === truth[i]![1]) exact++;
    }
    // the branch bound adds the squared gaps of every split on the way, so a few far branches are pruned early
    expect(exact / nq).to.be.greaterThan(0.97);
  });

  it('returns fewer neighbours than asked where the forest has fewer rows, none for an empty one', () => {
    const few = new KdForest(rows.subarray(0, 3 * D), D, 3);
    expect(Array.from(few.knnPairs(queries, 2, 5))).to.have.length(2 * 3 * 2);
    expect(new KdForest(new Float32Array(0), D, 0).knnPairs(queries, 2, 2)).to.have.length(0);
    expect(() => new KdForest(new Float32Array(10), D, 1)).to.throw(RangeError, /10 floats for 1 x 128/);
  });

  it('splits rows that tie on every sampled dimension without losing any', () => {
    const same = new Float32Array(100 * D).fill(1 / Math.sqrt(D));
    const f = new KdForest(same, D, 100, { ...DEFAULT_KD, checks: 1000 });
    const ids = new Int32Array(100), ds = new Float64Array(100);
    expect(f.knn(same, 0, 100, ids, ds)).to.equal(100);
    expect(new Set(ids).size).to.equal(100);
  });
});
