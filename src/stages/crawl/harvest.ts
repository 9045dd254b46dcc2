// Article harvest and image fetch: what one fetched article page yields (its identity and its captioned
// photos), and whether one fetched image may be stored. Pure functions over fetch results; the stage commits.
import crypto from 'node:crypto';
import { probeImage } from '../../bank/index.js';
import { urlKey } from '../../util/url-key.js';
import { decodeHtml } from '../../lib/extraction/index.js';
import { extractPairs, type ExtractedPair } from '../../lib/extraction/index.js';
import { normalisePageUrl, resolveUrl } from '../../lib/extraction/index.js';
import { permanent, type Failure } from './failures.js';
import type { FetchResult } from './fetch.js';
import { scanPage } from './page-scan.js';
import { hostAllowed, isArticle, type SiteProfile } from './sites.js';

/** The item id of a photo on a page: stable across cycles, so a harvest repeated after a crash adds nothing. */
export function itemExtId(pageUrl: string, imageUrl: string): string {
  return crypto.createHash('sha1').update(`${pageUrl}\n${imageUrl}`).digest('hex');
}

export interface PageLimits {
  maxElements: number;
  maxDepth: number;
}

export type HarvestedPage =
  | {
      ok: true;
      /** The page's URL for its items: its canonical URL when the page names one on the site, else where it was found. */
      pageUrl: string;
      key: string;
      pairs: ExtractedPair[];
    }
  | { ok: false; failure: Failure };

const HTML_TYPE = /html|xml/i;

/**
 * One fetched article page: refused when it is not HTML or passes the element/depth bounds (before any DOM is
 * built); its identity (a <link rel=canonical> or og:url on an allowed host that matches the article patterns,
 * else the fetched URL), and its (image, caption) pairs.
 */
export function harvestPage(site: SiteProfile, res: FetchResult, limits: PageLimits): HarvestedPage {
  const url = res.url;
  const ctype = res.headers.get('content-type');
  if (ctype && !HTML_TYPE.test(ctype)) return { ok: false, failure: permanent(url, 'not-html', `not an HTML page (Content-Type ${ctype})`) };
  const text = decodeHtml(res.body, ctype).text;
  const scan = scanPage(text, url, limits);
  if (scan.refused) return { ok: false, failure: scan.refused };
  const fetched = normalisePageUrl(url) ?? url;
  let pageUrl = fetched;
  if (scan.canonical) {
    const base = resolveUrl(scan.base, url) ?? url;
    const canon = normalisePageUrl(scan.canonical, base);
    if (canon && hostAllowed(site, canon) && isArticle(site, canon)) pageUrl = canon;
  }
  let pairs: ExtractedPair[];
  try {
    pairs = extractPairs(res.body, { url, contentType: ctype, selectors: site.captions, lang: site.language }).pairs;
  } catch (err) {
    // A page that breaks the parser (a stack overflow on pathological markup, ...) fails alone.
    return { ok: false, failure: permanent(url, 'unparseable', `caption extraction failed: ${(err as Error).message}`) };
  }
  return { ok: true, pageUrl, key: urlKey(pageUrl) ?? pageUrl, pairs };
}

export interface ImageLimits {
  maxPixels: number;
  minSide: number;
}

const FORMATS = ['jpeg', 'png', 'webp', 'avif', 'heif', 'tiff'];

/** A fetched image checked from its header only (a decompression bomb is refused before any pixel is decoded). */
export async function checkImage(res: FetchResult, limits: ImageLimits): Promise<Failure | null> {
  const url = res.url;
  const ctype = res.headers.get('content-type') ?? '';
  if (ctype && !/^image\/|octet-stream/i.test(ctype)) return permanent(url, 'image-type', `not an image (Content-Type ${ctype})`);
  let probe: { format: string; width: number; height: number };
  try {
    probe = await probeImage(res.body);
  } catch (err) {
    return permanent(url, 'image-unreadable', (err as Error).message);
  }
  if (!FORMATS.includes(probe.format)) return permanent(url, 'image-type', `image format ${probe.format} is not stored`);
  if (probe.width * probe.height > limits.maxPixels) return permanent(url, 'image-pixels', `${probe.width}x${probe.height} is over crawler.maxImagePixels`);
  if (Math.min(probe.width, probe.height) < limits.minSide) return permanent(url, 'image-small', `${probe.width}x${probe.height} is under crawler.minImageSide`);
  return null;
}
