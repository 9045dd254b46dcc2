// The review server: fastify, server-rendered pages and a small JSON API over the bank.
//   GET  /                         pair list (filters, sort, keyset pages)       GET /api/pairs         the same, JSON
//   GET  /pair/:source/:target     pair view (images + match lines, captions)    GET /api/pairs/:s/:t   the same, JSON
//   POST /api/pairs/:s/:t/review   judgement {verdict?: accepted|rejected|null, level?: par|com|pse|inc|null}
//   GET  /image/:sha256, /thumb/:sha256   images of the store, by content hash only
//   GET  /search, POST /api/search?top=N (body: the image bytes)   GET /stats
import { STATUS_CODES } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { LEVELS, PairsRepo, ReviewsRepo, SentencePairsRepo, StatsRepo, VERDICTS, type Bank, type Level, type PairListFilter, type ReviewPairRow, type Verdict } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../util/log.js';
import { CSS, JS } from './assets.js';
import { authHook, isLoopbackHost } from './auth.js';
import { HttpError, badRequest, notFound } from './errors.js';
import { parseExplain } from './highlight.js';
import { esc } from './html.js';
import { matchPointsOf } from './points.js';
import { listPage, pairPage, pairPath, searchPage, statsPage } from './pages.js';
import { encodeCursor, itemId, listQueryString, parseListQuery, sha256Param, type Query } from './query.js';
import { readEval, EVAL_META_KEY } from './eval.js';
import { ImageServer } from './thumbs.js';
import { DecodeError } from '../lib/sift/index.js';
import { UserError } from '../util/errors.js';
import type { SearchHit, ViewPool } from '../stages/match/index.js';

export interface ReviewServerOptions {
  /** The host the server will listen on (decides whether the Host header is checked). */
  host: string;
  /** Required from non-loopback clients; '' = none configured (non-loopback clients then always get 401). */
  token: string;
  logger?: Logger;
}

const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};
const PAGE_CSP = "default-src 'none'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** What the routes share: the bank's repositories, the image server, the search's views pool, the options. */
interface Routes {
  app: FastifyInstance;
  bank: Bank;
  config: Config;
  opts: ReviewServerOptions;
  reviews: ReviewsRepo;
  sentencePairs: SentencePairsRepo;
  images: ImageServer;
  search: SearchContext;
}

export function createReviewServer(bank: Bank, config: Config, opts: ReviewServerOptions): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024, routerOptions: { maxParamLength: 200 }, trustProxy: false });
  // One views pool for the server's life (its SIFT threads start with the first search that needs views), not one
  // started and stopped per search; closed with the server.
  const search: SearchContext = { views: undefined, closed: false };
  const r: Routes = {
    app, bank, config, opts, search,
    reviews: bank.repo(ReviewsRepo), sentencePairs: bank.repo(SentencePairsRepo), images: new ImageServer(bank, config.sift.maxPixels),
  };
  installHooks(r);
  assetRoutes(app);
  listRoutes(r);
  pairRoutes(r);
  reviewRoute(r);
  imageRoutes(r);
  searchRoutes(r);
  statsRoute(r);
  return app;
}

