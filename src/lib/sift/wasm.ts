// WebAssembly SIMD kernels for the SIFT hot loops: separable Gaussian blur passes, image subtraction, gradients,
// the x2 upsampling, the DoG extremum prefilter, and the orientation and descriptor histograms (their sample
// loops and the descriptor's normalisation). Scalar JavaScript ran these 2-5x slower than OpenCV's SIMD code. The module is
// small, so it is assembled here from its instructions (no toolchain, no binary blob in the repo): see KERNELS
// below for the code, written as a readable list of WebAssembly operations.
//
// Memory layout is managed by the caller (sift.ts) with a bump allocator over one growable memory.

import { I32, V128, WebAssembly, assemble, code, forLoop, i32Func, op, uleb, vec, type WasmMemory } from '../../util/wasm-asm.js';

// --- kernels ---------------------------------------------------------------------------------------------------------
// vconv(src, dst, dstride, xend, h, K, r, ROWS): vertical pass. ROWS[y + r] (int32, bytes) is the byte offset of
// source row reflect101(y) for y in [-r, h + r). K holds r+1 splatted f32x4 kernel taps. For each row y and each
// 16-byte column chunk x < xend: dst[y*dstride + x] = K0*S(y) + sum_t Kt*(S(y-t) + S(y+t)).
function vconv(): number[] {
  const [src, dst, dstride, xend, h, K, r, ROWS] = [0, 1, 2, 3, 4, 5, 6, 7];
  const [y, x, t, rowp, dp, acc, rp1] = [8, 9, 10, 11, 12, 13, 14];
  const locals = vec([[5, I32], [1, V128], [1, I32]]);
  const body = forLoop(y, op.i32(0), h, 1, code(
    op.get(ROWS), op.get(y), op.get(r), op.add, op.i32(4), op.mul, op.add, op.set(rowp),
    op.get(dst), op.get(y), op.get(dstride), op.mul, op.add, op.set(dp),
    op.get(r), op.i32(1), op.add, op.set(rp1),
    forLoop(x, op.i32(0), xend, 16, code(
      // acc = K0 * load(src + ROWS[y] + x)
      op.get(K), op.vload,
      op.get(src), op.get(rowp), op.load32, op.add, op.get(x), op.add, op.vload,
      op.fmul, op.set(acc),
      forLoop(t, op.i32(1), rp1, 1, code(
        op.get(acc),
        op.get(K), op.get(t), op.i32(16), op.mul, op.add, op.vload,
        op.get(src), op.get(rowp), op.get(t), op.i32(4), op.mul, op.sub, op.load32, op.add, op.get(x), op.add, op.vload,
        op.get(src), op.get(rowp), op.get(t), op.i32(4), op.mul, op.add, op.load32, op.add, op.get(x), op.add, op.vload,
        op.fadd, op.fmul, op.fadd, op.set(acc),
      )),
      op.get(dp), op.get(x), op.add, op.get(acc), op.vstore,
    )),
  ));
  return [...locals, ...body, ...op.end];
}

// hconv(src, sstride, dst, dstride, xend, h, K, r): horizontal pass over a source whose rows are padded by r
// floats on both sides (already reflected). dst[y][x] = K0*s[x + r] + sum_t Kt*(s[x + r - t] + s[x + r + t]).
function hconv(): number[] {
  const [src, sstride, dst, dstride, xend, h, K, r] = [0, 1, 2, 3, 4, 5, 6, 7];
  const [y, x, t, c, dp, rp1, acc] = [8, 9, 10, 11, 12, 13, 14];
  const locals = vec([[6, I32], [1, V128]]);
  const body = forLoop(y, op.i32(0), h, 1, code(
    op.get(dst), op.get(y), op.get(dstride), op.mul, op.add, op.set(dp),
    op.get(r), op.i32(1), op.add, op.set(rp1),
    forLoop(x, op.i32(0), xend, 16, code(
      // c = src + y*sstride + r*4 + x (address of the centre tap)
      op.get(src), op.get(y), op.get(sstride), op.mul, op.add, op.get(r), op.i32(4), op.mul, op.add, op.get(x), op.add, op.set(c),
      op.get(K), op.vload, op.get(c), op.vload, op.fmul, op.set(acc),
      forLoop(t, op.i32(1), rp1, 1, code(
        op.get(acc),
        op.get(K), op.get(t), op.i32(16), op.mul, op.add, op.vload,
        op.get(c), op.get(t), op.i32(4), op.mul, op.sub, op.vload,
        op.get(c), op.get(t), op.i32(4), op.mul, op.add, op.vload,
        op.fadd, op.fmul, op.fadd, op.set(acc),
      )),
      op.get(dp), op.get(x), op.add, op.get(acc), op.vstore,
    )),
  ));
  return [...locals, ...body, ...op.end];
}

