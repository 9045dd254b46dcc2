// The listing walk: the links of a start page, an RSS/Atom feed or a sitemap (urlset, sitemapindex, gzipped
// or not), classified against the site profile: article pages, more listing pages (within maxDepth) and more
// sitemaps. Links outside the profile's allowedHosts are dropped.
// HTML listings are read by the streaming page scan (page-scan.ts), not a DOM, under the same element and depth
// bounds as article pages: a hostile listing (200,000 nested elements in 5 MB) took cheerio minutes of CPU; it is
// now refused after a few milliseconds with its reason.
import zlib from 'node:zlib';
import { XMLParser } from 'fast-xml-parser';
import type { NewUrl, UrlKind } from '../../bank/index.js';
import { urlKey } from '../../util/url-key.js';
import { decodeHtml } from '../../lib/extraction/index.js';
import { normalisePageUrl, resolveUrl } from '../../lib/extraction/index.js';
import { permanent, type Failure } from './failures.js';
import type { FetchResult } from './fetch.js';
import { scanPage, type ScanLimits } from './page-scan.js';
import { hostAllowed, isArticle, type SiteProfile } from './sites.js';

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', removeNSPrefix: true });
const arr = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);

/** At most this many links are read from one listing (a sitemap holds up to 50,000). */
export const MAX_LINKS = 50_000;

/**
 * Longer URLs are not queued (pages or photos): the limit browsers and crawlers have long kept (Internet
 * Explorer's 2,083, Heritrix's default); real article and image URLs are far shorter, while a hostile page can
 * write megabytes of links into the frontier or run them past the profile's articlePatterns.
 */
export const MAX_URL_LENGTH = 2083;

/** Links of an RSS/Atom feed or a sitemap (urlset or sitemapindex). */
export function parseFeedOrSitemap(body: string): { articles: string[]; sitemaps: string[] } {
  let doc: Record<string, any>;
  try {
    doc = xml.parse(body) as Record<string, any>;
  } catch {
    return { articles: [], sitemaps: [] };
  }
  const articles: string[] = [];
  const sitemaps: string[] = [];
  for (const item of arr(doc.rss?.channel?.item)) if (typeof item?.link === 'string') articles.push(item.link.trim());
  for (const item of arr(doc.RDF?.item)) if (typeof item?.link === 'string') articles.push(item.link.trim());
  for (const entry of arr(doc.feed?.entry)) {
    const links = arr(entry?.link);
    const l = links.find((x: any) => !x?.['@rel'] || x['@rel'] === 'alternate') ?? links[0];
    const href = typeof l === 'string' ? l : l?.['@href'];
    if (href) articles.push(String(href).trim());
  }
  for (const u of arr(doc.urlset?.url)) if (u?.loc) articles.push(String(u.loc).trim());
  for (const s of arr(doc.sitemapindex?.sitemap)) if (s?.loc) sitemaps.push(String(s.loc).trim());
  return { articles, sitemaps };
}

/**
 * A gzipped sitemap (sitemap.xml.gz) is inflated within the same byte limit as any page; a gzip bomb or a broken
 * stream is refused with its reason.
 */
function inflateIfGzip(body: Buffer, url: string, maxBytes: number): Buffer | Failure {
  if (body[0] !== 0x1f || body[1] !== 0x8b) return body;
  try {
    return zlib.gunzipSync(body, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
      return permanent(url, 'too-large', `gzipped body inflates past ${maxBytes} bytes (crawler.maxPageBytes): not read`);
    }
    return permanent(url, 'unreadable', `gzipped body cannot be inflated: ${(err as Error).message}`);
  }
}

export interface FoundLink {
  url: string;
  kind: UrlKind;
}

/**
 * Every link of a fetched listing, feed or sitemap, as written (resolved against the page); an HTML listing past
 * the element or depth bounds is refused (`refused`, no links).
 */
export function linksOf(kind: UrlKind, res: FetchResult, maxBytes: number, limits: Omit<ScanLimits, 'maxLinks'>): { links: FoundLink[]; refused?: Failure } {
  const ctype = res.headers.get('content-type') ?? '';
  const links: FoundLink[] = [];
  if (kind === 'feed' || kind === 'sitemap' || /xml|rss|atom/i.test(ctype)) {
    const body = inflateIfGzip(res.body, res.url, maxBytes);
    if (!Buffer.isBuffer(body)) return { links: [], refused: body };
    const { articles, sitemaps } = parseFeedOrSitemap(decodeHtml(body, ctype).text);
    for (const a of articles) links.push({ url: resolveUrl(a, res.url) ?? a, kind: 'article' });
    for (const s of sitemaps) links.push({ url: resolveUrl(s, res.url) ?? s, kind: 'sitemap' });
  } else {
    const scan = scanPage(decodeHtml(res.body, ctype).text, res.url, { ...limits, maxLinks: MAX_LINKS });
    if (scan.refused) return { links: [], refused: scan.refused };
    const base = resolveUrl(scan.base, res.url) ?? res.url;
    for (const h of scan.links) {
      const abs = resolveUrl(h, base);
      if (abs) links.push({ url: abs, kind: 'listing' });
    }
  }
  return { links: links.slice(0, MAX_LINKS) };
}

/**
 * What to queue from a listing's links: article pages (by the profile's patterns), listing pages one level
 * deeper while within maxDepth (only from HTML listings), sitemaps named by a sitemap index. Each once.
 */
export function planLinks(site: SiteProfile, from: { kind: UrlKind; depth: number }, links: FoundLink[], maxDepth: number): NewUrl[] {
  const out = new Map<string, NewUrl>();
  for (const l of links) {
    if (l.url.length > MAX_URL_LENGTH) continue;
    const norm = normalisePageUrl(l.url);
    if (!norm || !hostAllowed(site, norm)) continue;
    const key = urlKey(norm);
    if (!key || out.has(key)) continue;
    if (isArticle(site, norm)) out.set(key, { key, url: norm, kind: 'article', depth: from.depth + 1 });
    else if (l.kind === 'sitemap') out.set(key, { key, url: norm, kind: 'sitemap', depth: from.depth + 1 });
    else if (from.kind === 'listing' && l.kind === 'listing' && from.depth + 1 <= maxDepth) out.set(key, { key, url: norm, kind: 'listing', depth: from.depth + 1 });
  }
  return [...out.values()];
}
