// SIFT (Lowe 2004) in TypeScript, following OpenCV 4.6's implementation choices (modules/features2d/src/sift.simd.hpp)
// so that descriptors behave like OpenCV's: pixel values in 0..255, assumed initial blur 0.5, Gaussian blurs with
// OpenCV's kernel size rule and BORDER_REFLECT_101, nearest-neighbour octave decimation, 26-neighbour DoG extrema
// (>=) with OpenCV's 0.5*threshold prefilter, up to 5 quadratic refinement steps, contrast and edge tests, a 36-bin
// smoothed orientation histogram with extra orientations for peaks >= 0.8 of the maximum, and a 4x4x8 descriptor with
// trilinear interpolation, normalise -> clip 0.2 -> renormalise -> x512 saturated to uint8.
//
// Written by hand because no npm package provides SIFT (opencv-wasm / OpenCV.js builds ship without it), and the
// rest of capbridge needs OpenCV-compatible descriptors. Hot loops use Float32Array buffers, separable blurs with
// precomputed kernels and no per-pixel allocation.
import { ACC_COPIES, DESC_COPY_BYTES, ORI_COPY_BYTES, blurKernel, kernels, type Kernels } from './wasm.js';
import { DEFAULT_SIFT_PARAMS, DESC_SIZE, KP_STRIDE, type Features, type SiftParams } from './types.js';

const SIFT_INIT_SIGMA = 0.5;
const SIFT_IMG_BORDER = 5;
const SIFT_MAX_INTERP_STEPS = 5;
const SIFT_ORI_HIST_BINS = 36;
const SIFT_ORI_SIG_FCTR = 1.5;
const SIFT_ORI_RADIUS = 3 * SIFT_ORI_SIG_FCTR;
const SIFT_ORI_PEAK_RATIO = 0.8;
const SIFT_DESCR_WIDTH = 4;
const SIFT_DESCR_HIST_BINS = 8;
const SIFT_DESCR_SCL_FCTR = 3;
const SIFT_DESCR_MAG_THR = 0.2;
const SIFT_INT_DESCR_FCTR = 512;
const FLT_EPSILON = 1.1920929e-7;
const RAD2DEG = 180 / Math.PI;

// ---------------------------------------------------------------------------------------------------------------
// Gaussian blur (separable, BORDER_REFLECT_101), with kernels cached by sigma.

const kernelCache = new Map<number, Float32Array>();

/** Half kernel k[0..r] of OpenCV's getGaussianKernel for CV_32F: ksize = round(sigma*8+1)|1. */
function gaussianHalfKernel(sigma: number): Float32Array {
  let k = kernelCache.get(sigma);
  if (k) return k;
  const ksize = Math.round(sigma * 8 + 1) | 1;
  const r = (ksize - 1) >> 1;
  const full = new Float64Array(ksize);
  const scale2X = -0.5 / (sigma * sigma);
  let sum = 0;
  for (let i = 0; i < ksize; i++) {
    const x = i - r;
    full[i] = Math.exp(scale2X * x * x);
    sum += full[i];
  }
  k = new Float32Array(r + 1);
  for (let i = 0; i <= r; i++) k[i] = full[r + i] / sum;
  kernelCache.set(sigma, k);
  return k;
}

function reflect101(i: number, n: number): number {
  if (n === 1) return 0;
  for (;;) {
    if (i < 0) i = -i;
    else if (i >= n) i = 2 * n - 2 - i;
    else return i;
  }
}

/** Scratch buffers reused between calls (one set per thread). */
class Scratch {
  tmp = new Float32Array(0);
  row = new Float32Array(0);
  ensure(size: number, rowLen: number): void {
    if (this.tmp.length < size) this.tmp = new Float32Array(size);
    if (this.row.length < rowLen) this.row = new Float32Array(rowLen);
  }
}
const scratch = new Scratch();

/** dst = src blurred by sigma. src and dst may not alias. */
function gaussianBlur(src: Float32Array, dst: Float32Array, w: number, h: number, sigma: number): void {
  const k = gaussianHalfKernel(sigma);
  const r = k.length - 1;
  scratch.ensure(w * h, w + 2 * r);
  const tmp = scratch.tmp;
  const row = scratch.row;
  const k0 = k[0];
  // Horizontal pass into tmp, through a padded copy of each row.
  for (let y = 0; y < h; y++) {
    const off = y * w;
    for (let x = 0; x < w; x++) row[x + r] = src[off + x];
    for (let t = 1; t <= r; t++) {
      row[r - t] = src[off + reflect101(-t, w)];
      row[r + w - 1 + t] = src[off + reflect101(w - 1 + t, w)];
    }
    for (let x = 0; x < w; x++) {
      const c = x + r;
      let s = k0 * row[c];
      for (let t = 1; t <= r; t++) s += k[t] * (row[c - t] + row[c + t]);
      tmp[off + x] = s;
    }
  }
  // Vertical pass, row by row (cache friendly).
  for (let y = 0; y < h; y++) {
    const off = y * w;
    for (let x = 0; x < w; x++) dst[off + x] = k0 * tmp[off + x];
    for (let t = 1; t <= r; t++) {
      const kt = k[t];
      const a = reflect101(y - t, h) * w;
      const b = reflect101(y + t, h) * w;
      for (let x = 0; x < w; x++) dst[off + x] += kt * (tmp[a + x] + tmp[b + x]);
    }
  }
}

/**
 * OpenCV resize INTER_LINEAR x2 (half-pixel centres, clamped at the borders). For an exact x2 the weights are
 * constant: out[2x] = 0.25 s[x-1] + 0.75 s[x], out[2x+1] = 0.75 s[x] + 0.25 s[x+1], the same in y.
 */