// vsub(a, b, dst, nbytes): dst = a - b, 16 bytes at a time.
function vsub(): number[] {
  const [a, b, dst, n] = [0, 1, 2, 3];
  const i = 4;
  const locals = vec([[1, I32]]);
  const body = forLoop(i, op.i32(0), n, 16, code(
    op.get(dst), op.get(i), op.add,
    op.get(a), op.get(i), op.add, op.vload,
    op.get(b), op.get(i), op.add, op.vload,
    op.fsub, op.vstore,
  ));
  return [...locals, ...body, ...op.end];
}

// grad(src, mag, ang, from, to): for byte offsets i in [from, to) step 16 (pixels of a w-wide image, `w4` = w*4
// bytes per row): dx = s[i+1] - s[i-1], dy = s[i-w] - s[i+w]; mag = sqrt(dx^2 + dy^2); ang = OpenCV's fastAtan2(dy, dx)
// in degrees [0, 360]. Pixels in the first and last column get meaningless values; callers never read them.
const ATAN = [0.9997878412794807, -0.3258083974640975, 0.1555786518463281, -0.04432655554792128].map((v) => v * (180 / Math.PI));
function grad(): number[] {
  const [src, mag, ang, from, to, w4] = [0, 1, 2, 3, 4, 5];
  const i = 6;
  const [dx, dy, ax, ay, c, c2, a] = [7, 8, 9, 10, 11, 12, 13];
  const locals = vec([[1, I32], [7, V128]]);
  const at = (delta: number[]) => code(op.get(src), op.get(i), op.add, delta, op.vload);
  const body = forLoop(i, op.get(from), to, 16, code(
    at(code(op.i32(4), op.add)), at(code(op.i32(4), op.sub)), op.fsub, op.set(dx),
    at(code(op.get(w4), op.sub)), at(code(op.get(w4), op.add)), op.fsub, op.set(dy),
    // mag
    op.get(mag), op.get(i), op.add,
    op.get(dx), op.get(dx), op.fmul, op.get(dy), op.get(dy), op.fmul, op.fadd, op.fsqrt,
    op.vstore,
    // c = min(ax, ay) / (max(ax, ay) + eps)
    op.get(dx), op.fabs, op.set(ax), op.get(dy), op.fabs, op.set(ay),
    op.get(ax), op.get(ay), op.fpmin,
    op.get(ax), op.get(ay), op.fpmax, op.fsplat(2.220446049250313e-16), op.fadd,
    op.fdiv, op.tee(c), op.get(c), op.fmul, op.set(c2),
    // a = (((p7*c2 + p5)*c2 + p3)*c2 + p1)*c
    op.fsplat(ATAN[3]!), op.get(c2), op.fmul, op.fsplat(ATAN[2]!), op.fadd, op.get(c2), op.fmul,
    op.fsplat(ATAN[1]!), op.fadd, op.get(c2), op.fmul, op.fsplat(ATAN[0]!), op.fadd, op.get(c), op.fmul, op.set(a),
    // ay > ax: a = 90 - a
    op.fsplat(90), op.get(a), op.fsub, op.get(a), op.get(ay), op.get(ax), op.fgt, op.bitselect, op.set(a),
    // dx < 0: a = 180 - a
    op.fsplat(180), op.get(a), op.fsub, op.get(a), op.get(dx), op.fsplat(0), op.flt, op.bitselect, op.set(a),
    // dy < 0: a = 360 - a; store
    op.get(ang), op.get(i), op.add,
    op.fsplat(360), op.get(a), op.fsub, op.get(a), op.get(dy), op.fsplat(0), op.flt, op.bitselect,
    op.vstore,
  ));
  return [...locals, ...body, ...op.end];
}


