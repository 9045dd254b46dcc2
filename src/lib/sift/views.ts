// Affine view synthesis (ASIFT, Morel & Yu 2009; used progressively in MODS, Mishkin, Matas & Perdoch 2015):
// SIFT is invariant to similarities but not to the strong anisotropic squash a wide viewpoint change puts on a
// plane (a facade or a cover seen at 60-80 degrees). Simulating the tilt on the query side, then describing
// each simulated view, gives keypoints whose descriptors match the oblique photo. Every keypoint is mapped back
// to the ORIGINAL detection frame, so geometric verification runs in one frame for the plain query and all views.
//
// A view with tilt t and direction phi is the linear map A = R(-phi) diag(1/sqrt(t), sqrt(t)) R(phi): the image
// is compressed by sqrt(t) along phi and stretched by sqrt(t) across it. Up to a uniform scale (which SIFT does
// not see) this is ASIFT's tilt t along phi, but it keeps the pixel count (ASIFT's compression by t halves the
// resolution across the tilt, which costs detail on images of 640 px); rotating back by -phi keeps the view
// upright, so it is no larger than needed. The compression is anti-aliased as ASIFT does: a Gaussian of
// sigma 0.8*sqrt(c^2 - 1) (c = sqrt(t), in view pixels) along phi, integrated into the resampling.
//
// Warped by hand (bilinear taps along the compression direction) rather than with sharp's affine(): the map and
// its inverse must be known exactly to bring keypoints back, and the oriented anti-aliasing is not in sharp.
import type { DecodedGrey } from './decode.js';
import { detectAndDescribe } from './sift.js';
import { DESC_SIZE, KP_STRIDE, type Features, type SiftParams } from './types.js';

export interface ViewSpec {
  tilt: number;
  /** Compression direction, degrees (image frame: x right, y down). */
  phi: number;
  /** ASIFT's own warp (OpenCV's AffineFeature): compress by t along phi and keep the size across it, instead
   *  of the area-preserving sqrt(t) each way. Fewer pixels (cheaper by ~1/t), less detail across the tilt. Like
   *  AffineFeature, the view continues the image by its edge pixels and keeps only keypoints centred on the image. */
  compress?: boolean;
}

export interface SynthView {
  spec: ViewSpec;
  grey: Uint8Array;
  width: number;
  height: number;
  /** view = A * original + b (pixel-centre coordinates). */
  A: [number, number, number, number];
  b: [number, number];
}

/** The views for tilts x rotations: `rotations` directions in [0, 180) per tilt, staggered between tilts. */
export function viewSpecs(tilts: number[], rotations: number): ViewSpec[] {
  const out: ViewSpec[] = [];
  tilts.forEach((tilt, ti) => {
    if (!(tilt > 1)) return;
    const step = 180 / Math.max(1, rotations);
    const off = ti % 2 ? step / 2 : 0;
    for (let k = 0; k < rotations; k++) out.push({ tilt, phi: off + k * step });
  });
  return out;
}

/**
 * ASIFT's sampling of the view sphere (Morel & Yu 2009, as OpenCV's AffineFeature lays it out): the image itself,
 * then tilts t = step, step^2 .. step^maxTilt (step sqrt 2), each at directions every rotateStepBase/t degrees
 * over [0, 180); compress-mode views. maxTilt 5 gives 43 views up to t = 4 sqrt 2 (~80 degrees of obliquity).
 */
export function asiftSpecs(maxTilt = 5, tiltStep = Math.SQRT2, rotateStepBase = 72): ViewSpec[] {
  const out: ViewSpec[] = [{ tilt: 1, phi: 0 }];
  let tilt = 1;
  for (let i = 1; i <= maxTilt; i++) {
    tilt *= tiltStep;
    const step = rotateStepBase / tilt;
    let n = Math.floor(180 / step + 1e-9);
    if (Math.abs(n * step - 180) < 1e-6) n--;
    for (let j = 0; j <= n; j++) out.push({ tilt, phi: Math.round(step * j * 1e9) / 1e9, compress: true });
  }
  return out;
}

