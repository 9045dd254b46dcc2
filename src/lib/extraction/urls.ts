// URL helpers shared by the extractor, the crawler and the benchmark.

/** Resolves href against base; null when it is not an http(s) URL. Protocol-relative URLs take the base's scheme. */
export function resolveUrl(href: string | undefined | null, base: string): string | null {
  if (!href) return null;
  const h = href.trim().replace(/[\n\r\t]/g, '');
  if (!h || /^(data|javascript|about|blob|mailto):/i.test(h)) return null;
  try {
    const u = new URL(h, base);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    return u.href;
  } catch {
    return null;
  }
}

/**
 * The benchmark's image URL normalisation (extraction-news README): resolved, scheme and host lower-cased
 * (WHATWG URL does both), fragment dropped, a trailing "?" with an empty query ignored.
 */
export function normaliseImageUrl(href: string, base: string): string | null {
  const abs = resolveUrl(href, base);
  if (!abs) return null;
  const u = new URL(abs);
  u.hash = '';
  let s = u.href;
  if (s.endsWith('?')) s = s.slice(0, -1);
  return s;
}

/** A link to an image file (what a photo's link opens when it opens the photo itself). */
export const IMAGE_FILE_LINK = /\.(jpe?g|png|webp|gif)(\?|$)/i;
/** A link to a photo or gallery page. */
const PHOTO_PAGE_LINK = /\/(photos?|gallery|galleries|slideshows?|images?|pictures?)\//i;

/** A link to a photo: its image file or a photo/gallery page (one test for the caption candidates and the card walks). */
export function photoLink(href: string): boolean {
  return IMAGE_FILE_LINK.test(href) || PHOTO_PAGE_LINK.test(href);
}

const TRACKING = /^(utm_\w+|fbclid|gclid|mc_cid|mc_eid|ref|cmpid|ocid|spm)$/i;

/** Crawl-side page URL normalisation for de-duplication: lower-case host, no fragment, default port dropped,
 * tracking parameters removed, query sorted. */
export function normalisePageUrl(href: string, base?: string): string | null {
  const abs = base ? resolveUrl(href, base) : resolveUrl(href, href);
  if (!abs) return null;
  const u = new URL(abs);
  u.hash = '';
  const params = [...u.searchParams.entries()].filter(([k]) => !TRACKING.test(k)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  u.search = '';
  for (const [k, v] of params) u.searchParams.append(k, v);
  let s = u.href;
  if (s.endsWith('?')) s = s.slice(0, -1);
  return s;
}
