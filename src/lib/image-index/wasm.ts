// WebAssembly kernels for the index's inner loops. The two loops of a re-match (lsh.recollide, recollideVoters: an
// unconfident query's shortlisted image matched again against all its keypoints), which were half its CPU (issue 35
// round 14 profile):
// - collide: every query keypoint's 64-bit sketch against every target keypoint's (~0.6M pairs an image; searcher.ts
//   sketchCollisions). JavaScript has no 64-bit popcount (a SWAR count of two 32-bit halves); i64.popcnt is one
//   instruction: ~6.7x faster, the same pairs in the same order.
// - ratio: Lowe's ratio test over those pairs (verify.ts ratioMatches, without a rival region): each query keypoint's
//   nearest and second nearest target keypoint among its pairs. A pair is dropped early once its squared differences
//   over the first 32, 64, 96 dimensions pass the second nearest so far (as distBelow), summed four lanes at a time in
//   float32 (its rounding, ~1e-5 at most, is inside distBelow's 1e-4 margin: a pair dropped is one at or beyond the
//   bound, which changes nothing); a pair kept gets distBelow's own value, its dot product summed in float64 in the
//   same order: the same matches as the JavaScript loop.
// - project: the structured random projections of RootSIFT vectors (lsh.ts project: a query's bucket codes and
//   probes, a re-matched target's sketches, indexing), 7.5x, the same float32 values bit for bit.
// - scan: the vote scan's loop over a probed bucket's entries (searcher.ts scanVotes: ~5 M entries a query at 100,000
//   targets, most of a query's vote), each entry's sketch against the query keypoint's: the entries whose sketch is
//   within the Hamming bound, in order. It runs in the memory the entries live in: each part of a segment (lsh.ts
//   PART_ENTRIES) is allocated in a WebAssembly memory of its own, with room for the hits after the entries, and
//   the JavaScript that reads them elsewhere reads the same Uint32Array view. Bound by memory (issue 35 round 15:
//   0.6 ns an entry in cache, 3.4 out of it with the entries and sketches interleaved, 12 bytes an entry): a part holds
//   its sketches apart from its entries, 8 bytes an entry read.
// Assembled from their operations by src/util/wasm-asm.ts, as the SIFT kernels are (no toolchain, no binary in the
// repo). The JavaScript loops stay the fallback (and the reference the tests hold the kernels to).
import { I32, V128, WebAssembly, assemble, code, forLoop, funcType, i32Func, op, sleb, uleb, vec, type WasmMemory } from '../../util/wasm-asm.js';

const I64 = 0x7e;
const F64 = 0x7c;
const f64 = {
  const: (v: number) => {
    const b = Buffer.alloc(8);
    b.writeDoubleLE(v);
    return [0x44, ...b];
  },
  promote: [0xbb], // f64.promote_f32
  add: [0xa0],
  sub: [0xa1],
  mul: [0xa2],
  min: [0xa4],
  max: [0xa5],
  sqrt: [0x9f],
  lt: [0x63],
  gt: [0x64],
  store: (offset: number) => [0x39, 3, ...uleb(offset)],
};
const i64 = {
  load: (offset: number) => [0x29, 3, ...uleb(offset)],
  extendU: [0xad], // i64.extend_i32_u
  shl: [0x86],
  or: [0x84],
  const: (v: number) => [0x42, ...sleb(v)],
  xor: [0x85],
  popcnt: [0x7b],
  wrap: [0xa7], // i32.wrap_i64
};
const i32 = {
  store: (offset: number) => [0x36, 2, ...uleb(offset)],
  leS: [0x4c],
  shrU: [0x76],
  eq: [0x46],
  ne: [0x47],
  if: [0x04, 0x40],
  else: [0x05],
  shl: [0x74],
};