/**
 * The linear part of a view: compress by sqrt(t) along phi, stretch by sqrt(t) across it, turned back upright
 * (R(-phi) diag(1/sqrt t, sqrt t) R(phi)); compress views, ASIFT's own: the image turned so that phi lies along x,
 * then compressed by t along x (diag(1/t, 1) R(phi), as OpenCV's AffineFeature warps). Turning such a view back
 * upright would shear it, and its bounding box would hold about 40 % more pixels for SIFT to describe, most of them
 * the replicated border.
 */
export function viewMatrix(s: ViewSpec): [number, number, number, number] {
  const c = Math.cos((s.phi * Math.PI) / 180);
  const n = Math.sin((s.phi * Math.PI) / 180);
  // R(phi) = [c n; -n c] takes direction phi to the x axis.
  if (s.compress) return [c / s.tilt, n / s.tilt, -n, c];
  const a = 1 / Math.sqrt(s.tilt); // along phi
  const b = Math.sqrt(s.tilt); // across
  return [a * c * c + b * n * n, (a - b) * c * n, (a - b) * c * n, a * n * n + b * c * c];
}

/**
 * Synthesises one view of a grey image. maxSide: when the view's bounding box is longer than this, the view is
 * also scaled down uniformly (SIFT does not see the scale; a diagonal stretch otherwise doubles the pixels).
 */
export function synthView(src: { grey: Uint8Array; width: number; height: number }, spec: ViewSpec, maxSide = Infinity): SynthView {
  const M = viewMatrix(spec);
  const comp = spec.compress ? spec.tilt : Math.sqrt(spec.tilt);
  const sx = [0, src.width - 1, 0, src.width - 1];
  const sy = [0, 0, src.height - 1, src.height - 1];
  const ext = (k: 0 | 2) => {
    const v = sx.map((x, i) => M[k] * x + M[k + 1] * sy[i]!);
    return Math.max(...v) - Math.min(...v) + 1;
  };
  const z = Math.min(1, maxSide / Math.max(ext(0), ext(2)));
  const A: [number, number, number, number] = [M[0] * z, M[1] * z, M[2] * z, M[3] * z];
  return warpAffine(src, A, { phi: spec.phi, compression: comp / z }, spec);
}

/**
 * view = A * original + b, b chosen so the view is the bounding box of the warped image. aa: the direction
 * (degrees) and factor of the strongest compression, for the anti-aliasing Gaussian.
 */
