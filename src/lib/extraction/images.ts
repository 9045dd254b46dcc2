// The photos of a page a caption can belong to ("anchors"): <img> elements with the URL a reader sees (lazy
// attributes, srcset, <picture>, <noscript> fallbacks), gallery slides that carry their photo in data-* attributes
// with no <img> at all, and the JSON-LD ImageObjects that describe them. Decorative images (logos, icons, ads,
// headshots, spacers, tiny images) and images in page furniture (navigation, related-story lists, share bars) are
// dropped here, before any caption is looked for.
import type { AnyNode, Element } from 'domhandler';
import { resolveUrl } from './urls.js';
import { ancestors, attr, classId, sampleText, type $T } from './dom.js';
import { collapse } from './caption-text.js';

export const LAZY_ATTRS = ['data-src', 'data-original', 'data-lazy-src', 'data-lazyload', 'data-lazy', 'data-url', 'data-original-src', 'data-hi-res-src', 'data-srcset', 'data-lazy-srcset', 'data-noscript-src'];
export const PLACEHOLDER = /(^data:)|blank|spacer|placeholder|transparent|pixel\.(gif|png)|grey\.(gif|png)|gray\.(gif|png)|loading|lazy[-_]?load|default[-_]?img|1x1|clear\.gif|s\.gif$|\/grey-placeholder|\bimg\/dot\b/i;
const BAD_IMG = /logo|icon|favicon|avatar|headshot|head-shot|mugshot|author|byline|profile[-_]?pic|sprite|spacer|blank\.|pixel|tracking|beacon|badge|emoji|emoticon|smiley|qrcode|qr[-_]code|erweima|ewm|二维码|banner|button|btn[-_]|share|social|weixin|wechat|weibo|facebook|twitter|whatsapp|gravatar|placeholder|loading|arrow|bullet|rating|star[-_]|play[-_]?btn|video[-_]?play|poster|thumb[-_]?play|doubleclick|adserver|\/ads?\/|[_-]ads?[_.-]|advert|sponsor/i;
const BAD_DIR = /\/(icons?|logos?|ads?|adv|advert\w*|banners?|buttons?|btns?|emoji|emoticons?|avatars?|sprites?|badges?|share|social-icons?|qrcodes?|erweima)\//i;
export const BAD_CONTAINER = /(^|[\s_-])(related|relate|recommend\w*|more[-_]?(stories|news|from)|most[-_]?(read|popular|viewed)|popular|trending|sidebar|side[-_]?bar|promo\w*|teaser\w*|outbrain|taboola|ob-widget|footer|header[-_]?nav|nav(bar|igation)?|menu|breadcrumb|share\w*|social|comment\w*|author\w*|byline|avatar|ad|ads|advert\w*|sponsor\w*|banner|newsletter|subscribe|widget|rail|partner|hot[-_]?news|list[-_]?news|news[-_]?list|tuijian|xgxw|xiangguan|rec[-_]?list|video[-_]?player|jw-?player|vjs|logo|modal|lightbox\w*)([\s_-]|$)/i;
// Markers of the article's own body (microdata, hAtom, the usual CMS class names). Teaser cards do not carry them.
const ARTICLE_BODY_CLASS = /^(hentry|entry-content|post-content|post-body|article-body|articlebody|article__body|article-content|article-text|story-body|story-content|story__body|body-copy|content-body)$/i;

export interface ImageAnchor {
  /** The <img>, or the element whose data-* attributes name the photo. */
  el: Element;
  url: string;
  kind: 'img' | 'data';
}

function firstSrcsetUrl(v: string | undefined): string | undefined {
  if (!v) return undefined;
  const first = v.split(/,\s+(?=\S)/)[0]?.trim().split(/\s+/)[0];
  return first || undefined;
}

/** The URL a reader sees for an <img>: src unless it is a placeholder, else the first lazy attribute, else srcset. */
export function imageUrlOf(el: Element, base: string): string | null {
  const src = attr(el, 'src')?.trim();
  const candidates: (string | undefined)[] = [];
  if (src && !PLACEHOLDER.test(src)) candidates.push(src);
  for (const a of LAZY_ATTRS) {
    const v = attr(el, a);
    if (v) candidates.push(a.endsWith('srcset') ? firstSrcsetUrl(v) : v.trim());
  }
  candidates.push(firstSrcsetUrl(attr(el, 'srcset')));
  if (el.parent && (el.parent as Element).name === 'picture') {
    for (const s of (el.parent as Element).children) {
      if ((s as Element).name === 'source') candidates.push(firstSrcsetUrl(attr(s as Element, 'srcset') ?? attr(s as Element, 'data-srcset')));
    }
  }
  if (src && !src.startsWith('data:')) candidates.push(src);
  for (const c of candidates) {
    if (!c || c.startsWith('data:') || c.includes('{')) continue;
    const abs = resolveUrl(c, base);
    if (abs) return abs;
  }
  return null;
}