/** The views pool's life, authentication, security headers, image bodies, errors as JSON or a page. */
function installHooks({ app, config, opts, search }: Routes): void {
  app.addHook('onClose', async () => {
    search.closed = true;
    await search.views?.close();
  });
  app.decorate('searchViews', { getter: () => search.views });
  app.addHook('onRequest', authHook({ token: opts.token, loopbackBound: isLoopbackHost(opts.host) }));
  app.addHook('onSend', async (_req, reply, payload) => {
    reply.headers(SECURITY_HEADERS);
    return payload;
  });
  for (const type of ['application/octet-stream', /^image\/[a-z0-9.+-]+$/] as const) {
    app.addContentTypeParser(type, { parseAs: 'buffer', bodyLimit: config.import.maxImageBytes }, (_req, body, done) => done(null, body));
  }
  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, req, reply) => {
    const status = err instanceof HttpError ? err.statusCode : err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status >= 500) opts.logger?.error(`review: ${req.method} ${req.url}: ${err.stack ?? err.message}`);
    const message = status >= 500 ? 'internal error (see the server log)' : err.message;
    const wantsHtml = !req.url.startsWith('/api/') && String(req.headers.accept ?? '').includes('text/html');
    if (wantsHtml) {
      reply.code(status).type('text/html; charset=utf-8').header('Content-Security-Policy', PAGE_CSP)
        .send(`<!doctype html><meta charset="utf-8"><title>${status}</title><link rel="stylesheet" href="/assets/review.css"><main><h1>${status}</h1><p class="err">${esc(message)}</p><p><a href="/">back to the list</a></p></main>`);
    } else {
      reply.code(status).type('application/json; charset=utf-8').send({ statusCode: status, error: STATUS_CODES[status] ?? 'Error', message });
    }
  });
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).type('application/json; charset=utf-8').send({ statusCode: 404, error: 'Not Found', message: `no route ${req.method} ${req.url.split('?')[0]!.slice(0, 200)}` });
  });
}

const sendPage = (reply: FastifyReply, htmlText: string) => reply.type('text/html; charset=utf-8').header('Content-Security-Policy', PAGE_CSP).header('Cache-Control', 'no-store').send(htmlText);

async function pairOr404(reviews: ReviewsRepo, params: unknown): Promise<ReviewPairRow> {
  const p = params as { source?: unknown; target?: unknown };
  const s = itemId(p.source, 'source item');
  const t = itemId(p.target, 'target item');
  const row = await reviews.pair(s, t);
  if (!row) throw notFound(`no pair of source item ${s} and target item ${t}`);
  return row;
}

/** The pairs before and after one in the list it was opened from. */
async function neighbours(reviews: ReviewsRepo, row: ReviewPairRow, f: PairListFilter) {
  const at = ReviewsRepo.cursorOf(row, f.sort);
  const ctx = listQueryString(f);
  const next = (await reviews.listPairs(f, { after: at, limit: 1 })).rows[0];
  const prev = (await reviews.listPairs(f, { after: at, limit: 1, reverse: true })).rows[0];
  return { next: next ? pairPath(next) + ctx : null, prev: prev ? pairPath(prev) + ctx : null };
}

function pairJson(r: ReviewPairRow) {
  const { explain, ...rest } = r;
  return { ...rest, explain: parseExplain(explain), links: { view: pairPath(r), sourceImage: `/image/${r.sourceSha}`, targetImage: `/image/${r.targetSha}` } };
}

function assetRoutes(app: FastifyInstance): void {
  app.get('/assets/review.css', async (_req, reply) => reply.type('text/css; charset=utf-8').header('Cache-Control', 'max-age=300').send(CSS));
  app.get('/assets/review.js', async (_req, reply) => reply.type('text/javascript; charset=utf-8').header('Cache-Control', 'max-age=300').send(JS));
  app.get('/favicon.ico', async (_req, reply) => reply.code(204).send());
}

/** A page of the list, with the cursors of the next and the previous page (keyset both ways). */
async function listSlice(reviews: ReviewsRepo, q: ReturnType<typeof parseListQuery>) {
  if (q.before) {
    const back = await reviews.listPairs(q.filter, { after: q.before, limit: q.limit, reverse: true });
    const rows = back.rows.reverse();
    const prev = back.next && rows.length ? encodeCursor(ReviewsRepo.cursorOf(rows[0]!, q.filter.sort)) : null;
    const next = rows.length ? encodeCursor(ReviewsRepo.cursorOf(rows[rows.length - 1]!, q.filter.sort)) : null;
    return { rows, next, prev, first: !back.next };
  }
  const { rows, next } = await reviews.listPairs(q.filter, { after: q.after, limit: q.limit });
  const prev = q.after && rows.length ? encodeCursor(ReviewsRepo.cursorOf(rows[0]!, q.filter.sort)) : null;
  return { rows, next: next ? encodeCursor(next) : null, prev, first: !q.after };
}