export function warpAffine(
  src: { grey: Uint8Array; width: number; height: number },
  A: [number, number, number, number],
  aa: { phi: number; compression: number },
  spec: ViewSpec = { tilt: 1, phi: 0 },
): SynthView {
  const { grey, width: w, height: h } = src;
  const det = A[0] * A[3] - A[1] * A[2];
  const Ai = [A[3] / det, -A[1] / det, -A[2] / det, A[0] / det];
  const xs = [0, w - 1, 0, w - 1].map((x, i) => A[0] * x + A[1] * [0, 0, h - 1, h - 1][i]!);
  const ys = [0, w - 1, 0, w - 1].map((x, i) => A[2] * x + A[3] * [0, 0, h - 1, h - 1][i]!);
  const minX = Math.min(...xs);
  const minY = Math.min(...ys);
  const vw = Math.max(1, Math.ceil(Math.max(...xs) - minX) + 1);
  const vh = Math.max(1, Math.ceil(Math.max(...ys) - minY) + 1);
  const b: [number, number] = [-minX, -minY];
  // Anti-aliasing: Gaussian along the compression direction, sigma in view pixels -> original pixels (x sqrt(t)).
  const comp = aa.compression;
  const sigV = 0.8 * Math.sqrt(Math.max(0, comp * comp - 1));
  const dirX = Math.cos((aa.phi * Math.PI) / 180);
  const dirY = Math.sin((aa.phi * Math.PI) / 180);
  // ASIFT's own views (compress): its sigma, 0.8 sqrt(t^2 - 1) in original pixels along the tilt (OpenCV's affineSkew).
  const sigO = spec.compress ? sigV : sigV * comp;
  const R = Math.ceil(2 * sigO);
  const taps: number[] = []; // offset (original px along phi), weight
  let wsum = 0;
  for (let k = -R; k <= R; k++) {
    const wt = sigO > 0 ? Math.exp((-k * k) / (2 * sigO * sigO)) : k === 0 ? 1 : 0;
    if (wt < 1e-3) continue;
    taps.push(k, wt);
    wsum += wt;
  }
  for (let i = 1; i < taps.length; i += 2) taps[i]! /= wsum;
  const out = new Uint8Array(vw * vh);
  // Outside the image: mid grey (no strong edge at the border of the warped image), or, for ASIFT's own views, the
  // image continued by its edge pixels as OpenCV's AffineFeature warps (BORDER_REPLICATE): a grey fill still
  // steps at a dark photo's border, and that frame is the same in every photo of one size.
  const bg = 127;
  const replicate = !!spec.compress;
  const nt = taps.length / 2;
  const tdx = new Float64Array(nt);
  const tdy = new Float64Array(nt);
  const tw = new Float64Array(nt);
  for (let k = 0; k < nt; k++) {
    tdx[k] = taps[2 * k]! * dirX;
    tdy[k] = taps[2 * k]! * dirY;
    tw[k] = taps[2 * k + 1]!;
  }
  const a0 = Ai[0]!, a1 = Ai[1]!, a2 = Ai[2]!, a3 = Ai[3]!;
  const xm = w - 1, ym = h - 1, xb = w - 2, yb = h - 2;
  for (let v = 0; v < vh; v++) {
    const vv = v - b[1];
    for (let u = 0; u < vw; u++) {
      const uu = u - b[0];
      const x = a0 * uu + a1 * vv;
      const y = a2 * uu + a3 * vv;
      if (!replicate && (x < -0.5 || y < -0.5 || x > w - 0.5 || y > h - 0.5)) {
        out[v * vw + u] = bg;
        continue;
      }
      let s = 0;
      for (let k = 0; k < nt; k++) {
        // bilinear sample at (x, y) + k-th tap along phi, clamped to the image
        let sx = x + tdx[k]!;
        let sy = y + tdy[k]!;
        sx = sx < 0 ? 0 : sx > xm ? xm : sx;
        sy = sy < 0 ? 0 : sy > ym ? ym : sy;
        let x0 = Math.floor(sx);
        let y0 = Math.floor(sy);
        if (x0 > xb) x0 = xb;
        if (y0 > yb) y0 = yb;
        const fx = sx - x0;
        const fy = sy - y0;
        const o = y0 * w + x0;
        const g0 = grey[o]!;
        const g2 = grey[o + w]!;
        const top = g0 + (grey[o + 1]! - g0) * fx;
        const bot = g2 + (grey[o + w + 1]! - g2) * fx;
        s += tw[k]! * (top + (bot - top) * fy);
      }
      out[v * vw + u] = s + 0.5;
    }
  }
  return { spec, grey: out, width: vw, height: vh, A, b };
}

/** Maps a view's keypoints (x, y, size, angle) back to the original frame, in place. */
export function mapKeypointsBack(f: Features, view: Pick<SynthView, 'A' | 'b'>): void {
  const [a, b, c, d] = view.A;
  const det = a * d - b * c;
  const Ai = [d / det, -b / det, -c / det, a / det];
  const sz = Math.sqrt(Math.abs(1 / det));
  const kp = f.keypoints;
  for (let i = 0; i < f.count; i++) {
    const o = i * KP_STRIDE;
    const u = kp[o]! - view.b[0];
    const v = kp[o + 1]! - view.b[1];
    kp[o] = Ai[0]! * u + Ai[1]! * v;
    kp[o + 1] = Ai[2]! * u + Ai[3]! * v;
    kp[o + 2] = kp[o + 2]! * sz;
    // The angle is a direction in the image frame (y down): map the direction vector, not the angle.
    const t = (kp[o + 3]! * Math.PI) / 180;
    const dx = Ai[0]! * Math.cos(t) + Ai[1]! * Math.sin(t);
    const dy = Ai[2]! * Math.cos(t) + Ai[3]! * Math.sin(t);
    let ang = (Math.atan2(dy, dx) * 180) / Math.PI;
    if (ang < 0) ang += 360;
    if (ang >= 360) ang -= 360;
    kp[o + 3] = ang;
  }
}