function numAttr(el: Element, name: string): number | null {
  const v = attr(el, name);
  if (!v || /%/.test(v)) return null;
  const n = parseInt(v, 10);
  return Number.isFinite(n) && n > 0 ? n : null;
}

function styleDim(el: Element, name: 'width' | 'height'): number | null {
  const m = new RegExp(`(?:^|;)\\s*${name}\\s*:\\s*(\\d+)px`, 'i').exec(attr(el, 'style') ?? '');
  return m ? parseInt(m[1]!, 10) : null;
}

const bodyVerdicts = new WeakMap<Element, boolean>();

/** The element is marked as the article body and holds the text of one (a teaser card marked "hentry" does not). */
export function isArticleBody(a: Element): boolean {
  const known = bodyVerdicts.get(a);
  if (known !== undefined) return known;
  const marked = /articleBody/i.test(attr(a, 'itemprop') ?? '') || (attr(a, 'class') ?? '').split(/\s+/).some((t) => ARTICLE_BODY_CLASS.test(t));
  const verdict = marked && sampleText(a, 600).replace(/\s+/g, '').length >= 300;
  bodyVerdicts.set(a, verdict);
  return verdict;
}

/** Why an image is not a news photo ('format', 'tiny', 'decorative', 'hidden', 'container'), or null. */
export function isDecorative(el: Element, url: string): string | null {
  const path = url.toLowerCase().split('?')[0]!;
  if (/\.(svg|gif|ico)$/.test(path)) return 'format';
  const w = numAttr(el, 'width') ?? styleDim(el, 'width');
  const h = numAttr(el, 'height') ?? styleDim(el, 'height');
  if ((w !== null && w < 100) || (h !== null && h < 60)) return 'tiny';
  // The file name and the element's class say what an image is; directories are often news sections ("/social/").
  const pathPart = url.replace(/^https?:\/\/[^/]+/, '').split('?')[0]!;
  const file = pathPart.split('/').pop() ?? '';
  const own = `${file} ${classId(el).replace(/lazy-?load(ed|ing)?/gi, '')}`;
  if (BAD_IMG.test(own) || BAD_DIR.test(pathPart)) return 'decorative';
  if (/^(logo|icon|avatar|author|headshot|qr ?code|二维码|广告|advertisement)\b/i.test(attr(el, 'alt') ?? '')) return 'decorative';
  if (attr(el, 'aria-hidden') === 'true' && !attr(el, 'alt')) return 'hidden';
  const ancs = ancestors(el);
  for (let depth = 0; depth < ancs.length; depth++) {
    const a = ancs[depth]!;
    // The article body: whatever wraps it (a layout column named "sidebar_content", a "more-from" block on the
    // body tag) is page layout, not the image's neighbourhood.
    if (isArticleBody(a)) break;
    if (a.name === 'body' || a.name === 'html') break;
    if (a.name === 'nav' || a.name === 'footer' || a.name === 'video') return 'container';
    // An <aside> is a sidebar, unless it holds the photo's own captioned figure (inline media blocks).
    if (a.name === 'aside' && !ancs.slice(0, depth).some((f) => f.name === 'figure' && f.children.some((c) => (c as Element).name === 'figcaption'))) return 'container';
    // Page-level wrappers carry site-wide class names ("blq-int-nav"); only the image's own neighbourhood counts.
    if (depth < 6 && a.name !== 'article' && a.name !== 'main' && BAD_CONTAINER.test(classId(a))) return 'container';
  }
  return null;
}

