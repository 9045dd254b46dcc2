// The review server's API through fastify.inject: the list and its keyset pages, the pair view, judgements that
// survive re-deciding, images by hash only, the token for non-loopback clients, and hostile input.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import sharp from 'sharp';
import type { FastifyInstance } from 'fastify';
import { PairsRepo, ReviewsRepo, SentencePairsRepo, type PairListFilter } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { createReviewServer } from '../src/review/index.js';
import { labelledPairsFromReviews } from '../src/review/labelled.js';
import { exportPairs } from '../src/stages/export/export.js';
import { buildReviewBank, SCENES, type ReviewFixture } from './review-helpers.js';

const TOKEN = 'test-token-0123456789';


async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('review: API', function () {
  let fx: ReviewFixture;
  let app: FastifyInstance;
  const { config } = loadConfig();

  before(async () => {
    fx = await buildReviewBank();
    app = createReviewServer(fx.bank, config, { host: '127.0.0.1', token: TOKEN });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await fx.bank.close();
    fs.rmSync(fx.dir, { recursive: true, force: true });
  });

  const get = (url: string, extra: Record<string, unknown> = {}) => app.inject({ method: 'GET', url, ...extra });
  const review = (s: number, t: number, body: unknown, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: `/api/pairs/${s}/${t}/review`, headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });
  const counts = async () => ({
    reviews: (await fx.bank.repo(ReviewsRepo).counts()).total,
    pairs: (await fx.bank.repo(PairsRepo).count(true)) + (await fx.bank.repo(PairsRepo).count(false)),
    items: (await fx.bank.items.count('source')) + (await fx.bank.items.count('target')),
  });

  it('lists emitted pairs best C first, with thumbnails, captions and scores', async () => {
    const res = await get('/');
    expect(res.statusCode).to.equal(200);
    expect(res.headers['content-type']).to.match(/text\/html/);
    const body = res.body;
    expect(body).to.include(SCENES[0]!.en).and.include(SCENES[0]!.zh).and.include(SCENES[1]!.en);
    expect(body).not.to.include(SCENES[2]!.en); // not emitted: only in the candidates list
    expect(body.indexOf(SCENES[0]!.en)).to.be.lessThan(body.indexOf(SCENES[1]!.en));
    const src = (await fx.bank.items.byId(fx.pairs[0]!.sourceItemId))!;
    expect(body).to.include(`/thumb/${src.imageSha256}`);
    const json = (await get('/api/pairs?kind=all&sort=image&dir=asc')).json();
    expect(json.rows.map((r: { imageScore: number }) => r.imageScore)).to.deep.equal([0.3, 0.41, 0.82]);
    expect(json.rows[2].inliers).to.equal(57);
    expect(json.rows[2].explain.matches).to.have.length(4);
  });

  it('filters by level, score range, site, date and kind', async () => {
    const ids = async (q: string) => ((await get(`/api/pairs?${q}`)).json().rows as Array<{ sourceExtId: string }>).map((r) => r.sourceExtId);
    expect(await ids('level=com')).to.deep.equal(['en-1']);
    expect(await ids('kind=candidate')).to.deep.equal(['en-2']);
    expect(await ids('kind=all&cmin=0.5&cmax=0.6')).to.deep.equal(['en-1']);
    expect(await ids('kind=all&imin=0.4')).to.deep.equal(['en-0', 'en-1']);
    expect(await ids('kind=all&site=nonexistent.example')).to.deep.equal([]);
    expect(await ids('kind=all&from=2026-11-21&to=2026-11-21')).to.deep.equal(['en-1']);
    expect(await ids('kind=all&sort=date')).to.deep.equal(['en-2', 'en-1', 'en-0']);
  });

  it('pages with keyset cursors: every row once, in order, in both directions of the sort', async () => {
    for (const q of ['kind=all&sort=c', 'kind=all&sort=c&dir=asc', 'kind=all&sort=id', 'kind=all&sort=date&dir=asc', 'kind=all&sort=image']) {
      const seen: string[] = [];
      let url = `/api/pairs?${q}&limit=1`;
      for (let i = 0; i < 10; i++) {
        const j = (await get(url)).json();
        seen.push(...j.rows.map((r: { sourceExtId: string }) => r.sourceExtId));
        if (!j.next) break;
        url = `/api/pairs?${q}&limit=1&after=${j.next}`;
      }
      const all = ((await get(`/api/pairs?${q}`)).json().rows as Array<{ sourceExtId: string }>).map((r) => r.sourceExtId);
      expect(seen, q).to.deep.equal(all);
      expect(all, q).to.have.length(3);
      // and back: from the last page, "previous" walks to the first
      const back: string[] = [];
      let j = (await get(url)).json();
      back.unshift(...j.rows.map((r: { sourceExtId: string }) => r.sourceExtId));
      for (let i = 0; i < 10 && j.prev; i++) {
        j = (await get(`/api/pairs?${q}&limit=1&before=${j.prev}`)).json();
        back.unshift(...j.rows.map((r: { sourceExtId: string }) => r.sourceExtId));
      }
      expect(back, `${q} backwards`).to.deep.equal(all);
    }
  });

  it('walks an index for the list queries (EXPLAIN QUERY PLAN): no table scan, no sort', async () => {
    const repo = fx.bank.repo(ReviewsRepo);
    const filters: PairListFilter[] = [
      { kind: 'emitted', sort: 'c', dir: 'desc' },
      { kind: 'emitted', sort: 'c', dir: 'desc', level: 'com' },
      { kind: 'emitted', sort: 'image', dir: 'asc' },
      { kind: 'emitted', sort: 'date', dir: 'desc' },
      { kind: 'emitted', sort: 'id', dir: 'asc' },
      { kind: 'candidate', sort: 'c', dir: 'desc', review: 'unreviewed', cMin: 0.1 },
      { kind: 'all', sort: 'c', dir: 'desc' },
      { kind: 'all', sort: 'image', dir: 'desc', site: 'x' },
      { kind: 'all', sort: 'date', dir: 'asc' },
    ];
    for (const f of filters) {
      for (const after of [undefined, { v: f.sort === 'date' ? '2026-11-21' : 0.5, id: 2 }]) {
        for (const plan of await repo.explainListPairs(f, f.sort === 'id' ? (after ? { v: 2, id: 2 } : undefined) : after)) {
          const pLines = plan.split('\n').filter((l) => / p /.test(` ${l} `) || l.startsWith('SEARCH p') || l.startsWith('SCAN p'));
          expect(pLines.length, plan).to.be.greaterThan(0);
          for (const l of pLines) expect(l, `${JSON.stringify(f)}\n${plan}`).to.match(/^SEARCH p USING (COVERING )?INDEX |^SCAN p USING (COVERING )?INDEX /);
          expect(plan, JSON.stringify(f)).not.to.include('TEMP B-TREE');
          expect(plan).not.to.match(/^SCAN (s|t|r)\b/m);
        }
      }
    }
  });

  it('shows a pair: both images, captions with the aligned words in the same colour on both sides, scores, provenance', async () => {
    const { sourceItemId: s, targetItemId: t } = fx.pairs[0]!;
    const res = await get(`/pair/${s}/${t}`);
    expect(res.statusCode).to.equal(200);
    const body = res.body;
    const src = (await fx.bank.items.byId(s))!;
    const tgt = (await fx.bank.items.byId(t))!;
    expect(body).to.include(`/image/${src.imageSha256}`).and.include(`/image/${tgt.imageSha256}`);
    // "earthquake" ↔ 地震 carry the same colour class and the gloss in the title
    const en = /<mark class="hl (c\d)" data-c="(\d+)" title="([^"]*)">earthquake<\/mark>/.exec(body);
    const zh = /<mark class="hl (c\d)" data-c="(\d+)" title="([^"]*)">地震<\/mark>/.exec(body);
    expect(en, 'earthquake highlighted').to.not.equal(null);
    expect(zh, '地震 highlighted').to.not.equal(null);
    expect(en![2]).to.equal(zh![2]);
    expect(en![3]).to.include('earthquake');
    // plural surface form found from its lemma; entity on both sides
    expect(body).to.match(/<mark class="hl c\d ent" data-c="0" title="name: Sichuan ↔ 四川">Sichuan<\/mark>/);
    expect(body).to.match(/<mark class="hl c\d ent" data-c="0" title="name: Sichuan ↔ 四川">四川<\/mark>/);
    expect(body).to.include('https://news.example.org/story/0').and.include('https://news.example.cn/story/0');
    expect(body).to.include('0.710'); // C
    // the sentence pairs the exports write, under their caption pair (here one on each side)
    expect(body).to.match(/<table class="pairs" id="sentence-pairs">[\s\S]*<td>emitted<\/td>/);
    const api = (await get(`/api/pairs/${s}/${t}`)).json();
    expect(api.sentencePairs.map((x: { en: string; emitted: number }) => [x.en, x.emitted])).to.deep.equal([[src.caption, 1]]);
    expect(body).to.include('id="no-points"'); // no stored keypoints in this build: said, not drawn
    expect((body.match(/<line /g) ?? []).length).to.equal(0);
    // next / previous in list order
    expect(body).to.include(`data-next="/pair/${fx.pairs[1]!.sourceItemId}/${fx.pairs[1]!.targetItemId}"`);
    expect(body).to.include('data-prev=""');
  });

  it('escapes bank text in pages', async () => {
    const { sourceItemId: s, targetItemId: t } = fx.pairs[1]!;
    const repo = fx.bank.repo(PairsRepo);
    const p = (await repo.get(s, t))!;
    const evil = 'Fans <script>alert(1)</script> wave "flags" at the airport.';
    await repo.upsert({ ...p, emitted: true, level: p.level, en: evil, explain: JSON.parse(p.explain!), imageScore: p.imageScore!, inliers: p.inliers!, candidateRank: 0 });
    try {
      const body = (await get(`/pair/${s}/${t}`)).body;
      expect(body).not.to.include('<script>alert(1)</script>');
      expect(body).to.include('&lt;script&gt;alert(1)&lt;/script&gt;');
    } finally {
      await repo.upsert({ ...p, emitted: true, level: p.level, explain: JSON.parse(p.explain!), imageScore: p.imageScore!, inliers: p.inliers!, candidateRank: 0 });
    }
  });

  it('stores judgements keyed by the items: they survive a re-decided pair, and clear', async () => {
    const { sourceItemId: s, targetItemId: t } = fx.pairs[0]!;
    let res = await review(s, t, { verdict: 'accepted' });
    expect(res.statusCode).to.equal(200);
    expect(res.json().review).to.include({ verdict: 'accepted', level: null });
    res = await review(s, t, { level: 'com' });
    expect(res.json().review).to.include({ verdict: 'accepted', level: 'com' });
    // the pairing stage re-decides the pair (drops and re-inserts its row): the judgement stays
    const repo = fx.bank.repo(PairsRepo);
    const p = (await repo.get(s, t))!;
    const kept = await fx.bank.repo(SentencePairsRepo).ofPair(p.id);
    await fx.bank.transaction(async (tx) => {
      const r = tx.repo(PairsRepo);
      await r.removeOthers(s, []);
      const id = await r.upsert({ ...p, emitted: true, explain: JSON.parse(p.explain!), imageScore: p.imageScore!, inliers: p.inliers!, candidateRank: 0 }, p.decidedAt);
      await tx.repo(SentencePairsRepo).replace(id, s, t, kept.map((x) => ({ ...x, emitted: Boolean(x.emitted) })));
    });
    expect((await repo.get(s, t))!.id).to.not.equal(p.id);
    const j = (await get(`/api/pairs/${s}/${t}`)).json();
    expect(j.pair).to.include({ verdict: 'accepted', reviewLevel: 'com' });
    expect((await get('/api/pairs?review=accepted')).json().rows).to.have.length(1);
    expect((await get('/api/pairs?kind=all&review=unreviewed')).json().rows).to.have.length(2);
    const labels = await labelledPairsFromReviews(fx.bank);
    expect(labels).to.have.length(1);
    expect(labels[0]).to.include({ label: 'com', verdict: 'accepted', machineLevel: 'par', en: SCENES[0]!.en });
    // reject another (a verdict without a level is no label for calibration), then clear it
    const q = fx.pairs[2]!;
    expect((await review(q.sourceItemId, q.targetItemId, { verdict: 'rejected' })).json().review.verdict).to.equal('rejected');
    expect((await labelledPairsFromReviews(fx.bank)).find((l) => l.sourceItemId === q.sourceItemId)).to.equal(undefined);
    expect((await review(q.sourceItemId, q.targetItemId, { verdict: null, level: null })).json().review).to.equal(null);
    expect((await fx.bank.repo(ReviewsRepo).get(q.sourceItemId, q.targetItemId))).to.equal(undefined);
  });

  it('exports the judged pairs (--reviewed): accepted / rejected / all, emitted or not, at the linguist\'s level', async () => {
    const [p0, p1, p2] = fx.pairs;
    await fx.bank.transaction(async (tx) => {
      const reviews = tx.repo(ReviewsRepo);
      await reviews.set({ ...p0!, verdict: 'accepted', level: 'com', en: SCENES[0]!.en, zh: SCENES[0]!.zh });
      await reviews.set({ ...p1!, verdict: 'rejected', en: SCENES[1]!.en, zh: SCENES[1]!.zh });
      await reviews.set({ ...p2!, verdict: 'accepted', level: 'pse', en: SCENES[2]!.en, zh: SCENES[2]!.zh }); // not emitted by the machine
    });
    const rows = async (reviewed: 'accepted' | 'rejected' | 'all', minLevel: 'par' | 'com' | 'pse') => {
      const out = path.join(fx.dir, `export-${reviewed}-${minLevel}.tsv`);
      await exportPairs(fx.bank, config, { format: 'tsv', out, reviewed, minLevel });
      return fs.readFileSync(out, 'utf8').trim().split('\n').slice(1).map((l) => { const f = l.split('\t'); return `${f[0]}|${f[2]}`; });
    };
    try {
      expect(await rows('accepted', 'com')).to.deep.equal([`${SCENES[0]!.en}|com`]);
      expect((await rows('accepted', 'pse')).sort()).to.deep.equal([`${SCENES[0]!.en}|com`, `${SCENES[2]!.en}|pse`].sort());
      expect(await rows('rejected', 'pse')).to.deep.equal([`${SCENES[1]!.en}|com`]);
      expect(await rows('all', 'pse')).to.have.length(3);
    } finally {
      await fx.bank.transaction(async (tx) => {
        for (const p of [p0, p1, p2]) await tx.repo(ReviewsRepo).clear(p!.sourceItemId, p!.targetItemId);
      });
    }
  });

  it('serves thumbnails resized and cached on disk, and full images, by sha256 only', async () => {
    const src = (await fx.bank.items.byId(fx.pairs[0]!.sourceItemId))!;
    const res = await get(`/thumb/${src.imageSha256}`);
    expect(res.statusCode).to.equal(200);
    expect(res.headers['content-type']).to.equal('image/jpeg');
    const meta = await sharp(res.rawPayload).metadata();
    expect(Math.max(meta.width!, meta.height!)).to.be.at.most(200);
    const cached = path.join(fx.dataDir, 'thumbs', src.imageSha256.slice(0, 2), `${src.imageSha256}-200.jpg`);
    expect(fs.existsSync(cached)).to.equal(true);
    const full = await get(`/image/${src.imageSha256}`);
    expect(full.statusCode).to.equal(200);
    expect(full.headers['content-type']).to.equal('image/png');
    expect(Buffer.compare(full.rawPayload, (await fx.bank.images.read(src.imageSha256)))).to.equal(0);
  });

  it('gives a clear 4xx to hostile input and changes nothing', async () => {
    const { sourceItemId: s, targetItemId: t } = fx.pairs[1]!;
    const snapshot = async () => JSON.stringify({
      counts: await counts(),
      reviews: await collect(fx.bank.repo(ReviewsRepo).labelled()),
      pairs: (await fx.bank.repo(ReviewsRepo).listPairs({ kind: 'all', sort: 'id', dir: 'asc' }, { limit: 100 })).rows,
      files: ['capbridge.db', 'capbridge.db-wal'].map((f) => { try { const st = fs.statSync(path.join(fx.dataDir, f)); return [st.size, st.mtimeMs]; } catch { return null; } }),
    });
    const before = await snapshot();
    const cases: Array<[string, number]> = [
      ['/api/pairs?limit=100000000', 400],
      ['/api/pairs?limit=0', 400],
      ['/api/pairs?limit=-5', 400],
      ["/api/pairs?site=x'%20OR%201=1%20--", 400],
      ['/api/pairs?site=a%3BDROP%20TABLE%20pairs', 400],
      ['/api/pairs?level=par%27%20OR%20%271%27=%271', 400],
      ['/api/pairs?cmin=0.5;DELETE', 400],
      ['/api/pairs?sort=c%20DESC;--', 400],
      ['/api/pairs?after=eyJ4IjoxfQ', 400],
      ['/api/pairs?after=%27%20OR%201=1', 400],
      ['/api/pairs?before=%27%20OR%201=1', 400],
      ['/api/pairs?after=WzAuNSwxXQ&before=WzAuNSwxXQ', 400],
      ['/api/pairs?kind=emitted&kind=all', 400],
      ['/api/pairs?from=2026-13-45', 400],
      ['/api/pairs?evil=1', 400],
      ['/image/..%2F..%2Fcapbridge.db', 400],
      ['/image/../../capbridge.db', 404],
      ['/thumb/%2e%2e%2f%2e%2e%2fetc%2fpasswd', 400],
      ['/image/ZZZZ', 400],
      [`/image/${'A'.repeat(64)}`, 400],
      [`/image/${'0'.repeat(64)}`, 404],
      [`/image/${'0'.repeat(64)}.png`, 400],
      ['/pair/1%20OR%201=1/2', 400],
      ['/pair/0/1', 400],
      ['/pair/99999/99998', 404],
      ['/api/pairs/1/2?limit=1&kind=x', 400],
    ];
    for (const [url, status] of cases) {
      const res = await get(url);
      expect(res.statusCode, url).to.equal(status);
      if (url.startsWith('/api/')) expect(res.json().message, url).to.be.a('string').and.not.equal('');
    }
    for (const [body, status] of [
      [{ verdict: "accepted'; DROP TABLE reviews; --" }, 400],
      [{ level: 'par OR 1=1' }, 400],
      [{ verdict: 'accepted', sql: 'x' }, 400],
      [{}, 400],
      [[1, 2], 400],
    ] as Array<[unknown, number]>) {
      expect((await review(s, t, body)).statusCode, JSON.stringify(body)).to.equal(status);
    }
    // not JSON (a cross-site form post) / cross-origin
    const form = await app.inject({ method: 'POST', url: `/api/pairs/${s}/${t}/review`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'verdict=accepted' });
    expect(form.statusCode).to.be.oneOf([415]);
    expect((await review(s, t, { verdict: 'accepted' }, { origin: 'http://evil.example' })).statusCode).to.equal(403);
    // a huge body
    const huge = await app.inject({ method: 'POST', url: `/api/pairs/${s}/${t}/review`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ verdict: 'x'.repeat(200_000) }) });
    expect(huge.statusCode).to.equal(413);
    // search uploads: not an image, a bad top, no body, a wrong content type
    const search = (url: string, payload: Buffer | string, type = 'application/octet-stream') => app.inject({ method: 'POST', url, headers: { 'content-type': type }, payload });
    const notImage = await search('/api/search', Buffer.from('<?php system($_GET[1]); ?>'));
    expect(notImage.statusCode).to.equal(400);
    expect(notImage.json().message).to.match(/not a readable image/);
    expect((await search('/api/search?top=100000', Buffer.from('x'))).statusCode).to.equal(400);
    expect((await search('/api/search?top=1;DROP', Buffer.from('x'))).statusCode).to.equal(400);
    expect((await search('/api/search', Buffer.alloc(0))).statusCode).to.equal(400);
    expect((await search('/api/search', 'x', 'text/html')).statusCode).to.equal(415);
    expect(await snapshot()).to.equal(before);
    expect((await fx.bank.repo(ReviewsRepo).get(s, t))).to.equal(undefined);
  });

  it('answers a non-loopback client only with the token (Bearer, or ?token= once then the cookie)', async () => {
    const remote = { remoteAddress: '192.0.2.7' };
    expect((await get('/', remote)).statusCode).to.equal(401);
    expect((await get('/api/pairs', remote)).statusCode).to.equal(401);
    expect((await get('/', { ...remote, headers: { authorization: 'Bearer wrong' } })).statusCode).to.equal(401);
    expect((await get(`/thumb/${(await fx.bank.items.byId(fx.pairs[0]!.sourceItemId))!.imageSha256}`, remote)).statusCode).to.equal(401);
    const { sourceItemId: s, targetItemId: t } = fx.pairs[1]!;
    const post = await app.inject({ method: 'POST', url: `/api/pairs/${s}/${t}/review`, ...remote, headers: { 'content-type': 'application/json' }, payload: '{"verdict":"accepted"}' });
    expect(post.statusCode).to.equal(401);
    expect((await fx.bank.repo(ReviewsRepo).get(s, t))).to.equal(undefined);
    expect((await get('/api/pairs', { ...remote, headers: { authorization: `Bearer ${TOKEN}` } })).statusCode).to.equal(200);
    const once = await get(`/?kind=all&token=${TOKEN}`, remote);
    expect(once.statusCode).to.equal(303);
    expect(once.headers.location).to.equal('/?kind=all');
    const cookie = String(once.headers['set-cookie']);
    expect(cookie).to.match(/HttpOnly/).and.match(/SameSite=Strict/);
    expect(cookie).not.to.include(TOKEN);
    const withCookie = await get('/?kind=all', { ...remote, headers: { cookie: cookie.split(';')[0]! } });
    expect(withCookie.statusCode).to.equal(200);
    expect((await get('/?token=nope', remote)).statusCode).to.equal(401);
    // loopback clients need no token; IPv6 loopback and v4-mapped loopback too
    expect((await get('/api/pairs', { remoteAddress: '::1' })).statusCode).to.equal(200);
    expect((await get('/api/pairs', { remoteAddress: '::ffff:127.0.0.1' })).statusCode).to.equal(200);
    expect((await get('/api/pairs', { remoteAddress: '::ffff:10.0.0.1' })).statusCode).to.equal(401);
  });

  it('refuses a foreign Host header on a loopback-bound server (DNS rebinding)', async () => {
    expect((await get('/api/pairs', { headers: { host: 'evil.example' } })).statusCode).to.equal(403);
    expect((await get('/api/pairs', { headers: { host: 'localhost:8080' } })).statusCode).to.equal(200);
    expect((await get('/api/pairs', { headers: { host: '[::1]:8080' } })).statusCode).to.equal(200);
  });

  it('with no token configured, a non-loopback client always gets 401', async () => {
    const open = createReviewServer(fx.bank, config, { host: '0.0.0.0', token: '' });
    try {
      expect((await open.inject({ method: 'GET', url: '/', remoteAddress: '198.51.100.3' })).statusCode).to.equal(401);
      expect((await open.inject({ method: 'GET', url: '/?token=', remoteAddress: '198.51.100.3' })).statusCode).to.equal(401);
      expect((await open.inject({ method: 'GET', url: '/api/pairs', remoteAddress: '127.0.0.1', headers: { host: 'localhost:8080' } })).statusCode).to.equal(200);
    } finally {
      await open.close();
    }
    // on a non-loopback binding, a loopback client naming another host (DNS rebinding) needs the token too
    const shared = createReviewServer(fx.bank, config, { host: '0.0.0.0', token: TOKEN });
    try {
      const rebound = { remoteAddress: '127.0.0.1', headers: { host: 'evil.example:8080' } };
      expect((await shared.inject({ method: 'GET', url: '/api/pairs', ...rebound })).statusCode).to.equal(401);
      expect((await shared.inject({ method: 'GET', url: '/api/pairs', remoteAddress: '127.0.0.1', headers: { host: 'evil.example:8080', authorization: `Bearer ${TOKEN}` } })).statusCode).to.equal(200);
    } finally {
      await open.close();
    }
  });

  it('renders the stats page with counts and the per-day chart', async () => {
    const res = await get('/stats');
    expect(res.statusCode).to.equal(200);
    expect(res.body).to.include('id="bank-counts"').and.include('2 emitted');
    expect((res.body.match(/<rect [^>]*fill="#1b7f3b"/g) ?? []).length).to.be.greaterThan(0); // a par bar
    expect(res.body).to.include('No eval run recorded');
    // the last eval run as the export layer's eval stores it (meta 'eval.last')
    (await fx.bank.meta.setJson('eval.last', {
      set: 'ukrainian-news', at: '2026-11-22T10:00:00.000Z', pAt: { '1': 0.8, '2': 0.65, '3': 0.5, '4': 0.45, '5': 0.4 }, hitAt1: 0.8, hitAt5: 0.9,
      emittedPrecision: 0.92, coverage: 0.7, falseEmissionRate: 0.05,
    }));
    try {
      const body = (await get('/stats')).body;
      expect(body).to.include('set ukrainian-news');
      const bars = [...body.matchAll(/<title>(P@\d): ([\d.]+)<\/title>/g)].map((m) => `${m[1]}=${m[2]}`);
      expect(bars).to.deep.equal(['P@1=0.800', 'P@2=0.650', 'P@3=0.500', 'P@4=0.450', 'P@5=0.400']);
      expect(body).to.include('emitted precision 0.920');
    } finally {
      await fx.bank.meta.set('eval.last', 'null');
    }
  });
});
