// Caption extraction: (image URL, caption, credit) pairs as a reader sees them on a news article page.
// Order of evidence for each image: the site profile's selectors, <figure>/<figcaption>, caption-like
// classes next to the image, the Chinese convention of a centred or credit-marked paragraph right after an
// image-only block, English photo stories whose next paragraph ends with an agency credit, and last the
// image's own alt/title. Decorative images (logos, icons, ads, headshots, spacers, video posters, tiny images,
// related-story thumbnails) are dropped before any caption is looked for. Work per page is bounded.
import * as cheerio from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { decodeHtml } from './decode.js';
import { resolveUrl } from './urls.js';
import { cleanCaption, collapse, isCreditOnly } from './caption-text.js';

export interface CaptionSelectors {
  /** CSS selector of the element holding one photo and its caption (e.g. "figure.article-image"). */
  container?: string;
  /** CSS selector of the caption inside the container (or after the image when no container). */
  caption?: string;
  /** CSS selector of the credit inside the container; removed from the caption text. */
  credit?: string;
  /** Use the image's alt text when no caption element is found. */
  altFallback?: boolean;
}

export interface ExtractOptions {
  url: string;
  contentType?: string | null;
  selectors?: CaptionSelectors;
  /** Expected language; detected from the page when absent. */
  lang?: 'en' | 'zh';
  /** Bound on the work per page. */
  maxImages?: number;
  maxChars?: number;
}

export interface ExtractedPair {
  image_url: string;
  caption: string;
  credit?: string;
}

export interface ExtractResult {
  url: string;
  lang: 'en' | 'zh';
  charset: string;
  pairs: ExtractedPair[];
}

const LAZY_ATTRS = ['data-src', 'data-original', 'data-lazy-src', 'data-lazyload', 'data-lazy', 'data-url', 'data-original-src', 'data-hi-res-src', 'data-srcset', 'data-lazy-srcset', 'data-noscript-src'];
const PLACEHOLDER = /(^data:)|blank|spacer|placeholder|transparent|pixel\.(gif|png)|grey\.(gif|png)|gray\.(gif|png)|loading|lazy[-_]?load|default[-_]?img|1x1|clear\.gif|s\.gif$|\/grey-placeholder|\bimg\/dot\b/i;
const BAD_IMG = /logo|icon|favicon|avatar|headshot|head-shot|mugshot|author|byline|profile[-_]?pic|sprite|spacer|blank\.|pixel|tracking|beacon|badge|emoji|emoticon|smiley|qrcode|qr[-_]code|erweima|ewm|二维码|banner|button|btn[-_]|share|social|weixin|wechat|weibo|facebook|twitter|whatsapp|gravatar|placeholder|loading|arrow|bullet|rating|star[-_]|play[-_]?btn|video[-_]?play|poster|thumb[-_]?play|doubleclick|adserver|\/ads?\/|[_-]ads?[_.-]|advert|sponsor/i;
const BAD_CONTAINER = /(^|[\s_-])(related|relate|recommend\w*|more[-_]?(stories|news|from)|most[-_]?(read|popular|viewed)|popular|trending|sidebar|side[-_]?bar|promo\w*|teaser\w*|outbrain|taboola|ob-widget|footer|header[-_]?nav|nav(bar|igation)?|menu|breadcrumb|share\w*|social|comment\w*|author\w*|byline|avatar|ad|ads|advert\w*|sponsor\w*|banner|newsletter|subscribe|widget|rail|partner|hot[-_]?news|list[-_]?news|news[-_]?list|tuijian|xgxw|xiangguan|rec[-_]?list|video[-_]?player|jw-?player|vjs|logo|modal|lightbox\w*)([\s_-]|$)/i;
const CAPTION_CLASS = /caption|figcaption|pic[-_]?title|pic[-_]?txt|pictext|pic[-_]?text|pic[-_]?info|pic[-_]?desc|img[-_]?desc(r)?|img[-_]?title|img[-_]?txt|img[-_]?text|img[-_]?info|img[-_]?note|image[-_]?(text|desc|title|info)|photo[-_]?(title|text|desc|info|caption|cutline)|cutline|wp-caption-text|media[-_]?caption|tu[-_]?zhu|tuzhu|picnote|pic[-_]?note|illustration[-_]?text|legend|figure__text|credit-caption/i;
const CREDIT_CLASS = /credit|byline|copyright|source|photographer|attribution|author|courtesy/i;
const ZH_MARKERS = /(?<!拍)摄(?![影像制])|(?<!拍)攝(?![影像製])|供图|供圖|图片来源|圖片來源|新华社记者|新華社記者|◎|图为|圖為|图注|圖註|资料图|資料圖|截图|截圖|图／|圖／|图\/|圖\/|（图|\(图/;
const EN_PHOTO_CREDIT = /\((?:xinhua|photo|reuters|ap|afp|epa|xinhua\/[^)]+|photo by [^)]+|[^)]*\/(?:xinhua|reuters|ap|afp))\)\s*$/i;
const ALT_CREDIT = /\((?:[^()]*\/[^()]*|(?:AP |Reuters |AFP )?photo[^()]*|[^()]*(?:file photo|courtesy)[^()]*)\)\s*$/i;
const RELATED_TEXT = /^(video|watch|listen|audio|gallery|inside|related|read more|see also|more|recommended|sponsored|advertisement)\s*[:：]|\bEMBED\s*<>|\bMore Videos\b|^(相关新闻|相關新聞|相关阅读|相關閱讀|延伸阅读|延伸閱讀|热点推荐|related( stories| articles| coverage)?|more|watch|video)$|\b\d+\s+(hours?|minutes?|mins?|days?)\s+ago\b|阅读\s*\d|人参与|\d+\s*评论|跟帖|点击|\bread more\b/i;

