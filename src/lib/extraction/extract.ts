// Caption extraction: (image URL, caption, credit) pairs as a reader sees them on a news article page.
// The page is decoded and parsed once; then
//   images.ts      the photos (anchors): <img> with the URL a reader sees, gallery slides named in data-*
//                  attributes, JSON-LD ImageObjects; decorative images and page furniture dropped
//   candidates.ts  every text that could caption each photo, with where it came from
//   features.ts    what each candidate looks like, measured the same way on any site
//   model.ts       the fitted model scoring the features; each photo takes its best candidate above the bar
//   caption-text   interface text removed, credit and dateline split off (src/lib/captions/credit.ts)
// A caption element captions one photo (or the stack of image-only blocks right above it). Work per page is
// bounded (characters parsed, photos looked at).
import * as cheerio from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { decodeHtml } from './decode.js';
import { parseDocument } from './parse.js';
import { resolveUrl } from './urls.js';
import { contains, sampleText } from './dom.js';
import { bodyRoots, clearSharedPlaceholders, furnitureOf, galleryAnchors, imageKey, imageUrlOf, isDecorative, jsonLdImages, PLACEHOLDER, resolveMicrodataImages, scriptImages, type ImageAnchor, type JsonLdImage } from './images.js';
import { generateCandidates, type AnchorCandidates, type CaptionCandidate, type CaptionSelectors } from './candidates.js';
import { describe, normText, type CandidateFeatures, type PageContext } from './features.js';
import { withCaptionMemo } from './caption-text.js';
import { checkFeatureNames, featureVector } from './vector.js';
import { profilePairs } from './profile.js';
import { predict, type LinearModel } from './model.js';
import { SHIPPED_MODEL } from './model-weights.js';

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
  /** Another model than the shipped one (leave-one-site-out measurement in bench:extract). */
  model?: LinearModel;
  /**
   * The features each candidate row's vector holds (default: the model's). A fit passes every feature the extractor
   * computes, so that it never depends on the weights file it is about to replace.
   */
  features?: string[];
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
  /** The model's probability that this is the photo's caption. */
  total: number;
  /** The features that weigh most in it (weight x value). */
  points: Record<string, number>;
}

let checked: LinearModel | null = null;

/** The committed model, checked once against the features this extractor computes. */
export function shippedModel(): LinearModel {
  if (!checked) checked = loadShipped(SHIPPED_MODEL);
  return checked;
}

function loadShipped(m: LinearModel): LinearModel {
  // A model naming features the extractor does not compute would score nonsense: refuse it at load.
  checkFeatureNames(m.features);
  if (m.weights.length !== m.features.length + 1) throw new Error('extract/model-weights.ts: one weight per feature and an intercept expected: run `npx tsx bench/fit-extract.ts`');
  return m;
}