let upRow = new Float32Array(0);
function upsample2(src: Float32Array, w: number, h: number, dst: Float32Array): void {
  const W = w * 2;
  if (upRow.length < 3 * W) upRow = new Float32Array(3 * W);
  const rows = upRow;
  const hrow = (y: number, off: number) => {
    const so = y * w;
    rows[off] = src[so];
    for (let x = 1; x < w; x++) rows[off + 2 * x] = 0.25 * src[so + x - 1] + 0.75 * src[so + x];
    for (let x = 0; x < w - 1; x++) rows[off + 2 * x + 1] = 0.75 * src[so + x] + 0.25 * src[so + x + 1];
    rows[off + W - 1] = src[so + w - 1];
  };
  // Three rolling horizontally upsampled rows: y-1, y, y+1 (clamped).
  const slot = (y: number) => (((y % 3) + 3) % 3) * W;
  hrow(0, slot(0));
  if (h > 1) hrow(1, slot(1));
  for (let y = 0; y < h; y++) {
    if (y + 1 < h && y >= 1) hrow(y + 1, slot(y + 1));
    const cur = slot(y);
    const prev = y > 0 ? slot(y - 1) : cur;
    const next = y < h - 1 ? slot(y + 1) : cur;
    const o0 = 2 * y * W;
    const o1 = o0 + W;
    for (let X = 0; X < W; X++) {
      const c = rows[cur + X];
      dst[o0 + X] = 0.25 * rows[prev + X] + 0.75 * c;
      dst[o1 + X] = 0.75 * c + 0.25 * rows[next + X];
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Image operations: WebAssembly SIMD over one arena when available, scalar JavaScript otherwise.

interface Ops {
  alloc(n: number): Float32Array;
  /** dst (2w x 2h) = src upsampled x2 as OpenCV's INTER_LINEAR. */
  up2(src: Float32Array, w: number, h: number, dst: Float32Array): void;
  blur(src: Float32Array, dst: Float32Array, w: number, h: number, sigma: number): void;
  sub(a: Float32Array, b: Float32Array, dst: Float32Array): void; // dst = a - b
  /** Gradient magnitude and fastAtan2 orientation (degrees) of every interior pixel (rows 1..h-2). */
  grad(src: Float32Array, mag: Float32Array, ang: Float32Array, w: number, h: number): void;
  /** Calls found(r, c) for every DoG extremum candidate of cur (OpenCV's 26-neighbour test), in row order. */
  extrema(prv: Float32Array, cur: Float32Array, nxt: Float32Array, w: number, h: number, threshold: number, found: (r: number, c: number) => void): void;
  /** Histogram accumulation for orientations and descriptors (sample runs planned in JS, summed here). */
  acc: Accum;
}

// ---------------------------------------------------------------------------------------------------------------
// Histogram accumulation. Orientation histograms and descriptors are planned row by row in JavaScript (which runs
// of samples of which image rows fall inside the window), into a table of runs; the sums over the samples run in
// WebAssembly SIMD (four samples at a time, then scattered into the bins) or, without it, in the JS loops below.
// Table layout (32-bit words): descriptor: f32 sinT, cosT, ori, binsPerDeg, then per run at word 4 + 8*k: i32 idx,
// n, ex, f32 wi, j0, rb0, cb0; orientation: per run at word 8*k: i32 idx, n, ex, f32 wi (see wasm.ts desc/orihist).

const D = SIFT_DESCR_WIDTH;
const NB = SIFT_DESCR_HIST_BINS;
const HIST_LEN = (D + 2) * (D + 2) * (NB + 2);
const HIST_PAD = 512; // floats before each descriptor histogram copy: the SIMD tail lanes may add 0 just outside
const HIST_STRIDE = DESC_COPY_BYTES / 4; // floats from one histogram copy to the next (HIST_LEN + HIST_PAD)
const ORI_STRIDE = ORI_COPY_BYTES / 4;
const ACC_MAX_RUNS = 1024; // window rows (2 * radius + 1) the table holds; larger windows take the JS loops

interface Accum {
  tabI: Int32Array;
  tabF: Float32Array;
  /** Column weights exp(scale * t^2). */
  ex: Float32Array;
  /** Histogram copies summed by the caller (one per SIMD lane; 1 in JS). */
  copies: number;
  /** Descriptor histogram copy c at hist[HIST_PAD + c * HIST_STRIDE ...]. */
  hist: Float32Array;
  /** Orientation bins of copy c at ori[c * ORI_STRIDE + 2 ...] (OpenCV's temp buffer: two wrap cells each side). */
  ori: Float32Array;
  /** Largest window radius the table holds. */
  maxRadius: number;
  desc(mag: Float32Array, ang: Float32Array, runs: number): void;
  /** Sums the copies and writes the normalised descriptor bytes. */
  finish(dst: Uint8Array, dstOff: number): void;
  orient(mag: Float32Array, ang: Float32Array, runs: number): void;
}

function jsAccum(maxRadius: number): Accum {
  const tab = new ArrayBuffer((8 * (2 * maxRadius + 1) + 4) * 4);
  const a: Accum = {
    tabI: new Int32Array(tab),
    tabF: new Float32Array(tab),
    ex: new Float32Array(2 * maxRadius + 1),
    copies: 1,
    hist: new Float32Array(HIST_PAD + HIST_STRIDE),
    ori: new Float32Array(ORI_STRIDE),
    maxRadius,
    desc(magImg, angImg, runs) {
      const { tabI, tabF, ex, hist } = a;
      const sinT = tabF[0]!, cosT = tabF[1]!, ori = tabF[2]!, bpd = tabF[3]!;
      const rowStride = (D + 2) * (NB + 2);
      for (let k = 0; k < runs; k++) {
        const o = 4 + 8 * k;
        const idx0 = tabI[o]!, n = tabI[o + 1]!, e0 = tabI[o + 2]!;
        const wi = tabF[o + 3]!, j0 = tabF[o + 4]!, rb0 = tabF[o + 5]!, cb0 = tabF[o + 6]!;
        for (let s = 0; s < n; s++) {
          const j = j0 + s;
          let rbin = j * sinT + rb0;
          let cbin = j * cosT + cb0;
          const idx = idx0 + s;
          const mag = magImg[idx]! * wi * ex[e0 + s]!;
          let obin = (angImg[idx]! - ori) * bpd;
          const r0 = Math.floor(rbin);
          const c0 = Math.floor(cbin);
          let o0 = Math.floor(obin);
          rbin -= r0;
          cbin -= c0;
          obin -= o0;
          o0 = (o0 + NB) & (NB - 1);
          const vR1 = mag * rbin;
          const vR0 = mag - vR1;
          const vRC11 = vR1 * cbin;
          const vRC10 = vR1 - vRC11;
          const vRC01 = vR0 * cbin;
          const vRC00 = vR0 - vRC01;
          const vRCO111 = vRC11 * obin;
          const vRCO101 = vRC10 * obin;
          const vRCO011 = vRC01 * obin;
          const vRCO001 = vRC00 * obin;
          const base = HIST_PAD + ((r0 + 1) * (D + 2) + c0 + 1) * (NB + 2) + o0;
          hist[base] += vRC00 - vRCO001;
          hist[base + 1] += vRCO001;
          hist[base + (NB + 2)] += vRC01 - vRCO011;
          hist[base + (NB + 3)] += vRCO011;
          hist[base + rowStride] += vRC10 - vRCO101;
          hist[base + rowStride + 1] += vRCO101;
          hist[base + rowStride + (NB + 2)] += vRC11 - vRCO111;
          hist[base + rowStride + (NB + 3)] += vRCO111;
        }
      }
    },
    finish(dst, dstOff) {
      finishDescriptor(a.hist, dst, dstOff);
    },
    orient(magImg, angImg, runs) {
      const { tabI, tabF, ex, ori } = a;
      const n36 = SIFT_ORI_HIST_BINS;
      for (let k = 0; k < runs; k++) {
        const o = 8 * k;
        const idx0 = tabI[o]!, n = tabI[o + 1]!, e0 = tabI[o + 2]!;
        const wi = tabF[o + 3]!;
        for (let s = 0; s < n; s++) {
          let bin = Math.round((n36 / 360) * angImg[idx0 + s]!);
          if (bin >= n36) bin -= n36;
          ori[bin + 2] += wi * ex[e0 + s]! * magImg[idx0 + s]!;
        }
      }
    },
  };
  return a;
}

/** The run table, weights and histograms in the wasm memory at addr (accumBytes() bytes). */
const ACC_TAB_BYTES = (8 * ACC_MAX_RUNS + 4) * 4;
const ACC_EX_BYTES = ACC_MAX_RUNS * 4;
const ACC_HIST_BYTES = (HIST_PAD + ACC_COPIES * HIST_STRIDE) * 4;
const ACC_ORI_BYTES = ACC_COPIES * ORI_COPY_BYTES;
const ACC_OUT_BYTES = 512 + DESC_SIZE; // descfin's floats, then its bytes
const accumBytes = () => ACC_TAB_BYTES + ACC_EX_BYTES + ACC_HIST_BYTES + ACC_ORI_BYTES + ACC_OUT_BYTES;

function wasmAccum(k: Kernels, buf: ArrayBuffer, addr: number): Accum {
  const exAddr = addr + ACC_TAB_BYTES;
  const histAddr = exAddr + ACC_EX_BYTES;
  const oriAddr = histAddr + ACC_HIST_BYTES;
  const outAddr = oriAddr + ACC_ORI_BYTES;
  const outBytes = new Uint8Array(buf, outAddr + 512, DESC_SIZE);
  return {
    tabI: new Int32Array(buf, addr, ACC_TAB_BYTES >> 2),
    tabF: new Float32Array(buf, addr, ACC_TAB_BYTES >> 2),
    ex: new Float32Array(buf, exAddr, ACC_EX_BYTES >> 2),
    copies: ACC_COPIES,
    hist: new Float32Array(buf, histAddr, ACC_HIST_BYTES >> 2),
    ori: new Float32Array(buf, oriAddr, ACC_ORI_BYTES >> 2),
    maxRadius: (ACC_MAX_RUNS - 1) >> 1,
    desc(mag, ang, runs) {
      k.desc(addr, runs, histAddr + HIST_PAD * 4, mag.byteOffset, ang.byteOffset - mag.byteOffset, exAddr);
    },
    finish(dst, dstOff) {
      k.descfin(histAddr + HIST_PAD * 4, outAddr, outAddr + 512);
      dst.set(outBytes, dstOff);
    },
    orient(mag, ang, runs) {
      k.orihist(addr, runs, oriAddr + 8, mag.byteOffset, ang.byteOffset - mag.byteOffset, exAddr);
    },
  };
}

/** The accumulator for a window of this radius: the ops' own, or a JS one large enough. */
function accumFor(acc: Accum, radius: number): Accum {
  return radius <= acc.maxRadius ? acc : jsAccum(radius);
}

function jsGrad(src: Float32Array, mag: Float32Array, ang: Float32Array, w: number, h: number): void {
  for (let i = w; i < w * (h - 1); i++) {
    const dx = src[i + 1] - src[i - 1];
    const dy = src[i - w] - src[i + w];
    mag[i] = Math.sqrt(dx * dx + dy * dy);
    ang[i] = atan2deg(dy, dx);
  }
}

const jsOps = (): Ops => ({
  alloc: (n) => new Float32Array(n),
  up2: upsample2,
  blur: gaussianBlur,
  sub: (a, b, dst) => {
    for (let j = 0; j < dst.length; j++) dst[j] = a[j] - b[j];
  },
  grad: jsGrad,
  extrema: jsExtrema,
  acc: jsAccum(64),
});

const K_REGION = 1 << 16; // kernels live at the start of the memory, for the life of the thread
const kernelAddr = new Map<number, number>();
let kernelTop = 0;

/** An arena over the wasm memory: every image of one detection, plus the blur's padded temp and row table. */
function wasmOps(k: Kernels, images: Array<[number, number]>, maxW: number, maxH: number, sigmas: number[]): Ops {
  let rmax = 0;
  for (const sg of sigmas) rmax = Math.max(rmax, gaussianHalfKernel(sg).length - 1);
  const align = (n: number) => (n + 15) & ~15;
  const pw = maxW + 2 * rmax + 8;
  const rowsBytes = align((maxH + 2 * rmax + 4) * 4);
  const tBytes = align(maxH * pw * 4 + 64);
  let need = K_REGION + rowsBytes + tBytes;
  for (const [w, h] of images) need += align((w * h + 8) * 4);
  const maskBytes = align((maxW * maxH + 8) * 4); // the extrema scan's candidate list (int32 pixel indexes)
  need += maskBytes + align(accumBytes());
  const have = k.memory.buffer.byteLength;
  if (need > have) k.memory.grow(Math.ceil((need - have) / 65536));
  const buf = k.memory.buffer;
  const rowsAddr = K_REGION;
  const tAddr = rowsAddr + rowsBytes;
  const maskAddr = tAddr + tBytes;
  const accAddr = maskAddr + maskBytes;
  let top = accAddr + align(accumBytes());
  const rows = new Int32Array(buf, rowsAddr, rowsBytes >> 2);
  const mask = new Int32Array(buf, maskAddr, maskBytes >> 2);

  const T = new Float32Array(buf, tAddr, tBytes >> 2);
  const kAddr = (sigma: number): number => {
    let a = kernelAddr.get(sigma);
    if (a !== undefined) return a;
    const half = gaussianHalfKernel(sigma);
    a = kernelTop;
    if (a + half.length * 16 > K_REGION) throw new Error('sift: kernel region full');
    const kv = new Float32Array(buf, a, half.length * 4);
    for (let t = 0; t < half.length; t++) kv.fill(half[t], t * 4, t * 4 + 4);
    kernelTop += half.length * 16;
    kernelAddr.set(sigma, a);
    return a;
  };
  return {
    acc: wasmAccum(k, buf, accAddr),
    up2(src, w, h, dst) {
      k.up2(src.byteOffset, dst.byteOffset, w, h, tAddr);
    },
    alloc(n) {
      const v = new Float32Array(buf, top, n);
      top += align((n + 8) * 4);
      if (top > buf.byteLength) throw new Error('sift: arena overflow');
      return v;
    },
    blur(src, dst, w, h, sigma) {
      const r = gaussianHalfKernel(sigma).length - 1;
      const K = kAddr(sigma);
      for (let yy = -r; yy < h + r; yy++) rows[yy + r] = reflect101(yy, h) * w * 4;
      const xend = ((w + 3) >> 2) * 16;
      const stride = w + 2 * r + 8;
      const bk = blurKernel(gaussianHalfKernel(sigma));
      if (bk) bk.vconvK(src.byteOffset, tAddr + r * 4, stride * 4, xend, h, rowsAddr);
      else k.vconv(src.byteOffset, tAddr + r * 4, stride * 4, xend, h, K, r, rowsAddr);
      for (let y = 0; y < h; y++) {
        const b = y * stride + r;
        for (let t = 1; t <= r; t++) {
          T[b - t] = T[b + reflect101(-t, w)];
          T[b + w - 1 + t] = T[b + reflect101(w - 1 + t, w)];
        }
      }
      if (bk) bk.hconvK(tAddr, stride * 4, dst.byteOffset, w * 4, xend, h);
      else k.hconv(tAddr, stride * 4, dst.byteOffset, w * 4, xend, h, K, r);
    },
    sub(a, b, dst) {
      k.vsub(a.byteOffset, b.byteOffset, dst.byteOffset, ((dst.length + 3) >> 2) * 16);
    },
    extrema(prv, img, nxt, w, h, threshold, found) {
      const B = SIFT_IMG_BORDER;
      if (h <= 2 * B || w <= 2 * B) return;
      // SIMD prefilter over rows B .. h-B-1 (whole rows: columns, and the last chunk's spill into row h-B, are
      // filtered below) into a list of candidates, then the exact scalar test on those, in row order.
      const from = B * w * 4;
      const n = k.cands(prv.byteOffset, img.byteOffset, nxt.byteOffset, maskAddr, from, from + (((w * (h - 2 * B)) + 3) >> 2) * 16, w * 4, threshold);
      for (let q = 0; q < n; q++) {
        const idx = mask[q]!;
        const r = (idx / w) | 0;
        const c = idx - r * w;
        if (c >= B && c < w - B && r < h - B && isExtremum(prv, img, nxt, idx, w, threshold)) found(r, c);
      }
    },
    grad(src, mag, ang, w, h) {
      if (h < 3) return;
      // Chunks of 4 from pixel w up to w*(h-1) (rounded up: the slack after each image absorbs the tail).
      const n = ((w * (h - 2) + 3) >> 2) * 16;
      k.grad(src.byteOffset, mag.byteOffset, ang.byteOffset, w * 4, w * 4 + n, w * 4);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Pyramid

interface Octave {
  w: number;
  h: number;
  gauss: Float32Array[]; // octaveLayers + 3
  dog: Float32Array[]; // octaveLayers + 2
  mag: Float32Array[]; // [layer] for layers 1..octaveLayers (gradient magnitude of gauss[layer])
  ang: Float32Array[]; // [layer] orientation in degrees
}

function pyramidSigmas(p: SiftParams): Float64Array {
  const L = p.octaveLayers;
  const sig = new Float64Array(L + 3);
  sig[0] = p.sigma;
  const k = Math.pow(2, 1 / L);
  for (let i = 1; i < L + 3; i++) {
    const sigPrev = Math.pow(k, i - 1) * p.sigma;
    const sigTotal = sigPrev * k;
    sig[i] = Math.sqrt(sigTotal * sigTotal - sigPrev * sigPrev);
  }
  return sig;
}

function buildPyramid(base: Float32Array, w: number, h: number, nOctaves: number, p: SiftParams, ops: Ops): Octave[] {
  const L = p.octaveLayers;
  const sig = pyramidSigmas(p);
  const octaves: Octave[] = [];
  let ow = w;
  let oh = h;
  for (let o = 0; o < nOctaves; o++) {
    const gauss: Float32Array[] = [];
    if (o === 0) gauss.push(base);
    else {
      const prev = octaves[o - 1];
      const src = prev.gauss[L];
      const nw = prev.w >> 1;
      const nh = prev.h >> 1;
      const d = ops.alloc(nw * nh);
      for (let y = 0; y < nh; y++) {
        const so = 2 * y * prev.w;
        const dof = y * nw;
        for (let x = 0; x < nw; x++) d[dof + x] = src[so + 2 * x];
      }
      ow = nw;
      oh = nh;
      gauss.push(d);
    }
    for (let i = 1; i < L + 3; i++) {
      const g = ops.alloc(ow * oh);
      ops.blur(gauss[i - 1], g, ow, oh, sig[i]);
      gauss.push(g);
    }
    const dog: Float32Array[] = [];
    for (let i = 0; i < L + 2; i++) {
      const d = ops.alloc(ow * oh);
      ops.sub(gauss[i + 1], gauss[i], d);
      dog.push(d);
    }
    const mag: Float32Array[] = [];
    const ang: Float32Array[] = [];
    for (let i = 1; i <= L; i++) {
      mag[i] = ops.alloc(ow * oh);
      ang[i] = ops.alloc(ow * oh);
      ops.grad(gauss[i], mag[i], ang[i], ow, oh);
    }
    octaves.push({ w: ow, h: oh, gauss, dog, mag, ang });
  }
  return octaves;
}

// ---------------------------------------------------------------------------------------------------------------
// Keypoints

interface Kp {
  x: number; // detection-image coordinates (before the internal upsample adjustment is undone: see below)
  y: number;
  size: number;
  angle: number;
  response: number;
  octave: number; // pyramid octave index (0 = first pyramid octave, which is the x2 image when upsampling)
  layer: number;
}

// OpenCV's fastAtan2 polynomial (degrees, [0, 360), about 0.3 degree accurate): same angles as OpenCV, and much
// cheaper than Math.atan2 in the orientation and descriptor loops.
const ATAN_P1 = 0.9997878412794807 * RAD2DEG;
const ATAN_P3 = -0.3258083974640975 * RAD2DEG;
const ATAN_P5 = 0.1555786518463281 * RAD2DEG;
const ATAN_P7 = -0.04432655554792128 * RAD2DEG;
const DBL_EPSILON = 2.220446049250313e-16;

function atan2deg(y: number, x: number): number {
  const ax = x < 0 ? -x : x;
  const ay = y < 0 ? -y : y;
  let a: number;
  if (ax >= ay) {
    const c = ay / (ax + DBL_EPSILON);
    const c2 = c * c;
    a = (((ATAN_P7 * c2 + ATAN_P5) * c2 + ATAN_P3) * c2 + ATAN_P1) * c;
  } else {
    const c = ax / (ay + DBL_EPSILON);
    const c2 = c * c;
    a = 90 - (((ATAN_P7 * c2 + ATAN_P5) * c2 + ATAN_P3) * c2 + ATAN_P1) * c;
  }
  if (x < 0) a = 180 - a;
  if (y < 0) a = 360 - a;
  return a;
}

/** ex[t + radius] = exp(scale * t^2) for t in [-radius, radius]: Gaussian weights are separable in (i, j). */
function expTable(ex: Float32Array, radius: number, scale: number): void {
  // exp(s t^2) = exp(s (t-1)^2) * exp(s) * exp(2s)^(t-1): two exponentials per table (relative error ~1e-15 * t).
  const g = Math.exp(scale);
  const q = g * g;
  let e = 1;
  let step = g;
  ex[radius] = 1;
  for (let t = 1; t <= radius; t++) {
    e *= step;
    step *= q;
    ex[radius + t] = e;
    ex[radius - t] = e;
  }
}

const histOut = new Float32Array(SIFT_ORI_HIST_BINS);
const oriTemp = new Float32Array(SIFT_ORI_HIST_BINS + 4);

/** OpenCV's calcOrientationHist: the smoothed 36-bin histogram into histOut; returns its maximum. */
function calcOrientationHist(acc0: Accum, magImg: Float32Array, angImg: Float32Array, w: number, h: number, px: number, py: number, radius: number, sigma: number): number {
  const n = SIFT_ORI_HIST_BINS;
  const acc = accumFor(acc0, radius);
  const { tabI, tabF, ex } = acc;
  expTable(ex, radius, -1 / (2 * sigma * sigma));
  // Columns 1 .. w-2 only, as bounds of the run rather than a test per sample.
  const jlo = Math.max(-radius, 1 - px);
  const jhi = Math.min(radius, w - 2 - px);
  let runs = 0;
  if (jhi >= jlo) {
    for (let i = -radius; i <= radius; i++) {
      const y = py + i;
      if (y <= 0 || y >= h - 1) continue;
      const o = 8 * runs++;
      tabI[o] = y * w + px + jlo;
      tabI[o + 1] = jhi - jlo + 1;
      tabI[o + 2] = jlo + radius;
      tabF[o + 3] = ex[i + radius]!;
    }
  }
  acc.ori.fill(0);
  acc.orient(magImg, angImg, runs);
  const temp = oriTemp; // temp[i + 2] = bin i: the sum of the copies
  for (let i = 2; i < n + 2; i++) {
    let v = 0;
    for (let c = 0; c < acc.copies; c++) v += acc.ori[c * ORI_STRIDE + i]!;
    temp[i] = v;
  }
  temp[1] = temp[n + 1]!;
  temp[0] = temp[n]!;
  temp[n + 2] = temp[2]!;
  temp[n + 3] = temp[3]!;
  let maxval = 0;
  for (let i = 0; i < n; i++) {
    const v = (temp[i]! + temp[i + 4]!) * (1 / 16) + (temp[i + 1]! + temp[i + 3]!) * (4 / 16) + temp[i + 2]! * (6 / 16);
    histOut[i] = v;
    if (v > maxval) maxval = v;
  }
  return maxval;
}

/**
 * Sub-pixel / sub-scale refinement and contrast + edge tests (OpenCV adjustLocalExtrema).
 * Returns null when rejected; otherwise the refined keypoint in octave-0-of-pyramid coordinates.
 */
function adjustLocalExtrema(oct: Octave, o: number, layer0: number, r0: number, c0: number, p: SiftParams): (Kp & { r: number; c: number }) | null {
  const L = p.octaveLayers;
  const imgScale = 1 / 255;
  const derivScale = imgScale * 0.5;
  const secondDerivScale = imgScale;
  const crossDerivScale = imgScale * 0.25;
  const w = oct.w;
  const h = oct.h;
  let layer = layer0;
  let r = r0;
  let c = c0;
  let xi = 0;
  let xr = 0;
  let xc = 0;
  let i = 0;
  for (; i < SIFT_MAX_INTERP_STEPS; i++) {
    const img = oct.dog[layer];
    const prv = oct.dog[layer - 1];
    const nxt = oct.dog[layer + 1];
    const idx = r * w + c;
    const dx = (img[idx + 1] - img[idx - 1]) * derivScale;
    const dy = (img[idx + w] - img[idx - w]) * derivScale;
    const ds = (nxt[idx] - prv[idx]) * derivScale;
    const v2 = img[idx] * 2;
    const dxx = (img[idx + 1] + img[idx - 1] - v2) * secondDerivScale;
    const dyy = (img[idx + w] + img[idx - w] - v2) * secondDerivScale;
    const dss = (nxt[idx] + prv[idx] - v2) * secondDerivScale;
    const dxy = (img[idx + w + 1] - img[idx + w - 1] - img[idx - w + 1] + img[idx - w - 1]) * crossDerivScale;
    const dxs = (nxt[idx + 1] - nxt[idx - 1] - prv[idx + 1] + prv[idx - 1]) * crossDerivScale;
    const dys = (nxt[idx + w] - nxt[idx - w] - prv[idx + w] + prv[idx - w]) * crossDerivScale;
    // Solve H X = dD (3x3, symmetric) by Cramer's rule; a singular H gives X = 0 like OpenCV's solve fallback.
    const a = dxx, b = dxy, cc = dxs, d = dyy, e = dys, f = dss;
    const A = d * f - e * e;
    const B = -(b * f - e * cc);
    const C = b * e - d * cc;
    const det = a * A + b * B + cc * C;
    let X0 = 0, X1 = 0, X2 = 0;
    if (det !== 0 && Number.isFinite(det)) {
      const inv = 1 / det;
      const D = -(b * f - cc * e);
      const E = a * f - cc * cc;
      const F = -(a * e - b * cc);
      const G = b * e - cc * d;
      const Hh = -(a * e - cc * b);
      const I = a * d - b * b;
      X0 = (A * dx + D * dy + G * ds) * inv;
      X1 = (B * dx + E * dy + Hh * ds) * inv;
      X2 = (C * dx + F * dy + I * ds) * inv;
    }
    xi = -X2;
    xr = -X1;
    xc = -X0;
    if (Math.abs(xi) < 0.5 && Math.abs(xr) < 0.5 && Math.abs(xc) < 0.5) break;
    if (Math.abs(xi) > 1e9 || Math.abs(xr) > 1e9 || Math.abs(xc) > 1e9) return null;
    c += Math.round(xc);
    r += Math.round(xr);
    layer += Math.round(xi);
    if (layer < 1 || layer > L || c < SIFT_IMG_BORDER || c >= w - SIFT_IMG_BORDER || r < SIFT_IMG_BORDER || r >= h - SIFT_IMG_BORDER) return null;
  }
  if (i >= SIFT_MAX_INTERP_STEPS) return null;
  const img = oct.dog[layer];
  const prv = oct.dog[layer - 1];
  const nxt = oct.dog[layer + 1];
  const idx = r * w + c;
  const dx = (img[idx + 1] - img[idx - 1]) * derivScale;
  const dy = (img[idx + w] - img[idx - w]) * derivScale;
  const ds = (nxt[idx] - prv[idx]) * derivScale;
  const t = dx * xc + dy * xr + ds * xi;
  const contr = img[idx] * imgScale + t * 0.5;
  if (Math.abs(contr) * L < p.contrastThreshold) return null;
  const v2 = img[idx] * 2;
  const dxx = (img[idx + 1] + img[idx - 1] - v2) * secondDerivScale;
  const dyy = (img[idx + w] + img[idx - w] - v2) * secondDerivScale;
  const dxy = (img[idx + w + 1] - img[idx + w - 1] - img[idx - w + 1] + img[idx - w - 1]) * crossDerivScale;
  const tr = dxx + dyy;
  const det = dxx * dyy - dxy * dxy;
  const et = p.edgeThreshold;
  if (det <= 0 || tr * tr * et >= (et + 1) * (et + 1) * det) return null;
  const s = 1 << o;
  return {
    x: (c + xc) * s,
    y: (r + xr) * s,
    size: p.sigma * Math.pow(2, (layer + xi) / L) * s * 2,
    angle: 0,
    response: Math.abs(contr),
    octave: o,
    layer,
    r,
    c,
  };
}

/** OpenCV's test at pixel idx of img: the prefilter (|v| > threshold), then all 26 neighbours (>= or <=). */
function isExtremum(prv: Float32Array, img: Float32Array, nxt: Float32Array, idx: number, w: number, threshold: number): boolean {
  const val = img[idx];
  if (!(Math.abs(val) > threshold)) return false;
  if (val > 0) {
    return (
      val >= img[idx - 1] && val >= img[idx + 1] &&
      val >= img[idx - w - 1] && val >= img[idx - w] && val >= img[idx - w + 1] &&
      val >= img[idx + w - 1] && val >= img[idx + w] && val >= img[idx + w + 1] &&
      val >= nxt[idx] && val >= nxt[idx - 1] && val >= nxt[idx + 1] &&
      val >= nxt[idx - w - 1] && val >= nxt[idx - w] && val >= nxt[idx - w + 1] &&
      val >= nxt[idx + w - 1] && val >= nxt[idx + w] && val >= nxt[idx + w + 1] &&
      val >= prv[idx] && val >= prv[idx - 1] && val >= prv[idx + 1] &&
      val >= prv[idx - w - 1] && val >= prv[idx - w] && val >= prv[idx - w + 1] &&
      val >= prv[idx + w - 1] && val >= prv[idx + w] && val >= prv[idx + w + 1]
    );
  }
  return (
    val <= img[idx - 1] && val <= img[idx + 1] &&
    val <= img[idx - w - 1] && val <= img[idx - w] && val <= img[idx - w + 1] &&
    val <= img[idx + w - 1] && val <= img[idx + w] && val <= img[idx + w + 1] &&
    val <= nxt[idx] && val <= nxt[idx - 1] && val <= nxt[idx + 1] &&
    val <= nxt[idx - w - 1] && val <= nxt[idx - w] && val <= nxt[idx - w + 1] &&
    val <= nxt[idx + w - 1] && val <= nxt[idx + w] && val <= nxt[idx + w + 1] &&
    val <= prv[idx] && val <= prv[idx - 1] && val <= prv[idx + 1] &&
    val <= prv[idx - w - 1] && val <= prv[idx - w] && val <= prv[idx - w + 1] &&
    val <= prv[idx + w - 1] && val <= prv[idx + w] && val <= prv[idx + w + 1]
  );
}

/** The scalar scan (no WebAssembly): every pixel at least SIFT_IMG_BORDER from the edge, in row order. */
function jsExtrema(prv: Float32Array, img: Float32Array, nxt: Float32Array, w: number, h: number, threshold: number, found: (r: number, c: number) => void): void {
  for (let r = SIFT_IMG_BORDER; r < h - SIFT_IMG_BORDER; r++) {
    const rowOff = r * w;
    for (let c = SIFT_IMG_BORDER; c < w - SIFT_IMG_BORDER; c++) if (isExtremum(prv, img, nxt, rowOff + c, w, threshold)) found(r, c);
  }
}

type Extremum = Kp & { r: number; c: number };

function findScaleSpaceExtrema(octaves: Octave[], p: SiftParams, ops: Ops): Kp[] {
  const L = p.octaveLayers;
  const threshold = Math.floor((0.5 * p.contrastThreshold) / L * 255);
  const n = SIFT_ORI_HIST_BINS;
  const extrema: Extremum[] = [];
  for (let o = 0; o < octaves.length; o++) {
    const oct = octaves[o];
    for (let i = 1; i <= L; i++) {
      ops.extrema(oct.dog[i - 1], oct.dog[i], oct.dog[i + 1], oct.w, oct.h, threshold, (r, c) => {
        const kp = adjustLocalExtrema(oct, o, i, r, c, p);
        if (kp) extrema.push(kp);
      });
    }
  }
  // Orientations for the strongest extrema first: the keypoints kept (the strongest maxKeypoints by response)
  // can only come from extrema at least as strong as the weakest kept one, so the rest need no histogram.
  // Exact duplicates (one extremum reached twice by refinement) are dropped here rather than after orientation.
  extrema.sort((a, b) => b.response - a.response || a.y - b.y || a.x - b.x || a.size - b.size);
  const out: Kp[] = [];
  let lastResponse = Infinity;
  let prev: Extremum | null = null;
  for (const kp of extrema) {
    if (prev && prev.x === kp.x && prev.y === kp.y && prev.size === kp.size && prev.response === kp.response) continue;
    prev = kp;
    if (p.maxKeypoints > 0 && out.length >= p.maxKeypoints && kp.response < lastResponse) break;
    lastResponse = kp.response;
    const o = kp.octave;
    const oct = octaves[o];
    const sclOctv = (kp.size * 0.5) / (1 << o);
    const omax = calcOrientationHist(ops.acc, oct.mag[kp.layer], oct.ang[kp.layer], oct.w, oct.h, kp.c, kp.r, Math.round(SIFT_ORI_RADIUS * sclOctv), SIFT_ORI_SIG_FCTR * sclOctv);
    const magThr = omax * SIFT_ORI_PEAK_RATIO;
    for (let j = 0; j < n; j++) {
      const l = j > 0 ? j - 1 : n - 1;
      const r2 = j < n - 1 ? j + 1 : 0;
      const hj = histOut[j];
      if (hj > histOut[l] && hj > histOut[r2] && hj >= magThr) {
        let bin = j + (0.5 * (histOut[l] - histOut[r2])) / (histOut[l] - 2 * hj + histOut[r2]);
        bin = bin < 0 ? n + bin : bin >= n ? bin - n : bin;
        let angle = 360 - (360 / n) * bin;
        if (Math.abs(angle - 360) < FLT_EPSILON) angle = 0;
        out.push({ x: kp.x, y: kp.y, size: kp.size, angle, response: kp.response, octave: o, layer: kp.layer });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Descriptors

const descVec = new Float32Array(D * D * NB);

/** OpenCV's calcSIFTDescriptor: plans the sample runs of the window, accumulates them (acc), then normalises. */
function calcSIFTDescriptor(acc0: Accum, magImg: Float32Array, angImg: Float32Array, w: number, h: number, ptx: number, pty: number, ori: number, scl: number, dst: Uint8Array, dstOff: number): void {
  const px = Math.round(ptx);
  const py = Math.round(pty);
  let cosT = Math.cos(ori * (Math.PI / 180));
  let sinT = Math.sin(ori * (Math.PI / 180));
  const binsPerDeg = NB / 360;
  const expScale = -1 / (D * D * 0.5);
  const histWidth = SIFT_DESCR_SCL_FCTR * scl;
  let radius = Math.round(histWidth * Math.SQRT2 * (D + 1) * 0.5);
  radius = Math.min(radius, Math.floor(Math.sqrt(w * w + h * h)));
  cosT /= histWidth;
  sinT /= histWidth;
  const acc = accumFor(acc0, radius);
  const { tabI, tabF, ex } = acc;
  const half = D / 2 - 0.5;
  // (cRot^2 + rRot^2) = (i^2 + j^2) / histWidth^2: the weight is separable.
  expTable(ex, radius, expScale / (histWidth * histWidth));
  tabF[0] = sinT;
  tabF[1] = cosT;
  tabF[2] = ori;
  tabF[3] = binsPerDeg;
  let runs = 0;
  for (let i = -radius; i <= radius; i++) {
    const r = py + i;
    if (r <= 0 || r >= h - 1) continue;
    // Only columns whose rotated position can fall inside the (d+1) x (d+1) bin square: solve both slab
    // constraints for j (widened by one; the exact test below still decides).
    let jlo = Math.max(-radius, 1 - px);
    let jhi = Math.min(radius, w - 2 - px);
    const lo1 = -1 - half + i * sinT, hi1 = D - half + i * sinT; // lo1 < j*cosT < hi1
    const lo2 = -1 - half - i * cosT, hi2 = D - half - i * cosT; // lo2 < j*sinT < hi2
    if (cosT > 1e-12) { jlo = Math.max(jlo, Math.ceil(lo1 / cosT) - 1); jhi = Math.min(jhi, Math.floor(hi1 / cosT) + 1); }
    else if (cosT < -1e-12) { jlo = Math.max(jlo, Math.ceil(hi1 / cosT) - 1); jhi = Math.min(jhi, Math.floor(lo1 / cosT) + 1); }
    if (sinT > 1e-12) { jlo = Math.max(jlo, Math.ceil(lo2 / sinT) - 1); jhi = Math.min(jhi, Math.floor(hi2 / sinT) + 1); }
    else if (sinT < -1e-12) { jlo = Math.max(jlo, Math.ceil(hi2 / sinT) - 1); jhi = Math.min(jhi, Math.floor(lo2 / sinT) + 1); }
    // Bin coordinates move linearly along the row: cbin = j*cosT - i*sinT + half, rbin = j*sinT + i*cosT + half.
    const cb0 = half - i * sinT;
    const rb0 = half + i * cosT;
    // rbin and cbin are monotone in j (floating-point rounding preserves order), so the samples inside the bin
    // square form one run of j: trim the widened range to it with the exact test.
    for (; jlo <= jhi; jlo++) {
      const rb = jlo * sinT + rb0;
      const cb = jlo * cosT + cb0;
      if (rb > -1 && rb < D && cb > -1 && cb < D) break;
    }
    for (; jhi >= jlo; jhi--) {
      const rb = jhi * sinT + rb0;
      const cb = jhi * cosT + cb0;
      if (rb > -1 && rb < D && cb > -1 && cb < D) break;
    }
    if (jhi < jlo) continue;
    const o = 4 + 8 * runs++;
    tabI[o] = r * w + px + jlo;
    tabI[o + 1] = jhi - jlo + 1;
    tabI[o + 2] = jlo + radius;
    tabF[o + 3] = ex[i + radius]!;
    tabF[o + 4] = jlo;
    tabF[o + 5] = rb0;
    tabF[o + 6] = cb0;
  }
  const hist = acc.hist;
  for (let c = 0; c < acc.copies; c++) hist.fill(0, HIST_PAD + c * HIST_STRIDE, HIST_PAD + c * HIST_STRIDE + HIST_LEN);
  acc.desc(magImg, angImg, runs);
  acc.finish(dst, dstOff);
}

/** OpenCV's finalisation of a descriptor histogram (one copy: the JS accumulator's) into 128 bytes at dst[dstOff]. */
function finishDescriptor(hist: Float32Array, dst: Uint8Array, dstOff: number): void {
  // Wrap the circular orientation bins and copy the d*d*n core.
  const vec = descVec;
  for (let i = 0; i < D; i++) {
    for (let j = 0; j < D; j++) {
      const idx = HIST_PAD + ((i + 1) * (D + 2) + (j + 1)) * (NB + 2);
      hist[idx] += hist[idx + NB]!;
      hist[idx + 1] += hist[idx + NB + 1]!;
      for (let k = 0; k < NB; k++) vec[(i * D + j) * NB + k] = hist[idx + k]!;
    }
  }
  const len = D * D * NB;
  let nrm2 = 0;
  for (let k = 0; k < len; k++) nrm2 += vec[k]! * vec[k]!;
  const thr = Math.sqrt(nrm2) * SIFT_DESCR_MAG_THR;
  nrm2 = 0;
  for (let k = 0; k < len; k++) {
    const v = Math.min(vec[k]!, thr);
    vec[k] = v;
    nrm2 += v * v;
  }
  const f = SIFT_INT_DESCR_FCTR / Math.max(Math.sqrt(nrm2), FLT_EPSILON);
  for (let k = 0; k < len; k++) {
    const v = Math.round(vec[k]! * f);
    dst[dstOff + k] = v > 255 ? 255 : v < 0 ? 0 : v;
  }
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * Detects SIFT keypoints and computes their descriptors on a grey image (values 0..255, row-major w*h).
 * Keypoints are reported in the coordinates of this image (OpenCV's convention: the centre of pixel (0,0) is (0,0)).
 */
export function detectAndDescribe(grey: Float32Array | Uint8Array, w: number, h: number, params: Partial<SiftParams> & { useWasm?: boolean } = {}): Features {
  const p: SiftParams = { ...DEFAULT_SIFT_PARAMS, ...params };
  if (grey.length < w * h) throw new Error(`detectAndDescribe: ${grey.length} pixels for ${w}x${h}`);
  const firstOctave = p.upsample ? -1 : 0;
  const empty = (): Features => ({ width: w, height: h, scale: 1, count: 0, keypoints: new Float32Array(0), descriptors: new Uint8Array(0) });
  if (w < 2 * SIFT_IMG_BORDER + 3 || h < 2 * SIFT_IMG_BORDER + 3) return empty();

  // Base image: float copy, optional x2 upsample, then blur from the assumed initial blur up to sigma.
  const bw = p.upsample ? w * 2 : w;
  const bh = p.upsample ? h * 2 : h;
  const sigDiff = p.upsample
    ? Math.sqrt(Math.max(p.sigma * p.sigma - SIFT_INIT_SIGMA * SIFT_INIT_SIGMA * 4, 0.01))
    : Math.sqrt(Math.max(p.sigma * p.sigma - SIFT_INIT_SIGMA * SIFT_INIT_SIGMA, 0.01));
  const nOctaves = Math.max(1, Math.round(Math.log2(Math.min(w, h))) - 2 - firstOctave);
  const L = p.octaveLayers;
  const sizes: Array<[number, number]> = [[bw, bh], [bw, bh]];
  for (let o = 0, ow = bw, oh = bh; o < nOctaves; o++, ow >>= 1, oh >>= 1) for (let i = 0; i < 4 * L + 5; i++) sizes.push([ow, oh]);
  const k = params.useWasm === false ? null : kernels();
  const ops = k ? wasmOps(k, sizes, bw, bh, [sigDiff, ...pyramidSigmas(p)]) : jsOps();
  const grey32 = ops.alloc(w * h);
  for (let i = 0; i < w * h; i++) grey32[i] = grey[i];
  let base = grey32;
  if (p.upsample) {
    base = ops.alloc(bw * bh);
    ops.up2(grey32, w, h, base);
  }
  const blurred = ops.alloc(bw * bh);
  ops.blur(base, blurred, bw, bh, sigDiff);
  const octaves = buildPyramid(blurred, bw, bh, nOctaves, p, ops);
  let kps = findScaleSpaceExtrema(octaves, p, ops);

  // Remove exact duplicates (OpenCV removeDuplicatedSorted), then keep the strongest by response.
  kps.sort((a, b) => a.x - b.x || a.y - b.y || a.size - b.size || a.angle - b.angle || b.response - a.response);
  const dedup: Kp[] = [];
  for (const k of kps) {
    const prev = dedup[dedup.length - 1];
    if (prev && prev.x === k.x && prev.y === k.y && prev.size === k.size && prev.angle === k.angle) continue;
    dedup.push(k);
  }
  kps = dedup;
  // Stable order: response descending, then position (deterministic output).
  kps.sort((a, b) => b.response - a.response || a.y - b.y || a.x - b.x || a.angle - b.angle);
  if (p.maxKeypoints > 0 && kps.length > p.maxKeypoints) kps.length = p.maxKeypoints;

  const count = kps.length;
  const keypoints = new Float32Array(count * KP_STRIDE);
  const descriptors = new Uint8Array(count * DESC_SIZE);
  const back = p.upsample ? 0.5 : 1; // pyramid octave 0 is the x2 image when upsampling
  for (let n = 0; n < count; n++) {
    const k = kps[n];
    const s = 1 / (1 << k.octave);
    const oct = octaves[k.octave];
    let angle = 360 - k.angle;
    if (Math.abs(angle - 360) < FLT_EPSILON) angle = 0;
    calcSIFTDescriptor(ops.acc, oct.mag[k.layer], oct.ang[k.layer], oct.w, oct.h, k.x * s, k.y * s, angle, k.size * s * 0.5, descriptors, n * DESC_SIZE);
    const o = n * KP_STRIDE;
    keypoints[o] = k.x * back;
    keypoints[o + 1] = k.y * back;
    keypoints[o + 2] = k.size * back;
    keypoints[o + 3] = k.angle;
    keypoints[o + 4] = k.response;
    keypoints[o + 5] = k.octave + firstOctave;
  }
  return { width: w, height: h, scale: 1, count, keypoints, descriptors };
}