function listRoutes({ app, reviews }: Routes): void {
  app.get('/', async (req, reply) => {
    const q = parseListQuery(req.query as Query);
    const p = await listSlice(reviews, q);
    const noPairs = !p.rows.length && p.first && (await (async () => { const c = await reviews.pairCounts(); return c.emitted + c.candidate === 0; })());
    return sendPage(reply, listPage(q.filter, p.rows, p.next, p.prev, await reviews.sites(), q.limit, p.first, noPairs));
  });
  app.get('/api/pairs', async (req) => {
    const q = parseListQuery(req.query as Query);
    const p = await listSlice(reviews, q);
    return { filter: q.filter, rows: p.rows.map(pairJson), next: p.next, prev: p.prev };
  });
}

function pairRoutes({ app, bank, reviews, sentencePairs, images }: Routes): void {
  app.get('/pair/:source/:target', async (req, reply) => {
    const { filter } = parseListQuery(req.query as Query);
    const row = await pairOr404(reviews, req.params);
    const { points, note } = await matchPointsOf(bank, row.sourceItemId, row.targetItemId);
    return sendPage(
      reply,
      pairPage({
        row, filter, ...(await neighbours(reviews, row, filter)), source: await images.size(row.sourceSha), target: await images.size(row.targetSha), points, pointsNote: note,
        sentences: await sentencePairs.ofPair(row.id),
      }),
    );
  });
  app.get('/api/pairs/:source/:target', async (req) => {
    const { filter } = parseListQuery(req.query as Query);
    const row = await pairOr404(reviews, req.params);
    const { points, note } = await matchPointsOf(bank, row.sourceItemId, row.targetItemId);
    return { pair: pairJson(row), sentencePairs: await sentencePairs.ofPair(row.id), matches: points, matchesNote: points ? null : note, ...(await neighbours(reviews, row, filter)) };
  });
}

/** A judgement: JSON only (a cross-site form cannot send it without a CORS preflight, which this server never grants). */
function reviewRoute({ app, bank, reviews }: Routes): void {
  app.post('/api/pairs/:source/:target/review', async (req: FastifyRequest, reply) => {
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) throw new HttpError(415, 'send the judgement as application/json');
    if (!sameOrigin(req.headers.origin, req.headers.host)) throw new HttpError(403, 'cross-origin judgement refused');
    const row = await pairOr404(reviews, req.params);
    const { verdict, level } = judgementOf(req.body);
    const review = await bank.transaction((tx) =>
      tx.repo(ReviewsRepo).set({ sourceItemId: row.sourceItemId, targetItemId: row.targetItemId, verdict, level, en: row.sourceCaption, zh: row.targetCaption }),
    );
    reply.header('Cache-Control', 'no-store');
    return { review: review ?? null };
  });
}

/** A judgement's body, checked: {verdict?: accepted|rejected|null, level?: par|com|pse|inc|null}, at least one. */
function judgementOf(body: unknown): { verdict: Verdict | null | undefined; level: Level | null | undefined } {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('expected a JSON object {verdict?, level?}');
  for (const k of Object.keys(body)) if (k !== 'verdict' && k !== 'level') throw badRequest(`unknown field "${k.slice(0, 40)}"`);
  const { verdict, level } = body as { verdict?: unknown; level?: unknown };
  if (verdict !== undefined && verdict !== null && !VERDICTS.includes(verdict as Verdict)) throw badRequest(`verdict: expected ${VERDICTS.join(' or ')} or null`);
  if (level !== undefined && level !== null && !LEVELS.includes(level as Level)) throw badRequest(`level: expected ${LEVELS.join(', ')} or null`);
  if (verdict === undefined && level === undefined) throw badRequest('give a verdict, a level, or both');
  return { verdict: verdict as Verdict | null | undefined, level: level as Level | null | undefined };
}