// up2(src, dst, w, h, tmp): OpenCV's INTER_LINEAR x2 upsampling (half-pixel centres, clamped borders), whose
// weights for an exact x2 are constant: out[2x] = 0.25 s[x-1] + 0.75 s[x], out[2x+1] = 0.75 s[x] + 0.25 s[x+1],
// then the same down the columns. Rows first into tmp (h rows of 2w floats), then the columns into dst (2h rows).
// Each row's last 4-float chunk may spill a few floats into the next row, which is written after it (the
// caller leaves slack after the last row); the border pixels are stored last. Exact in f32 for 8-bit input.
function up2(): number[] {
  const [src, dst, w, h, tmp] = [0, 1, 2, 3, 4];
  const [y, x, rs, rt, w4, W4, p0, p1, p2, d0, e] = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
  const [b, ev, od] = [16, 17, 18];
  const locals = vec([[11, I32], [3, V128]]);
  const q = (v: number) => op.fsplat(v);
  const horiz = forLoop(y, op.i32(0), h, 1, code(
    op.get(src), op.get(y), op.get(w4), op.mul, op.add, op.set(rs),
    op.get(tmp), op.get(y), op.get(W4), op.mul, op.add, op.set(rt),
    forLoop(x, op.i32(0), w4, 16, code(
      op.get(rs), op.get(x), op.add, op.vload, op.set(b),
      op.get(rs), op.get(x), op.add, op.i32(4), op.sub, op.vload, q(0.25), op.fmul, op.get(b), q(0.75), op.fmul, op.fadd, op.set(ev),
      op.get(rs), op.get(x), op.add, op.vloadAt(4), q(0.25), op.fmul, op.get(b), q(0.75), op.fmul, op.fadd, op.set(od),
      op.get(rt), op.get(x), op.i32(2), op.mul, op.add, op.tee(e),
      op.get(ev), op.get(od), op.shuffle32([0, 4, 1, 5]), op.vstore,
      op.get(e), op.get(ev), op.get(od), op.shuffle32([2, 6, 3, 7]), op.vstoreAt(16),
    )),
    op.get(rt), op.get(rs), op.f32load(0), op.f32store(0),
    op.get(rt), op.get(W4), op.add, op.i32(4), op.sub, op.get(rs), op.get(w4), op.add, op.i32(4), op.sub, op.f32load(0), op.f32store(0),
  ));
  // Column pass: row 2y from rows y-1, y of tmp; row 2y+1 from rows y, y+1 (clamped). Row 2y+1 after row 2y, so
  // that it overwrites the spill of row 2y's last chunk.
  const vert = forLoop(y, op.i32(0), h, 1, code(
    op.get(tmp), op.get(y), op.get(W4), op.mul, op.add, op.set(p1),
    op.get(p1), op.get(W4), op.sub, op.get(p1), op.get(y), op.i32(0), op.gtS, [0x1b], op.set(p0), // select
    op.get(p1), op.get(W4), op.add, op.get(p1), op.get(y), op.i32(1), op.add, op.get(h), op.ltS, [0x1b], op.set(p2),
    op.get(dst), op.get(y), op.i32(2), op.mul, op.get(W4), op.mul, op.add, op.set(d0),
    forLoop(x, op.i32(0), W4, 16, code(
      op.get(d0), op.get(x), op.add,
      op.get(p0), op.get(x), op.add, op.vload, q(0.25), op.fmul, op.get(p1), op.get(x), op.add, op.vload, q(0.75), op.fmul, op.fadd,
      op.vstore,
    )),
    op.get(d0), op.get(W4), op.add, op.set(d0),
    forLoop(x, op.i32(0), W4, 16, code(
      op.get(d0), op.get(x), op.add,
      op.get(p1), op.get(x), op.add, op.vload, q(0.75), op.fmul, op.get(p2), op.get(x), op.add, op.vload, q(0.25), op.fmul, op.fadd,
      op.vstore,
    )),
  ));
  return [...locals, ...op.get(w), ...op.i32(4), ...op.mul, ...op.set(w4), ...op.get(w4), ...op.i32(2), ...op.mul, ...op.set(W4), ...horiz, ...vert, ...op.end];
}

// cands(prv, cur, nxt, out, from, to, w4, thr) -> count: the pixels of cur (byte offsets i in [from, to), step 16)
// that may be DoG extrema by OpenCV's test: v > thr and v >= its 8 same-layer neighbours and the same pixel of prv
// and nxt, or v < -thr and v <= all of them. Their pixel indexes (i / 4) go to out (int32), in order; the caller
// runs the exact 26-neighbour test on these few (most 4-pixel chunks hold none and cost no branch per pixel).
function cands(): number[] {
  const [prv, cur, nxt, out, from, to, w4, thr] = [0, 1, 2, 3, 4, 5, 6, 7];
  const [i, cnt, bits] = [8, 9, 10];
  const [v, t, nt, mx, mn, x, m] = [11, 12, 13, 14, 15, 16, 17];
  const locals = vec([[3, I32], [7, V128]]);
  const nb: number[][] = [];
  const ld = (img: number, delta: number[]) => code(op.get(img), op.get(i), op.add, delta, op.vload);
  const w = op.get(w4);
  for (const d of [code(op.i32(4), op.sub), code(op.i32(4), op.add), code(w, op.sub), code(w, op.add),
    code(w, op.sub, op.i32(4), op.sub), code(w, op.sub, op.i32(4), op.add), code(w, op.add, op.i32(4), op.sub), code(w, op.add, op.i32(4), op.add)]) nb.push(ld(cur, d));
  nb.push(ld(prv, []), ld(nxt, []));
  const minmax: number[][] = [code(nb[0]!, op.tee(mx), op.set(mn))];
  for (const n of nb.slice(1)) minmax.push(code(n, op.tee(x), op.get(mx), op.fpmax, op.set(mx), op.get(x), op.get(mn), op.fpmin, op.set(mn)));
  const emit: number[][] = [];
  for (let lane = 0; lane < 4; lane++) {
    emit.push(code(
      op.get(bits), op.i32(1 << lane), op.i32and, [0x04, 0x40], // if
      op.get(out), op.get(cnt), op.i32(4), op.mul, op.add, op.get(i), op.i32(2), [0x76], op.i32(lane), op.add, [0x36, 2, 0], // i32.store
      op.get(cnt), op.i32(1), op.add, op.set(cnt),
      op.end,
    ));
  }
  const body = code(
    op.get(thr), op.i32ToF32, op.f32splat, op.set(t),
    op.vconst(0), op.get(t), op.fsub, op.set(nt),
    op.i32(0), op.set(cnt),
    forLoop(i, op.get(from), to, 16, code(
      ld(cur, []), op.set(v),
      ...minmax,
      op.get(v), op.get(t), op.fgt, op.get(v), op.get(mx), op.fge, op.vand,
      op.get(v), op.get(nt), op.flt, op.get(v), op.get(mn), op.fle, op.vand,
      op.vor, op.tee(m),
      [0xfd, ...uleb(83)], // v128.any_true
      [0x04, 0x40], // if
      op.get(m), [0xfd, ...uleb(164)], op.set(bits), // i32x4.bitmask
      ...emit,
      op.end,
    )),
    op.get(cnt),
  );
  return [...locals, ...body, ...op.end];
}

