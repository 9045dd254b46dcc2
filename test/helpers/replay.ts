// The replay harness: saved article pages served on 127.0.0.1 as two news sites (en, zh), each with a home page,
// an RSS feed, a sitemap and robots.txt, every image URL answered by an image generated from the URL, behind a
// seeded fault injector. Used by the crawler tests (hand-written fixture pages) and by `npm run bench:crawl`
// (the real pages of extraction-news).
//
// Pages are served as saved, but every absolute URL to another host (images on CDNs, links, canonical URLs) is
// rewritten to /ext/<host>/<path> on the site's own loopback host (byte-level, ASCII only: a GB2312 page stays
// GB2312), so nothing leaves the machine. The expected items are what the extractor finds on the served bytes.
//
// Faults are drawn per request from (seed, path, how many times the path was asked for), so a run is
// reproducible whatever the order of requests: 503; 429 with Retry-After (seconds or an HTTP-date); a connection
// reset before any answer; a body that stalls past the client's timeout; a body cut short (Content-Length
// promised, connection closed halfway); a redirect loop. Permanent failures are there too: links to pages that
// answer 404 or 410, and a page disallowed by robots.txt; the harness counts every request made to them after
// their permanent answer (a crawler must not ask again).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import { extractPairs } from '../../src/lib/extraction/index.js';

export type FaultKind = '503' | '429' | 'reset' | 'stall' | 'truncate' | 'redirect-loop';
export const FAULT_KINDS: FaultKind[] = ['503', '429', 'reset', 'stall', 'truncate', 'redirect-loop'];

export interface FaultOptions {
  /** Share of requests that fail (0..1). */
  share: number;
  seed: number;
  kinds?: FaultKind[];
  /** Retry-After of the 429s, in seconds. */
  retryAfterSecs?: number;
  /** How long a stalled body hangs (longer than the crawler's timeout). */
  stallMs?: number;
  /** Paths that never fail (e.g. to fault only images). */
  spare?: (path: string) => boolean;
}

export interface ReplayPage {
  id: string;
  lang: 'en' | 'zh';
  body: Buffer;
  contentType?: string;
}

export interface Hit {
  path: string;
  at: number;
  fault: FaultKind | null;
}

export interface ReplaySite {
  lang: 'en' | 'zh';
  base: string;
  host: string;
  hits: Hit[];
  articles: { id: string; url: string }[];
  /** Fault injection on or off (e.g. a clean reference run on the same servers). */
  faults: FaultOptions | null;
}

export interface ExpectedItem {
  lang: 'en' | 'zh';
  pageUrl: string;
  imageUrl: string;
  caption: string;
}

export interface Replay {
  sites: Record<'en' | 'zh', ReplaySite>;
  expected: ExpectedItem[];
  /** Expected article pages (with and without photos). */
  pages: number;
  faultsInjected: Record<string, number>;
  /** Requests made to a URL after it answered 404/410 (a crawler that retries permanent failures). */
  permanentRetried: number;
  /** Requests to paths robots.txt disallows. */
  disallowedRequested: number;
  /** Writes one site profile per site (allowPrivateAddresses for these loopback hosts only). */
  writeProfiles(dir: string, extra?: string): void;
  close(): Promise<void>;
}

const hash = (s: string) => crypto.createHash('sha256').update(s).digest();
const unit = (s: string) => hash(s).readUInt32BE(0) / 2 ** 32;

