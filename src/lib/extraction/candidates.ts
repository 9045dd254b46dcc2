// Candidate generation: for each photo of the page, every text that could be its caption, with where it came from.
// Nothing is decided here (features.ts describes each candidate, model.ts scores them); a candidate only has to be
// a plausible place for a caption:
//   profile    the site profile's caption selector (config/sites/*.yaml)
//   figcaption the <figcaption> (or caption-classed child) of the photo's <figure>
//   class      an element whose class/id names a caption, in the photo's own container or right after it
//   own-block  the text after the photo inside the photo's own block (<p><img><br>text</p>, <div><img><p>text</p></div>)
//   next-block the block right after the photo's image-only block (after a stack of such blocks, and at most one
//              empty spacer): the layout of Chinese news sites and of agency photo stories
//   data-attr  data-caption / data-description (or a plain caption=) on the photo, its slide, or a gallery slide
//              with no <img>
//   json-ld    the caption of the page's JSON-LD ImageObject for this photo
//   alt        the photo's alt (or title) text
// A caption split over sibling elements (a caption line, then its credit or dateline line) is joined here.
import * as cheerio from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { isCreditOrDateline } from '../captions/index.js';
import { cleanCaption, collapse, isCreditOnly } from './caption-text.js';
import { ancestors, attr, BLOCK_ELEMENTS, childElements, classId, contains, floated, hiddenEl, imgCount, nextElement, prevElement, textOf, walkBelow, type $T } from './dom.js';
import { BAD_CONTAINER, DATA_CAPTION_ATTRS, DATA_CREDIT_ATTRS, imageKey, type ImageAnchor, type JsonLdImage } from './images.js';
import { IMAGE_FILE_LINK, photoLink, resolveUrl } from './urls.js';

export type SourceKind = 'figcaption' | 'class' | 'own-block' | 'next-block' | 'prev-block' | 'table-row' | 'itemprop' | 'data-attr' | 'script' | 'json-ld' | 'alt';

/** A site profile's own way to its captions (config/sites/*.yaml `captions:`); it overrides the generic extractor. */
export interface CaptionSelectors {
  /** CSS selector of the site's article photos (an <img>, or an element holding one). Default: every photo. */
  image?: string;
  /** CSS selector of the element holding one photo and its caption (e.g. "figure.article-image"). */
  container?: string;
  /** CSS selector of the caption inside the container (or after the image when no container). */
  caption?: string;
  /** CSS selector of the credit inside the container; removed from the caption text. */
  credit?: string;
  /** Use the image's alt text when no caption element is found. */
  altFallback?: boolean;
}

export interface CaptionCandidate {
  source: SourceKind;
  /** The element the text was read from (DOM sources). */
  el?: Element;
  /** Elements joined to el as the rest of the same caption (continuation lines). */
  parts: Element[];
  text: string;
  /** A credit printed in its own element or attribute (credit child, data-credit, JSON-LD creditText). */
  credit?: string;
  /** Other photos stacked above the same caption block (they share it). */
  stack: Element[];
  /** Share of the text inside links to other pages, when measured at generation (inline text after a photo). */
  linkShare?: number;
}

export interface AnchorCandidates {
  anchor: ImageAnchor;
  candidates: CaptionCandidate[];
  /** The photo sits in a <figure> whose caption (if any) is its own. */
  inFigure: boolean;
  /** The photo is inside a link to another page (a teaser card). */
  linksElsewhere: boolean;
  /** The page prints a caption element for this photo that holds only a credit. */
  printedCreditOnly: boolean;
  /** The photo is not the first photo of its <figure>: the figure's caption is not its caption. */
  secondInFigure: boolean;
}

