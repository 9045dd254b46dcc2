// Approximate nearest neighbours of descriptors by a forest of randomised kd-trees (Silpa-Anan & Hartley 2008;
// the default index of FLANN, Muja & Lowe 2009, which OpenCV's FlannBasedMatcher and the WxBS and ASIFT
// reference matchers use): each tree splits on a dimension drawn among the five of highest variance, at its
// mean; a query descends every tree, and the branches it did not take are searched best-first (one queue over
// all trees) until `checks` descriptors have been compared. Exact matching between two images' descriptors,
// not hashing: the LSH index (lsh.ts) pairs keypoints whose 64-bit sketches collide, which loses the weak
// matches of two photos taken far apart (bench/RESULTS.md, 2026-11-26); this is for verifying a few
// candidates with tens of thousands of keypoints each (match.views.archive).
//
// Written here rather than taken from npm: the kd-tree packages there are for 2-3 dimensions (exact, recursive,
// objects per node) and the approximate ones for 128 dimensions are native addons (hnswlib-node, faiss-node)
// whose indexes are built for one large set queried many times; here a forest is built per candidate image over
// the Float32Array rows the verifier already holds (1-2 s for 30-40k rows on this project's VM, as long as
// searching it once: archive matching keeps it while the candidate's views are cached).
import { mulberry32 } from '../../util/random.js';

export interface KdForestParams {
  trees: number;
  /** Descriptors compared per query (FLANN's checks): more = closer to exact, slower. */
  checks: number;
  leafSize: number;
  seed: number;
}

export const DEFAULT_KD: KdForestParams = { trees: 4, checks: 128, leafSize: 8, seed: 1 };

/** Dimensions among which a split is drawn (FLANN's RAND_DIM) and rows sampled for the variance (its SAMPLE_MEAN). */
const RAND_DIM = 5;
const SAMPLE = 100;

export class KdForest {
  /** Every tree's nodes in one set of arrays (node ids are global; each tree's root is in `roots`). Per node: the
   *  split dimension or -1 for a leaf; the split value; children (internal) or a [a, b) range of `perm` (leaf). */
  private split: Int32Array;
  private val: Float32Array;
  private a: Int32Array;
  private b: Int32Array;
  private nodes = 0;
  /** Each tree's order of the rows, one after the other (count per tree). */
  private readonly perm: Int32Array;
  readonly roots: number[] = [];
  private readonly mark: Int32Array;
  private epoch = 0;
  private readonly heap = new BranchHeap();

  /** rows: count x dim floats, row-major (kept by reference). */
  constructor(readonly rows: Float32Array, readonly dim: number, readonly count: number, readonly p: KdForestParams = DEFAULT_KD) {
    if (rows.length < count * dim) throw new RangeError(`KdForest: ${rows.length} floats for ${count} x ${dim}`);
    const cap = p.trees * Math.max(1, 2 * Math.ceil(count / Math.max(1, p.leafSize)) + 1);
    this.split = new Int32Array(cap);
    this.val = new Float32Array(cap);
    this.a = new Int32Array(cap);
    this.b = new Int32Array(cap);
    this.perm = new Int32Array(count * p.trees);
    const rnd = mulberry32(p.seed);
    for (let t = 0; t < p.trees; t++) this.roots.push(this.build(rnd, t * count));
    this.mark = new Int32Array(count);
  }

  /** Builds one tree over perm[off, off + count); returns its root. */
  private build(rnd: () => number, off: number): number {
    const { rows, dim, count, perm } = this;
    const leaf = Math.max(1, this.p.leafSize);
    for (let i = 0; i < count; i++) perm[off + i] = i;
    const mean = new Float64Array(dim), vari = new Float64Array(dim);
    const node = (lo: number, hi: number): number => {
      const id = this.nodes++;
      if (hi - lo <= leaf) return ((this.split[id] = -1), (this.a[id] = lo), (this.b[id] = hi), id);
      // mean and variance per dimension over a sample of the rows
      const n = Math.min(SAMPLE, hi - lo);
      mean.fill(0);
      vari.fill(0);
      for (let s = 0; s < n; s++) {
        const o = perm[lo + s]! * dim;
        for (let j = 0; j < dim; j++) mean[j]! += rows[o + j]!;
      }
      for (let j = 0; j < dim; j++) mean[j]! /= n;
      for (let s = 0; s < n; s++) {
        const o = perm[lo + s]! * dim;
        for (let j = 0; j < dim; j++) {
          const x = rows[o + j]! - mean[j]!;
          vari[j]! += x * x;
        }
      }
      const top: number[] = [];
      for (let j = 0; j < dim; j++) {
        if (top.length < RAND_DIM) top.push(j);
        else if (vari[j]! > vari[top[RAND_DIM - 1]!]!) top[RAND_DIM - 1] = j;
        else continue;
        top.sort((x, y) => vari[y]! - vari[x]!);
      }
      const d = top[Math.floor(rnd() * top.length)]!;
      let v = mean[d]!;
      let mid = partition(perm, lo, hi, (i) => rows[i * dim + d]! < v);
      if (mid === lo || mid === hi) {
        // every row on one side (ties): split at the median of this dimension
        const sorted = Array.from(perm.subarray(lo, hi)).sort((x, y) => rows[x * dim + d]! - rows[y * dim + d]!);
        perm.set(sorted, lo);
        mid = (lo + hi) >> 1;
        v = rows[perm[mid]! * dim + d]!;
      }
      this.split[id] = d;
      this.val[id] = v;
      this.a[id] = node(lo, mid);
      this.b[id] = node(mid, hi);
      return id;
    };
    return node(off, off + count);
  }