// project(v, n, mean, signs, rounds, out): lsh.ts project's structured random projections: for each of n RootSIFT
// vectors (128 float32 at v) and each round r, (vector - mean) * signs[r] and then its Walsh-Hadamard transform, 128
// float32 at out + (i * rounds + r) * 512. Each value is the same float32 operation on the same operands as the
// JavaScript loop's (its sums in float64 rounded to float32 are float32 sums: a double rounding that changes nothing for
// +, - and *), stage by stage: the same projections bit for bit. The first two stages (pairs and quads) stay inside
// one four-lane vector (shuffles); from the third a stage is whole vectors.
function projectKernel(): number[] {
  const [v, n, mean, signs, rounds, out] = [0, 1, 2, 3, 4, 5];
  const [i, r, o, src, sg, j, hb, blk, end] = [6, 7, 8, 9, 10, 11, 12, 13, 14];
  const [x, y, sum, dif] = [15, 16, 17, 18];
  const locals = vec([[9, I32], [4, V128]]);
  const at = (base: number, off: number) => code(op.get(base), op.get(off), op.add);
  // sum and difference of lanes picked from x by two shuffles, joined by a third
  const stage = (a: number[], b: number[], join: number[]) => code(
    op.get(x), op.get(x), op.shuffle32(a), op.get(x), op.get(x), op.shuffle32(b), op.fadd, op.set(sum),
    op.get(x), op.get(x), op.shuffle32(a), op.get(x), op.get(x), op.shuffle32(b), op.fsub, op.set(dif),
    op.get(sum), op.get(dif), op.shuffle32(join), op.set(x),
  );
  const body = code(
    forLoop(i, op.i32(0), n, 1, code(
      op.get(v), op.get(i), op.i32(512), op.mul, op.add, op.set(src),
      forLoop(r, op.i32(0), rounds, 1, code(
        op.get(out), op.get(i), op.get(rounds), op.mul, op.get(r), op.add, op.i32(512), op.mul, op.add, op.set(o),
        op.get(signs), op.get(r), op.i32(512), op.mul, op.add, op.set(sg),
        op.i32(512), op.set(end),
        forLoop(j, op.i32(0), end, 16, code(
          at(o, j),
          at(src, j), op.vload, at(mean, j), op.vload, op.fsub, at(sg, j), op.vload, op.fmul,
          op.vstore,
        )),
        forLoop(j, op.i32(0), end, 16, code(
          at(o, j), op.vload, op.set(x),
          stage([0, 0, 2, 2], [1, 1, 3, 3], [0, 5, 2, 7]),
          stage([0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 6, 7]),
          at(o, j), op.get(x), op.vstore,
        )),
        op.i32(16), op.set(hb),
        op.block, op.loop,
        op.get(hb), op.i32(512), op.geS, op.brIf(1),
        op.i32(0), op.set(blk),
        op.block, op.loop,
        op.get(blk), op.i32(512), op.geS, op.brIf(1),
        op.get(blk), op.get(hb), op.add, op.set(end),
        forLoop(j, op.get(blk), end, 16, code(
          at(o, j), op.vload, op.set(x),
          at(o, j), op.get(hb), op.add, op.vload, op.set(y),
          at(o, j), op.get(x), op.get(y), op.fadd, op.vstore,
          at(o, j), op.get(hb), op.add, op.get(x), op.get(y), op.fsub, op.vstore,
        )),
        op.get(blk), op.get(hb), op.i32(1), i32.shl, op.add, op.set(blk),
        op.br(0),
        op.end, op.end,
        op.get(hb), op.i32(1), i32.shl, op.set(hb),
        op.br(0),
        op.end, op.end,
      )),
    )),
  );
  return [...locals, ...body, ...op.end];
}

/** `for (; p < end; p += 8) if (popcount(i64 at p ^ q) <= maxH) hit` over locals: the loop of the sketch kernels (the
 *  distance also in local h when given). */
function sketchLoop(p: number, end: number, q: number, maxH: number, hit: number[], h?: number): number[] {
  return code(
    op.block, op.loop,
    op.get(p), op.get(end), op.geS, op.brIf(1),
    op.get(p), i64.load(0), op.get(q), i64.xor, i64.popcnt, i64.wrap, h === undefined ? [] : op.tee(h), op.get(maxH), i32.leS,
    i32.if, hit, op.end,
    op.get(p), op.i32(8), op.add, op.set(p),
    op.br(0),
    op.end, op.end,
  );
}