/** Images of the store, by sha256 only. */
function imageRoutes({ app, images }: Routes): void {
  app.get('/image/:sha', async (req, reply) => {
    const img = await images.full(sha256Param((req.params as { sha: unknown }).sha));
    if (img.bytes !== undefined) reply.header('Content-Length', img.bytes);
    return reply.type(img.type).header('Cache-Control', 'private, max-age=86400, immutable').header('Content-Security-Policy', "default-src 'none'").send(img.body);
  });
  app.get('/thumb/:sha', async (req, reply) => {
    const img = await images.thumbnail(sha256Param((req.params as { sha: unknown }).sha));
    return reply.type(img.type).header('Cache-Control', 'private, max-age=86400, immutable').header('Content-Security-Policy', "default-src 'none'").send(img.body);
  });
}

function searchRoutes({ app, bank, config, opts, search }: Routes): void {
  app.get('/search', async (_req, reply) => sendPage(reply, searchPage()));
  app.post('/api/search', async (req) => {
    const q = req.query as Query;
    for (const k of Object.keys(q)) if (k !== 'top' && k !== 'token') throw badRequest(`unknown parameter "${k.slice(0, 40)}"`);
    const topText = typeof q.top === 'string' ? q.top : '10';
    if (!/^\d{1,3}$/.test(topText) || Number(topText) < 1 || Number(topText) > 100) throw badRequest('top: expected a number from 1 to 100');
    const buf = req.body;
    if (!Buffer.isBuffer(buf) || !buf.length) throw badRequest('send the image bytes as the request body (Content-Type image/* or application/octet-stream)');
    return { results: await runSearch(bank, config, buf, Number(topText), search, opts.logger) };
  });
}

function statsRoute({ app, bank, reviews }: Routes): void {
  app.get('/stats', async (_req, reply) => {
    const evalRun = await readEval(bank);
    return sendPage(
      reply,
      statsPage({
        stats: await bank.repo(StatsRepo).all(),
        pairs: await reviews.pairCounts(),
        byLevel: await bank.repo(PairsRepo).countByLevel(),
        reviews: await reviews.counts(),
        perDay: await reviews.pairsPerDay(),
        evalRun,
        evalKey: EVAL_META_KEY,
      }),
    );
  });
}

/**
 * Whether a judgement comes from this server's own pages: no Origin header (not a browser's cross-site request),
 * or one whose host is the Host the request was sent to. 'null' (sandboxed frames, file: pages) and anything that is
 * not a URL are refused, never thrown.
 */
export function sameOrigin(origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined || origin === '') return true;
  if (!URL.canParse(origin)) return false;
  return new URL(origin).host === host;
}

/** The review server's search state: its views pool (made on the first search, none once the server closed). */
interface SearchContext {
  views: ViewPool | undefined;
  closed: boolean;
}

/** Runs the image index's search (src/lib/image-index) and joins each hit with its target item (caption, provenance, image). */
async function runSearch(bank: Bank, config: Config, buf: Buffer, top: number, ctx: SearchContext, logger?: Logger) {
  // Loaded on first search: the server starts without paying for SIFT and the index.
  const { searchImage, ViewPool } = await import('../stages/match/index.js');
  if (!ctx.closed) ctx.views ??= new ViewPool(config, undefined, logger);
  let hits: SearchHit[];
  try {
    hits = await searchImage(bank, config, buf, { top, views: ctx.views });
  } catch (err) {
    // an unreadable or oversized upload is the user's problem, not the server's
    // (also by name: under some loaders the lazily imported layer carries its own copy of the class)
    const name = (err as Error).name;
    if (err instanceof DecodeError || err instanceof UserError || name === 'DecodeError' || name === 'UserError') throw badRequest(`search: ${(err as Error).message}`);
    throw err;
  }
  return hits.map((h) => ({
    rank: h.rank,
    itemId: h.item.id,
    extId: h.item.extId,
    caption: h.item.caption,
    pageUrl: h.item.pageUrl,
    site: h.item.site,
    imageSha256: h.item.imageSha256,
    score: h.imageScore,
    inliers: h.inliers,
    matches: h.matches,
    mirrored: h.mirrored,
  }));
}