const BLOCK_TAGS = new Set(['p', 'div', 'center', 'section', 'td', 'li', 'figure', 'span', 'a', 'strong', 'b', 'font', 'h2', 'h3', 'h4', 'h5', 'h6', 'dd', 'dt', 'em', 'i', 'picture', 'article']);

function attr(el: Element, name: string): string | undefined {
  return el.attribs?.[name];
}

function classId(el: Element): string {
  return `${attr(el, 'class') ?? ''} ${attr(el, 'id') ?? ''}`;
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

function ancestors(el: Element, max = 40): Element[] {
  const out: Element[] = [];
  let p = el.parent as Element | null;
  while (p && (p as AnyNode).type !== 'root' && out.length < max) {
    if (p.type === 'tag') out.push(p);
    p = p.parent as Element | null;
  }
  return out;
}

export function isDecorative(el: Element, url: string): string | null {
  const path = url.toLowerCase().split('?')[0]!;
  if (/\.(svg|gif|ico)$/.test(path)) return 'format';
  const w = numAttr(el, 'width') ?? styleDim(el, 'width');
  const h = numAttr(el, 'height') ?? styleDim(el, 'height');
  if ((w !== null && w < 100) || (h !== null && h < 60)) return 'tiny';
  const own = `${url.replace(/^https?:\/\/[^/]+/, '').split('?')[0]} ${classId(el).replace(/lazy-?load(ed|ing)?/gi, '')}`;
  if (BAD_IMG.test(own.replace(/\/uploads?\//gi, '/'))) return 'decorative';
  if (/^(logo|icon|avatar|author|headshot|qr ?code|二维码|广告|advertisement)\b/i.test(attr(el, 'alt') ?? '')) return 'decorative';
  if (attr(el, 'aria-hidden') === 'true' && !attr(el, 'alt')) return 'hidden';
  const ancs = ancestors(el);
  for (let depth = 0; depth < ancs.length; depth++) {
    const a = ancs[depth]!;
    // The article body: whatever wraps it (a layout column named "sidebar_content", a "more-from" block on the
    // body tag) is page layout, not the image's neighbourhood.
    if (isArticleBody(a)) break;
    if (a.name === 'body' || a.name === 'html') break;
    if (a.name === 'nav' || a.name === 'footer' || a.name === 'aside' || a.name === 'video') return 'container';
    // Page-level wrappers carry site-wide class names ("blq-int-nav"); only the image's own neighbourhood counts.
    if (depth < 6 && a.name !== 'article' && a.name !== 'main' && BAD_CONTAINER.test(classId(a))) return 'container';
  }
  return null;
}

/** The element, or one of its ancestors below `top`, is a related-links / promo / share block ("c-related__caption"). */
function inBadBlock(e: Element, top: Element): boolean {
  for (let x: Element | null = e; x && x !== top; x = x.parent as Element | null) {
    if (x.type === 'tag' && BAD_CONTAINER.test(classId(x))) return true;
  }
  return false;
}

// Markers of the article's own body (microdata, hAtom, the usual CMS class names). Teaser cards do not carry them.
const ARTICLE_BODY_CLASS = /^(hentry|entry-content|post-content|post-body|article-body|articlebody|article__body|article-content|article-text|story-body|story-content|story__body|body-copy|content-body)$/i;

const bodyVerdicts = new WeakMap<Element, boolean>();

/** The element is marked as the article body and holds the text of one (a teaser card marked "hentry" does not). */
function isArticleBody(a: Element): boolean {
  const known = bodyVerdicts.get(a);
  if (known !== undefined) return known;
  const marked = /articleBody/i.test(attr(a, 'itemprop') ?? '') || (attr(a, 'class') ?? '').split(/\s+/).some((t) => ARTICLE_BODY_CLASS.test(t));
  const verdict = marked && sampleText(a, 600).replace(/\s+/g, '').length >= 300;
  bodyVerdicts.set(a, verdict);
  return verdict;
}

type $T = cheerio.CheerioAPI;

function textOf($: $T, el: AnyNode, skip?: (e: Element) => boolean): string {
  const parts: string[] = [];
  const walk = (n: AnyNode, depth: number) => {
    if (depth > 30) return;
    if (n.type === 'text') parts.push((n as unknown as { data: string }).data);
    else if (n.type === 'tag') {
      const e = n as Element;
      if (e.name === 'script' || e.name === 'style' || e.name === 'noscript' || e.name === 'button') return;
      if (skip?.(e)) return;
      if (e.name === 'br') parts.push(' ');
      for (const c of e.children) walk(c, depth + 1);
      if (BLOCK_TAGS.has(e.name) && e.name !== 'span' && e.name !== 'a') parts.push(' ');
    }
  };
  walk(el, 0);
  return collapse(parts.join(''));
}

// A class token whose last part names a credit ("credit", "caption-credit", "figure__byline") marks a credit
// element, even inside a caption ("caption-credit"); "credit-caption" is a caption that carries its credit.
const CREDIT_TOKEN = /(^|[-_])(credits?|byline|copyright|source|photographer|attribution|author|courtesy)$/i;

function isCreditEl(e: Element): boolean {
  const c = classId(e);
  return CREDIT_CLASS.test(c) && !/caption/i.test(c);
}

function isCreditToken(e: Element): boolean {
  return classId(e).split(/\s+/).some((t) => CREDIT_TOKEN.test(t));
}

function hiddenEl(e: Element): boolean {
  const c = classId(e);
  return /(^|\s)(visually-hidden|sr-only|screen-reader|visuallyhidden|hidden|offscreen)(\s|$)/i.test(c) || /display\s*:\s*none/i.test(attr(e, 'style') ?? '');
}

/** Caption text and credit of a caption element, the credit child split off. */
function captionFrom($: $T, el: Element, creditSel?: string): { text: string; credit?: string } {
  let credit: string | undefined;
  const creditEls = creditSel ? $(el).find(creditSel).toArray() : $(el).find('*').toArray().filter((e) => e.type === 'tag' && isCreditEl(e as Element));
  if (creditEls.length) credit = collapse(creditEls.map((e) => textOf($, e)).join(' ')) || undefined;
  const creditSet = new Set(creditEls);
  const text = textOf($, el, (e) => creditSet.has(e) || (hiddenEl(e) && /caption|hide|toggle/i.test(textOf($, e))) || /^\s*\d+\s*(of|\/)\s*\d+\.?\s*$/i.test(textOf($, e)));
  // A caption element holding nothing but its credit child ("caption-credit", "figcaption__credit") is a credit line.
  if (!creditSel && text && !textOf($, el, (e) => creditSet.has(e) || isCreditToken(e))) return { text: '', credit: text };
  return { text, credit };
}

function imgCount(el: Element, good: Set<Element>): number {
  let n = 0;
  const walk = (x: AnyNode, d: number) => {
    if (d > 25 || n > 1) return;
    if (x.type === 'tag') {
      if (good.has(x as Element)) n++;
      for (const c of (x as Element).children) walk(c, d + 1);
    }
  };
  walk(el, 0);
  return n;
}

function contains(a: Element, b: AnyNode): boolean {
  let p: AnyNode | null = b;
  while (p) {
    if (p === a) return true;
    p = p.parent;
  }
  return false;
}

function nextElement(el: Element): Element | null {
  let n = el.next;
  while (n) {
    if (n.type === 'tag') return n as Element;
    if (n.type === 'text' && (n as unknown as { data: string }).data.trim()) return null;
    n = n.next;
  }
  return null;
}

function isCentred(e: Element): boolean {
  return e.name === 'center' || /center/i.test(attr(e, 'align') ?? '') || /text-align\s*:\s*center/i.test(attr(e, 'style') ?? '') || /(^|[\s_-])(center|centre|tc|txt-?c|text-?center)([\s_-]|$)/i.test(attr(e, 'class') ?? '');
}

export function detectPageLang($: $T, text: string): 'en' | 'zh' {
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

/** Up to max characters of text under a node, walked iteratively (deeply nested pages overflow recursion). */
function sampleText(root: AnyNode | undefined, max: number): string {
  if (!root) return '';
  const out: string[] = [];
  let len = 0;
  const stack: AnyNode[] = [root];
  while (stack.length && len < max) {
    const n = stack.pop()!;
    if (n.type === 'text') {
      const d = (n as unknown as { data: string }).data;
      out.push(d);
      len += d.length;
    } else if ('children' in n && (n as Element).name !== 'script' && (n as Element).name !== 'style') {
      const ch = (n as Element).children;
      for (let i = ch.length - 1; i >= 0; i--) stack.push(ch[i]!);
    }
  }
  return out.join(' ');
}

interface Candidate {
  el: Element;
  url: string;
}

export function extractPairs(input: Uint8Array | string, opts: ExtractOptions): ExtractResult {
  const decoded = decodeHtml(input, opts.contentType);
  const maxChars = opts.maxChars ?? 4_000_000;
  const html = decoded.text.length > maxChars ? decoded.text.slice(0, maxChars) : decoded.text;
  const $ = cheerio.load(html);
  $('script, style, template, svg, iframe, select, button, textarea, input, link, meta:not([http-equiv]):not([charset])').remove();

  const baseHref = $('base[href]').first().attr('href');
  const base = (baseHref && resolveUrl(baseHref, opts.url)) || opts.url;

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

  // Article paragraphs decide the language when there are enough of them (navigation and embeds are often English).
  let paraText = '';
  for (const p of $('p').toArray().slice(0, 400)) {
    paraText += sampleText(p as AnyNode, 2000) + ' ';
    if (paraText.length > 20000) break;
  }
  const bodyText = paraText.replace(/\s+/g, '').length >= 200 ? paraText : sampleText($('body').toArray()[0] as AnyNode | undefined, 20000);
  const lang = opts.lang ?? detectPageLang($, bodyText + ' ' + $('title').text());
  const zh = lang === 'zh';

  const maxImages = opts.maxImages ?? 400;
  const cands: Candidate[] = [];
  const good = new Set<Element>();
  for (const el of $('img').toArray().slice(0, maxImages * 3)) {
    const e = el as Element;
    const url = imageUrlOf(e, base);
    if (!url) continue;
    if (isDecorative(e, url)) continue;
    cands.push({ el: e, url });
    good.add(e);
    if (cands.length >= maxImages) break;
  }

  const sel = opts.selectors;
  const pairs: ExtractedPair[] = [];
  const seenUrl = new Set<string>();
  const usedCaptionEls = new Set<Element>();

  const accept = (c: Candidate, raw: string, credit?: string, capEl?: Element): boolean => {
    if (capEl && usedCaptionEls.has(capEl)) return false;
    const cleaned = cleanCaption(raw, credit);
    if (!cleaned) return false;
    const len = [...cleaned.caption].length;
    if (len < 2 || len > (zh ? 300 : 600)) return false;
    if (!zh && !/\s/.test(cleaned.caption)) return false; // one English word is a label or a name tag, not a caption
    if (zh && !/\p{Script=Han}/u.test(cleaned.caption)) return false; // an English caption on a Chinese page belongs to an embed or an ad
    if (RELATED_TEXT.test(cleaned.caption)) return false;
    if (capEl) usedCaptionEls.add(capEl);
    seenUrl.add(c.url);
    pairs.push(cleaned.credit ? { image_url: c.url, caption: cleaned.caption, credit: cleaned.credit } : { image_url: c.url, caption: cleaned.caption });
    return true;
  };

  for (const c of cands) {
    if (seenUrl.has(c.url)) continue;
    const ancs = ancestors(c.el, 8);
    // The page prints a caption element for this photo that holds only a credit: the reader sees no caption,
    // so alt/title/data-caption text must not stand in for one.
    let printedCreditOnly = false;
    const capFrom = (el: Element, creditSel?: string) => {
      const r = captionFrom($, el, creditSel);
      if ((r.text || r.credit) && !cleanCaption(r.text, r.credit)) printedCreditOnly = true;
      return r;
    };

    // 1. Site profile selectors.
    if (sel?.caption) {
      const container = sel.container ? ancs.find((a) => $(a).is(sel.container!)) : undefined;
      let capEl: Element | undefined;
      if (container) capEl = $(container).find(sel.caption).toArray()[0] as Element | undefined;
      else {
        for (const a of ancs.slice(0, 3)) {
          if (imgCount(a, good) > 1) break;
          capEl = $(a).find(sel.caption).toArray().find((e) => !contains(e as Element, c.el)) as Element | undefined;
          if (capEl) break;
          const nx = nextElement(a);
          if (nx && $(nx).is(sel.caption)) {
            capEl = nx;
            break;
          }
        }
      }
      if (capEl) {
        const { text, credit } = capFrom(capEl, sel.credit);
        if (accept(c, text, credit, capEl)) continue;
      }
      if (container) continue; // the profile names this photo's container: no guessing beyond it
    }

    // Related-story thumbnails: the image links to another page and the "caption" would be that link's headline.
    const link = ancs.find((a) => a.name === 'a');
    let linkedElsewhere = false;
    if (link) {
      const href = attr(link, 'href') ?? '';
      const isImageLink = /\.(jpe?g|png|webp)(\?|$)/i.test(href) || href === '' || href.startsWith('#') || href.startsWith('javascript');
      if (!isImageLink) {
        const inFigure = ancs.slice(0, 4).some((a) => a.name === 'figure');
        if (!inFigure) continue;
        linkedElsewhere = true;
      }
    }

    // 2. <figure> / <figcaption>.
    const fig = ancs.slice(0, 6).find((a) => a.name === 'figure');
    if (fig) {
      const first = cands.find((x) => contains(fig, x.el));
      if (first && first !== c && first.url !== c.url) continue; // only the figure's first real image gets its caption
      const capEl = ($(fig).find('figcaption').toArray()[0] ?? $(fig).find('*').toArray().find((e) => e.type === 'tag' && CAPTION_CLASS.test(classId(e as Element)) && !contains(e as Element, c.el))) as Element | undefined;
      if (capEl) {
        const { text, credit } = capFrom(capEl, sel?.credit);
        if (accept(c, text, credit, capEl)) continue;
      } else {
        const nx = nextElement(fig);
        if (nx && (nx.name === 'figcaption' || CAPTION_CLASS.test(classId(nx)))) {
          const { text, credit } = capFrom(nx, sel?.credit);
          if (accept(c, text, credit, nx)) continue;
        }
      }
    }

    // A photo in a <figure> that links to another page is a teaser card unless the figure itself captions it:
    // neighbouring caption blocks, the alt text or a data-caption would be borrowed, not printed for it.
    if (linkedElsewhere) continue;

    // 3. Caption-like classes next to the image.
    let found = false;
    for (const a of ancs.slice(0, 4)) {
      if (imgCount(a, good) > 1) break;
      const inside = $(a)
        .find('*')
        .toArray()
        .find((e) => e.type === 'tag' && CAPTION_CLASS.test(classId(e as Element)) && !contains(e as Element, c.el) && !isCreditEl(e as Element) && !inBadBlock(e as Element, a)) as Element | undefined;
      const nx = nextElement(a);
      const capEl = inside ?? (nx && CAPTION_CLASS.test(classId(nx)) && imgCount(nx, good) === 0 ? nx : undefined);
      if (capEl) {
        const { text, credit } = capFrom(capEl, sel?.credit);
        if (accept(c, text, credit, capEl)) found = true;
        break;
      }
    }
    if (found) continue;

    // 4. Chinese convention: the image's own centred block carries a short caption after the image, or the
    //    paragraph right after an image-only block is centred / credit-marked. English photo stories: the next
    //    paragraph ends with an agency credit.
    const zhCaptionLike = (text: string, centred: boolean, el: Element): boolean => {
      const n = [...text].length;
      if (n < 2 || n > 200) return false;
      const sentences = text.split(/[。！？!?]/).filter((x) => x.trim().length > 1).length;
      const marked = ZH_MARKERS.test(text.slice(0, 4)) || ZH_MARKERS.test(text.slice(-30));
      if ((marked && n <= 150) || CAPTION_CLASS.test(classId(el))) return sentences <= 3;
      return centred && n <= 60 && sentences <= 1;
    };
    const own = ancs.slice(0, 2).find((a) => (a.name === 'p' || a.name === 'div' || a.name === 'center' || a.name === 'td') && imgCount(a, good) === 1);
    if (zh && own) {
      const text = textOf($, own);
      if (text.length >= 2 && zhCaptionLike(text, isCentred(own), own) && accept(c, text, undefined, own)) continue;
    }
    const block = ancs.slice(0, 4).filter((a) => imgCount(a, good) === 1 && textOf($, a).length < 4).pop();
    if (block && block.name !== 'figure') {
      // Photos stacked in consecutive image-only blocks with one caption block under the last of them: the
      // caption is printed for the whole stack, so every photo of the stack gets it.
      const stack: Element[] = [];
      let nx = nextElement(block);
      let blanks = 0;
      for (let k = 0; nx && k < 8; k++) {
        const imgs = imgCount(nx, good);
        const blank = !textOf($, nx);
        if (imgs === 0 && !blank) break;
        if (imgs === 1 && blank && nx.name !== 'figure') {
          stack.push(nx);
          blanks = 0;
        } else if (imgs !== 0) break; // a block of several photos, or a photo with its own text: not this stack
        else if (++blanks > 1) break; // one empty spacer at most between a photo and its caption
        nx = nextElement(nx);
      }
      if (nx && imgCount(nx, good) === 0) {
        const text = textOf($, nx);
        const n = [...text].length;
        const ok = zh ? zhCaptionLike(text, isCentred(nx), nx) : n >= 20 && n <= 600 && EN_PHOTO_CREDIT.test(text);
        if (ok && accept(c, text, undefined, nx)) {
          const shared = pairs[pairs.length - 1]!;
          for (const b of stack) {
            const other = cands.find((x) => contains(b, x.el));
            if (other && !seenUrl.has(other.url)) {
              seenUrl.add(other.url);
              pairs.push({ ...shared, image_url: other.url });
            }
          }
          continue;
        }
      }
    }

    // 5. A caption the page keeps in an attribute (data-caption), then alt/title only when nothing better
    //    exists: when the profile asks for it, or when the alt text is a full caption with its agency credit.
    if (printedCreditOnly) continue;
    const dataCaption = attr(c.el, 'data-caption') ?? attr(c.el, 'data-title');
    if (dataCaption && collapse(dataCaption).length > 10 && accept(c, dataCaption)) continue;
    const alt = collapse(attr(c.el, 'alt') || attr(c.el, 'title') || '');
    if (alt && !isCreditOnly(alt)) {
      const words = zh ? [...alt].length / 2 : alt.split(' ').length;
      if ((sel?.altFallback && words >= 4) || (words >= 8 && ALT_CREDIT.test(alt))) accept(c, alt);
    }
  }
  return { url: opts.url, lang, charset: decoded.charset, pairs };
}