export const CAPTION_CLASS = /caption|figcaption|pic[-_]?title|pic[-_]?txt|pictext|pic[-_]?text|pic[-_]?info|pic[-_]?desc|img[-_]?desc(r)?|img[-_]?title|img[-_]?txt|img[-_]?text|img[-_]?info|img[-_]?note|image[-_]?(text|desc|title|info)|photo[-_]?(title|text|desc|info|caption|cutline)|cutline|wp-caption-text|media[-_]?caption|tu[-_]?zhu|tuzhu|picnote|pic[-_]?note|illustration[-_]?text|legend|figure__text|credit-caption|(slide|slider|slideshow|gallery|carousel)[-_]?(item[-_]?)?(desc\w*|text|info)|图注|图片说明|圖說/i;
const CREDIT_CLASS = /credit|byline|copyright|source|photographer|attribution|author|courtesy/i;
// A class token whose last part names a credit ("credit", "caption-credit", "figure__byline") marks a credit
// element, even inside a caption ("caption-credit"); "credit-caption" is a caption that carries its credit.
const CREDIT_TOKEN = /(^|[-_])(credits?|byline|copyright|source|photographer|attribution|author|courtesy)$/i;

export function isCreditEl(e: Element): boolean {
  const c = classId(e);
  return CREDIT_CLASS.test(c) && !/caption/i.test(c);
}

function isCreditToken(e: Element): boolean {
  return classId(e).split(/\s+/).some((t) => CREDIT_TOKEN.test(t));
}

/** The element, or one of its ancestors below `top`, is a related-links / promo / share block ("c-related__caption"). */
export function inBadBlock(e: Element, top: Element): boolean {
  for (let x: Element | null = e; x && x !== top; x = x.parent as Element | null) {
    if (x.type === 'tag' && BAD_CONTAINER.test(classId(x))) return true;
  }
  return false;
}

/** A text that can be a credit line: a recognised credit, or a short name-like line without a sentence. */
function creditLike(t: string): boolean {
  if (!t) return true;
  if (isCreditOnly(t)) return true;
  const words = t.split(/\s+/).length;
  // A sentence goes on after its stop (or a capital glued to it: "…picture.<span>Facebook</span>"); a dot inside an
  // e-mail address or a site ("name@paper.com") ends none.
  return [...t].length <= 50 && words <= 7 && !/[.!?](\s+\S|\p{Lu})|[。！？]\s*\S/u.test(t);
}

// Microdata naming who owns or took the photo (schema.org ImageObject's copyrightHolder, creditText, author).
const CREDIT_PROP = /\b(copyrightHolder|creditText|copyrightNotice|author|creator|sourceOrganization)\b/i;

/**
 * A credit element inside a caption: a credit class word (also as the last part of a BEM name, "figcaption__credit"),
 * credit microdata, or a <cite>/<small> that opens the caption and holds only a credit ("<cite>Name/Agency</cite>
 * Caption…"), a credit printed before the caption.
 */
function isCreditChild(e: Element, el: Element): boolean {
  const t = textOf(e);
  if (!creditLike(t)) return false;
  if (isCreditEl(e) || isCreditToken(e) || CREDIT_PROP.test(attr(e, 'itemprop') ?? '')) return true;
  return (e.name === 'cite' || e.name === 'small') && isCreditOnly(t) && opensCaption(e, el);
}

/** The element comes first in the caption: no text before it. */
function opensCaption(e: Element, el: Element): boolean {
  for (let x: Element = e; x !== el; x = x.parent as Element) {
    if (!x.parent || x.parent.type !== 'tag') return false;
    for (const sib of (x.parent as Element).children) {
      if (sib === x) break;
      if (sib.type === 'text' ? (sib as unknown as { data: string }).data.trim() : sib.type === 'tag' && textOf(sib)) return false;
    }
  }
  return true;
}

/**
 * A label inside a caption that only screen readers get (hiddenEl): "Image caption,", "Image:", or a hide/toggle
 * control's text. Seen on bbc, news.sky and parade; printed into the text, "Image: Yvette Cooper" read as a credit
 * line ("Image: Toho"). Wired's "Slide:" stays: caption-text.ts strikes it off with the counter after it.
 */
const SCREEN_READER_LABEL = /caption|hide|toggle|^\s*(?:image|photo|picture)\s*[:,.]?\s*$/i;

