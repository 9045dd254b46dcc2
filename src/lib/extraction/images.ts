// The photos of a page a caption can belong to ("anchors"): <img> elements with the URL a reader sees (lazy
// attributes, srcset, <picture>, <noscript> fallbacks), gallery slides that carry their photo in data-* attributes
// with no <img> at all, and the JSON-LD ImageObjects that describe them. Decorative images (logos, icons, ads,
// headshots, spacers, tiny images) and images in page furniture (navigation, related-story lists, share bars) are
// dropped here, before any caption is looked for.
import type { AnyNode, Element } from 'domhandler';
import { photoLink, resolveUrl } from './urls.js';
import { ancestors, attr, BLOCK_ELEMENTS, classId, sampleText, walkBelow, type $T } from './dom.js';
import { collapse } from './caption-text.js';

const MICRODATA_SRC = 'data-microdata-src';
export const LAZY_ATTRS = ['data-src', 'data-original', 'data-lazy-src', 'data-lazyload', 'data-lazy', 'data-url', 'data-original-src', 'data-hi-res-src', 'data-srcset', 'data-lazy-srcset', 'data-noscript-src', MICRODATA_SRC];
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
  kind: 'img' | 'data' | 'script';
  /** Where the photo sits (class words, containers): features, not drops. */
  furniture?: Furniture;
}

/**
 * A lazy <img> with no URL at all whose ImageObject microdata names the photo
 * (`<div itemprop="image" itemscope itemtype="…/ImageObject"><meta itemprop="url" content="…jpg"><img class="lazy">`):
 * the URL is copied onto the <img> before the page's <meta> elements are removed. Only an <img> that names no photo
 * of its own, and only the one <img> of its ImageObject, takes it.
 */
export function resolveMicrodataImages($: $T, base: string): void {
  for (const obj of $('[itemscope][itemtype*="ImageObject"]').toArray().slice(0, 400) as Element[]) {
    const imgs = $(obj).find('img').toArray() as Element[];
    if (imgs.length !== 1 || imageUrlOf(imgs[0]!, base)) continue;
    const prop = $(obj).find('meta[itemprop="url"], meta[itemprop="contentUrl"], meta[itemprop="contentURL"], link[itemprop="url"], link[itemprop="contentUrl"]').toArray()[0] as Element | undefined;
    const url = prop ? (attr(prop, 'content') ?? attr(prop, 'href'))?.trim() : undefined;
    if (url && PHOTO_URL.test(url)) imgs[0]!.attribs[MICRODATA_SRC] = url;
  }
}

function firstSrcsetUrl(v: string | undefined): string | undefined {
  if (!v) return undefined;
  const first = v.split(/,\s+(?=\S)/)[0]?.trim().split(/\s+/)[0];
  return first || undefined;
}

// A src that only holds the place of the real photo while it loads: a placeholder file, a site logo or a .gif.
const STANDIN = /\.(gif|svg)(\?|$)|(^|[\/_-])(logo|spacer|dot|pixel|lazy|loader|default)[\w-]*\.(png|jpe?g|webp)(\?|$)/i;
const PHOTO_URL = /\.(jpe?g|png|webp|avif)(\?|$|#)|\/(images?|photos?|uploads?|media|dims\d?|img)\/|[?&](url|src|image)=/i;

/** Other attributes of a lazy <img> that may hold its real URL: any data-* naming a source or a lazy load. */
function lazyAttrs(el: Element): [string, string][] {
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(el.attribs ?? {})) {
    if (!k.startsWith('data-') || !v || LAZY_ATTRS.includes(k)) continue;
    if (/src|lazy|original|full|large|hi-?res|retina|img|image|url/i.test(k) && !/caption|title|alt|desc|credit|id$/i.test(k)) out.push([k, v]);
  }
  return out;
}

/**
 * A src that several <img> share while each names another photo in a lazy attribute is the page's loading
 * placeholder (a branded fallback.png, a grey tile), whatever its file is called: it is removed so that each image
 * reads its own URL.
 */
