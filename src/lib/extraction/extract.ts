// Caption extraction: (image URL, caption, credit) pairs as a reader sees them on a news article page.
// The page is decoded and parsed once; then
//   images.ts      the photos (anchors): <img> with the URL a reader sees, gallery slides named in data-*
//                  attributes, JSON-LD ImageObjects; decorative images and page furniture dropped
//   candidates.ts  every text that could caption each photo, with where it came from
//   features.ts    what each candidate looks like, measured the same way on any site
//   rules.ts       hand rules scoring the features; each photo takes its best candidate above the bar
//   caption-text   interface text removed, credit and dateline split off (src/lib/captions/credit.ts)
// A caption element captions one photo (or the stack of image-only blocks right above it). Work per page is
// bounded (characters parsed, photos looked at).
import * as cheerio from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { decodeHtml } from './decode.js';
import { resolveUrl } from './urls.js';
import { contains, sampleText } from './dom.js';
import { bodyRoots, galleryAnchors, imageUrlOf, isDecorative, jsonLdImages, PLACEHOLDER, type ImageAnchor } from './images.js';
import { generateCandidates, type AnchorCandidates, type CaptionCandidate, type CaptionSelectors } from './candidates.js';
import { describe, normText, type CandidateFeatures, type PageContext } from './features.js';
import { ACCEPT, scoreCandidate, type Scored } from './rules.js';

export type { CaptionSelectors } from './candidates.js';
export { imageUrlOf, isDecorative } from './images.js';

export interface ExtractOptions {
  url: string;
  contentType?: string | null;
  selectors?: CaptionSelectors;
  /** Expected language; detected from the page when absent. */
  lang?: 'en' | 'zh';
  /** Bound on the work per page. */
  maxImages?: number;
  maxChars?: number;
  /** Rule ids to leave out (leave-one-site-out measurement in bench:extract). */
  disabledRules?: ReadonlySet<string>;
  /** Keep every scored candidate in the result (`capbridge extract --explain`, bench --errors). */
  explain?: boolean;
}

export interface ExtractedPair {
  image_url: string;
  caption: string;
  /** Photo credit and dateline printed with the caption. */
  credit?: string;
}

export interface ExplainedCandidate {
  image_url: string;
  source: string;
  text: string;
  total: number;
  points: Record<string, number>;
}

export interface ExtractResult {
  url: string;
  lang: 'en' | 'zh';
  charset: string;
  pairs: ExtractedPair[];
  explain?: ExplainedCandidate[];
}

export function detectPageLang($: cheerio.CheerioAPI, text: string): 'en' | 'zh' {
  const declared = ($('html').attr('lang') ?? $('meta[http-equiv="content-language"]').attr('content') ?? '').toLowerCase();
  let han = 0, latin = 0;
  for (const ch of text.slice(0, 20000)) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x4e00 && c <= 0x9fff) han++;
    else if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) latin++;
  }
  if (han * 3 > latin) return 'zh';
  if (declared.startsWith('zh') && han > 50) return 'zh';
  return 'en';
}

/** Parses the page, resolves lazy/noscript images, reads JSON-LD; returns the cheerio root and the base URL. */
function preparePage(input: Uint8Array | string, opts: ExtractOptions) {
  const decoded = decodeHtml(input, opts.contentType);
  const maxChars = opts.maxChars ?? 4_000_000;
  const html = decoded.text.length > maxChars ? decoded.text.slice(0, maxChars) : decoded.text;
  const $ = cheerio.load(html);
  const baseHref = $('base[href]').first().attr('href');
  const base = (baseHref && resolveUrl(baseHref, opts.url)) || opts.url;
  const jsonLd = jsonLdImages($, base);
  $('script, style, template, svg, iframe, select, button, textarea, input, link, meta:not([http-equiv]):not([charset]):not([property="og:title"])').remove();

  // <noscript> fallbacks of lazy images: give the placeholder <img> its real URL, or put the <img> in place.
  $('noscript').each((_, ns) => {
    const raw = $(ns).html() ?? '';
    if (!/<img/i.test(raw)) return;
    const inner = cheerio.load(raw.includes('&lt;') ? $(ns).text() : raw);
    const nsImg = inner('img').first();
    const src = nsImg.attr('src') ?? nsImg.attr('data-src');
    if (!src) return;
    const parent = $(ns).parent();
    const sibling = parent.find('img').toArray().find((e) => !contains(ns as Element, e));
    if (sibling) {
      const cur = $(sibling).attr('src');
      if (!cur || PLACEHOLDER.test(cur)) $(sibling).attr('data-noscript-src', src);
    } else {
      $(ns).replaceWith(`<img src="${src.replace(/"/g, '&quot;')}" alt="${(nsImg.attr('alt') ?? '').replace(/"/g, '&quot;')}">`);
    }
  });
  $('noscript').remove();
  return { $, base, jsonLd, charset: decoded.charset };
}