// desc(tab, nrows, hist, magBase, angDelta, exBase): the trilinear accumulation of SIFT descriptors (OpenCV's
// calcSIFTDescriptor inner loop), four samples at a time. The caller plans the samples (sift.ts, descriptorRows):
// tab holds f32 sinT, cosT, ori, binsPerDeg, then `nrows` rows of 8 words from tab+16: i32 idx (pixel index of the
// run's first sample in the gradient images), i32 n (samples in the run), i32 ex (index of its first column weight
// in the f32 table at exBase), f32 wi (the row's weight), f32 j0 (column offset of the first sample), f32 rb0, cb0
// (bin coordinates at column offset 0). For sample j of a row: rbin = j*sinT + rb0, cbin = j*cosT + cb0,
// obin = (ang - ori)*binsPerDeg, mag = m*wi*ex; its eight trilinear shares go to hist (f32, OpenCV's
// (d+2) x (d+2) x (n+2) layout at byte address hist, in ACC_COPIES copies: see the scatter below). The lanes past a run's end get weight 0 and orientation 0
// (what they read there may be stale memory; their addresses stay within a few cells of the histogram: the caller
// pads it). magBase: byte address of the magnitude image;
// the orientation image is at magBase + angDelta.
const DESC_NB = 8;
const MAGIC = 8388608; // 2^23
const MAGIC_BITS = 0x4b000000;
/** Histogram copies the accumulation kernels use (one per SIMD lane), and their spacing in bytes. */
export const ACC_COPIES = 4;
export const DESC_COPY_BYTES = 4 * (360 + 512);
export const ORI_COPY_BYTES = 4 * 48;
const DESC_CELL = (DESC_NB + 2) * 4; // bytes per (row, column) cell
const DESC_ROW = (4 + 2) * DESC_CELL; // bytes per histogram row (d = 4)
function desc(): number[] {
  const [tab, nrows, hist, magBase, angDelta, exBase] = [0, 1, 2, 3, 4, 5];
  const [row, p, magA, n, exA, a, q] = [6, 7, 8, 9, 10, 11, 12];
  const [sinv, cosv, oriv, bprv, wiv, jv, rb0v, cb0v, kv, nv, mag, rbin, cbin, obin, r0, c0, o0, base] =
    [13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30];
  const [vR1, vR0, vRC11, vRC10, vRC01, vRC00] = [31, 32, 33, 34, 35, 36];
  const v = [37, 38, 39, 40, 41, 42, 43, 44]; // v[rco] for the bits r, c, o
  const q4 = 45; // lanes inside the run (all ones) or past its end (0)
  const locals = vec([[7, I32], [41, V128]]);
  const splatAt = (off: number) => code(op.get(tab), op.f32load(off), op.f32splat);
  const fl = (x: number, xf: number) => code(op.get(x), op.ffloor, op.set(xf), op.get(x), op.get(xf), op.fsub, op.set(x)); // xf = floor(x), x -= xf
  const split = (src: number, f: number, hi: number, lo: number) => code(op.get(src), op.get(f), op.fmul, op.set(hi), op.get(src), op.get(hi), op.fsub, op.set(lo));
  // The eight shares of a sample go to four (row, column) cells, two adjacent orientation bins each: one 64-bit
  // read-add-write per cell. Lane L (every fourth sample) has its own copy of the histogram (ACC_COPIES, at
  // DESC_COPY_BYTES apart) so that neighbouring samples, which mostly hit the same bins, do not wait on each
  // other's stores; the caller sums the copies.
  const [lo, hi] = [[46, 47, 48, 49], [50, 51, 52, 53]]; // per cell: (o0, o1) shares of samples 0,1 | 2,3
  const cellOff = [0, DESC_CELL, DESC_ROW, DESC_ROW + DESC_CELL];
  const scatter: number[][] = [];
  for (let cell = 0; cell < 4; cell++) {
    scatter.push(code(op.get(v[2 * cell]!), op.get(v[2 * cell + 1]!), op.shuffle32([0, 4, 1, 5]), op.set(lo[cell]!)));
    scatter.push(code(op.get(v[2 * cell]!), op.get(v[2 * cell + 1]!), op.shuffle32([2, 6, 3, 7]), op.set(hi[cell]!)));
  }
  for (let lane = 0; lane < 4; lane++) {
    scatter.push(code(op.get(base), op.i32lane(lane), op.set(q)));
    for (let cell = 0; cell < 4; cell++) {
      const off = lane * DESC_COPY_BYTES + cellOff[cell]!;
      scatter.push(code(op.get(q), op.get(q), op.load64splat(off), op.get((lane < 2 ? lo : hi)[cell]!), op.fadd, op.store64lane(off, lane & 1)));
    }
  }
  const at = (addr: number[]) => code(addr, op.get(a), op.add, op.vload);
  const inner = code(
    op.get(jv), op.get(sinv), op.fmul, op.get(rb0v), op.fadd, op.set(rbin),
    op.get(jv), op.get(cosv), op.fmul, op.get(cb0v), op.fadd, op.set(cbin),
    at(op.get(magA)), op.get(wiv), op.fmul, at(op.get(exA)), op.fmul,
    op.get(kv), op.get(nv), op.iltS, op.tee(q4), op.vand, op.set(mag),
    at(code(op.get(magA), op.get(angDelta), op.add)), op.get(oriv), op.fsub, op.get(bprv), op.fmul, op.get(q4), op.vand, op.set(obin),
    fl(rbin, r0), fl(cbin, c0), fl(obin, o0),
    // The bin indexes are small integers held in floats: adding 2^23 puts one in the low mantissa bits, so the
    // float's bits minus those of 2^23 are the integer (cheaper than the saturating conversion).
    // cell = (r0+1)*(d+2)*(n+2) + (c0+1)*(n+2) floats; o = (o0 + n) mod n; base = hist + 4*(cell + o). Lanes past
    // the run's end (which may hold any r0, c0) get base = hist.
    op.get(r0), op.fsplat(DESC_ROW / 4), op.fmul, op.get(c0), op.fsplat(DESC_CELL / 4), op.fmul, op.fadd,
    op.fsplat(MAGIC + (DESC_ROW + DESC_CELL) / 4), op.fadd, op.vconstI([MAGIC_BITS, MAGIC_BITS, MAGIC_BITS, MAGIC_BITS]), op.isub,
    op.get(o0), op.fsplat(MAGIC + DESC_NB), op.fadd, op.vconstI([MAGIC_BITS, MAGIC_BITS, MAGIC_BITS, MAGIC_BITS]), op.isub,
    op.vconstI([DESC_NB - 1, DESC_NB - 1, DESC_NB - 1, DESC_NB - 1]), op.vand, op.iadd,
    op.i32(2), op.ishl, op.get(q4), op.vand,
    op.get(hist), op.i32splat, op.iadd, op.set(base),
    split(mag, rbin, vR1, vR0),
    split(vR1, cbin, vRC11, vRC10), split(vR0, cbin, vRC01, vRC00),
    split(vRC11, obin, v[7]!, v[6]!), split(vRC10, obin, v[5]!, v[4]!),
    split(vRC01, obin, v[3]!, v[2]!), split(vRC00, obin, v[1]!, v[0]!),
    ...scatter,
    op.get(jv), op.fsplat(4), op.fadd, op.set(jv),
    op.get(kv), op.vconstI([4, 4, 4, 4]), op.iadd, op.set(kv),
  );
  const body = code(
    splatAt(0), op.set(sinv), splatAt(4), op.set(cosv), splatAt(8), op.set(oriv), splatAt(12), op.set(bprv),
    forLoop(row, op.i32(0), nrows, 1, code(
      op.get(tab), op.get(row), op.i32(32), op.mul, op.add, op.set(p),
      op.get(magBase), op.get(p), op.load32At(16), op.i32(4), op.mul, op.add, op.set(magA),
      op.get(p), op.load32At(20), op.set(n),
      op.get(exBase), op.get(p), op.load32At(24), op.i32(4), op.mul, op.add, op.set(exA),
      op.get(p), op.f32load(28), op.f32splat, op.set(wiv),
      op.get(p), op.f32load(32), op.f32splat, op.vconstF([0, 1, 2, 3]), op.fadd, op.set(jv),
      op.get(p), op.f32load(36), op.f32splat, op.set(rb0v),
      op.get(p), op.f32load(40), op.f32splat, op.set(cb0v),
      op.vconstI([0, 1, 2, 3]), op.set(kv),
      op.get(n), op.i32splat, op.set(nv),
      op.get(n), op.i32(4), op.mul, op.set(n),
      forLoop(a, op.i32(0), n, 16, inner),
    )),
  );
  return [...locals, ...body, ...op.end];
}