export interface ExtractResult {
  url: string;
  lang: 'en' | 'zh';
  charset: string;
  pairs: ExtractedPair[];
  explain?: ExplainedCandidate[];
  /** With a profile's selectors and explain: what each path found, and which one gave `pairs`. */
  paths?: { used: 'profile' | 'generic'; profile: ExtractedPair[]; generic: ExtractedPair[] };
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

/**
 * AMP pages (and templates that keep AMP's markup) print a photo as `<amp-img src srcset width height>` (a GIF as
 * `<amp-anim>`), inside which the AMP runtime puts the `<img>` a reader sees, with the same attributes: each is read
 * as that `<img>`. Its children (a sizer, a low-resolution placeholder `<amp-img placeholder>`, a `<noscript>`
 * fallback of the same photo) go. In the open sets on axios; on new sites on independent.co.uk and celebuzz (AMP
 * galleries), where the caption went to the nearest other photo (a newsletter thumbnail) or to none.
 */
function ampPhotos($: cheerio.CheerioAPI): void {
  $('amp-img, amp-anim').each((_, e) => {
    const el = e as Element;
    if ($(el).parents('amp-img, amp-anim').length) return; // a placeholder inside another: goes with its parent
    $(el).empty();
    el.name = 'img';
  });
}

/** Parses the page, resolves lazy/noscript images, reads JSON-LD; returns the cheerio root and the base URL. */
function preparePage(input: Uint8Array | string, opts: ExtractOptions) {
  const decoded = decodeHtml(input, opts.contentType);
  const maxChars = opts.maxChars ?? 4_000_000;
  const html = decoded.text.length > maxChars ? decoded.text.slice(0, maxChars) : decoded.text;
  const $ = parseDocument(html);
  const baseHref = $('base[href]').first().attr('href');
  const base = (baseHref && resolveUrl(baseHref, opts.url)) || opts.url;
  const jsonLd = [...jsonLdImages($, base), ...scriptImages($, base)];
  resolveMicrodataImages($, base);
  $('script, style, template, svg, iframe, select, button, textarea, input, link, meta:not([http-equiv]):not([charset]):not([property="og:title"])').remove();
  ampPhotos($);

  // <noscript> fallbacks of lazy images: give the placeholder <img> its real URL, or put the <img> in place. A
  // fallback that prints text beside its photo (a script slideshow's no-script version: the photo and its caption
  // in a table or a box) is put in place whole, as a reader without scripts sees it.
  $('noscript').each((_, ns) => {
    const markup = $(ns).html() ?? '';
    if (!/<img/i.test(markup)) return;
    const raw = markup.includes('&lt;') ? $(ns).text() : markup;
    const inner = cheerio.load(raw);
    const nsImg = inner('img').first();
    const src = nsImg.attr('src') ?? nsImg.attr('data-src');
    if (!src) return;
    const parent = $(ns).parent();
    const sibling = parent.find('img').toArray().find((e) => !contains(ns as Element, e));
    if (sibling) {
      const cur = $(sibling).attr('src');
      if (!cur || PLACEHOLDER.test(cur)) $(sibling).attr('data-noscript-src', src);
    } else if (inner('img').length === 1 && inner('body').text().trim()) {
      $(ns).replaceWith(raw);
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
      if (c.source !== 'figcaption' && c.source !== 'class' && c.source !== 'next-block') continue;
      const p = normText(c.text);
      if (p && (p === a || (p.startsWith(a) && a.length / p.length > 0.7) || (a.startsWith(p) && p.length / a.length > 0.7))) return true;
    }
  }
  return false;
}

/** One scored row: a photo's caption candidate, its features and the model's input. */
export interface CandidateRow {
  /** Index of the photo in PageCandidates.anchors. */
  anchor: number;
  cand: CaptionCandidate;
  f: CandidateFeatures;
  x: number[];
}

/** Everything the decision needs about one page: its photos and every candidate caption with its features. */
export interface PageCandidates {
  url: string;
  lang: 'en' | 'zh';
  charset: string;
  anchors: ImageAnchor[];
  rows: CandidateRow[];
}

/** The page's photos: <img> elements that can be photos, then gallery slides named only in data-* attributes; and the
 *  video posters dropped on the way (a caption beside one is the video's). */
function collectAnchors($: cheerio.CheerioAPI, base: string, maxImages: number, roots: Element[]): { anchors: ImageAnchor[]; good: Set<Element>; posters: Set<Element> } {
  const anchors: ImageAnchor[] = [];
  const good = new Set<Element>();
  const posters = new Set<Element>();
  const imgs = $('img').toArray().slice(0, maxImages * 3) as Element[];
  clearSharedPlaceholders(imgs);
  for (const e of imgs) {
    const url = imageUrlOf(e, base);
    const dropped = url ? isDecorative(e, url) : 'no url';
    if (dropped === 'video') posters.add(e);
    if (!url || dropped) continue;
    anchors.push({ el: e, url, kind: 'img', furniture: furnitureOf(e, url, roots) });
    good.add(e);
    if (anchors.length >= maxImages) break;
  }
  for (const g of galleryAnchors($, base, Math.max(0, maxImages - anchors.length))) anchors.push({ ...g, furniture: furnitureOf(g.el, g.url, roots) });
  return { anchors, good, posters };
}

/** Photos that only a gallery script names (no <img>, no slide element): anchored on the page body. */
function scriptAnchors($: cheerio.CheerioAPI, anchors: ImageAnchor[], data: JsonLdImage[], maxImages: number): ImageAnchor[] {
  const body = $('body').toArray()[0] as Element | undefined;
  if (!body) return [];
  const known = new Set(anchors.map((a) => imageKey(a.url)));
  const out: ImageAnchor[] = [];
  for (const d of data) {
    if (!d.script || known.has(imageKey(d.url))) continue;
    known.add(imageKey(d.url));
    out.push({ el: body, url: d.url, kind: 'script' });
    if (anchors.length + out.length >= maxImages) break;
  }
  return out;
}

/** Parses the page and lists every (photo, candidate caption) with its features. */
export function pageCandidates(input: Uint8Array | string, opts: ExtractOptions): PageCandidates {
  return candidatesOf(preparePage(input, opts), opts);
}

type Prepared = ReturnType<typeof preparePage>;

/** Every (photo, candidate caption) of a parsed page with its features (caption texts worked out once per page). */
function candidatesOf(prep: Prepared, opts: ExtractOptions): PageCandidates {
  return withCaptionMemo(() => pageRows(prep, opts));
}

function pageRows(prep: Prepared, opts: ExtractOptions): PageCandidates {
  const { $, base, jsonLd, charset } = prep;
  const lang = opts.lang ?? pageLanguage($);
  const names = opts.features ?? (opts.model ?? shippedModel()).features;
  const roots = bodyRoots($, lang === 'zh');
  const { anchors, good, posters } = collectAnchors($, base, opts.maxImages ?? 400, roots);
  anchors.push(...scriptAnchors($, anchors, jsonLd, opts.maxImages ?? 400));
  const ctx = { $, lang, good, videoPosters: posters, anchors, jsonLd, pageUrl: opts.url };
  const all = anchors.map((a) => generateCandidates(ctx, a));
  const page: PageContext = { lang, titles: pageTitles($), bodyRoots: roots, repeats: repeatCounts(all), altCarriesCaptions: altCarriesCaptions(all), photos: anchors.length };
  const rows: CandidateRow[] = [];
  all.forEach((ac, i) => {
    for (const c of ac.candidates) {
      const f = describe(ac, c, page, lang, good);
      // Nothing left once interface text and credits are taken off: never a caption.
      if (!f.clean || f.chars < 2) continue;
      rows.push({ anchor: i, cand: c, f, x: featureVector(f, lang, names) });
    }
  });
  return { url: opts.url, lang, charset, anchors, rows };
}

/**
 * The decision: each candidate's probability under the model; best candidates first, each photo (by its identity:
 * a desktop and a mobile copy are one photo) takes its best candidate at or above the threshold, and each caption
 * element captions one photo (or the stack of image-only blocks right above it).
 */
export function decide(pc: PageCandidates, scoreOf: (row: CandidateRow, index: number) => number, threshold: number, explain: boolean | LinearModel = false): { pairs: ExtractedPair[]; explain?: ExplainedCandidate[] } {
  const scored = pc.rows.map((row, order) => ({ row, order, p: scoreOf(row, order) }));
  // A lightbox or modal copy of a photo captions it only when the page's own copy has no caption.
  const copy = (x: { row: CandidateRow }) => (pc.anchors[x.row.anchor]!.furniture?.lightbox ? 1 : 0);
  const accepted = scored.filter((x) => x.p >= threshold).sort((a, b) => copy(a) - copy(b) || b.p - a.p || a.order - b.order);
  const chosen = new Map<number, CandidateFeatures>();
  const seenPhoto = new Set<string>();
  const usedEls = new Set<Element>();
  const take = (i: number, f: CandidateFeatures) => {
    chosen.set(i, f);
    seenPhoto.add(photoIdentity(pc.anchors[i]!.url));
  };
  for (const { row } of accepted) {
    const { cand: c, anchor: i } = row;
    if (seenPhoto.has(photoIdentity(pc.anchors[i]!.url))) continue;
    if (c.el && usedEls.has(c.el)) continue;
    if (c.el) usedEls.add(c.el);
    for (const p of c.parts) usedEls.add(p);
    take(i, row.f);
    // Photos stacked in image-only blocks right above one caption block share it.
    for (const b of c.stack) {
      const j = pc.anchors.findIndex((a) => contains(b, a.el));
      if (j >= 0 && !seenPhoto.has(photoIdentity(pc.anchors[j]!.url))) take(j, row.f);
    }
  }
  const pairs: ExtractedPair[] = [...chosen.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([i, f]) => {
      const clean = f.clean!;
      const credit = [clean.credit, clean.dateline].filter(Boolean).join(' ');
      return credit ? { image_url: pc.anchors[i]!.url, caption: clean.caption, credit } : { image_url: pc.anchors[i]!.url, caption: clean.caption };
    });
  if (!explain) return { pairs };
  return { pairs, explain: scored.map(({ row, p }) => ({ image_url: pc.anchors[row.anchor]!.url, source: row.cand.source, text: row.cand.text.slice(0, 200), total: p, points: contributions(row.x, explain === true ? shippedModel() : explain) })) };
}

/** The largest contributions of features to a candidate's score (explain output). */
function contributions(x: number[], m: LinearModel): Record<string, number> {
  const out: [string, number][] = [];
  if (x.length !== m.features.length) return {};
  x.forEach((v, j) => {
    const w = m.weights[j]! * v;
    if (Math.abs(w) >= 0.3) out.push([m.features[j]!, +w.toFixed(2)]);
  });
  return Object.fromEntries(out.sort((a, b) => Math.abs(b[1]) - Math.abs(a[1])).slice(0, 8));
}

export function extractPairs(input: Uint8Array | string, opts: ExtractOptions): ExtractResult {
  const prep = preparePage(input, opts);
  const pc = candidatesOf(prep, opts);
  const model = opts.model ?? shippedModel();
  const d = decide(pc, (row) => predict(model, row.x), model.threshold, opts.explain ? model : false);
  const out: ExtractResult = { url: pc.url, lang: pc.lang, charset: pc.charset, pairs: d.pairs };
  if (opts.selectors) {
    // The site profile's selectors override the generic extractor wherever they find anything.
    const viaProfile = profilePairs(prep.$, prep.base, opts.selectors, pc.lang, opts.maxImages);
    if (viaProfile.length) out.pairs = viaProfile;
    if (opts.explain) out.paths = { used: viaProfile.length ? 'profile' : 'generic', profile: viaProfile, generic: d.pairs };
  }
  if (opts.explain) out.explain = d.explain;
  return out;
}