function pageLanguage($: cheerio.CheerioAPI): 'en' | 'zh' {
  // Article paragraphs decide the language when there are enough of them (navigation and embeds are often English).
  // Menus and newsletter blurbs are short lines; article paragraphs are long ones.
  let paraText = '';
  for (const p of $('p').toArray().slice(0, 600)) {
    const t = sampleText(p as AnyNode, 2000).replace(/\s+/g, ' ').trim();
    if (t.length < 50) continue;
    paraText += t + ' ';
    if (paraText.length > 20000) break;
  }
  const bodyText = paraText.replace(/\s+/g, '').length >= 200 ? paraText : sampleText($('body').toArray()[0] as AnyNode | undefined, 20000);
  const title = $('title').first().text();
  // A Chinese headline over a body that has Chinese paragraphs among English ones (menus, newsletter blurbs, a
  // partly translated page) is a Chinese page.
  const titleHan = (title.match(/\p{Script=Han}/gu) ?? []).length;
  const titleLatin = (title.match(/[A-Za-z]/g) ?? []).length;
  if (titleHan >= 8 && titleHan * 2 >= titleLatin && (bodyText.match(/\p{Script=Han}/gu) ?? []).length >= 60) return 'zh';
  return detectPageLang($, bodyText + ' ' + title);
}

function pageTitles($: cheerio.CheerioAPI): string[] {
  const out = new Set<string>();
  const title = $('title').first().text();
  for (const t of [title, ...title.split(/\s[-|–—_]\s|\s*[|｜_]\s*/), $('meta[property="og:title"]').attr('content') ?? '', ...$('h1').toArray().slice(0, 3).map((h) => $(h).text())]) {
    const n = normText(t);
    if (n.length >= 6) out.add(n);
  }
  return [...out];
}

/**
 * The photo a URL shows, whatever size the CDN serves: "…-s1100-c50.jpg" and "…-s1200.jpg", "_w250_r1_s.jpg",
 * "/800x0/", "?width=800" name one photo (a lightbox or a mobile copy repeats it).
 */