// scan(from, end, q0, q1, maxH, out) -> n: for each sketch at byte offset from <= p < end, step 8 (a part's sketches:
// low then high word, lsh.ts Segment), when popcount(sketch ^ (q1 << 32 | q0)) <= maxH the pair (p, distance) is
// written at out (two int32s); returns how many (at most (end - from) / 8: the caller's room).
function scan(): number[] {
  const [from, end, q0, q1, maxH, out] = [0, 1, 2, 3, 4, 5];
  const [p, n, h, o] = [6, 7, 8, 9];
  const q = 10;
  const locals = vec([[4, I32], [1, I64]]);
  const body = code(
    op.get(q0), i64.extendU, op.get(q1), i64.extendU, i64.const(32), i64.shl, i64.or, op.set(q),
    op.i32(0), op.set(n), op.get(from), op.set(p),
    sketchLoop(p, end, q, maxH, code(
      op.get(out), op.get(n), op.i32(3), i32.shl, op.add, op.tee(o), op.get(p), i32.store(0),
      op.get(o), op.get(h), i32.store(4),
      op.get(n), op.i32(1), op.add, op.set(n),
    ), h),
    op.get(n),
  );
  return [...locals, ...body, ...op.end];
}

// collide(q, nq, t, tend, maxH, out, cap) -> n: for each query sketch i < nq (8 bytes each at q) and each target
// sketch at t <= tp < tend, when popcount(q[i] ^ *tp) <= maxH the pair (i, (tp - t) / 8) is written at out (two
// int32s) while fewer than cap pairs were written; returns how many pairs there are (possibly more than cap).
function collide(): number[] {
  const [q, nq, t, tend, maxH, out, cap] = [0, 1, 2, 3, 4, 5, 6];
  const [qi, tp, n, o, qv] = [7, 8, 9, 10, 11];
  const locals = vec([[4, I32], [1, I64]]);
  const body = code(
    op.i32(0), op.set(n),
    forLoop(qi, op.i32(0), nq, 1, code(
      op.get(q), op.get(qi), op.i32(8), op.mul, op.add, i64.load(0), op.set(qv),
      op.get(t), op.set(tp),
      sketchLoop(tp, tend, qv, maxH, code(
        op.get(n), op.get(cap), op.ltS,
        i32.if,
        op.get(out), op.get(n), op.i32(8), op.mul, op.add, op.set(o),
        op.get(o), op.get(qi), i32.store(0),
        op.get(o), op.get(tp), op.get(t), op.sub, op.i32(3), i32.shrU, i32.store(4),
        op.end,
        op.get(n), op.i32(1), op.add, op.set(n),
      )),
    )),
    op.get(n),
  );
  return [...locals, ...body, ...op.end];
}