/** Caption text and credit of a caption element, the credit child split off. */
export function captionFrom($: $T, el: Element, creditSel?: string): { text: string; credit?: string } {
  let credit: string | undefined;
  // A credit-classed element holding a caption sentence (a wrapper whose class ends in "-credit") is not a credit.
  const found = creditSel ? $(el).find(creditSel).toArray() : $(el).find('*').toArray().filter((e) => e.type === 'tag' && isCreditChild(e as Element, el));
  // A credit element inside another (a credit wrapper and its inner span) is printed once.
  const creditEls = found.filter((e) => !found.some((o) => o !== e && contains(o, e)));
  if (creditEls.length) credit = collapse(creditEls.map((e) => textOf(e)).join(' ')) || undefined;
  const creditSet = new Set(creditEls);
  const text = textOf(el, (e) => creditSet.has(e) || (hiddenEl(e) && SCREEN_READER_LABEL.test(textOf(e))) || /^\s*\d+\s*(of|\/)\s*\d+\.?\s*$/i.test(textOf(e)));
  // A caption element holding nothing but its credit child ("caption-credit", "figcaption__credit") is a credit line.
  if (!creditSel && text && creditLike(text) && !textOf(el, (e) => creditSet.has(e) || isCreditToken(e))) return { text: '', credit: text };
  return { text, credit };
}

/** Tag, class and presentation attributes: siblings with the same signature are lines of one caption. */
function signature(e: Element): string {
  return `${e.name}|${attr(e, 'class') ?? ''}|${attr(e, 'align') ?? ''}|${(attr(e, 'style') ?? '').replace(/\s+/g, '')}`;
}

/**
 * The sibling lines that continue a caption element: a credit or dateline line ("（消防局提供）", "中央社記者…傳真
 * 105年3月19日"), or a short line with the same tag, class and presentation. Stops at a photo, at body text, and
 * after two lines.
 */
export function continuation(capEl: Element, good: Set<Element>, lang: 'en' | 'zh'): Element[] {
  const out: Element[] = [];
  const sig = signature(capEl);
  let nx = nextElement(capEl);
  for (let k = 0; nx && k < 2; k++) {
    if (imgCount(nx, good) || $hasImg(nx)) break;
    const t = textOf(nx);
    if (!t) break;
    const n = [...t].length;
    // A sign-off naming the article's editor or writer as well ("供稿：… 摄影：… 编辑：…") closes the article, not a caption.
    const creditLine = n <= 60 && isCreditOrDateline(t, lang) && !SIGN_OFF.test(t);
    const sameLine = signature(nx) === sig && sig !== 'p|||' && sig !== 'div|||' && n <= (lang === 'zh' ? 40 : 140);
    if (!creditLine && !sameLine) break;
    out.push(nx);
    nx = nextElement(nx);
  }
  return out;
}

const SIGN_OFF = /编辑|編輯|责编|責編|校对|校對|审核|審核|审校|審校|监制|監製|撰稿|撰文|供稿|文字|文\s*[\/／:：]|\b(edit(ed|ing|or)|reporting|reported by|written by|writer|text)\b/i;

function $hasImg(e: Element): boolean {
  for (const c of e.children) {
    if (c.type === 'tag') {
      if ((c as Element).name === 'img') return true;
      if ($hasImg(c as Element)) return true;
    }
  }
  return false;
}

/** A link that opens the photo itself: the image file, a photo/gallery page, a script or an anchor. */
export function isImageLink(href: string): boolean {
  return photoLink(href) || href === '' || href.startsWith('#') || href.startsWith('javascript');
}