/**
 * The keypoints of view `v` (view pixels) centred on the warped image of a width x height original (not on the
 * border around it), at most `keep` of them (0: all) in the given order (detectAndDescribe's: by response).
 */
export function onImage(f: Features, v: Pick<SynthView, 'A' | 'b'>, width: number, height: number, keep: number): Features {
  const [a, b, c, d] = v.A;
  const det = a * d - b * c;
  const kp = f.keypoints;
  const idx: number[] = [];
  for (let i = 0; i < f.count && (keep <= 0 || idx.length < keep); i++) {
    const u = kp[i * KP_STRIDE]! - v.b[0], t = kp[i * KP_STRIDE + 1]! - v.b[1];
    const x = (d * u - b * t) / det, y = (a * t - c * u) / det;
    if (x >= -0.5 && x <= width - 0.5 && y >= -0.5 && y <= height - 0.5) idx.push(i);
  }
  const keypoints = new Float32Array(idx.length * KP_STRIDE);
  const descriptors = new Uint8Array(idx.length * DESC_SIZE);
  idx.forEach((i, j) => {
    keypoints.set(kp.subarray(i * KP_STRIDE, (i + 1) * KP_STRIDE), j * KP_STRIDE);
    descriptors.set(f.descriptors.subarray(i * DESC_SIZE, (i + 1) * DESC_SIZE), j * DESC_SIZE);
  });
  return { ...f, count: idx.length, keypoints, descriptors };
}

export interface ViewFeaturesResult {
  /** One Features per view, keypoints in the original detection frame (width/height/scale of the original). */
  views: Features[];
  synthMs: number;
  extractMs: number;
}

/**
 * Throws a RangeError for input the warp would turn into garbage instead of failing: an empty image, a buffer
 * of the wrong size, or a view whose tilt or direction is not a finite number (tilt below 1 is no view).
 */
export function checkViewInput(d: { grey: Uint8Array; width: number; height: number }, specs: ViewSpec[]): void {
  const { width: w, height: h } = d;
  if (!Number.isInteger(w) || !Number.isInteger(h) || w < 2 || h < 2) throw new RangeError(`views: bad image size ${w}x${h}`);
  if (d.grey.length !== w * h) throw new RangeError(`views: grey image has ${d.grey.length} bytes, expected ${w}x${h} = ${w * h}`);
  for (const s of specs) {
    if (!Number.isFinite(s?.tilt) || !Number.isFinite(s?.phi) || s.tilt < 1) throw new RangeError(`views: bad view ${JSON.stringify(s)}`);
  }
}

/**
 * Synthesises the views of a decoded grey image, describes each with SIFT (at most `keypointsPerView`
 * keypoints), and maps the keypoints back to the original frame.
 */
export function viewFeatures(
  d: Pick<DecodedGrey, 'grey' | 'width' | 'height'> & { scale?: number },
  specs: ViewSpec[],
  sift: SiftParams,
  keypointsPerView: number,
  maxSide = Infinity,
): ViewFeaturesResult {
  checkViewInput(d, specs);
  let synthMs = 0;
  let extractMs = 0;
  const views: Features[] = [];
  for (const s of specs) {
    const t0 = performance.now();
    const v = synthView(d, s, maxSide);
    const t1 = performance.now();
    // ASIFT's own views drop keypoints centred off the image (on the replicated border), as OpenCV's mask does;
    // the strongest keypointsPerView on it remain (detected with room to spare: the output is by response).
    const masked = !!s.compress && (Math.abs(v.A[1]) > 1e-9 || Math.abs(v.A[2]) > 1e-9);
    let f = detectAndDescribe(v.grey, v.width, v.height, { ...sift, maxKeypoints: masked && keypointsPerView > 0 ? Math.ceil(keypointsPerView * 1.5) : keypointsPerView });
    if (masked) f = onImage(f, v, d.width, d.height, keypointsPerView);
    mapKeypointsBack(f, v);
    const t2 = performance.now();
    synthMs += t1 - t0;
    extractMs += t2 - t1;
    views.push({ ...f, width: d.width, height: d.height, scale: d.scale ?? 1 });
  }
  return { views, synthMs, extractMs };
}
