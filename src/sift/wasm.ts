// WebAssembly SIMD kernels for the SIFT hot loops (separable Gaussian blur passes and image subtraction).
// Scalar JavaScript ran these ~5x slower than OpenCV's SIMD code; f32x4 closes most of the gap. The module is
// small, so it is assembled here from its instructions (no toolchain, no binary blob in the repo): see KERNELS
// below for the code, written as a readable list of WebAssembly operations.
//
// Memory layout is managed by the caller (sift.ts) with a bump allocator over one growable memory.

// The WebAssembly global (Node has it; the ES lib typings do not declare it).
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
declare const WebAssembly: {
  Memory: new (d: { initial: number }) => WasmMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (m: object, imports: object) => { exports: Record<string, unknown> };
};

// --- a tiny assembler ----------------------------------------------------------------------------------------------
const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const sleb = (n: number): number[] => {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(b & 0x40)) || (n === -1 && b & 0x40)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
};
const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
const str = (s: string): number[] => [...uleb(s.length), ...Buffer.from(s, 'utf8')];

const I32 = 0x7f;
const V128 = 0x7b;
const op = {
  get: (i: number) => [0x20, ...uleb(i)],
  set: (i: number) => [0x21, ...uleb(i)],
  tee: (i: number) => [0x22, ...uleb(i)],
  i32: (v: number) => [0x41, ...sleb(v)],
  add: [0x6a],
  sub: [0x6b],
  mul: [0x6c],
  geS: [0x4e],
  gtS: [0x4a],
  load32: [0x28, 2, 0],
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  br: (d: number) => [0x0c, ...uleb(d)],
  brIf: (d: number) => [0x0d, ...uleb(d)],
  end: [0x0b],
  vload: [0xfd, ...uleb(0), 0, 0],
  vloadAt: (offset: number) => [0xfd, ...uleb(0), 0, ...uleb(offset)],
  load32At: (offset: number) => [0x28, 2, ...uleb(offset)],
  vconst: (v: number) => {
    const b = Buffer.alloc(16);
    for (let i = 0; i < 4; i++) b.writeFloatLE(v, i * 4);
    return [0xfd, ...uleb(12), ...b];
  },
  vstore: [0xfd, ...uleb(11), 0, 0],
  fadd: [0xfd, ...uleb(228)],
  fsub: [0xfd, ...uleb(229)],
  fmul: [0xfd, ...uleb(230)],
  fdiv: [0xfd, ...uleb(231)],
  fmin: [0xfd, ...uleb(232)],
  fmax: [0xfd, ...uleb(233)],
  fabs: [0xfd, ...uleb(224)],
  fsqrt: [0xfd, ...uleb(227)],
  flt: [0xfd, ...uleb(67)],
  fgt: [0xfd, ...uleb(68)],
  fle: [0xfd, ...uleb(69)],
  fge: [0xfd, ...uleb(70)],
  vand: [0xfd, ...uleb(78)],
  vor: [0xfd, ...uleb(80)],
  i32ToF32: [0xb2], // f32.convert_i32_s
  f32splat: [0xfd, ...uleb(19)],
  bitselect: [0xfd, ...uleb(82)],
  fsplat: (v: number) => {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    return [0x43, ...b, 0xfd, ...uleb(19)]; // f32.const v; f32x4.splat
  },
};
const code = (...parts: number[][]): number[] => parts.flat();

/** `for (v = from; v < limit; v += step) body` with limit in a local; label depth: body is inside block+loop. */
function forLoop(v: number, from: number[], limitLocal: number, step: number, body: number[]): number[] {
  return code(
    from, op.set(v),
    op.block, op.loop,
    op.get(v), op.get(limitLocal), op.geS, op.brIf(1),
    body,
    op.get(v), op.i32(step), op.add, op.set(v),
    op.br(0),
    op.end, op.end,
  );
}

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
    op.get(ax), op.get(ay), op.fmin,
    op.get(ax), op.get(ay), op.fmax, op.fsplat(2.220446049250313e-16), op.fadd,
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