// ratio(qv, tv, cand, n, seen, far, out) -> runs: qv, tv the query's and target's RootSIFT (128 float32 each), cand
// n (query kp, target kp) int32 pairs grouped by query keypoint, seen one int32 per target keypoint (-1 on entry).
// For each run of pairs of one query keypoint, a target keypoint met again in the run is skipped; d1, t1 the nearest
// and d2 the second nearest distance (d2 starting at far), each pair measured only below d2 (distBelow); a run with a
// nearest writes (qi, t1, d1, d2) at out (int32, int32, float64, float64: 24 bytes). Returns how many runs it wrote.
function ratio(): number[] {
  const [qv, tv, cand, n, seen, far, out] = [0, 1, 2, 3, 4, 5, 6];
  const [k, qi, ti, t1, a, b, j, cnt, o] = [7, 8, 9, 10, 11, 12, 13, 14, 15];
  const [d1, d2, d, lim, s] = [16, 17, 18, 19, 20];
  const acc = 21;
  const locals = vec([[9, I32], [5, F64], [1, V128]]);
  const pairAt = (off: number) => code(op.get(cand), op.get(k), op.i32(3), i32.shl, op.add, op.load32At(off));
  // 8 lanes-of-4 of (a - b)^2 at byte offset j, summed into acc
  const sq = (x: number) => code(op.get(a), op.get(j), op.add, op.vloadAt(x), op.get(b), op.get(j), op.add, op.vloadAt(x), op.fsub, op.tee(acc), op.get(acc), op.fmul);
  const chunk = code(
    sq(0), sq(16), op.fadd, sq(32), op.fadd, sq(48), op.fadd, sq(64), op.fadd, sq(80), op.fadd, sq(96), op.fadd, sq(112), op.fadd, op.set(acc),
    op.get(s),
    op.get(acc), op.f32lane(0), op.get(acc), op.f32lane(1), op.f32add, op.get(acc), op.f32lane(2), op.f32add, op.get(acc), op.f32lane(3), op.f32add,
    f64.promote, f64.add, op.set(s),
  );
  const body = code(
    op.i32(0), op.set(cnt), op.i32(0), op.set(k),
    op.block, op.loop, // runs
    op.get(k), op.get(n), op.geS, op.brIf(1),
    pairAt(0), op.set(qi),
    f64.const(Infinity), op.set(d1), op.get(far), op.set(d2), op.i32(-1), op.set(t1),
    op.get(qv), op.get(qi), op.i32(9), i32.shl, op.add, op.set(a),
    op.block, op.loop, // the run's pairs
    op.get(k), op.get(n), op.geS, op.brIf(1),
    pairAt(0), op.get(qi), i32.ne, op.brIf(1),
    pairAt(4), op.set(ti),
    op.get(k), op.i32(1), op.add, op.set(k),
    op.get(seen), op.get(ti), op.i32(2), i32.shl, op.add, op.load32, op.get(qi), i32.eq, op.brIf(0),
    op.get(seen), op.get(ti), op.i32(2), i32.shl, op.add, op.get(qi), i32.store(0),
    op.get(tv), op.get(ti), op.i32(9), i32.shl, op.add, op.set(b),
    // d = distBelow(a, b, d2)
    f64.const(Infinity), op.set(d),
    op.get(d2), op.get(d2), f64.mul, f64.const(1e-4), f64.add, op.set(lim),
    f64.const(0), op.set(s),
    op.block, // leaves with d = Infinity when the partial sum passes lim
    op.i32(0), op.set(j),
    op.loop,
    chunk,
    op.get(s), op.get(lim), f64.gt, op.brIf(1),
    op.get(j), op.i32(128), op.add, op.tee(j), op.i32(512), op.ltS, op.brIf(0),
    op.end,
    f64.const(0), op.set(s),
    op.i32(0), op.set(j),
    op.loop,
    op.get(s), op.get(a), op.get(j), op.add, op.f32load(0), f64.promote, op.get(b), op.get(j), op.add, op.f32load(0), f64.promote, f64.mul, f64.add, op.set(s),
    op.get(j), op.i32(4), op.add, op.tee(j), op.i32(512), op.ltS, op.brIf(0),
    op.end,
    f64.const(2), f64.const(2), op.get(s), f64.mul, f64.sub, f64.const(0), f64.max, f64.sqrt, op.set(d),
    op.end,
    // the nearest two
    op.get(d), op.get(d1), f64.lt,
    i32.if,
    op.get(d2), op.get(d1), f64.min, op.set(d2), op.get(d), op.set(d1), op.get(ti), op.set(t1),
    i32.else,
    op.get(d), op.get(d2), f64.lt,
    i32.if, op.get(d), op.set(d2), op.end,
    op.end,
    op.br(0),
    op.end, op.end,
    // the run's nearest
    op.get(t1), op.i32(0), op.geS,
    i32.if,
    op.get(out), op.get(cnt), op.i32(24), op.mul, op.add, op.set(o),
    op.get(o), op.get(qi), i32.store(0),
    op.get(o), op.get(t1), i32.store(4),
    op.get(o), op.get(d1), f64.store(8),
    op.get(o), op.get(d2), f64.store(16),
    op.get(cnt), op.i32(1), op.add, op.set(cnt),
    op.end,
    op.br(0),
    op.end, op.end,
    op.get(cnt),
  );
  return [...locals, ...body, ...op.end];
}

interface Kernel {
  memory: WasmMemory;
  collide(q: number, nq: number, t: number, tend: number, maxH: number, out: number, cap: number): number;
  ratio(qv: number, tv: number, cand: number, n: number, seen: number, far: number, out: number): number;
  project(v: number, n: number, mean: number, signs: number, rounds: number, out: number): void;
}

let cached: Kernel | null | undefined;

