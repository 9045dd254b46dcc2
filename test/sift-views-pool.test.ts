// The synthesised views of a query on the sift worker pool (SiftPool.views): the same features, bit for bit and in
// the same order, as viewFeatures in the calling thread; the event loop keeps turning while workers compute them;
// bad input rejects (from the worker) without breaking the pool; closing the pool settles jobs in flight.
import { expect } from 'chai';
import { loadConfig } from '../src/config/load.js';
import { siftParams } from '../src/lib/sift/extract.js';
import { SiftPool } from '../src/lib/sift/pool.js';
import type { Features } from '../src/lib/sift/types.js';
import { viewFeatures, viewSpecs, type ViewFeaturesResult } from '../src/lib/sift/views.js';
import { sceneGrey } from './sift-helpers.js';

const W = 320;
const H = 240;

function expectSameViews(got: ViewFeaturesResult, want: ViewFeaturesResult): void {
  expect(got.views).to.have.length(want.views.length);
  got.views.forEach((f: Features, i) => {
    const w = want.views[i]!;
    expect([f.width, f.height, f.scale, f.count], `view ${i}`).to.deep.equal([w.width, w.height, w.scale, w.count]);
    // Exact equality of every float and byte (Buffer.compare: 0 when identical).
    expect(Buffer.compare(Buffer.from(f.keypoints.buffer, f.keypoints.byteOffset, f.keypoints.byteLength), Buffer.from(w.keypoints.buffer, w.keypoints.byteOffset, w.keypoints.byteLength)), `keypoints of view ${i}`).to.equal(0);
    expect(Buffer.compare(Buffer.from(f.descriptors), Buffer.from(w.descriptors)), `descriptors of view ${i}`).to.equal(0);
  });
}

describe('sift: views on the worker pool', function () {
  this.timeout(60_000);
  const { config } = loadConfig({});
  const vc = config.match.views;
  const specs = viewSpecs(vc.tilts, vc.rotations);
  const opts = { sift: siftParams(config.sift), keypointsPerView: vc.keypointsPerView, maxSide: vc.maxSide };
  let grey: Uint8Array;
  let want: ViewFeaturesResult;
  let pool: SiftPool;

  before(async () => {
    grey = await sceneGrey(W, H, 21);
    want = viewFeatures({ grey, width: W, height: H, scale: 0.5 }, specs, opts.sift, opts.keypointsPerView, opts.maxSide);
    pool = new SiftPool(config.sift, 2);
  });
  after(() => pool?.close());

  it('gives the in-thread features exactly (every view, in spec order), and leaves the caller its image', async () => {
    expect(specs.length).to.be.greaterThan(2);
    expect(want.views.every((f) => f.count > 0)).to.equal(true);
    const before = Uint8Array.from(grey);
    const got = await pool.views({ grey, width: W, height: H, scale: 0.5 }, specs, opts);
    expectSameViews(got, want);
    expect(got.synthMs).to.be.greaterThan(0);
    expect(got.extractMs).to.be.greaterThan(0);
    expect(Buffer.compare(Buffer.from(grey), Buffer.from(before)), 'the caller keeps its grey image').to.equal(0);
    // One thread: the same function in the calling thread.
    const one = new SiftPool(config.sift, 1);
    try {
      expectSameViews(await one.views({ grey, width: W, height: H, scale: 0.5 }, specs, opts), want);
    } finally {
      await one.close();
    }
  });

  it('keeps the event loop turning while the workers compute (and blocks it in the calling thread)', async () => {
    let ticks = 0;
    const count = async (p: SiftPool) => {
      ticks = 0;
      const timer = setInterval(() => ticks++, 1);
      try {
        await p.views({ grey, width: W, height: H, scale: 0.5 }, specs, opts);
      } finally {
        clearInterval(timer);
      }
      return ticks;
    };
    expect(await count(pool), 'ticks while workers compute the views').to.be.greaterThan(0);
    const one = new SiftPool(config.sift, 1);
    try {
      expect(await count(one), 'ticks while this thread computes them').to.equal(0);
    } finally {
      await one.close();
    }
  });

  it('rejects bad input from the worker and keeps working', async () => {
    const outcome = (p: Promise<unknown>) => p.then(() => undefined, (e: Error) => e);
    const bad: [string, Promise<Error | undefined>][] = [
      ['zero-size image', outcome(pool.views({ grey: new Uint8Array(0), width: 0, height: 0 }, specs.slice(0, 2), opts))],
      ['short buffer', outcome(pool.views({ grey: grey.subarray(0, 100), width: W, height: H }, specs.slice(0, 1), opts))],
      ['tilt NaN', outcome(pool.views({ grey, width: W, height: H }, [{ tilt: Number.NaN, phi: 0 }], opts))],
      ['tilt below 1', outcome(pool.views({ grey, width: W, height: H }, [specs[0]!, { tilt: 0.5, phi: 30 }], opts))],
    ];
    for (const [what, p] of bad) {
      const err = await p;
      expect(err, what).to.be.instanceOf(RangeError);
      expect(err!.message, what).to.match(/^views: (bad|grey image has 100 bytes)/);
    }
    // The same input in the calling thread rejects the same way (a rejected promise, not a throw).
    const one = new SiftPool(config.sift, 1);
    const err = await one.views({ grey, width: W, height: H }, [{ tilt: Number.NaN, phi: 0 }], opts).catch((e: Error) => e);
    expect(err).to.be.instanceOf(RangeError);
    await one.close();
    // Still working, with the same results, and images still go through too.
    expectSameViews(await pool.views({ grey, width: W, height: H, scale: 0.5 }, specs.slice(0, 3), opts), { ...want, views: want.views.slice(0, 3) });
  });

  it('close() rejects the views still queued or running instead of leaving them pending', async () => {
    const p = new SiftPool(config.sift, 2);
    const job = p.views({ grey, width: W, height: H }, specs, opts).then(
      () => 'resolved',
      (e: Error) => e.message,
    );
    await p.close();
    expect(await job).to.equal('sift pool closed');
    expect(await p.views({ grey, width: W, height: H }, specs, opts).catch((e: Error) => e.message)).to.equal('sift pool is closed');
  });
});