// descfin(hist, scratch, dst): OpenCV's descriptor finalisation after desc: sums the ACC_COPIES histogram copies
// of the 4x4 core cells, folds the two wrap bins of each cell onto bins 0 and 1, normalises, clips at 0.2 of the
// norm, renormalises to 512 and rounds (to nearest even, as cvRound) with saturation to the 128 bytes at dst.
// scratch: 512 bytes for the 128 floats in between.
function descfin(): number[] {
  const [hist, scratch, dst] = [0, 1, 2];
  const [a, b, acc, thr, f] = [3, 4, 5, 6, 7];
  const nrm = 8; // f32
  const locals = vec([[5, V128], [1, 0x7d]]);
  const sumCopies = (off: number) => {
    const parts: number[][] = [op.get(hist), op.vloadAt(off)];
    for (let k = 1; k < ACC_COPIES; k++) parts.push(op.get(hist), op.vloadAt(off + k * DESC_COPY_BYTES), op.fadd);
    return code(...parts);
  };
  const hsum = (v: number) => code(op.get(v), op.f32lane(0), op.get(v), op.f32lane(1), op.f32add, op.get(v), op.f32lane(2), op.f32add, op.get(v), op.f32lane(3), op.f32add);
  const sq = (v: number) => code(op.get(acc), op.get(v), op.get(v), op.fmul, op.fadd, op.set(acc));
  const parts: number[][] = [op.vconst(0), op.set(acc)];
  for (let cell = 0; cell < 16; cell++) {
    const off = ((Math.floor(cell / 4) + 1) * 6 + (cell % 4) + 1) * DESC_CELL;
    parts.push(
      sumCopies(off + 32), op.vconstI([-1, -1, 0, 0]), op.vand, sumCopies(off), op.fadd, op.set(a), // bins 0-3 + wrap
      sumCopies(off + 16), op.set(b), // bins 4-7
      op.get(scratch), op.get(a), op.vstoreAt(cell * 32), op.get(scratch), op.get(b), op.vstoreAt(cell * 32 + 16),
      sq(a), sq(b),
    );
  }
  parts.push(hsum(acc), op.f32sqrt, op.f32splat, op.fsplat(0.2), op.fmul, op.set(thr), op.vconst(0), op.set(acc));
  for (let k = 0; k < 32; k++) {
    parts.push(op.get(scratch), op.vloadAt(k * 16), op.get(thr), op.fpmin, op.set(a), op.get(scratch), op.get(a), op.vstoreAt(k * 16), sq(a));
  }
  parts.push(
    hsum(acc), op.f32sqrt, op.f32const(1.1920929e-7), op.f32max, op.set(nrm), // max(sqrt(nrm2), FLT_EPSILON)
    op.fsplat(512), op.get(nrm), op.f32splat, op.fdiv, op.set(f),
  );
  const q = (k: number) => code(op.get(scratch), op.vloadAt(k * 16), op.get(f), op.fmul, op.fnearest, op.truncSat);
  for (let g = 0; g < 8; g++) {
    parts.push(
      op.get(dst),
      q(4 * g), q(4 * g + 1), op.narrow32to16u, q(4 * g + 2), q(4 * g + 3), op.narrow32to16u, op.narrow16to8u,
      op.vstoreAt(g * 16),
    );
  }
  return [...locals, ...parts.flat(), ...op.end];
}