  /**
   * The k nearest rows (approximately) to each query row: pairs (query row, forest row) grouped by query row in
   * order, each query's neighbours nearest first; fewer than k where the forest has fewer rows.
   */
  knnPairs(queries: Float32Array, qcount: number, k: number): Int32Array {
    const out = new Int32Array(qcount * k * 2);
    const ids = new Int32Array(k), ds = new Float64Array(k);
    let m = 0;
    for (let qi = 0; qi < qcount; qi++) {
      const n = this.knn(queries, qi * this.dim, k, ids, ds);
      for (let j = 0; j < n; j++) (out[m++] = qi), (out[m++] = ids[j]!);
    }
    return out.subarray(0, m);
  }

  /** The k nearest rows to queries[qo .. qo+dim): their indices and squared distances, nearest first; returns how many. */
  knn(queries: Float32Array, qo: number, k: number, ids: Int32Array, ds: Float64Array): number {
    const { rows, dim, perm, mark, heap } = this;
    const nd = this.split, nv = this.val, na = this.a, nb = this.b;
    if (!this.count || k < 1) return 0;
    if (++this.epoch === 0x7fffffff) (mark.fill(0), (this.epoch = 1));
    const ep = this.epoch;
    let found = 0;
    let worst = Infinity; // the k-th distance so far
    let checks = 0;
    const limit = this.p.checks;
    heap.clear();
    for (const r of this.roots) heap.push(0, r);
    // Best-first over every tree: the roots first, then the branches not taken, nearest bound first.
    while (heap.size && (checks < limit || found < k)) {
      const mindist = heap.topKey();
      let id = heap.pop();
      if (mindist >= worst) break; // every queued branch is at least this far
      while (nd[id]! >= 0) {
        const diff = queries[qo + nd[id]!]! - nv[id]!;
        const bound = mindist + diff * diff;
        if (bound < worst) heap.push(bound, diff < 0 ? nb[id]! : na[id]!);
        id = diff < 0 ? na[id]! : nb[id]!;
      }
      for (let s = na[id]!; s < nb[id]!; s++) {
        const r = perm[s]!;
        if (mark[r] === ep) continue;
        mark[r] = ep;
        checks++;
        const o = r * dim;
        let d2 = 0;
        for (let j = 0; j < dim; j++) {
          const x = queries[qo + j]! - rows[o + j]!;
          d2 += x * x;
        }
        if (d2 >= worst) continue;
        let i = found < k ? found++ : k - 1;
        while (i > 0 && ds[i - 1]! > d2) (ds[i] = ds[i - 1]!), (ids[i] = ids[i - 1]!), i--;
        ds[i] = d2;
        ids[i] = r;
        if (found === k) worst = ds[k - 1]!;
      }
    }
    return found;
  }
}

/** Reorders perm[lo, hi) so rows passing `left` come first; returns the first index of the rest. */
function partition(perm: Int32Array, lo: number, hi: number, left: (row: number) => boolean): number {
  let i = lo, j = hi - 1;
  while (i <= j) {
    if (left(perm[i]!)) i++;
    else {
      const t = perm[i]!;
      perm[i] = perm[j]!;
      perm[j--] = t;
    }
  }
  return i;
}

/** A binary min-heap of (bound, node) branches. */
class BranchHeap {
  private keys = new Float64Array(256);
  private ids = new Int32Array(256);
  private n = 0;
  clear(): void {
    this.n = 0;
  }
  get size(): number {
    return this.n;
  }
  topKey(): number {
    return this.keys[0]!;
  }
  push(key: number, id: number): void {
    if (this.n === this.keys.length) {
      const k = new Float64Array(this.n * 2);
      k.set(this.keys);
      this.keys = k;
      const d = new Int32Array(this.n * 2);
      d.set(this.ids);
      this.ids = d;
    }
    const { keys, ids } = this;
    let i = this.n++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (keys[p]! <= key) break;
      keys[i] = keys[p]!;
      ids[i] = ids[p]!;
      i = p;
    }
    keys[i] = key;
    ids[i] = id;
  }
  /** Removes the nearest branch; returns its node. */
  pop(): number {
    const { keys, ids } = this;
    const top = ids[0]!;
    const len = --this.n;
    const k = keys[len]!, d = ids[len]!;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= len) break;
      if (c + 1 < len && keys[c + 1]! < keys[c]!) c++;
      if (keys[c]! >= k) break;
      keys[i] = keys[c]!;
      ids[i] = ids[c]!;
      i = c;
    }
    keys[i] = k;
    ids[i] = d;
    return top;
  }
}