// premask(cur, dst, from, to, w4, thr): a necessary condition for OpenCV's DoG extremum test, 4 pixels at a time:
// dst[i] = all ones (int32 -1) where (v > thr and v >= its 4 nearest same-layer neighbours) or (v < -thr and
// v <= them), else 0. The scalar scan then runs the full 26-neighbour test only where dst is set: about half the
// pixels pass |v| > thr and the first comparisons are coin flips, which cost the branchy scalar loop dearly.
function premask(): number[] {
  const [cur, dst, from, to, w4, thr] = [0, 1, 2, 3, 4, 5];
  const [i, v, t, nt, l, r, u, d] = [6, 7, 8, 9, 10, 11, 12, 13];
  const locals = vec([[1, I32], [7, V128]]);
  const at = (delta: number[]) => code(op.get(cur), op.get(i), op.add, delta, op.vload);
  const body = code(
    op.get(thr), op.i32ToF32, op.f32splat, op.set(t),
    op.vconst(0), op.get(t), op.fsub, op.set(nt),
    forLoop(i, op.get(from), to, 16, code(
      at([]), op.set(v),
      at(code(op.i32(4), op.sub)), op.set(l), at(code(op.i32(4), op.add)), op.set(r),
      at(code(op.get(w4), op.sub)), op.set(u), at(code(op.get(w4), op.add)), op.set(d),
      op.get(dst), op.get(i), op.add,
      op.get(v), op.get(t), op.fgt,
      op.get(v), op.get(l), op.fge, op.vand, op.get(v), op.get(r), op.fge, op.vand,
      op.get(v), op.get(u), op.fge, op.vand, op.get(v), op.get(d), op.fge, op.vand,
      op.get(v), op.get(nt), op.flt,
      op.get(v), op.get(l), op.fle, op.vand, op.get(v), op.get(r), op.fle, op.vand,
      op.get(v), op.get(u), op.fle, op.vand, op.get(v), op.get(d), op.fle, op.vand,
      op.vor, op.vstore,
    )),
  );
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
  const fn = (n: number) => [0x60, ...vec(Array.from({ length: n }, () => [I32])), 0x00];
  const types = section(1, vec([fn(6)]));
  const imports = section(2, vec([[...str('env'), ...str('memory'), 0x02, 0x00, ...uleb(1)]]));
  const funcs = section(3, vec([[0], [0]]));
  const exports = section(7, vec([[...str('vconvK'), 0x00, 0], [...str('hconvK'), 0x00, 1]]));
  const bodies = [vconvK(k), hconvK(k)].map((b) => [...uleb(b.length), ...b]);
  const codeSec = section(10, vec(bodies));
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...types, ...imports, ...funcs, ...exports, ...codeSec]);
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
  const fn = (n: number) => [0x60, ...vec(Array.from({ length: n }, () => [I32])), 0x00];
  const types = section(1, vec([fn(8), fn(4), fn(6)]));
  const imports = section(2, vec([[...str('env'), ...str('memory'), 0x02, 0x00, ...uleb(1)]]));
  const funcs = section(3, vec([[0], [0], [1], [2], [2]]));
  const exports = section(7, vec([
    [...str('vconv'), 0x00, 0],
    [...str('hconv'), 0x00, 1],
    [...str('vsub'), 0x00, 2],
    [...str('grad'), 0x00, 3],
    [...str('premask'), 0x00, 4],
  ]));
  const bodies = [vconv(), hconv(), vsub(), grad(), premask()].map((b) => [...uleb(b.length), ...b]);
  const codeSec = section(10, vec(bodies));
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...types, ...imports, ...funcs, ...exports, ...codeSec]);
}

export interface Kernels {
  memory: WasmMemory;
  vconv(src: number, dst: number, dstride: number, xend: number, h: number, K: number, r: number, ROWS: number): void;
  hconv(src: number, sstride: number, dst: number, dstride: number, xend: number, h: number, K: number, r: number): void;
  vsub(a: number, b: number, dst: number, nbytes: number): void;
  grad(src: number, mag: number, ang: number, from: number, to: number, w4: number): void;
  premask(cur: number, dst: number, from: number, to: number, w4: number, thr: number): void;
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
    cached = { memory, vconv: e.vconv, hconv: e.hconv, vsub: e.vsub, grad: e.grad, premask: e.premask };
  } catch {
    cached = null;
  }
  return cached;
}