// orihist(tab, nrows, hist, magBase, angDelta, exBase): OpenCV's orientation histogram accumulation (36 bins of
// 10 degrees, bin = round(ang / 10) mod 36, weight m*wi*ex), four samples at a time. Rows as for desc from tab
// (no header): i32 idx, i32 n, i32 ex, f32 wi. hist: byte address of bin 0 (f32) of the first of ACC_COPIES
// copies, ORI_COPY_BYTES apart (lane L adds to copy L).
function orihist(): number[] {
  const [tab, nrows, hist, magBase, angDelta, exBase] = [0, 1, 2, 3, 4, 5];
  const [row, p, magA, n, exA, a, q] = [6, 7, 8, 9, 10, 11, 12];
  const [wiv, kv, nv, wv, bin, m4] = [13, 14, 15, 16, 17, 18];
  const locals = vec([[7, I32], [6, V128]]);
  const at = (addr: number[]) => code(addr, op.get(a), op.add, op.vload);
  const scatter: number[][] = [];
  for (let lane = 0; lane < 4; lane++) {
    const off = lane * ORI_COPY_BYTES; // one histogram copy per lane, as in desc
    scatter.push(code(op.get(bin), op.i32lane(lane), op.tee(q), op.get(q), op.f32load(off), op.get(wv), op.f32lane(lane), op.f32add, op.f32store(off)));
  }
  const inner = code(
    op.get(wiv), at(op.get(exA)), op.fmul, at(op.get(magA)), op.fmul,
    op.get(kv), op.get(nv), op.iltS, op.tee(m4), op.vand, op.set(wv),
    // bin = round(ang / 10), to nearest even as cvRound: adding 2^23 rounds to an integer held in the low bits.
    at(code(op.get(magA), op.get(angDelta), op.add)), op.fsplat(36 / 360), op.fmul, op.fsplat(MAGIC), op.fadd,
    op.vconstI([MAGIC_BITS, MAGIC_BITS, MAGIC_BITS, MAGIC_BITS]), op.isub, op.get(m4), op.vand, op.tee(bin),
    op.get(bin), op.vconstI([36, 36, 36, 36]), op.igeS, op.vconstI([-36, -36, -36, -36]), op.vand, op.iadd,
    op.vconstI([4, 4, 4, 4]), op.imul, op.get(hist), op.i32splat, op.iadd, op.set(bin),
    ...scatter,
    op.get(kv), op.vconstI([4, 4, 4, 4]), op.iadd, op.set(kv),
  );
  const body = forLoop(row, op.i32(0), nrows, 1, code(
    op.get(tab), op.get(row), op.i32(32), op.mul, op.add, op.set(p),
    op.get(magBase), op.get(p), op.load32At(0), op.i32(4), op.mul, op.add, op.set(magA),
    op.get(p), op.load32At(4), op.set(n),
    op.get(exBase), op.get(p), op.load32At(8), op.i32(4), op.mul, op.add, op.set(exA),
    op.get(p), op.f32load(12), op.f32splat, op.set(wiv),
    op.vconstI([0, 1, 2, 3]), op.set(kv),
    op.get(n), op.i32splat, op.set(nv),
    op.get(n), op.i32(4), op.mul, op.set(n),
    forLoop(a, op.i32(0), n, 16, inner),
  ));
  return [...locals, ...body, ...op.end];
}

