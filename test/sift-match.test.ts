// Our descriptors match a synthetic scene to transformed copies of itself, and the matches agree with the
// known transform.
import { expect } from 'chai';
import sharp, { type Sharp } from 'sharp';
import { detectAndDescribe } from '../src/lib/sift/sift.js';
import type { Features } from '../src/lib/sift/types.js';
import { agreeing, ratioMatches, rotationAbout, sceneGrey, warp, type Affine } from './sift-helpers.js';

// No x2 upsampling in most cases here, to keep the suite fast; one case covers it.
const P = { maxKeypoints: 600, upsample: false };
const W = 360;
const H = 280;

describe('sift: matching under known transforms', function () {
  let grey: Uint8Array;
  let base: Features;

  before(async () => {
    grey = await sceneGrey(W, H, 7);
    base = detectAndDescribe(grey, W, H, P);
  });

  it('finds keypoints with descriptors in the OpenCV layout', () => {
    expect(base.count).to.be.greaterThan(100);
    expect(base.keypoints.length).to.equal(base.count * 6);
    expect(base.descriptors.length).to.equal(base.count * 128);
    // Responses sorted strongest first, all above the contrast threshold (0.04 / 3).
    for (let i = 1; i < base.count; i++) expect(base.keypoints[i * 6 + 4]!).to.be.at.most(base.keypoints[(i - 1) * 6 + 4]!);
    expect(base.keypoints[(base.count - 1) * 6 + 4]!).to.be.at.least(0.04 / 3 - 1e-6);
    // Each descriptor was normalised: its L2 norm is close to 512 (clipping and rounding aside).
    let n2 = 0;
    for (let k = 0; k < 128; k++) n2 += base.descriptors[k]! ** 2;
    expect(Math.sqrt(n2)).to.be.within(400, 530);
  });

  it('is deterministic', () => {
    const again = detectAndDescribe(grey, W, H, P);
    expect(Buffer.from(again.descriptors).equals(Buffer.from(base.descriptors))).to.equal(true);
  });

  it('keeps at most maxKeypoints, the strongest', () => {
    const few = detectAndDescribe(grey, W, H, { ...P, maxKeypoints: 50 });
    expect(few.count).to.equal(50);
    expect(few.keypoints[49 * 6 + 4]).to.equal(base.keypoints[49 * 6 + 4]);
  });

  const cases: Array<{ name: string; m: Affine; w: number; h: number }> = [
    { name: 'rotation 30°', m: rotationAbout(30, W / 2, H / 2), w: W, h: H },
    { name: 'rotation 90°', m: rotationAbout(90, W / 2, H / 2), w: W, h: H },
    { name: 'scale 0.7', m: [0.7, 0, 0, 0, 0.7, 0], w: Math.round(W * 0.7), h: Math.round(H * 0.7) },
    { name: 'scale 1.5 + rotation 10°', m: rotationAbout(10, W / 2, H / 2, 1.5, W / 4, H / 4), w: Math.round(W * 1.5), h: Math.round(H * 1.5) },
    { name: 'crop (translation)', m: [1, 0, -60, 0, 1, -40], w: W - 100, h: H - 80 },
  ];
  for (const c of cases) {
    it(`matches under ${c.name}`, () => {
      const img = warp(grey, W, H, c.m, c.w, c.h);
      const f = detectAndDescribe(img, c.w, c.h, P);
      const matches = ratioMatches(base, f);
      const good = agreeing(base, f, matches, c.m, 3);
      expect(matches.length, 'ratio-test matches').to.be.greaterThan(40);
      expect(good / matches.length, 'share agreeing with the transform').to.be.greaterThan(0.7);
    });
  }

  it('matches under blur and brightness changes', async () => {
    for (const op of [(s: Sharp) => s.blur(1.2), (s: Sharp) => s.linear(1.3, 20), (s: Sharp) => s.linear(0.6, 0)]) {
      const { data } = await op(sharp(Buffer.from(grey), { raw: { width: W, height: H, channels: 1 } })).toColourspace('b-w').raw().toBuffer({ resolveWithObject: true });
      const f = detectAndDescribe(new Uint8Array(data), W, H, P);
      const matches = ratioMatches(base, f);
      const good = agreeing(base, f, matches, [1, 0, 0, 0, 1, 0], 2);
      expect(matches.length).to.be.greaterThan(40);
      expect(good / matches.length).to.be.greaterThan(0.85);
    }
  });

  it('does not match an unrelated scene', async () => {
    const other = await sceneGrey(W, H, 99);
    const f = detectAndDescribe(other, W, H, P);
    const related = ratioMatches(base, detectAndDescribe(warp(grey, W, H, rotationAbout(30, W / 2, H / 2), W, H), W, H, P));
    expect(ratioMatches(base, f).length).to.be.lessThan(related.length / 4);
  });

  it('upsampling finds keypoints in the same coordinate frame', () => {
    const up = detectAndDescribe(grey, W, H, { maxKeypoints: 600, upsample: true });
    expect(up.width).to.equal(W);
    const matches = ratioMatches(base, up);
    expect(matches.length).to.be.greaterThan(40);
    expect(agreeing(base, up, matches, [1, 0, 0, 0, 1, 0], 1.5) / matches.length).to.be.greaterThan(0.9);
  });

  it('the scalar JavaScript fallback gives the same features as the WebAssembly path', () => {
    const js = detectAndDescribe(grey, W, H, { ...P, useWasm: false });
    expect(js.count).to.equal(base.count);
    let maxd = 0;
    for (let i = 0; i < js.count * 6; i++) if (i % 6 !== 3) maxd = Math.max(maxd, Math.abs(js.keypoints[i]! - base.keypoints[i]!));
    expect(maxd).to.be.lessThan(0.01);
    let diff = 0;
    for (let i = 0; i < js.descriptors.length; i++) diff += Math.abs(js.descriptors[i]! - base.descriptors[i]!);
    expect(diff / js.descriptors.length).to.be.lessThan(0.05);
  });

  it('returns no keypoints on a flat or tiny image', () => {
    expect(detectAndDescribe(new Uint8Array(100 * 80).fill(90), 100, 80).count).to.equal(0);
    expect(detectAndDescribe(new Uint8Array(8 * 8).fill(90), 8, 8).count).to.equal(0);
  });
});
