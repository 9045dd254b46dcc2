// Affine view synthesis (src/lib/sift/views.ts): the view matrices, the exact mapping of keypoints back to the
// original frame, and on a rendered scene, that SIFT keypoints of a tilted view land on the same scene points as
// the original's (ratio matches between the original and the mapped view agree with the identity).
import { expect } from 'chai';
import { detectAndDescribe } from '../src/lib/sift/sift.js';
import { asiftSpecs, mapKeypointsBack, synthView, viewFeatures, viewMatrix, viewSpecs, warpAffine } from '../src/lib/sift/views.js';
import { DEFAULT_SIFT_PARAMS, KP_STRIDE, type Features } from '../src/lib/sift/types.js';
import { ratioMatches, sceneGrey } from './sift-helpers.js';

const W = 320;
const H = 240;

describe('sift: affine views', () => {
  it('builds tilt x rotation specs and area-preserving view matrices that compress along phi', () => {
    const specs = viewSpecs([2, 4], 4);
    expect(specs).to.have.length(8);
    expect(specs.slice(0, 4).map((s) => s.phi)).to.deep.equal([0, 45, 90, 135]);
    expect(specs.slice(4).map((s) => s.phi)).to.deep.equal([22.5, 67.5, 112.5, 157.5]);
    expect(viewSpecs([1, 2], 3)).to.have.length(3); // tilt 1 is the plain query: no view
    for (const s of specs) {
      const [a, b, c, d] = viewMatrix(s);
      expect(a * d - b * c).to.be.closeTo(1, 1e-9);
      const u = [Math.cos((s.phi * Math.PI) / 180), Math.sin((s.phi * Math.PI) / 180)];
      // along phi: shrunk by sqrt(t); across: stretched by sqrt(t)
      expect(a * u[0]! + b * u[1]!).to.be.closeTo(u[0]! / Math.sqrt(s.tilt), 1e-9);
      expect(c * u[0]! + d * u[1]!).to.be.closeTo(u[1]! / Math.sqrt(s.tilt), 1e-9);
      expect(a * -u[1]! + b * u[0]!).to.be.closeTo(-u[1]! * Math.sqrt(s.tilt), 1e-9);
    }
  });

  it('samples the view sphere as ASIFT does, with compress views that shrink by t along phi only', () => {
    const specs = asiftSpecs(5);
    // OpenCV's AffineFeature at maxTilt 5: the image, then 4, 5, 8, 10 and 15 directions for t = sqrt(2)^1..5
    expect(specs).to.have.length(43);
    expect(specs[0]).to.deep.equal({ tilt: 1, phi: 0 });
    const per = new Map<number, number[]>();
    for (const s of specs.slice(1)) per.set(Number(s.tilt.toFixed(3)), [...(per.get(Number(s.tilt.toFixed(3))) ?? []), s.phi]);
    expect([...per.keys()]).to.deep.equal([1.414, 2, 2.828, 4, 5.657]);
    expect([...per.values()].map((v) => v.length)).to.deep.equal([4, 5, 8, 10, 15]);
    expect(per.get(2)).to.deep.equal([0, 36, 72, 108, 144]); // 72/t degrees apart, 180 itself left out
    expect(asiftSpecs(0)).to.have.length(1);
    for (const s of specs.slice(1)) {
      const [a, b, c, d] = viewMatrix(s);
      expect(a * d - b * c).to.be.closeTo(1 / s.tilt, 1e-9);
      const u = [Math.cos((s.phi * Math.PI) / 180), Math.sin((s.phi * Math.PI) / 180)];
      const along = [a * u[0]! + b * u[1]!, c * u[0]! + d * u[1]!];
      const across = [a * -u[1]! + b * u[0]!, c * -u[1]! + d * u[0]!];
      expect(Math.hypot(along[0]!, along[1]!)).to.be.closeTo(1 / s.tilt, 1e-9); // along phi: shrunk by t
      expect(Math.hypot(across[0]!, across[1]!)).to.be.closeTo(1, 1e-9); // across: kept
      expect(along[0]! * across[0]! + along[1]! * across[1]!).to.be.closeTo(0, 1e-9); // no shear: turned, then squashed
      expect(along[1]!, 'phi turned onto the x axis').to.be.closeTo(0, 1e-9);
    }
    const v = synthView({ grey: new Uint8Array(W * H).fill(90), width: W, height: H }, { tilt: 4, phi: 0, compress: true });
    expect([v.width, v.height]).to.deep.equal([Math.ceil((W - 1) / 4) + 1, H]);
  });

  it("ASIFT's views continue the image by its edge pixels and keep only keypoints centred on the image", async () => {
    // A dark photo: a grey fill would put a step along the warped image's border, and corners SIFT finds there
    const grey = (await sceneGrey(W, H, 5)).map((v) => (v * 3) >> 3);
    const spec = { tilt: 2 * Math.SQRT2, phi: 36, compress: true };
    const v = synthView({ grey, width: W, height: H }, spec);
    const [a, b, c, d] = v.A;
    const det = a * d - b * c;
    let outside = 0;
    for (let y = 0; y < v.height; y += 3)
      for (let x = 0; x < v.width; x += 3) {
        const u = x - v.b[0], t = y - v.b[1];
        const ox = (d * u - b * t) / det, oy = (a * t - c * u) / det;
        if (ox > -0.5 && oy > -0.5 && ox < W - 0.5 && oy < H - 0.5) continue;
        outside++;
        // off the image: the nearest edge pixel (BORDER_REPLICATE), blurred along phi like the rest
        const e = grey[Math.round(Math.min(H - 1, Math.max(0, oy))) * W + Math.round(Math.min(W - 1, Math.max(0, ox)))]!;
        expect(Math.abs(v.grey[y * v.width + x]! - e), `view pixel ${x},${y}`).to.be.at.most(24);
      }
    expect(outside).to.be.greaterThan(500);
    const r = viewFeatures({ grey, width: W, height: H }, [spec, { tilt: 1, phi: 0 }], DEFAULT_SIFT_PARAMS, 200);
    expect(r.views[0]!.count).to.be.within(20, 200);
    for (const f of r.views)
      for (let i = 0; i < f.count; i++) {
        expect(f.keypoints[i * KP_STRIDE]!).to.be.within(-0.5, W - 0.5);
        expect(f.keypoints[i * KP_STRIDE + 1]!).to.be.within(-0.5, H - 0.5);
      }
    // the views of one-sided search (not ASIFT's) keep their mid-grey fill
    const g = synthView({ grey, width: W, height: H }, { tilt: 2, phi: 36 });
    expect(g.grey[0]).to.equal(127);
  });

  it('maps keypoint positions, sizes and orientations back exactly', () => {
    const A: [number, number, number, number] = [0.6, -0.3, 0.4, 1.5];
    const b: [number, number] = [40, -12];
    const pts = [
      [10, 20, 4, 0],
      [200, 50, 7.5, 90],
      [33.3, 180.2, 2, 225],
      [300, 230, 12, 359],
    ];
    const f: Features = { width: 0, height: 0, scale: 1, count: pts.length, keypoints: new Float32Array(pts.length * KP_STRIDE), descriptors: new Uint8Array(pts.length * 128) };
    pts.forEach(([x, y, size, ang], i) => {
      const t = (ang! * Math.PI) / 180;
      const dx = A[0] * Math.cos(t) + A[1] * Math.sin(t);
      const dy = A[2] * Math.cos(t) + A[3] * Math.sin(t);
      f.keypoints.set([A[0] * x! + A[1] * y! + b[0], A[2] * x! + A[3] * y! + b[1], size! * Math.sqrt(A[0] * A[3] - A[1] * A[2]), (((Math.atan2(dy, dx) * 180) / Math.PI + 360) % 360), 1, 0], i * KP_STRIDE);
    });
    mapKeypointsBack(f, { A, b });
    pts.forEach(([x, y, size, ang], i) => {
      const o = i * KP_STRIDE;
      expect(f.keypoints[o]).to.be.closeTo(x!, 1e-3);
      expect(f.keypoints[o + 1]).to.be.closeTo(y!, 1e-3);
      expect(f.keypoints[o + 2]).to.be.closeTo(size!, 1e-3);
      const d = Math.abs(f.keypoints[o + 3]! - ang!) % 360;
      expect(Math.min(d, 360 - d)).to.be.lessThan(1e-2);
    });
  });

  it('a tilted view of a scene matches the original at the same points once mapped back', async () => {
    const grey = await sceneGrey(W, H, 7);
    const orig = detectAndDescribe(grey, W, H, { ...DEFAULT_SIFT_PARAMS, maxKeypoints: 600 });
    const th = (35 * Math.PI) / 180;
    const rot = warpAffine({ grey, width: W, height: H }, [0.9 * Math.cos(th), -0.9 * Math.sin(th), 0.9 * Math.sin(th), 0.9 * Math.cos(th)], { phi: 0, compression: 1 });
    for (const [spec, v] of [
      [{ tilt: 2, phi: 30 }, synthView({ grey, width: W, height: H }, { tilt: 2, phi: 30 })],
      [{ tilt: 2, phi: 110 }, synthView({ grey, width: W, height: H }, { tilt: 2, phi: 110 })],
      [{ tilt: 2, phi: 60, compress: true }, synthView({ grey, width: W, height: H }, { tilt: 2, phi: 60, compress: true })],
      [{ tilt: 1, phi: 35 }, rot], // a similarity: orientations are covariant, so they must come back exactly
    ] as const) {
      if (!('compress' in spec)) expect(v.width * v.height).to.be.greaterThan(0.5 * W * H); // area-preserving (bounding box of the warp)
      const vf = detectAndDescribe(v.grey, v.width, v.height, { ...DEFAULT_SIFT_PARAMS, maxKeypoints: 600 });
      mapKeypointsBack(vf, v);
      const m = ratioMatches(vf, orig);
      expect(m.length, `ratio matches ${JSON.stringify(spec)}`).to.be.greaterThan(25);
      const dist = m.map(([i, j]) => Math.hypot(vf.keypoints[i * 6]! - orig.keypoints[j * 6]!, vf.keypoints[i * 6 + 1]! - orig.keypoints[j * 6 + 1]!));
      const close = dist.filter((d) => d < 2).length;
      expect(close / m.length, `share of matches at the same point (tilt ${spec.tilt})`).to.be.greaterThan(0.4);
      if (spec.tilt > 1) continue; // under a squash SIFT orientations are not covariant; under a similarity they are
      const angErr = m
        .filter((_, k) => dist[k]! < 2)
        .map(([i, j]) => {
          const d = Math.abs(vf.keypoints[i * 6 + 3]! - orig.keypoints[j * 6 + 3]!) % 360;
          return Math.min(d, 360 - d);
        })
        .sort((a, b) => a - b);
      expect(angErr[angErr.length >> 1]!).to.be.lessThan(3);
    }
  });

  it('viewFeatures returns one Features per view in the original frame, with the per-view keypoint cap', async () => {
    const grey = await sceneGrey(W, H, 8);
    const r = viewFeatures({ grey, width: W, height: H, scale: 0.5 }, viewSpecs([2.5], 2), DEFAULT_SIFT_PARAMS, 150, 400);
    expect(r.views).to.have.length(2);
    for (const f of r.views) {
      expect(f.count).to.be.within(50, 150);
      expect([f.width, f.height, f.scale]).to.deep.equal([W, H, 0.5]);
      for (let i = 0; i < f.count; i++) {
        expect(f.keypoints[i * 6]!).to.be.within(-2, W + 1);
        expect(f.keypoints[i * 6 + 1]!).to.be.within(-2, H + 1);
      }
    }
    expect(r.synthMs).to.be.greaterThan(0);
    expect(r.extractMs).to.be.greaterThan(0);
  });
});