// Blur passes specialised for one kernel: taps unrolled, kernel values as constants (about twice as fast as the
// generic loops above, which remain the fallback).
// vconvK(src, dst, dstride, xend, h, ROWS); hconvK(src, sstride, dst, dstride, xend, h) — same meaning as above.
function vconvK(k: Float32Array): number[] {
  const r = k.length - 1;
  const [src, dst, dstride, xend, h, ROWS] = [0, 1, 2, 3, 4, 5];
  const [y, x, dp, rowp] = [6, 7, 8, 9];
  const o = (t: number) => 10 + t + r; // o(t) = src + byte offset of row y + t, for t in [-r, r]
  const acc = 10 + 2 * r + 1;
  const locals = vec([[4 + 2 * r + 1, I32], [1, V128]]);
  const loadRows: number[][] = [];
  for (let t = -r; t <= r; t++) loadRows.push(code(op.get(src), op.get(rowp), op.load32At((t + r) * 4), op.add, op.set(o(t))));
  const taps: number[][] = [];
  for (let t = 1; t <= r; t++) {
    taps.push(code(
      op.get(acc), op.vconst(k[t]!),
      op.get(o(-t)), op.get(x), op.add, op.vload, op.get(o(t)), op.get(x), op.add, op.vload, op.fadd,
      op.fmul, op.fadd, op.set(acc),
    ));
  }
  const body = forLoop(y, op.i32(0), h, 1, code(
    op.get(ROWS), op.get(y), op.i32(4), op.mul, op.add, op.set(rowp),
    ...loadRows,
    op.get(dst), op.get(y), op.get(dstride), op.mul, op.add, op.set(dp),
    forLoop(x, op.i32(0), xend, 16, code(
      op.vconst(k[0]!), op.get(o(0)), op.get(x), op.add, op.vload, op.fmul, op.set(acc),
      ...taps,
      op.get(dp), op.get(x), op.add, op.get(acc), op.vstore,
    )),
  ));
  return [...locals, ...body, ...op.end];
}