function kernel(): Kernel | null {
  if (cached !== undefined) return cached;
  try {
    const memory = new WebAssembly.Memory({ initial: 16 });
    const inst = new WebAssembly.Instance(new WebAssembly.Module(assemble([
      ['collide', i32Func(7, true), collide()],
      ['ratio', funcType([I32, I32, I32, I32, I32, F64, I32], [I32]), ratio()],
      ['project', i32Func(6), projectKernel()],
    ])), { env: { memory } });
    cached = { memory, collide: inst.exports.collide as Kernel['collide'], ratio: inst.exports.ratio as Kernel['ratio'], project: inst.exports.project as Kernel['project'] };
  } catch {
    cached = null;
  }
  return cached;
}

const PAGE = 65536;
/** The memory's first bytes hold a query's RootSIFT vectors (up to MAX_KP_PER_IMAGE) for the ratio kernel, kept from
 *  one call to the next while the query is the same array; everything else follows. */
const Q_KEYPOINTS = 2048;
const Q_BYTES = Q_KEYPOINTS * 512;
let heldQuery: Float32Array | null = null;
let heldCount = 0;

/** (query kp, target kp) pairs whose 64-bit sketches (two uint32 words each) are within maxH, grouped by query
 *  keypoint, target keypoints ascending; null when this runtime has no WebAssembly (the caller loops in JS). */
export function wasmSketchCollisions(qs: Uint32Array, nq: number, ts: Uint32Array, maxH: number): Int32Array | null {
  const k = kernel();
  if (!k) return null;
  const nt = ts.length >>> 1;
  const qBytes = nq * 8;
  const tBytes = nt * 8;
  let cap = Math.max(4096, nq * 8);
  for (;;) {
    room(k, Q_BYTES + qBytes + tBytes + cap * 8);
    const words = new Uint32Array(k.memory.buffer);
    words.set(qs.subarray(0, 2 * nq), Q_BYTES / 4);
    words.set(ts.subarray(0, 2 * nt), (Q_BYTES + qBytes) / 4);
    const out = Q_BYTES + qBytes + tBytes;
    const n = k.collide(Q_BYTES, nq, Q_BYTES + qBytes, Q_BYTES + qBytes + tBytes, maxH, out, cap);
    if (n <= cap) return new Int32Array(k.memory.buffer, out, 2 * n).slice();
    cap = n;
  }
}

/** Room for `bytes` in the kernels' memory (grown when short); its words after. */
function room(k: Kernel, bytes: number): void {
  const have = k.memory.buffer.byteLength;
  if (bytes > have) k.memory.grow(Math.ceil((bytes - have) / PAGE));
}

/** Each query keypoint's nearest and second nearest target keypoint among its pairs (cand: (query kp, target kp)
 *  grouped by query keypoint), the second starting at farDistance: (qi, ti, d1, d2) per query keypoint with a
 *  nearest, in cand's order; null when this runtime has no WebAssembly. */
export function wasmNearestTwo(qv: Float32Array, nq: number, tv: Float32Array, nt: number, cand: Int32Array | number[], farDistance: number): { qi: Int32Array; ti: Int32Array; d1: Float64Array; d2: Float64Array } | null {
  const k = kernel();
  if (!k || nq > Q_KEYPOINTS) return null;
  const n = cand.length >>> 1;
  const tvAt = Q_BYTES;
  const candAt = tvAt + nt * 512;
  const seenAt = candAt + n * 8;
  const outAt = (seenAt + nt * 4 + 7) & ~7;
  room(k, outAt + Math.min(nq, n) * 24);
  const buf = k.memory.buffer;
  // the query's vectors stay in place from one image's call to the next (a re-match verifies several)
  if (heldQuery !== qv || heldCount < nq) {
    new Float32Array(buf, 0, nq * 128).set(qv.subarray(0, nq * 128));
    heldQuery = qv;
    heldCount = nq;
  }
  new Float32Array(buf, tvAt, nt * 128).set(tv.subarray(0, nt * 128));
  new Int32Array(buf, candAt, 2 * n).set(cand);
  new Int32Array(buf, seenAt, nt).fill(-1);
  const runs = k.ratio(0, tvAt, candAt, n, seenAt, farDistance, outAt);
  const qi = new Int32Array(runs), ti = new Int32Array(runs), d1 = new Float64Array(runs), d2 = new Float64Array(runs);
  const w = new Int32Array(buf, outAt, runs * 6);
  const f = new Float64Array(buf, outAt, runs * 3);
  for (let r = 0; r < runs; r++) {
    qi[r] = w[6 * r]!;
    ti[r] = w[6 * r + 1]!;
    d1[r] = f[3 * r + 1]!;
    d2[r] = f[3 * r + 2]!;
  }
  return { qi, ti, d1, d2 };
}