export function clearSharedPlaceholders(imgs: Element[]): void {
  const bySrc = new Map<string, { els: Element[]; lazy: Set<string> }>();
  for (const e of imgs) {
    const src = attr(e, 'src')?.trim();
    if (!src || src.startsWith('data:')) continue;
    const lazy = [...LAZY_ATTRS.map((a) => attr(e, a)), ...lazyAttrs(e).map(([, v]) => v)].find((v) => v && !v.startsWith('data:') && v.trim() !== src);
    if (!lazy) continue;
    const g = bySrc.get(src) ?? { els: [], lazy: new Set<string>() };
    g.els.push(e);
    g.lazy.add(lazy.trim());
    bySrc.set(src, g);
  }
  for (const g of bySrc.values()) if (g.els.length >= 2 && g.lazy.size >= 2) for (const e of g.els) delete e.attribs.src;
}

/** The URL a reader sees for an <img>: src unless it is a placeholder, else the first lazy attribute, else srcset. */
export function imageUrlOf(el: Element, base: string): string | null {
  const src = attr(el, 'src')?.trim();
  const candidates: (string | undefined)[] = [];
  const lazy: (string | undefined)[] = [];
  for (const a of LAZY_ATTRS) {
    const v = attr(el, a);
    if (v) lazy.push(a.endsWith('srcset') ? firstSrcsetUrl(v) : v.trim());
  }
  for (const [k, v] of lazyAttrs(el)) {
    const u = /srcset/i.test(k) ? firstSrcsetUrl(v) : v.trim();
    if (u && PHOTO_URL.test(u)) lazy.push(u);
  }
  // A src standing in for the photo (a logo, a spacer .gif) gives way to a lazy attribute's photo URL.
  const standin = !!src && STANDIN.test(src) && lazy.some((u) => u && !u.startsWith('data:') && PHOTO_URL.test(u));
  if (src && !PLACEHOLDER.test(src) && !standin) candidates.push(src);
  candidates.push(...lazy);
  candidates.push(firstSrcsetUrl(attr(el, 'srcset')));
  if (el.parent && (el.parent as Element).name === 'picture') {
    for (const s of (el.parent as Element).children) {
      if ((s as Element).name !== 'source') continue;
      const se = s as Element;
      candidates.push(firstSrcsetUrl(attr(se, 'srcset') ?? attr(se, 'data-srcset') ?? lazyAttrs(se).find(([k]) => /srcset/i.test(k))?.[1]));
    }
  }
  if (src && !src.startsWith('data:')) candidates.push(src);
  for (const c of candidates) {
    // "#", "about:blank" and templates ("{src}") name no photo (a lazy <img>'s src before its script runs).
    if (!c || c.startsWith('data:') || c.startsWith('#') || /^about:/i.test(c) || c.includes('{')) continue;
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

/** The declared width and height are an aspect ratio (16x9, 4x3, 3x2...), not pixels: lazy-loading templates. */
export function aspectRatioDims(w: number | null, h: number | null): boolean {
  if (w === null || h === null || w > 32 || h > 32 || w === h) return false;
  const r = w / h;
  return [16 / 9, 9 / 16, 4 / 3, 3 / 4, 3 / 2, 2 / 3, 21 / 9, 5 / 4, 4 / 5, 2, 0.5].some((x) => Math.abs(r - x) < 0.02);
}

/**
 * Why an image can never be a news photo: its format ('format': svg, gif, ico) or its declared size ('tiny': under
 * 100x60 pixels, unless the two numbers are an aspect ratio). Everything else (class words, containers, file names)
 * is described by furnitureOf and weighed with the other features, never dropped here.
 */
export function isDecorative(el: Element, url: string): string | null {
  const path = url.toLowerCase().split('?')[0]!;
  if (/\.(svg|gif|ico)$/.test(path)) return 'format';
  // Nothing but the placeholder is known for this <img>: the page never names the photo.
  if (PLACEHOLDER.test(path.split('/').pop() ?? '')) return 'placeholder';
  const w = numAttr(el, 'width') ?? styleDim(el, 'width');
  const h = numAttr(el, 'height') ?? styleDim(el, 'height');
  if (!aspectRatioDims(w, h) && ((w !== null && w < 100) || (h !== null && h < 60))) return 'tiny';
  // The image's own file name or class says it is a logo, an icon, a sprite or a spacer (not a word of its
  // containers: those are features).
  const pathPart = url.replace(/^https?:\/\/[^/]+/, '').split('?')[0]!;
  const own = `${pathPart.split('/').pop() ?? ''} ${classId(el).replace(/lazy-?load(ed|ing)?/gi, '')}`;
  if (NOT_A_PHOTO.test(own) || /\/(icons?|logos?|emoji|emoticons?|sprites?|qrcodes?|erweima)\//i.test(pathPart) || TEMPLATE_DIR.test(pathPart)) return 'decorative';
  // A poster inside a video player is the video, not a photo (the labelling rule: video captions are not pairs).
  for (const a of ancestors(el, 6)) if (a.name === 'video' || PLAYER.test(classId(a))) return 'video';
  if (videoPosterBlock(el)) return 'video';
  return null;
}

/**
 * A poster whose player the class words above do not name: the image's own block (up to 3 levels up, holding no
 * other image) also holds the <video> element or a play button, or carries the player's data (`data-video…`).
 * Seen on news.sky (a `<video>` beside the poster's span), espn (`<figure data-video>` with a play-button span) of
 * dev10a, as the video-caption false pairs of issue 31's unseen pages.
 */
function videoPosterBlock(img: Element): boolean {
  for (const a of ancestors(img, 3)) {
    if (a.name === 'body' || a.name === 'html') break;
    if (Object.keys(a.attribs ?? {}).some((k) => /^data-video(-?(id|src|url|type))?$/i.test(k))) return true;
    // A block with more than a caption's text, or too many elements to walk, is the article around the player.
    if (collapse(sampleText(a, 1200)).length > 400) return false;
    let imgs = 0;
    let seen = 0;
    let player = false;
    walkBelow(a, 80, (e) => {
      seen++;
      if (e.name === 'img' || e.name === 'amp-img') imgs++;
      else if (e.name === 'video' || PLAY_BUTTON.test(classId(e))) player = true;
      return imgs > 1 ? 'stop' : undefined;
    });
    if (imgs > 1 || seen >= 80) return false;
    if (player) return true;
  }
  return false;
}
const PLAY_BUTTON = /(^|[\s_-])(play-?button|play-?btn|btn-?play|video-?play\w*|play-?icon|icon-?play)([\s_-]|$)/i;

// The image folder of a site's template (a theme, skin or layout): buttons, arrows, badges, default thumbnails. Such
// images sit on 15 open sites and none is a captioned photo.
const TEMPLATE_DIR = /\/(layouts?|templates?|skins?|themes?)\/([\w-]+\/)*(img|images|imgs)\//i;

// A video's own wrappers (players, embeds, poster holders): the image inside is its poster.
const PLAYER = /(^|[\s_-])(video-?player|jw-?player|jwplayer|vjs|video-js|player-?container|media-?player|video(-|__?)?(wrap\w*|embed\w*|container|poster|holder|frame)|media-?video)([\s_-]|$)/i;

const NOT_A_PHOTO = /(^|[\W_])(logos?|icons?|favicon|sprite|spacer|emoji|emoticon|smiley|qrcode|qr[-_]code|erweima|ewm|二维码|gravatar|avatar)([\W_]|$)/i;

/** What the page says about a photo's place: words of its own name and class, and of the blocks around it. */
export interface Furniture {
  /** The file name or the image's class names a logo, icon, avatar, button, ad... */
  decorName: boolean;
  /** An ancestor's class: related/recommended/trending/teaser/more-stories lists. */
  teaser: boolean;
  /** An ancestor's class: sidebar, rail, widget. */
  sidebar: boolean;
  /** An ancestor's class: ad, sponsor, banner, promo, partner, outbrain/taboola. */
  ad: boolean;
  /** <nav>, <header>/<footer>, menus, breadcrumbs, share bars, comments, author boxes. */
  nav: boolean;
  /** An <aside> (inline media blocks use it too). */
  aside: boolean;
  /** A lightbox or modal copy of the page's photos. */
  lightbox: boolean;
  /** aria-hidden without alt. */
  hidden: boolean;
  /** The photo is inside a block marked as the article body (articleBody, entry-content...). */
  markedBody: boolean;
  /** The photo's own small block also holds a heading or a link to another page: a teaser card. */
  card: boolean;
  /** The photo's block is one of three or more alike blocks (same tag and class), each a photo with a heading or a
   * story link: a list of teaser cards, wherever it sits and whatever it is called. */
  cardList: boolean;
}

const TEASER = /(^|[\s_-])(related|relate|recommend\w*|more[-_]?(stories|news|from)|most[-_]?(read|popular|viewed)|popular|trending|teaser\w*|hot[-_]?news|list[-_]?news|news[-_]?list|tuijian|xgxw|xiangguan|rec[-_]?list|card\w*)([\s_-]|$)/i;
const SIDEBAR = /(^|[\s_-])(sidebar|side[-_]?bar|rail|widget\w*|aside)([\s_-]|$)/i;
const AD = /(^|[\s_-])(ad|ads|advert\w*|sponsor\w*|banner|promo\w*|partner|outbrain|taboola|ob-widget|newsletter|subscribe)([\s_-]|$)/i;
const NAV = /(^|[\s_-])(footer|header[-_]?nav|nav(bar|igation)?|menu|breadcrumb|share\w*|social|comment\w*|author\w*|byline|avatar|logo)([\s_-]|$)/i;
const LIGHTBOX = /(^|[\s_-])(modal|lightbox\w*|overlay|fullscreen)([\s_-]|$)/i;

/** A link path with a long slug: a link to another story. */
const STORY_LINK = /\/[\w-]{12,}/;

/**
 * What a block holds of a teaser card: its <img> elements, and whether it names another story (a heading, or a link
 * with words of its own to another story's page: not the photo's own link, not a link to a photo or gallery).
 * One walk for both card detectors below.
 */
function teaserParts(block: Element): { imgs: number; story: boolean } {
  const parts = { imgs: 0, story: false };
  walkBelow(block, 200, (x) => {
    if (x.name === 'img') parts.imgs++;
    else if (/^h[1-4]$/.test(x.name)) parts.story = true;
    else if (x.name === 'a') {
      const href = attr(x, 'href') ?? '';
      if (STORY_LINK.test(href) && !photoLink(href) && sampleText(x, 80).replace(/\s+/g, '').length >= 6) parts.story = true;
    }
  });
  return parts;
}

/** A card holds little text: a block of more than 300 characters is an article or a section, not a card. */
function shortBlock(a: Element): boolean {
  // Characters that are not white space: an indented page's text nodes are mostly spaces and line breaks.
  let chars = 0;
  const stack: AnyNode[] = [a];
  for (let steps = 0; stack.length && steps < 2000; steps++) {
    const n = stack.pop()!;
    if (n.type === 'text') chars += (n as unknown as { data: string }).data.replace(/\s+/g, '').length;
    else if (n.type === 'tag') stack.push(...(n as Element).children);
    if (chars > 300) return false;
  }
  return true;
}

/** Up to three levels of the photo's own block (short text, no other <img>) name another story: a teaser card. */
function isCard(el: Element): boolean {
  for (const a of ancestors(el, 3)) {
    if (!shortBlock(a)) return false;
    const t = teaserParts(a);
    if (t.imgs > 1) return false;
    if (t.story) return true;
  }
  return false;
}

/** A block that is a teaser card: an image and a heading or a link to another story, little text. */
function cardLike(e: Element): boolean {
  if (!shortBlock(e)) return false;
  const t = teaserParts(e);
  return t.imgs > 0 && t.story;
}

const listVerdicts = new WeakMap<Element, Map<string, boolean>>();

/** Three or more element siblings alike (tag and class) that are teaser cards (a parent's verdict is kept per kind). */
function inCardList(el: Element): boolean {
  for (const a of ancestors(el, 4)) {
    if (a.name === 'body' || a.name === 'main') break;
    const parent = a.parent as Element | null;
    if (!parent || parent.type !== 'tag') break;
    const sig = `${a.name}|${attr(a, 'class') ?? ''}`;
    let byKind = listVerdicts.get(parent);
    if (!byKind) listVerdicts.set(parent, (byKind = new Map()));
    let verdict = byKind.get(sig);
    if (verdict === undefined) {
      const alike = parent.children.filter((c): c is Element => c.type === 'tag' && `${(c as Element).name}|${attr(c as Element, 'class') ?? ''}` === sig).slice(0, 12);
      verdict = alike.length >= 3 && alike.filter(cardLike).length >= 3;
      byKind.set(sig, verdict);
    }
    // The photo's own block is one of the cards (not a long block beside a list of them).
    if (verdict && cardLike(a)) return true;
  }
  return false;
}

/**
 * Where the photo sits. `roots` are the page's article-body elements (bodyRoots): a block holding the article's text
 * is page layout whatever its class says (page builders wrap the body in "…-widget" blocks, layouts in "sidebar_…"
 * columns), so the walk up stops there as it does at a block marked as the body.
 */
export function furnitureOf(el: Element, url: string, roots: Element[] = []): Furniture {
  const out: Furniture = { decorName: false, teaser: false, sidebar: false, ad: false, nav: false, aside: false, lightbox: false, hidden: false, markedBody: false, card: isCard(el), cardList: inCardList(el) };
  const pathPart = url.replace(/^https?:\/\/[^/]+/, '').split('?')[0]!;
  const file = pathPart.split('/').pop() ?? '';
  const own = `${file} ${classId(el).replace(/lazy-?load(ed|ing)?/gi, '')}`;
  out.decorName = BAD_IMG.test(own) || BAD_DIR.test(pathPart) || /^(logo|icon|avatar|author|headshot|qr ?code|二维码|广告|advertisement)\b/i.test(attr(el, 'alt') ?? '');
  out.hidden = attr(el, 'aria-hidden') === 'true' && !attr(el, 'alt');
  const ancs = ancestors(el);
  for (let depth = 0; depth < ancs.length; depth++) {
    const a = ancs[depth]!;
    // The article body: whatever wraps it (a layout column named "sidebar_content") is page layout.
    if (isArticleBody(a)) {
      out.markedBody = true;
      break;
    }
    if (roots.includes(a)) break;
    if (a.name === 'body' || a.name === 'html') break;
    if (a.name === 'nav' || a.name === 'footer' || a.name === 'header') out.nav = true;
    if (a.name === 'aside') out.aside = true;
    // Page-level wrappers carry site-wide class names ("blq-int-nav"); only the image's own neighbourhood counts.
    if (depth >= 6 || a.name === 'article' || a.name === 'main') continue;
    const c = classId(a);
    if (TEASER.test(c)) out.teaser = true;
    if (SIDEBAR.test(c)) out.sidebar = true;
    if (AD.test(c)) out.ad = true;
    if (NAV.test(c)) out.nav = true;
    if (LIGHTBOX.test(c)) out.lightbox = true;
  }
  return out;
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

const SHARE = /(^|[\s_-])(share\w*|social\w*|sharing|pin(terest)?|tweet|twitter|facebook|fb|whatsapp|linkedin|email|weibo|wechat|weixin|qq)([\s_-]|$)/i;

/** A share or social button (or one inside a share bar): its data-* picture is the page's, for the networks. */
function shareButton(el: Element): boolean {
  if (el.name === 'button') return true;
  return [el, ...ancestors(el, 3)].some((a) => SHARE.test(classId(a)) || /share|intent\/tweet|sharer|pinterest\.com\/pin/i.test(attr(a, 'href') ?? ''));
}

// Plain `caption=` / `credit=` too: a CMS web component that renders them (Gannett's <media-image>, on usatoday,
// telegram and thedailyreporter of the dev halves; issue 31 round 11).
export const DATA_CAPTION_ATTRS = ['data-caption', 'caption', 'data-description', 'data-desc', 'data-title'];
export const DATA_CREDIT_ATTRS = ['data-credit', 'credit', 'data-photographer', 'data-copyright', 'data-byline'];

/** Elements that look like gallery slides: a data-* caption and a data-* photo URL, and no <img> inside. */
export function galleryAnchors($: $T, base: string, limit: number): ImageAnchor[] {
  const out: ImageAnchor[] = [];
  for (const node of $('[data-caption], [data-description], [data-desc], [data-credit]').toArray().slice(0, limit * 2)) {
    const el = node as Element;
    if (el.name === 'img') continue;
    if ($(el).find('img').length) continue;
    // Share and social buttons carry the page's picture and title in data-* attributes for the networks: no slide.
    if (shareButton(el)) continue;
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
  /** Read from a page script's gallery data rather than a JSON-LD block. */
  script?: boolean;
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

const SCRIPT_URL_KEYS = /^(url|src|image|imageurl|image_url|img|imgurl|contenturl|original|originalurl|large|full|fullsize|hires|photo|photourl|path)$/i;
const SCRIPT_CAPTION_KEYS = /^(caption|description|desc|imagecaption|image_caption|captiontext|caption_text|cutline)$/i;
const SCRIPT_CREDIT_KEYS = /^(credit|credits|photographer|byline|copyright|source|creditline|credit_line)$/i;

/**
 * Photos with captions in a gallery's script data (`<script type="application/json">`, `window.__DATA__ = {...}`):
 * the innermost objects of each script that name an image URL and a caption, read before scripts are dropped.
 * Bounded: 1 MB of script text and 3,000 objects per page.
 */
export function scriptImages($: $T, base: string): JsonLdImage[] {
  const out: JsonLdImage[] = [];
  let budget = 1_000_000;
  let objects = 0;
  for (const s of $('script').toArray().slice(0, 200)) {
    const type = (attr(s as Element, 'type') ?? '').toLowerCase();
    if (type.includes('ld+json') || (type && !/json|javascript|ecmascript|^module$/.test(type))) continue;
    const raw = $(s).text();
    if (!/caption|description|cutline/i.test(raw)) continue;
    budget -= raw.length;
    if (budget < 0) break;
    for (const m of raw.matchAll(/\{[^{}]{10,3000}\}/g)) {
      if (++objects > 3000) return out;
      const img = objectImage(m[0], base);
      if (img) out.push(img);
    }
  }
  return out;
}

// What a piece must hold, as written, to name a caption key and an image URL (the keys and the URL test below): JSON
// escapes other than \u spell no letter or dot. Parsing every brace-delimited piece of a heavy page's scripts (a
// failed parse throws) was most of their cost; a piece without both gives no photo, parsed or not.
const MAY_NAME_CAPTION = /caption|desc|cutline|\\u/i;
const MAY_NAME_IMAGE = /\.(jpe?g|png|webp|avif)|image|photo|\\u/i;

function objectImage(text: string, base: string): JsonLdImage | null {
  if (!MAY_NAME_CAPTION.test(text) || !MAY_NAME_IMAGE.test(text)) return null;
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (!o || typeof o !== 'object' || Array.isArray(o)) return null;
  let url: string | undefined, caption: string | undefined, credit: string | undefined;
  for (const [k, v] of Object.entries(o)) {
    if (typeof v !== 'string' || !v.trim()) continue;
    if (!url && SCRIPT_URL_KEYS.test(k) && IMAGE_URL.test(v) && !v.startsWith('data:')) url = v;
    else if (!caption && SCRIPT_CAPTION_KEYS.test(k)) caption = v;
    else if (!credit && SCRIPT_CREDIT_KEYS.test(k)) credit = v;
  }
  if (!url || !caption) return null;
  const abs = resolveUrl(url, base);
  if (!abs || /\.(svg|gif|ico)(\?|$)/i.test(abs)) return null;
  const text2 = /<[a-z]/i.test(caption) ? caption.replace(/<[^>]+>/g, ' ') : caption;
  return { url: abs, caption: collapse(text2), credit: credit ? collapse(credit.replace(/<[^>]+>/g, ' ')) : undefined, script: true };
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
  // Paragraphs written as <div>s are read only on a page whose <p>s and marks find no body at all.
  const best = densestBlock($('p').toArray().slice(0, 3000) as Element[], zh) ?? (roots.length ? null : densestBlock(textDivs($), zh));
  if (best && !roots.includes(best)) roots.push(best);
  return roots;
}

/** The element whose direct paragraphs hold the most text (half of it counted for their grandparent), if any holds enough. */
function densestBlock(paragraphs: Element[], zh: boolean): Element | null {
  const score = new Map<Element, number>();
  const min = zh ? 30 : 80;
  for (const p of paragraphs) {
    const len = sampleText(p as AnyNode, 1000).replace(/\s+/g, ' ').trim().length;
    if (len < min) continue;
    // A <div> of links is a teaser list or a menu, not a paragraph.
    if (p.name === 'div' && linkShare(p) >= 0.25) continue;
    const parent = p.parent as Element | null;
    if (!parent || parent.type !== 'tag' || parent.name === 'body') continue;
    score.set(parent, (score.get(parent) ?? 0) + len);
    const gp = parent.parent as Element | null;
    if (gp && gp.type === 'tag' && gp.name !== 'body') score.set(gp, (score.get(gp) ?? 0) + len / 2);
  }
  let best: Element | null = null;
  let bestScore = zh ? 200 : 400;
  for (const [e, s] of score) {
    if (s > bestScore) {
      best = e;
      bestScore = s;
    }
  }
  return best;
}

// A page footer's class or id (copyright lines are long text, never the article).
const FOOTER = /foot|copyright/i;

// Elements that start a block of their own: a <div> holding one of them is a layout box, not a paragraph.

/**
 * Paragraphs written as <div>s: every <div> that holds only text and inline elements, outside the page's footer.
 * Editors of many Chinese CMSs (and old page builders) write each paragraph of the article as a <div>, with no <p> at
 * all; read only when the page's <p>s hold no body, such a body is found like any other.
 */
function textDivs($: $T): Element[] {
  const out: Element[] = [];
  for (const d of $('div').toArray().slice(0, 3000) as Element[]) {
    if (d.children.some((c) => c.type === 'tag' && BLOCK_ELEMENTS.has((c as Element).name))) continue;
    if (!ancestors(d, 12).some((a) => a.name === 'footer' || FOOTER.test(classId(a))) && !FOOTER.test(classId(d))) out.push(d);
  }
  return out;
}

/** The share of an element's text that is the text of links (a list of teasers or a menu is mostly links). */
function linkShare(e: Element): number {
  const all = sampleText(e, 1000).replace(/\s+/g, '').length;
  if (!all) return 1;
  let linked = 0;
  walkBelow(e, 200, (x) => {
    if (x.name !== 'a') return;
    linked += sampleText(x, 1000).replace(/\s+/g, '').length;
    return 'skip';
  });
  return linked / all;
}