function hconvK(k: Float32Array): number[] {
  const r = k.length - 1;
  const [src, sstride, dst, dstride, xend, h] = [0, 1, 2, 3, 4, 5];
  const [y, x, c, dp, sp, acc] = [6, 7, 8, 9, 10, 11];
  const locals = vec([[5, I32], [1, V128]]);
  const taps: number[][] = [];
  for (let t = 1; t <= r; t++) {
    taps.push(code(
      op.get(acc), op.vconst(k[t]!),
      op.get(c), op.vloadAt((r - t) * 4), op.get(c), op.vloadAt((r + t) * 4), op.fadd,
      op.fmul, op.fadd, op.set(acc),
    ));
  }
  const body = forLoop(y, op.i32(0), h, 1, code(
    op.get(src), op.get(y), op.get(sstride), op.mul, op.add, op.set(sp),
    op.get(dst), op.get(y), op.get(dstride), op.mul, op.add, op.set(dp),
    forLoop(x, op.i32(0), xend, 16, code(
      op.get(sp), op.get(x), op.add, op.set(c),
      op.vconst(k[0]!), op.get(c), op.vloadAt(r * 4), op.fmul, op.set(acc),
      ...taps,
      op.get(dp), op.get(x), op.add, op.get(acc), op.vstore,
    )),
  ));
  return [...locals, ...body, ...op.end];
}

function buildKernelModule(k: Float32Array): Uint8Array {
  return assemble([
    ['vconvK', i32Func(6), vconvK(k)],
    ['hconvK', i32Func(6), hconvK(k)],
  ]);
}

export interface BlurKernel {
  vconvK(src: number, dst: number, dstride: number, xend: number, h: number, ROWS: number): void;
  hconvK(src: number, sstride: number, dst: number, dstride: number, xend: number, h: number): void;
}

const blurCache = new Map<string, BlurKernel | null>();

/** Unrolled blur passes for one half kernel (k[0..r]), compiled once per thread; null if that fails. */
export function blurKernel(k: Float32Array): BlurKernel | null {
  const key = Array.from(k).join(',');
  let b = blurCache.get(key);
  if (b !== undefined) return b;
  try {
    const base = kernels();
    if (!base) throw new Error('no wasm');
    const inst = new WebAssembly.Instance(new WebAssembly.Module(buildKernelModule(k)), { env: { memory: base.memory } });
    b = inst.exports as unknown as BlurKernel;
  } catch {
    b = null;
  }
  blurCache.set(key, b);
  return b;
}

function buildModule(): Uint8Array {
  return assemble([
    ['vconv', i32Func(8), vconv()],
    ['hconv', i32Func(8), hconv()],
    ['vsub', i32Func(4), vsub()],
    ['grad', i32Func(6), grad()],
    ['desc', i32Func(6), desc()],
    ['descfin', i32Func(3), descfin()],
    ['orihist', i32Func(6), orihist()],
    ['cands', i32Func(8, true), cands()],
    ['up2', i32Func(5), up2()],
  ]);
}

export interface Kernels {
  memory: WasmMemory;
  vconv(src: number, dst: number, dstride: number, xend: number, h: number, K: number, r: number, ROWS: number): void;
  hconv(src: number, sstride: number, dst: number, dstride: number, xend: number, h: number, K: number, r: number): void;
  vsub(a: number, b: number, dst: number, nbytes: number): void;
  grad(src: number, mag: number, ang: number, from: number, to: number, w4: number): void;
  desc(tab: number, nrows: number, hist: number, magBase: number, angDelta: number, exBase: number): void;
  orihist(tab: number, nrows: number, hist: number, magBase: number, angDelta: number, exBase: number): void;
  cands(prv: number, cur: number, nxt: number, out: number, from: number, to: number, w4: number, thr: number): number;
  descfin(hist: number, scratch: number, dst: number): void;
  up2(src: number, dst: number, w: number, h: number, tmp: number): void;
}

let cached: Kernels | null | undefined;

/** The SIMD kernels, or null when this runtime has no WebAssembly SIMD (then sift.ts uses scalar JS). */
export function kernels(): Kernels | null {
  if (cached !== undefined) return cached;
  try {
    const memory = new WebAssembly.Memory({ initial: 256 });
    const mod = new WebAssembly.Module(buildModule());
    const inst = new WebAssembly.Instance(mod, { env: { memory } });
    const e = inst.exports as unknown as Omit<Kernels, 'memory'>;
    cached = { memory, vconv: e.vconv, hconv: e.hconv, vsub: e.vsub, grad: e.grad, desc: e.desc, orihist: e.orihist, cands: e.cands, descfin: e.descfin, up2: e.up2 };
  } catch {
    cached = null;
  }
  return cached;
}