/** lsh.ts project by the kernel: count vectors (128 float32 each) centred on `mean`, times each round's signs, through
 *  the Walsh-Hadamard transform (count * rounds * 128 float32); null when this runtime has no WebAssembly. Placed after
 *  the query vectors the ratio kernel keeps. */
export function wasmProject(vecs: Float32Array, count: number, signs: Float32Array, mean: Float32Array): Float32Array | null {
  const k = kernel();
  if (!k) return null;
  const rounds = signs.length / 128;
  const meanAt = Q_BYTES;
  const signsAt = meanAt + 512;
  const vAt = signsAt + rounds * 512;
  const outAt = vAt + count * 512;
  room(k, outAt + count * rounds * 512);
  const buf = k.memory.buffer;
  new Float32Array(buf, meanAt, 128).set(mean);
  new Float32Array(buf, signsAt, rounds * 128).set(signs);
  new Float32Array(buf, vAt, count * 128).set(vecs.subarray(0, count * 128));
  k.project(vAt, count, meanAt, signsAt, rounds, outAt);
  return new Float32Array(buf, outAt, count * rounds * 128).slice();
}

/** A segment part's scan kernel: its instance over the part's memory, and the room for hits after the part. */
export interface PartScan {
  scan(from: number, end: number, q0: number, q1: number, maxH: number, out: number): number;
  /** Byte offset of the hits' room, and how many entries one call may scan (each can be a hit). */
  out: number;
  cap: number;
  /** The hits: (byte offset of the sketch, sketch distance) pairs. */
  hits: Int32Array;
}

/** Hits one call of the scan kernel has room for (a bucket is scanned in calls of at most this many entries). */
const PART_HITS = 4096;
let partModule: object | null | undefined;
const partScans = new WeakMap<ArrayBuffer, PartScan>();
let partsInWasm = true;

/** Tests: parts allocated from now on in plain memory (false; scanned by the JavaScript loop) or in WebAssembly. */
export function partsInWebAssembly(on: boolean): void {
  partsInWasm = on;
}

/** A segment part of `words` uint32 words (zeroed), in a WebAssembly memory of its own with the scan kernel over it
 *  (partScan), or a plain array when this runtime has no WebAssembly or no more memories can be made (the vote scan
 *  then loops in JavaScript: the same hits). Its memory is freed with it: each part is its own. */
export function allocPart(words: number): Uint32Array {
  if (partsInWasm && words > 0) {
    try {
      if (partModule === undefined) partModule = new WebAssembly.Module(assemble([['scan', i32Func(6, true), scan()]]));
      if (partModule) {
        const out = (words * 4 + 7) & ~7;
        const memory = new WebAssembly.Memory({ initial: Math.ceil((out + PART_HITS * 8) / PAGE) });
        const inst = new WebAssembly.Instance(partModule, { env: { memory } });
        const cap = Math.floor((memory.buffer.byteLength - out) / 8);
        partScans.set(memory.buffer, { scan: inst.exports.scan as PartScan['scan'], out, cap, hits: new Int32Array(memory.buffer, out, 2 * cap) });
        return new Uint32Array(memory.buffer, 0, words);
      }
    } catch {
      partModule ??= null; // no WebAssembly; a memory that could not be made leaves the module for the next part
    }
  }
  return new Uint32Array(words);
}

/** The scan kernel of a part allocPart placed in WebAssembly (undefined: a plain array). */
export function partScan(part: Uint32Array): PartScan | undefined {
  return partScans.get(part.buffer as ArrayBuffer);
}

/** Bytes a part holds (its whole memory when in WebAssembly: the pages' rounding and the hits' room included). */
export function partBytes(part: Uint32Array): number {
  return partScans.has(part.buffer as ArrayBuffer) ? part.buffer.byteLength : part.byteLength;
}