/** The link goes to the page itself (a place in it, "…/story.html#i1"). */
function samePage(href: string, pageUrl: string | undefined): boolean {
  if (!pageUrl || !href) return false;
  const strip = (u: string) => u.replace(/#.*$/, '');
  const abs = resolveUrl(href, pageUrl);
  return !!abs && strip(abs) === strip(pageUrl);
}

/** The element holds a heading (h1-h4) within eight levels. */
function hasHeadingEl(el: Element, depth = 0): boolean {
  return depth < 8 && el.children.some((c) => c.type === 'tag' && (/^h[1-4]$/.test((c as Element).name) || hasHeadingEl(c as Element, depth + 1)));
}

/**
 * The photo's link goes to a page (a gallery or photo page, not the image file) that a text link beside it names as
 * well: the photo and the headline of a teaser card for another page (photo-gallery teasers, sponsored listings),
 * however the link's path is called.
 */
function twinTextLink(link: Element): boolean {
  const href = attr(link, 'href')?.trim() ?? '';
  // A link with a fragment goes to a place in a page (most often this one: "…/story.html#i1" opens its slideshow).
  if (!href || IMAGE_FILE_LINK.test(href) || href.includes('#') || href.startsWith('javascript')) return false;
  // The link holds the card's heading itself (<a><img><h3>Title</h3></a>).
  if (hasHeadingEl(link)) return true;
  const twin = (e: Element) => (e === link ? 'skip' : e.name === 'a' && attr(e, 'href')?.trim() === href && textOf(e).replace(/\s+/g, '').length >= 6 ? 'stop' : undefined);
  return ancestors(link, 3).some((a) => walkBelow(a, 200, twin));
}

export interface GenerateContext {
  $: $T;
  lang: 'en' | 'zh';
  good: Set<Element>;
  /** The <img> elements dropped as a video's poster (images.ts isDecorative 'video'). */
  videoPosters?: Set<Element>;
  /** Every anchor of the page in document order. */
  anchors: ImageAnchor[];
  selectors?: CaptionSelectors;
  jsonLd: JsonLdImage[];
  /** The page's own URL (its base): a photo linking to this page (a "#slideshow" anchor) links nowhere else. */
  pageUrl?: string;
}

function domCandidate(ctx: GenerateContext, source: SourceKind, el: Element, creditSel?: string, withParts = true): CaptionCandidate {
  const { text, credit } = captionFrom(ctx.$, el, creditSel);
  const parts = withParts ? continuation(el, ctx.good, ctx.lang) : [];
  const more = parts.map((p) => textOf(p)).join(' ');
  return { source, el, parts, text: collapse(`${text} ${more}`), credit: credit ?? (source === 'class' || source === 'figcaption' ? creditBefore(el, ctx.good) : undefined), stack: [] };
}

/**
 * A credit printed on its own line between the photo and its caption element: the element right before the caption,
 * with a credit class or nothing but a credit in it, and no photo ("<img><span class=…-credit>Name/Agency</span><p
 * class=…-caption>Caption</p>").
 */
function creditBefore(el: Element, good: Set<Element>): string | undefined {
  const pv = prevElement(el);
  if (!pv) return undefined;
  // The photo's own wrapper right before the caption, ending in its credit line ("<div><picture/><div
  // class=…ImageCredit>COURTESY OF X</div></div><div class=…Caption>"): a credit printed under the photo.
  if (imgCount(pv, good) || $hasImg(pv)) {
    const last = childElements(pv).at(-1);
    return last && !imgCount(last, good) && !$hasImg(last) && (isCreditEl(last) || isCreditToken(last)) ? creditText(last) : undefined;
  }
  return creditText(pv);
}

/** The element's text when it reads as a credit line: a credit-classed element with a name-like line, or a credit. */
function creditText(e: Element, lang?: 'en' | 'zh'): string | undefined {
  const t = textOf(e);
  if (!t || [...t].length > 80) return undefined;
  return (isCreditEl(e) || isCreditToken(e)) && creditLike(t) ? t : isCreditOnly(t, lang) ? t : undefined;
}

/** The text after the image inside its own block (the image's own line). */
function textAfter(block: Element, img: Element): string {
  const parts: string[] = [];
  let seen = false;
  const walk = (n: Element, depth: number) => {
    if (depth > 20) return;
    for (const c of n.children) {
      if (c === img || (c.type === 'tag' && contains(c, img))) {
        if (c === img) seen = true;
        else walk(c as Element, depth + 1);
        continue;
      }
      if (!seen) continue;
      if (c.type === 'text') parts.push((c as unknown as { data: string }).data);
      else if (c.type === 'tag') parts.push(' ', textOf(c), ' ');
    }
  };
  walk(block, 0);
  return collapse(parts.join(''));
}

/**
 * The credit a caption opens with, printed in its own element right after the photo: the first text after the photo
 * sits in a <cite>, a <small> or a credit-classed element that holds nothing but a credit ("<cite>Name/Agency</cite>
 * Caption…").
 */
function leadingCredit(block: Element, img: Element): string | undefined {
  let seen = false;
  let verdict: string | null | undefined;
  const walk = (n: AnyNode, depth: number): void => {
    if (verdict !== undefined || depth > 20) return;
    if (n === img) {
      seen = true;
      return;
    }
    if (n.type === 'text') {
      if (!seen || !(n as unknown as { data: string }).data.trim()) return;
      verdict = null;
      for (let e = n.parent as Element | null; e && e !== block; e = e.parent as Element | null) {
        const t = textOf(e);
        if ((e.name === 'cite' || e.name === 'small' || isCreditEl(e) || isCreditToken(e)) && isCreditOnly(t)) verdict = t;
      }
      return;
    }
    if (n.type === 'tag') for (const c of (n as Element).children) walk(c, depth + 1);
  };
  walk(block, 0);
  return verdict ?? undefined;
}

/** What one photo's candidate generation builds up; each step below adds to it. */
interface Gen {
  ctx: GenerateContext;
  anchor: ImageAnchor;
  el: Element;
  ancs: Element[];
  out: AnchorCandidates;
}

function pushPrinted(g: Gen, c: CaptionCandidate): void {
  if (!c.text && !c.credit) return;
  if (!cleanCaption(c.text, c.credit, g.ctx.lang)) g.out.printedCreditOnly = true;
  g.out.candidates.push(c);
}

function hasCandidate(g: Gen, e: Element): boolean {
  return g.out.candidates.some((c) => c.el === e || c.parts.includes(e));
}

/** A gallery slide named in data-* attributes (no <img>): its data-caption and a caption-classed child. */
function slideCandidates(g: Gen): void {
  const { ctx, el } = g;
  const text = DATA_CAPTION_ATTRS.map((a) => attr(el, a)).find((v) => v && v.trim());
  const credit = DATA_CREDIT_ATTRS.map((a) => attr(el, a)).find((v) => v && v.trim());
  if (text || credit) pushPrinted(g, { source: 'data-attr', parts: [], text: collapse(cheerioText(ctx, text ?? '')), credit: credit ? collapse(cheerioText(ctx, credit)) : undefined, stack: [] });
  const inner = ctx.$(el).find('*').toArray().find((e) => e.type === 'tag' && CAPTION_CLASS.test(classId(e as Element)) && !isCreditEl(e as Element)) as Element | undefined;
  if (inner) pushPrinted(g, domCandidate(ctx, 'class', inner));
}

/**
 * An <aside> that holds one photo and one short line of text, nothing else (an inline-media block marked up without
 * <figure>): it is the photo's figure, and the line is its caption element.
 */
function asideFigure(ctx: GenerateContext, ancs: Element[]): { fig: Element; line: Element } | undefined {
  const aside = ancs.slice(0, 4).find((a) => a.name === 'aside');
  if (!aside || imgCount(aside, ctx.good) !== 1) return undefined;
  const lines = childElements(aside).filter((c) => imgCount(c, ctx.good) === 0 && textOf(c).trim());
  if (lines.length !== 1 || !/^(p|div|span|small|em)$/.test(lines[0]!.name)) return undefined;
  const n = collapse(textOf(lines[0]!)).length;
  if (n < 8 || n > 300) return undefined;
  return { fig: aside, line: lines[0]! };
}

/** <figure> / <figcaption>; false when the photo is not the figure's first (the caption is not its own). */
function figureCandidates(g: Gen): boolean {
  const { ctx, el, ancs, anchor, out } = g;
  const { $ } = ctx;
  // an <aside> figure is looked for only when no <figure> holds the photo
  const figure = ancs.slice(0, 6).find((a) => a.name === 'figure');
  const aside = figure ? undefined : asideFigure(ctx, ancs);
  const fig = figure ?? aside?.fig;
  if (!fig) return true;
  out.inFigure = true;
  const first = ctx.anchors.find((x) => contains(fig, x.el));
  if (first && first.el !== el && first.url !== anchor.url) {
    out.secondInFigure = true;
    return false;
  }
  const capEl = (($(fig).find('figcaption').toArray()[0] as Element | undefined) ?? aside?.line ??
    $(fig)
      .find('*')
      .toArray()
      .find((e) => e.type === 'tag' && CAPTION_CLASS.test(classId(e as Element)) && !contains(e as Element, el))) as Element | undefined;
  if (capEl) {
    const c = domCandidate(ctx, 'figcaption', capEl, undefined, false);
    // A credit printed on or beside the photo inside its figure, outside the caption (a credit over the photo).
    if (!c.credit) c.credit = figureCredit(ctx, fig, capEl);
    pushPrinted(g, c);
  } else {
    const nx = nextElement(fig);
    if (nx && (nx.name === 'figcaption' || CAPTION_CLASS.test(classId(nx)))) pushPrinted(g, domCandidate(ctx, 'figcaption', nx, undefined));
  }
  return true;
}

/** Caption-like classes and caption microdata next to the photo, inside its own container or right after it. */
function classCandidates(g: Gen): void {
  const { ctx, el, ancs } = g;
  const { $, good } = ctx;
  let foundClass = false;
  let foundProp = false;
  for (const a of ancs.slice(0, 5)) {
    if (imgCount(a, good) > 1) break;
    const inside = $(a).find('*').toArray() as Element[];
    // A block holding a video's poster as well holds the video's caption (the poster is no photo, so not counted).
    if (inside.some((e) => e.name === 'img' && g.ctx.videoPosters?.has(e))) break;
    if (!foundClass) {
      const own = inside.find((e) => e.type === 'tag' && CAPTION_CLASS.test(classId(e)) && !contains(e, el) && !isCreditEl(e) && !inBadBlock(e, a));
      const nx = nextElement(a);
      const capEl = own ?? (nx && CAPTION_CLASS.test(classId(nx)) && imgCount(nx, good) === 0 ? nx : undefined);
      if (capEl) {
        foundClass = true;
        if (!hasCandidate(g, capEl)) pushPrinted(g, domCandidate(ctx, 'class', capEl, undefined));
      }
    }
    if (!foundProp) {
      // schema.org microdata: itemprop="caption" (or "description" inside an ImageObject).
      const prop = inside.find((e) => e.type === 'tag' && !contains(e, el) && (/\bcaption\b/i.test(attr(e, 'itemprop') ?? '') || (/\bdescription\b/i.test(attr(e, 'itemprop') ?? '') && /ImageObject/i.test(attr(a, 'itemtype') ?? ''))));
      if (prop) {
        foundProp = true;
        if (!hasCandidate(g, prop)) pushPrinted(g, domCandidate(ctx, 'itemprop', prop, undefined));
      }
    }
    if (foundClass && foundProp) break;
  }
}

/** The text after the photo in its own block, or among its inline siblings. */
function ownBlockCandidates(g: Gen): void {
  const { ctx, el, ancs, out } = g;
  const own = ancs.slice(0, 2).find((a) => (a.name === 'p' || a.name === 'div' || a.name === 'center' || a.name === 'td' || a.name === 'span') && imgCount(a, ctx.good) === 1);
  if (own) {
    // A photo floated left or right in a paragraph: the paragraph's text wraps around it, it is the article's text.
    if (own.name === 'p' && floated(el)) return;
    const text = textAfter(own, el);
    const credit = leadingCredit(own, el);
    const rest = credit && text.startsWith(credit) ? collapse(text.slice(credit.length)) : text;
    if (rest) out.candidates.push({ source: 'own-block', el: own, parts: [], text: rest, credit: rest === text ? undefined : credit, stack: [] });
    return;
  }
  // A caption line in a block that holds several photos: <p><img><br>caption one<br><img><br>caption two</p>.
  if (el.parent && el.parent.type === 'tag') {
    const after = inlineAfter(el, ctx.good);
    if (after.text) out.candidates.push({ source: 'own-block', el, parts: [], text: after.text, stack: [], linkShare: after.linkShare });
  }
}

/** The block after the topmost image-only block (after a stack of image-only blocks and at most one empty spacer). */
function stackCandidate(g: Gen): void {
  const { ctx, ancs } = g;
  const { good } = ctx;
  const block = ancs.slice(0, 4).filter((a) => imgCount(a, good) === 1 && textOf(a).length < 4).pop();
  if (!block || block.name === 'figure') return;
  const stack: Element[] = [];
  let nx = nextElement(block);
  let blanks = 0;
  for (let k = 0; nx && k < 8; k++) {
    const imgs = imgCount(nx, good);
    const blank = !textOf(nx);
    if (imgs === 0 && !blank) break;
    if (imgs === 1 && blank && nx.name !== 'figure') {
      stack.push(nx);
      blanks = 0;
    } else if (imgs !== 0) break; // a block of several photos, or a photo with its own text: not this stack
    else if (++blanks > 1) break; // one empty spacer at most between a photo and its caption
    nx = nextElement(nx);
  }
  if (nx && imgCount(nx, good) === 0 && !$hasImg(nx) && !hasCandidate(g, nx)) {
    if (nx.name === 'figcaption') return orphanFigcaption(g, nx);
    const c = domCandidate(ctx, block.name === 'tr' ? 'table-row' : 'next-block', nx);
    c.stack = stack;
    if (c.text) g.out.candidates.push(c);
  }
}

/**
 * A <figcaption> right after the photo's block with no <figure> around them is a printed caption all the same
 * (CSS-in-JS and React templates print one after the photo's link or wrapper).
 */
function orphanFigcaption(g: Gen, cap: Element): void {
  pushPrinted(g, domCandidate(g.ctx, 'figcaption', cap, undefined, false));
}

/**
 * Siblings up the tree: at each level whose block holds this photo only, the element right after it and the one
 * right before it (a caption printed above the photo: ▲ lines, Chinese headings over a photo), and the next table
 * row when the photo sits in a table cell. The model weighs how far up each was found.
 */
function siblingCandidates(g: Gen): void {
  const { ctx, el, ancs } = g;
  const { good } = ctx;
  const levels = [el, ...ancs.slice(0, 5)];
  for (const a of levels) {
    if (a !== el && imgCount(a, good) !== 1) break;
    if (a.name === 'body' || a.name === 'article' || a.name === 'main') break;
    const nx = a.name === 'tr' ? null : nextElement(a); // the row after a photo's row: table-row, below
    if (nx && imgCount(nx, good) === 0 && !$hasImg(nx) && !hasCandidate(g, nx)) {
      if (nx.name === 'figcaption') orphanFigcaption(g, nx);
      else {
        const c = domCandidate(ctx, 'next-block', nx);
        if (c.text && [...c.text].length <= 600) g.out.candidates.push(c);
      }
    }
    const pv = prevElement(a);
    if (pv && imgCount(pv, good) === 0 && !$hasImg(pv) && !hasCandidate(g, pv)) {
      const c = domCandidate(ctx, 'prev-block', pv, undefined, false);
      if (c.text && [...c.text].length <= 300) g.out.candidates.push(c);
    }
    if (a.name === 'tr') {
      const row = nextElement(a);
      if (row && row.name === 'tr' && imgCount(row, good) === 0 && !hasCandidate(g, row)) {
        const c = domCandidate(ctx, 'table-row', row, undefined, false);
        if (c.text) g.out.candidates.push(c);
      }
    }
  }
}

/** Attributes: data-caption on the photo or its one-photo wrappers, then JSON-LD, then alt/title. */
function attributeCandidates(g: Gen): void {
  const { ctx, el, ancs, anchor, out } = g;
  for (const e of [el, ...ancs.slice(0, 3).filter((a) => imgCount(a, ctx.good) === 1)]) {
    const text = DATA_CAPTION_ATTRS.filter((a) => a !== 'data-title' || e === el).map((a) => attr(e, a)).find((v) => v && collapse(v).length > 0);
    if (text) {
      const credit = DATA_CREDIT_ATTRS.map((a) => attr(e, a)).find((v) => v && v.trim());
      out.candidates.push({ source: 'data-attr', el: e === el ? undefined : e, parts: [], text: collapse(cheerioText(ctx, text)), credit: credit ? collapse(cheerioText(ctx, credit)) : undefined, stack: [] });
      break;
    }
  }
  const key = imageKey(anchor.url);
  const ld = ctx.jsonLd.find((j) => j.url === anchor.url || (key.length >= 6 && imageKey(j.url) === key));
  if (ld?.caption) out.candidates.push({ source: ld.script ? 'script' : 'json-ld', parts: [], text: ld.caption, credit: ld.credit, stack: [] });
  const alt = collapse(attr(el, 'alt') || attr(el, 'title') || '');
  if (alt) out.candidates.push({ source: 'alt', parts: [], text: alt, stack: [] });
}

export function generateCandidates(ctx: GenerateContext, anchor: ImageAnchor): AnchorCandidates {
  const el = anchor.el;
  const out: AnchorCandidates = { anchor, candidates: [], inFigure: false, linksElsewhere: false, printedCreditOnly: false, secondInFigure: false };
  const g: Gen = { ctx, anchor, el, ancs: ancestors(el, 8), out };
  if (anchor.kind === 'data') {
    slideCandidates(g);
    attributeCandidates(g);
    return out;
  }
  if (anchor.kind === 'script') {
    attributeCandidates(g);
    return out;
  }
  const link = g.ancs.find((a) => a.name === 'a');
  if (link && !samePage(attr(link, 'href') ?? '', ctx.pageUrl)) out.linksElsewhere = !isImageLink(attr(link, 'href') ?? '') || twinTextLink(link);
  if (!figureCandidates(g)) return out;
  classCandidates(g);
  ownBlockCandidates(g);
  stackCandidate(g);
  siblingCandidates(g);
  attributeCandidates(g);
  return out;
}

/** A short credit-only text inside the figure, outside its caption element and outside any image. */
function figureCredit(ctx: GenerateContext, fig: Element, capEl: Element): string | undefined {
  for (const node of ctx.$(fig).find('span, small, p, div, cite, em').toArray().slice(0, 30)) {
    const e = node as Element;
    if (contains(capEl, e) || contains(e, capEl) || $hasImg(e)) continue;
    if (e.children.some((ch) => ch.type === 'tag' && !['span', 'em', 'i', 'b', 'strong', 'a'].includes((ch as Element).name))) continue;
    const t = textOf(e);
    // a credit-classed element beside the caption ("<div class=image-credit>JANE ROE</div>") or a credit-only line
    if (t && [...t].length <= 60 && creditText(e, ctx.lang)) return t;
  }
  return undefined;
}


/** The inline text after a photo among its siblings, until a block element, another photo or a line break. */
function inlineAfter(img: Element, good: Set<Element>): { text: string; linkShare: number } {
  const parts: string[] = [];
  let linked = 0;
  let n = img.next;
  let seenText = false;
  for (let k = 0; n && k < 20; k++, n = n.next) {
    if (n.type === 'text') {
      const d = (n as unknown as { data: string }).data;
      if (d.trim()) seenText = true;
      parts.push(d);
      continue;
    }
    if (n.type !== 'tag') continue;
    const e = n as Element;
    if (e.name === 'br') {
      if (seenText) break;
      continue;
    }
    if (BLOCK_ELEMENTS.has(e.name) || e.name === 'img' || imgCount(e, good) > 0 || $hasImg(e)) break;
    const t = textOf(e);
    if (e.name === 'a' && !isImageLink(e.attribs?.href ?? '')) linked += t.replace(/\s+/g, '').length;
    parts.push(' ', t, ' ');
    seenText = seenText || !!t;
  }
  const text = collapse(parts.join(''));
  const all = text.replace(/\s+/g, '').length;
  return { text, linkShare: all ? linked / all : 0 };
}

/** Attribute values may hold markup ("<p>Caption</p>"); a reader sees its text. */
function cheerioText(_ctx: GenerateContext, v: string): string {
  return /<[a-z]/i.test(v) ? cheerio.load(`<div>${v}</div>`)('div').first().text() : v;
}