// Gallery slides with no <img>: the photo's URL in a data attribute of the slide, the caption and credit beside it
// (`<div class="slide" data-image="…jpg" data-caption="…" data-credit="…">`, the lazy galleries of US papers).
const DATA_IMAGE_ATTRS = ['data-image', 'data-img', 'data-src', 'data-full', 'data-full-src', 'data-original', 'data-lazy', 'data-lazy-src', 'data-hi-res', 'data-large', 'data-image-src', 'data-photo', 'data-url', 'data-href'];
const IMAGE_URL = /\.(jpe?g|png|webp|avif)(\?|$|#)|\/images?\/|\/photos?\//i;

/** The photo URL a gallery slide names in its data-* attributes, when it holds no <img> of its own. */
export function dataImageUrl(el: Element, base: string): string | null {
  for (const a of DATA_IMAGE_ATTRS) {
    const v = attr(el, a)?.trim();
    if (!v || !IMAGE_URL.test(v) || v.startsWith('data:') || v.includes('{')) continue;
    const abs = resolveUrl(a === 'data-srcset' ? firstSrcsetUrl(v) : v, base);
    if (abs) return abs;
  }
  return null;
}

export const DATA_CAPTION_ATTRS = ['data-caption', 'data-description', 'data-desc', 'data-title'];
export const DATA_CREDIT_ATTRS = ['data-credit', 'data-photographer', 'data-copyright', 'data-byline'];

/** Elements that look like gallery slides: a data-* caption and a data-* photo URL, and no <img> inside. */
export function galleryAnchors($: $T, base: string, limit: number): ImageAnchor[] {
  const out: ImageAnchor[] = [];
  for (const node of $('[data-caption], [data-description], [data-desc], [data-credit]').toArray().slice(0, limit * 2)) {
    const el = node as Element;
    if (el.name === 'img') continue;
    if ($(el).find('img').length) continue;
    const url = dataImageUrl(el, base);
    if (!url) continue;
    if (/\.(svg|gif|ico)(\?|$)/i.test(url)) continue;
    out.push({ el, url, kind: 'data' });
    if (out.length >= limit) break;
  }
  return out;
}

export interface JsonLdImage {
  url: string;
  caption?: string;
  credit?: string;
}

/** ImageObjects (with a caption) of the page's JSON-LD blocks, read before scripts are dropped. Bounded in size. */
export function jsonLdImages($: $T, base: string): JsonLdImage[] {
  const out: JsonLdImage[] = [];
  let budget = 1_000_000;
  for (const s of $('script[type="application/ld+json"]').toArray().slice(0, 20)) {
    const raw = $(s).text();
    budget -= raw.length;
    if (budget < 0) break;
    let data: unknown;
    try {
      data = JSON.parse(raw);
    } catch {
      continue;
    }
    const stack: unknown[] = [data];
    for (let steps = 0; stack.length && steps < 5000; steps++) {
      const v = stack.pop();
      if (Array.isArray(v)) {
        for (const x of v) stack.push(x);
        continue;
      }
      if (!v || typeof v !== 'object') continue;
      const o = v as Record<string, unknown>;
      const type = String(o['@type'] ?? '');
      const caption = typeof o.caption === 'string' ? o.caption : typeof o.description === 'string' && /ImageObject/.test(type) ? o.description : undefined;
      const u = typeof o.url === 'string' ? o.url : typeof o.contentUrl === 'string' ? o.contentUrl : undefined;
      if (/ImageObject/.test(type) && u && caption) {
        const abs = resolveUrl(u, base);
        const credit = [o.creditText, o.copyrightHolder, o.author].map((c) => (typeof c === 'string' ? c : c && typeof c === 'object' && typeof (c as { name?: unknown }).name === 'string' ? (c as { name: string }).name : '')).find(Boolean);
        if (abs) out.push({ url: abs, caption: collapse(caption), credit: credit ? collapse(credit) : undefined });
      }
      for (const k of Object.keys(o)) if (o[k] && typeof o[k] === 'object') stack.push(o[k]);
    }
  }
  return out;
}

/** A URL's identity for matching a JSON-LD image to a DOM image: the file name without size variants. */
export function imageKey(url: string): string {
  let p = url;
  try {
    p = new URL(url).pathname;
  } catch {
    /* keep */
  }
  const file = (p.split('/').pop() ?? '').toLowerCase();
  return file.replace(/[-_](\d{2,4}x\d{2,4}|\d{2,4}w|scaled|large|medium|small|thumb)(?=\.)/g, '').replace(/\.(jpe?g|png|webp|avif)$/, '');
}

/**
 * The elements holding the article's text: those marked as the body (articleBody, entry-content...) and, since
 * many pages mark nothing, the element whose direct paragraphs hold the most text (a readability-style count).
 */
export function bodyRoots($: $T, zh: boolean): Element[] {
  const roots: Element[] = [];
  for (const el of $('[itemprop="articleBody"], [itemprop="articlebody"], .entry-content, .post-content, .article-body, .article__body, .story-body, .article-content, .articleBody, article').toArray().slice(0, 50)) {
    const e = el as Element;
    if (isArticleBody(e) || (e.name === 'article' && sampleText(e, 800).replace(/\s+/g, '').length >= 500)) roots.push(e);
  }
  const score = new Map<Element, number>();
  const min = zh ? 30 : 80;
  for (const p of $('p').toArray().slice(0, 3000)) {
    const len = sampleText(p as AnyNode, 1000).replace(/\s+/g, ' ').trim().length;
    if (len < min) continue;
    const parent = (p as Element).parent as Element | null;
    if (!parent || parent.type !== 'tag') continue;
    score.set(parent, (score.get(parent) ?? 0) + len);
    const gp = parent.parent as Element | null;
    if (gp && gp.type === 'tag') score.set(gp, (score.get(gp) ?? 0) + len / 2);
  }
  let best: Element | null = null;
  let bestScore = zh ? 200 : 400;
  for (const [e, s] of score) {
    if (s > bestScore) {
      best = e;
      bestScore = s;
    }
  }
  if (best && !roots.includes(best)) roots.push(best);
  return roots;
}
