// Hostile requests to the review server (issue 18, finding 6): every one gets a clear 4xx naming what was wrong,
// none a 500, and nothing stored changes. Decompression bombs already in the store (from a bank older than the
// import bounds) are refused from their stored size, never decoded or sent raw.
import fs from 'node:fs';
import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import { PairsRepo, ReviewsRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { createReviewServer } from '../src/review/index.js';
import { buildReviewBank, type ReviewFixture } from './review-helpers.js';
import { bombs } from './helpers/hostile-images.js';

describe('hostile input: review server', function () {
  let fx: ReviewFixture;
  let app: FastifyInstance;
  const { config } = loadConfig();
  const stored: Array<{ format: string; sha: string }> = [];

  before(async () => {
    fx = await buildReviewBank();
    // what an older bank may hold: bombs of every decoder, stored by their header (probe only, as before issue 18)
    for (const b of await bombs()) {
      const rec = await fx.bank.images.prepare(b.buf);
      await fx.bank.transaction(async (tx) => tx.images.record(rec));
      stored.push({ format: b.format, sha: rec.sha256 });
    }
    app = createReviewServer(fx.bank, config, { host: '127.0.0.1', token: '' });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await fx.bank.close();
    fs.rmSync(fx.dir, { recursive: true, force: true });
  });

  const state = async () => ({
    reviews: (await fx.bank.repo(ReviewsRepo).counts()).total,
    pairs: (await fx.bank.repo(PairsRepo).count(true)) + (await fx.bank.repo(PairsRepo).count(false)),
  });

  it('a judgement with a garbage Origin is refused with 403, not a 500', async () => {
    const before = await state();
    const { sourceItemId: s, targetItemId: t } = fx.pairs[0]!;
    for (const origin of ['garbage', 'http://', '::::', 'null', 'http://evil.example', 'http://[::1', '\u0000']) {
      const res = await app.inject({
        method: 'POST', url: `/api/pairs/${s}/${t}/review`, headers: { 'content-type': 'application/json', origin }, payload: '{"verdict":"accepted"}',
      });
      expect(res.statusCode, origin).to.equal(403);
      expect(res.json()).to.include({ statusCode: 403, error: 'Forbidden', message: 'cross-origin judgement refused' });
    }
    const own = await app.inject({
      method: 'POST', url: `/api/pairs/${s}/${t}/review`, headers: { 'content-type': 'application/json', origin: 'http://localhost:8080', host: 'localhost:8080' }, payload: '{"verdict":"accepted"}',
    });
    expect(own.statusCode).to.equal(200);
    await app.inject({ method: 'POST', url: `/api/pairs/${s}/${t}/review`, headers: { 'content-type': 'application/json' }, payload: '{"verdict":null}' });
    expect(await state()).to.deep.equal(before);
  });

  it('/thumb and /image of a decompression bomb (every decoder) are refused from the stored size, without decoding it', async () => {
    expect(stored.map((s) => s.format)).to.deep.equal(['png', 'jpeg', 'gif', 'webp', 'tiff', 'avif', 'svg']);
    // Refused from the row: the image's bytes are never read from the store (so never decoded nor sent).
    const images = fx.bank.images;
    const bytesRead: string[] = [];
    const read = images.read.bind(images);
    const stream = images.stream.bind(images);
    images.read = (sha: string) => (bytesRead.push(sha), read(sha));
    images.stream = (sha: string) => (bytesRead.push(sha), stream(sha));
    try {
      for (const { format, sha } of stored) {
        for (const route of ['thumb', 'image']) {
          const res = await app.inject({ method: 'GET', url: `/${route}/${sha}` });
          expect(res.statusCode, `${route} ${format}`).to.equal(422);
          expect(res.headers['content-type'], `${route} ${format}`).to.match(/application\/json/);
          expect(res.json().message, `${route} ${format}`).to.match(new RegExp(`^image ${sha} is \\d+x\\d+ \\(\\d+ pixels\\), over sift.maxPixels 50000000`));
          expect(res.json().error).to.equal('Unprocessable Entity');
          expect(bytesRead, `${route} ${format}: refused from the row, its bytes never read`).to.deep.equal([]);
        }
      }
      // the spy sees reads: an ordinary image's thumbnail reads its bytes
      const ok = (await fx.bank.items.byId(fx.pairs[0]!.sourceItemId))!.imageSha256;
      expect((await app.inject({ method: 'GET', url: `/image/${ok}` })).statusCode).to.equal(200);
      expect(bytesRead).to.deep.equal([ok]);
    } finally {
      images.read = read;
      images.stream = stream;
    }
    expect(fs.existsSync(`${fx.dataDir}/thumbs/${stored[0]!.sha.slice(0, 2)}`)).to.equal(false);
    // the pages of ordinary images still work
    const ok = (await fx.bank.items.byId(fx.pairs[0]!.sourceItemId))!.imageSha256;
    expect((await app.inject({ method: 'GET', url: `/thumb/${ok}` })).statusCode).to.equal(200);
  });

  it('an impossible date (to=2024-02-30, from=2023-13-01) is a 400, not rolled over into the next month', async () => {
    for (const q of ['to=2024-02-30', 'from=2023-02-29', 'to=2023-04-31', 'from=2023-13-01', 'to=2024-00-10', 'from=0000-00-00']) {
      const res = await app.inject({ method: 'GET', url: `/api/pairs?kind=all&${q}` });
      expect(res.statusCode, q).to.equal(400);
      expect(res.json().message, q).to.match(/^(from|to): (expected a date YYYY-MM-DD|\d{4}-\d{2}-\d{2} is not a date of the calendar)$/);
    }
    expect((await app.inject({ method: 'GET', url: '/api/pairs?kind=all&from=2024-02-29&to=2024-02-29' })).statusCode).to.equal(200);
  });

  it('404 bodies say Not Found, and every 4xx body names its own status', async () => {
    const miss = await app.inject({ method: 'GET', url: '/pair/99999/99998' });
    expect(miss.statusCode).to.equal(404);
    expect(miss.json()).to.include({ statusCode: 404, error: 'Not Found' });
    const img = await app.inject({ method: 'GET', url: `/image/${'0'.repeat(64)}` });
    expect(img.json()).to.include({ statusCode: 404, error: 'Not Found' });
    const route = await app.inject({ method: 'GET', url: '/nowhere' });
    expect(route.json()).to.include({ statusCode: 404, error: 'Not Found' });
    const bad = await app.inject({ method: 'GET', url: '/api/pairs?limit=0' });
    expect(bad.json()).to.include({ statusCode: 400, error: 'Bad Request' });
    const { sourceItemId: s, targetItemId: t } = fx.pairs[0]!;
    const form = await app.inject({ method: 'POST', url: `/api/pairs/${s}/${t}/review`, headers: { 'content-type': 'text/plain' }, payload: 'verdict=accepted' });
    expect(form.json()).to.include({ statusCode: 415, error: 'Unsupported Media Type' });
  });
});