export function photoIdentity(url: string): string {
  let u = url;
  try {
    const x = new URL(url);
    // Size, crop and format parameters name a rendition; any other parameter (an image proxy's ?url=…, an id) names
    // the photo.
    const keep = [...x.searchParams.entries()].filter(([k]) => !/^(w|h|width|height|size|quality|q|thumbnail|resize|fit|crop|dpr|auto|format|fm|type|ve|tl|v|ver|version|disable|enable|s|c|f|strip|ll|pl|fh|fw|r)$/i.test(k));
    u = x.host + x.pathname + (keep.length ? '?' + keep.map(([k, v]) => `${k}=${v}`).join('&') : '');
  } catch {
    /* keep */
  }
  return u
    .toLowerCase()
    .replace(/\/\d{2,4}x\d{0,4}\//g, '/')
    .replace(/\/w\d{2,4}\//g, '/')
    .replace(/[-_](s\d{2,4}(-c\d{1,3})?|w\d{2,4}(_r\d+)?(_s)?|\d{2,4}x\d{2,4}|\d{2,4}w|scaled|large|medium|small|thumb|articlelarge|superjumbo|jumbo)(?=[._-]|$)/g, '');
}

/** How many different photos the page captions with each text from an element or attribute of their own. */
function repeatCounts(all: AnchorCandidates[]): Map<string, number> {
  const places = new Map<string, Set<string>>();
  for (const ac of all) {
    for (const c of ac.candidates) {
      if (c.source === 'own-block' || c.source === 'next-block' || c.source === 'json-ld') continue;
      const key = normText(c.text);
      if (!key) continue;
      let s = places.get(key);
      if (!s) places.set(key, (s = new Set()));
      s.add(photoIdentity(ac.anchor.url));
    }
  }
  const out = new Map<string, number>();
  for (const [k, s] of places) out.set(k, s.size);
  return out;
}

/** Some photo's alt repeats the caption the page prints for it: this site writes its captions into alt. */
function altCarriesCaptions(all: AnchorCandidates[]): boolean {
  for (const ac of all) {
    const alt = ac.candidates.find((c) => c.source === 'alt');
    if (!alt) continue;
    const a = normText(alt.text);
    if (a.length < 20) continue;
    for (const c of ac.candidates) {
      if (c.source !== 'figcaption' && c.source !== 'class' && c.source !== 'profile' && c.source !== 'next-block') continue;
      const p = normText(c.text);
      if (p && (p === a || (p.startsWith(a) && a.length / p.length > 0.7) || (a.startsWith(p) && p.length / a.length > 0.7))) return true;
    }
  }
  return false;
}

export function extractPairs(input: Uint8Array | string, opts: ExtractOptions): ExtractResult {
  const { $, base, jsonLd, charset } = preparePage(input, opts);
  const lang = opts.lang ?? pageLanguage($);
  const maxImages = opts.maxImages ?? 400;

  const anchors: ImageAnchor[] = [];
  const good = new Set<Element>();
  for (const el of $('img').toArray().slice(0, maxImages * 3)) {
    const e = el as Element;
    const url = imageUrlOf(e, base);
    if (!url || isDecorative(e, url)) continue;
    anchors.push({ el: e, url, kind: 'img' });
    good.add(e);
    if (anchors.length >= maxImages) break;
  }
  for (const g of galleryAnchors($, base, Math.max(0, maxImages - anchors.length))) {
    if (isDecorative(g.el, g.url) === 'container') continue;
    anchors.push(g);
  }

  const ctx = { $, lang, good, anchors, selectors: opts.selectors, jsonLd };
  const all = anchors.map((a) => generateCandidates(ctx, a));
  const page: PageContext = { lang, titles: pageTitles($), bodyRoots: bodyRoots($, lang === 'zh'), repeats: repeatCounts(all), altCarriesCaptions: altCarriesCaptions(all) };
  const ruleCtx = { lang, selectors: opts.selectors };

  const explain: ExplainedCandidate[] = [];
  type Choice = { ac: AnchorCandidates; order: number; c: CaptionCandidate; f: CandidateFeatures; s: Scored };
  const accepted: Choice[] = [];
  all.forEach((ac, order) => {
    for (const c of ac.candidates) {
      const f = describe(ac, c, page, lang, good);
      const s = scoreCandidate(f, ruleCtx, opts.disabledRules);
      if (opts.explain) explain.push({ image_url: ac.anchor.url, source: c.source, text: c.text.slice(0, 200), total: s.total, points: s.points });
      if (s.total >= ACCEPT) accepted.push({ ac, order, c, f, s });
    }
  });

  // Best candidates first: a photo printed twice (a desktop and a mobile copy) takes its best caption, and a
  // caption element goes to the photo it fits best. Each photo is captioned once, each element used once.
  accepted.sort((a, b) => b.s.total - a.s.total || a.order - b.order);
  const chosen = new Map<number, CandidateFeatures>();
  const seenPhoto = new Set<string>();
  const usedEls = new Set<Element>();
  const take = (order: number, url: string, f: CandidateFeatures) => {
    chosen.set(order, f);
    seenPhoto.add(photoIdentity(url));
  };
  for (const x of accepted) {
    if (seenPhoto.has(photoIdentity(x.ac.anchor.url))) continue;
    if (x.c.el && usedEls.has(x.c.el)) continue;
    if (x.c.el) usedEls.add(x.c.el);
    for (const p of x.c.parts) usedEls.add(p);
    take(x.order, x.ac.anchor.url, x.f);
    // Photos stacked in image-only blocks right above one caption block share it.
    for (const b of x.c.stack) {
      const i = anchors.findIndex((a) => contains(b, a.el));
      if (i >= 0 && !seenPhoto.has(photoIdentity(anchors[i]!.url))) take(i, anchors[i]!.url, x.f);
    }
  }
  const pairs: ExtractedPair[] = [...chosen.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([i, f]) => {
      const clean = f.clean!;
      const credit = [clean.credit, clean.dateline].filter(Boolean).join(' ');
      return credit ? { image_url: anchors[i]!.url, caption: clean.caption, credit } : { image_url: anchors[i]!.url, caption: clean.caption };
    });
  const out: ExtractResult = { url: opts.url, lang, charset, pairs };
  if (opts.explain) out.explain = explain;
  return out;
}