/** Absolute URLs to other hosts become /ext/<host>/<path> on the site's host (ASCII rewrite: bytes of any charset survive). */
export function rewritePage(body: Buffer, base: string): Buffer {
  const text = body.toString('latin1');
  const out = text.replace(/(["'(=\s,])(?:https?:)?\/\/([a-z0-9-]+(?:\.[a-z0-9-]+)+(?::\d+)?)(?=[/"'?#)\s])/gi, (_m, lead: string, host: string) => `${lead}${base}/ext/${host.toLowerCase()}`);
  return Buffer.from(out, 'latin1');
}

const imageCache = new Map<string, Promise<Buffer>>();

/** A 160x120 JPEG of coloured blocks drawn from the URL: the same URL always gives the same bytes. */
export function imageFor(url: string): Promise<Buffer> {
  let p = imageCache.get(url);
  if (!p) {
    const h = hash(url);
    const w = 160, ht = 120, px = Buffer.alloc(w * ht * 3);
    for (let y = 0; y < ht; y++) for (let x = 0; x < w; x++) {
      const b = ((y >> 4) * 10 + (x >> 4)) % 32;
      const i = (y * w + x) * 3;
      px[i] = h[b]!;
      px[i + 1] = h[(b + 7) % 32]!;
      px[i + 2] = h[(b + 13) % 32]!;
    }
    p = sharp(px, { raw: { width: w, height: ht, channels: 3 } }).jpeg({ quality: 85 }).toBuffer();
    imageCache.set(url, p);
  }
  return p;
}

const GONE = 4; // links per site to pages that answer 404 / 410

export async function startReplay(pages: ReplayPage[], faults: FaultOptions | null): Promise<Replay> {
  const injected: Record<string, number> = {};
  const permanentAnswered = new Set<string>();
  let permanentRetried = 0;
  let disallowedRequested = 0;
  const servers: http.Server[] = [];
  const sites = {} as Record<'en' | 'zh', ReplaySite>;
  const expected: ExpectedItem[] = [];

  for (const lang of ['en', 'zh'] as const) {
    const mine = pages.filter((p) => p.lang === lang);
    const asked = new Map<string, number>();
    const served = new Map<string, { body: Buffer; type: string }>();
    const site: ReplaySite = { lang, base: '', host: '', hits: [], articles: [], faults };
    const server = http.createServer((req, res) => {
      const p = req.url ?? '/';
      const n = (asked.get(p) ?? 0) + 1;
      asked.set(p, n);
      const f = site.faults;
      let fault: FaultKind | null = null;
      if (f && !f.spare?.(p) && unit(`${f.seed}|${lang}|${p}|${n}`) < f.share) {
        const kinds = f.kinds ?? FAULT_KINDS;
        fault = kinds[Math.floor(unit(`${f.seed}|kind|${lang}|${p}|${n}`) * kinds.length)]!;
      }
      site.hits.push({ path: p, at: Date.now(), fault });
      if (permanentAnswered.has(`${lang}${p}`)) permanentRetried++;
      if (p.startsWith('/private/')) disallowedRequested++;
      void answer(p, fault, req, res).catch(() => res.destroy());
    });
    const answer = async (p: string, fault: FaultKind | null, req: http.IncomingMessage, res: http.ServerResponse) => {
      const f = site.faults;
      if (fault) injected[fault] = (injected[fault] ?? 0) + 1;
      if (fault === 'reset') return void req.socket.destroy();
      if (fault === '503') return void res.writeHead(503, { 'content-type': 'text/plain' }).end('busy');
      if (fault === '429') {
        const secs = f?.retryAfterSecs ?? 1;
        const asDate = unit(`${p}|date`) < 0.5;
        // An HTTP-date has a resolution of one second: one second more so the pause is never shorter than asked.
        const value = asDate ? new Date(Date.now() + (secs + 1) * 1000).toUTCString() : String(secs);
        return void res.writeHead(429, { 'retry-after': value, 'content-type': 'text/plain' }).end('slow down');
      }
      if (fault === 'redirect-loop') {
        const u = new URL(p, site.base);
        if (u.searchParams.has('loop')) u.searchParams.delete('loop');
        else u.searchParams.set('loop', '1');
        return void res.writeHead(302, { location: u.pathname + u.search }).end();
      }
      const clean = new URL(p, site.base);
      if (clean.searchParams.has('loop')) return void res.writeHead(302, { location: clean.pathname }).end(); // the loop's other half
      const body = await content(clean.pathname);
      if (!body) {
        const gone = /gone-(\d+)/.exec(clean.pathname);
        const status = gone && Number(gone[1]) % 2 === 0 ? 410 : 404;
        permanentAnswered.add(`${lang}${p}`);
        return void res.writeHead(status, { 'content-type': 'text/plain' }).end('not here');
      }
      if (fault === 'stall' || fault === 'truncate') {
        res.writeHead(200, { 'content-type': body.type, 'content-length': String(body.body.length) });
        res.write(body.body.subarray(0, Math.floor(body.body.length / 2)));
        if (fault === 'truncate') return void setTimeout(() => req.socket.destroy(), 20);
        return void setTimeout(() => req.socket.destroy(), f?.stallMs ?? 5000);
      }
      res.writeHead(200, { 'content-type': body.type, 'content-length': String(body.body.length) });
      res.end(body.body);
    };
    const content = async (p: string): Promise<{ body: Buffer; type: string } | null> => {
      const s = served.get(p);
      if (s) return s;
      if (p.startsWith('/ext/') || !/\.(html?|xml|txt)$/i.test(p)) return { body: await imageFor(`${lang}${p}`), type: 'image/jpeg' };
      return null;
    };
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    servers.push(server);
    site.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    site.host = new URL(site.base).host;

    for (const page of mine) {
      const url = `${site.base}/${lang}/2024/${page.id}.html`;
      const body = rewritePage(page.body, site.base);
      served.set(new URL(url).pathname, { body, type: page.contentType ?? 'text/html' });
      site.articles.push({ id: page.id, url });
      const seen = new Set<string>();
      for (const pair of extractPairs(body, { url, contentType: page.contentType ?? 'text/html', lang }).pairs) {
        if (!pair.caption.trim() || seen.has(pair.image_url)) continue;
        seen.add(pair.image_url);
        expected.push({ lang, pageUrl: url, imageUrl: pair.image_url, caption: pair.caption });
      }
    }
    const gone = Array.from({ length: GONE }, (_, i) => `${site.base}/${lang}/2024/gone-${i}.html`);
    const links = [...site.articles.map((a) => a.url), ...gone, `${site.base}/private/2024/secret.html`];
    const home = `<!doctype html><html><head><meta charset="utf-8"><title>${lang} news</title></head><body><h1>News</h1><ul>${links.map((u, i) => `<li><a href="${new URL(u).pathname}">story ${i}</a></li>`).join('')}</ul></body></html>`;
    served.set('/', { body: Buffer.from(home), type: 'text/html; charset=utf-8' });
    const half = site.articles.filter((_, i) => i % 2 === 0);
    const rss = `<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>${lang}</title>${half.map((a) => `<item><title>${a.id}</title><link>${a.url}</link></item>`).join('')}</channel></rss>`;
    served.set('/rss.xml', { body: Buffer.from(rss), type: 'application/rss+xml' });
    const sitemap = `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${[...site.articles.map((a) => a.url), ...gone].map((u) => `<url><loc>${u}</loc></url>`).join('')}</urlset>`;
    served.set('/sitemap.xml', { body: Buffer.from(sitemap), type: 'application/xml' });
    served.set('/robots.txt', { body: Buffer.from('User-agent: *\nDisallow: /private/\n'), type: 'text/plain' });
    sites[lang] = site;
  }

  return {
    sites,
    expected,
    pages: sites.en.articles.length + sites.zh.articles.length,
    faultsInjected: injected,
    get permanentRetried() {
      return permanentRetried;
    },
    get disallowedRequested() {
      return disallowedRequested;
    },
    writeProfiles(dir: string, extra = '') {
      fs.mkdirSync(dir, { recursive: true });
      for (const s of Object.values(sites)) {
        fs.writeFileSync(
          path.join(dir, `replay-${s.lang}.yaml`),
          [
            `name: replay-${s.lang}`,
            `language: ${s.lang}`,
            `startUrls: ["${s.base}/"]`,
            `feeds: ["${s.base}/rss.xml"]`,
            `sitemaps: ["${s.base}/sitemap.xml"]`,
            `allowedHosts: ["${s.host}"]`,
            `articlePatterns: ['^http://127\\.0\\.0\\.1:\\d+/${s.lang}/2024/[\\w.-]+\\.html$']`,
            `allowPrivateAddresses: true`,
            `limits: { maxPages: 100000 }`,
            extra,
          ].join('\n') + '\n',
        );
      }
    },
    close: () =>
      Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((r) => {
              s.closeAllConnections();
              s.close(() => r());
            }),
        ),
      ).then(() => undefined),
  };
}

/** The fixture pages of fixtures/crawler (hand-written, shaped like real sites), by language of their file name. */
export function fixturePages(dir: string): ReplayPage[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.html'))
    .sort()
    .map((f) => {
      const id = f.replace(/\.html$/, '');
      const lang: 'en' | 'zh' = /-en$|reuters/.test(id) ? 'en' : 'zh';
      return { id, lang, body: fs.readFileSync(path.join(dir, f)) };
    });
}
