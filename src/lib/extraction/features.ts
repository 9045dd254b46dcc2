// Features of one (photo, caption candidate): what the candidate looks like, measured the same way on any site —
// where it sits (source, tree distance, inside the article body), how it is presented (caption/credit class words,
// centred, small, coloured, emphasised), what the text is (length, sentence shape, language, credit and photo
// markers, headline, interface text, a file name) and whether the page repeats it for other photos.
import type { AnyNode, Element } from 'domhandler';
import { cleanCaption, type CleanCaption } from './caption-text.js';
import { CAPTION_CLASS, isImageLink, type AnchorCandidates, type CaptionCandidate, type SourceKind } from './candidates.js';
import { ancestors, attr, classId, contains, imgCount, presentation, textOf, treeDistance, type Presentation } from './dom.js';
import { aspectRatioDims, type Furniture } from './images.js';

export interface PageContext {
  lang: 'en' | 'zh';
  /** Normalised page title, og:title and <h1> texts. */
  titles: string[];
  bodyRoots: Element[];
  /** Normalised caption text -> distinct caption elements/attributes the page prints it from, across photos. */
  repeats: Map<string, number>;
  /** On this page, some photo's alt text is the caption it prints: the site writes captions into alt. */
  altCarriesCaptions: boolean;
  /** Photos on the page. */
  photos: number;
}

export interface CandidateFeatures {
  source: SourceKind;
  clean: CleanCaption | null;
  /** Characters (zh) or characters of the caption; words for English. */
  chars: number;
  words: number;
  sentences: number;
  endsWithStop: boolean;
  langMatch: boolean;
  distance: number;
  captionClass: boolean;
  /** A credit was split off, or the text carries a photo marker (摄, 供图, "(Xinhua/…)", "REUTERS/…"). */
  creditMarked: boolean;
  /** The text opens the way captions open: 图为/圖為/▲/上图/Pictured:/Above:/FILE -. */
  captionLead: boolean;
  centred: boolean;
  small: boolean;
  coloured: boolean;
  emphasised: boolean;
  inBody: boolean;
  linksElsewhere: boolean;
  /** The candidate's text is the text of a link to another page (a teaser headline). */
  textIsLink: boolean;
  headline: boolean;
  /** How many other photos the page captions with the same text from other elements. */
  repeated: number;
  /** Reads like body text: long, several sentences, no caption marker. */
  bodyLike: boolean;
  /** An alt/title that is a file name, a slug or a generic word. */
  fileName: boolean;
  /** Interface text: "Watch:", "Related", "3 hours ago", "阅读 12"... */
  uiText: boolean;
  /** A video teaser: the photo sits in a video block (a poster). */
  video: boolean;
  /** The text announces a video ("Watch:", "(2:31)", 视频：). */
  videoText: boolean;
  inFigure: boolean;
  printedCreditOnly: boolean;
  /** The page's alt texts are its captions (see PageContext.altCarriesCaptions). */
  altPage: boolean;
  /** A gallery slide named only in data-* attributes (no <img>). */
  slide: boolean;
  /** A photo named only in a gallery script's data (no element at all). */
  scriptOnly: boolean;
  /** The text is the photo's JSON-LD caption as well. */
  ldConfirmed: boolean;
  /** The candidate block holds a heading (a teaser card or a section). */
  hasHeading: boolean;
  /** The candidate is itself a heading element that links nowhere (a caption set as <h1>/<h2>, or a section title). */
  isHeading: boolean;
  /** The text speaks of an author, not the photo: a social handle, an e-mail, "Bio", "All work", "reader comments". */
  authorText: boolean;
  /** The text holds the page's headline and more (a header or teaser block: headline, dek, byline). */
  holdsHeadline: boolean;
  /** A line above the photo that points down at it (▼, ↓), or one below that points up (▲, ↑). */
  pointsAtPhoto: boolean;
  /** Where the photo sits: class words and containers around it (images.ts furnitureOf). */
  furniture: Furniture;
  /**
   * The text is also the photo's alt (a site that writes captions into alt, or repeats them), from a source a reader
   * sees: printed, beside the photo, shown by a gallery, or printed elsewhere on the page. Not for a JSON-LD caption
   * printed nowhere (see altEcho), nor for a heading block beside the photo (an alt naming the photo by its section's
   * or product's title confirms no caption).
   */
  altEqual: boolean;
  /**
   * A JSON-LD caption that nothing on the page prints and that only repeats the alt: a CMS copying the alt into the
   * ImageObject (WordPress's schema graph does so for the lead image). Two unprinted copies of one text are one
   * text, not a caption confirmed: no reader ever sees it.
   */
  altEcho: boolean;
  /** The photo has a printed candidate (profile, figcaption, caption class) other than this one. */
  otherPrinted: boolean;
  /**
   * Some text printed on the page for this photo (an element, not an attribute) says the same as this one; a heading
   * block beside the photo is no such copy (headingBlock).
   */
  printedSame: boolean;
  /** Photos on the page (anchors). */
  pagePhotos: number;
  /** Declared width of the photo in pixels, when given (0 when not). */
  declaredWidth: number;
}

// Text about the article's author rather than the photo (author boxes under a headshot): a social handle, an e-mail,
// the box's links ("Bio", "All work", "More by"), comment counters. Seen on magazine, tech and news sites alike.
const AUTHOR_TEXT = /(^|\s)@[A-Za-z0-9_]{3,}\b|\b[\w.+-]+@[\w-]+\.[a-z]{2,}\b|\b(bio|all (work|stories|articles|posts)|more by|more from this author|reader comments|posters participating|follow (him|her|them|me) on|contact the (author|reporter)|is an? ([\w’'-]+ ){0,3}(writer|reporter|correspondent|editor|columnist|contributor|producer|journalist|filmmaker)\b)\b|作者简介|作者簡介|专栏作家|專欄作家/i;
// Calls to action printed under a photo: newsletter and app sign-ups, follow/subscribe boxes, shops, and the QR-code
// lines of Chinese pages ("扫一扫…", "扫描二维码…", "关注公众号：…": printed on 13 open zh sites, never a caption).
// (round 9: a shopping section's affiliate disclosure and a magazine's "get the mag" promo, taken as the captions of
// the photos they sit under on two new sites)
const ACTION_TEXT = /\b(sign up|subscribe|get (the|our) (newsletter|app|mag|magazine)|newsletter|download (the|our) app|follow us|follow (the|this) authors?|share this (article|story|page|post)|join us|support (our|us)|donate|(may|might|could) earn (an? )?(small )?(affiliate )?commission|reader-supported|affiliate (links?|commissions?))\b|订阅|訂閱|关注我们|關注我們|扫码|掃碼|扫一扫|掃一掃|二维码|二維碼|公众号|公眾號|关注微信|關注微信|长按识别|長按識別|下载客户端|下載客戶端/i;
const UP_ARROW = /^[▲△↑⬆]/u;
const DOWN_ARROW = /^[▼▽↓⬇]/u;
const RELATED_TEXT = /^(video|watch|listen|audio|gallery|inside|related|read more|see also|more|recommended|sponsored|advertisement)\s*[:：]|\bEMBED\s*<>|\bMore Videos\b|^(相关新闻|相關新聞|相关阅读|相關閱讀|延伸阅读|延伸閱讀|热点推荐|熱點推薦|related( stories| articles| coverage)?|more|watch|video)$|\b\d+\s+(hours?|minutes?|mins?|days?)\s+ago\b|阅读\s*\d|閱讀\s*\d|人参与|人參與|\d+\s*评论|\d+\s*評論|跟帖|点击|點擊|\bread more\b|^(click|tap) (here|to)\b|\b\d+\s*min(ute)?s?\s+read\b|\b(buy|shop|order) (now|here)\b|^[（(]?(责任编辑|責任編輯|编辑|編輯|关键字|關鍵字|关键词|關鍵詞|标签|標籤)\s*[：:]/i;
// A video's text: "Watch:", "(2:31)", "▶", and the embed bar of a video player ("EMBED <>More Videos", seen on the
// players of several US broadcasters).
const VIDEO_TEXT = /^(video|watch|视频|影片|影音|直播)\s*[:：|｜]|\b(watch|play) (the )?video\b|^▶|\(\d{1,2}:\d{2}\)\s*$|^\d{1,2}:\d{2}\s|\bEMBED\s*<>|\bMore Videos\b/i;
const VIDEO_BLOCK = /(^|[\s_-])(video|player|vjs|jwplayer|media-video|video-?wrap\w*|play-?button)([\s_-]|$)|VideoBlock|VideoPlayer|SingleVideo/;
const ZH_MARKER = /(?<!拍)摄(?![影像制])|(?<!拍)攝(?![影像製])|供图|供圖|图片来源|圖片來源|新华社记者|新華社記者|◎|图为|圖為|图注|圖註|资料图|資料圖|截图|截圖|图／|圖／|图\/|圖\//u;
// The opening of a Xinhua-style photo caption (syndicated by every Chinese portal): a date, then where ("5月13日，在河北省…",
// "这是5月13日在…拍摄的…").
const ZH_DATE_PLACE = /^[\s\u3000]*(这是|這是)?(\d{4}年)?\d{1,2}月\d{1,2}日[，,]?\s*(在|于|於)/u;
const CAPTION_LEAD = new RegExp(`^(图为|圖為|图：|圖：|上图|下图|左图|右图|上圖|下圖|左圖|右圖|▲|pictured|above|below|left|right|top|bottom|file)\\s*[:：,，-]?|^FILE\\s*[-–—]|${ZH_DATE_PLACE.source}`, 'iu');
const FILE_NAME = /^[\w.-]+\.(jpe?g|png|gif|webp)$|^(img|dsc|image|photo|pic|p)[-_]?\d+|^[\w-]+[-_][\w-]+$|^\d+$|^(image|photo|picture|图片|圖片|照片|img|thumbnail|pic|untitled)$/i;

const NO_FURNITURE: Furniture = { decorName: false, teaser: false, sidebar: false, ad: false, nav: false, aside: false, lightbox: false, hidden: false, markedBody: false, card: false, cardList: false };
const PRINTED_SOURCES = new Set<SourceKind>(['figcaption', 'class', 'itemprop']);

function declaredWidth(img: Element): number {
  const w = parseInt(attr(img, 'width') ?? '', 10);
  const h = parseInt(attr(img, 'height') ?? '', 10);
  if (!Number.isFinite(w) || w <= 0 || aspectRatioDims(w, Number.isFinite(h) ? h : null)) return 0;
  return w;
}

export function normText(s: string): string {
  return s.normalize('NFKC').toLowerCase().replace(/\p{P}|\p{S}/gu, '').replace(/\s+/g, ' ').trim();
}

function similar(a: string, b: string): boolean {
  if (!a || !b) return false;
  if (a === b) return true;
  const short = a.length < b.length ? a : b;
  const long = a.length < b.length ? b : a;
  return short.length >= 8 && long.includes(short) && short.length / long.length > 0.6;
}

function sentenceCount(t: string, zh: boolean): number {
  const parts = zh ? t.split(/[。！？!?；]/) : t.split(/(?<=[a-z0-9)”"'’])[.!?]\s+(?=[A-Z“"‘])/);
  return parts.filter((x) => x.trim().length > 1).length;
}

/** Share of an element's text (after the photo, when the photo is inside it) that sits in links to other pages. */
function linkedShare(el: Element, img: Element): number {
  let all = 0;
  let linked = 0;
  let after = !contains(el, img);
  const walk = (n: AnyNode, inLink: boolean, depth: number) => {
    if (depth > 25) return;
    if (n === img) {
      after = true;
      return;
    }
    if (n.type === 'text') {
      if (!after) return;
      const len = (n as unknown as { data: string }).data.replace(/\s+/g, '').length;
      all += len;
      if (inLink) linked += len;
    } else if (n.type === 'tag') {
      const e = n as Element;
      const link = inLink || (e.name === 'a' && !isImageLink(e.attribs?.href ?? ''));
      for (const ch of e.children) walk(ch, link, depth + 1);
    }
  };
  walk(el, false, 0);
  return all ? linked / all : 0;
}

/**
 * The caption block's presentation, counted only where it sets the block apart from the body text around it: a
 * flag shared by a nearby paragraph that is not itself under a photo (a page whose paragraphs are all centred,
 * coloured or italic) says nothing.
 */
function distinctPresentation(el: Element, c: CaptionCandidate, good: Set<Element>): Presentation {
  const p = presentation(el);
  if (!p.centred && !p.small && !p.coloured && !p.emphasised) return p;
  const body: Element[] = [];
  const underPhoto = (e: Element) => {
    let prev = e.prev;
    while (prev && prev.type !== 'tag') prev = prev.prev;
    return !!prev && imgCount(prev as Element, good) > 0;
  };
  for (const dir of ['next', 'prev'] as const) {
    let sib: AnyNode | null = dir === 'next' ? (c.parts[c.parts.length - 1] ?? el).next : el.prev;
    for (let k = 0; sib && k < 12 && body.length < 6; k++, sib = dir === 'next' ? sib.next : sib.prev) {
      if (sib.type !== 'tag') continue;
      const e = sib as Element;
      if (imgCount(e, good) > 0 || underPhoto(e)) continue;
      if ([...textOf(e)].length >= 15) body.push(e);
    }
  }
  const q = body.map((b) => presentation(b));
  return {
    centred: p.centred && !q.some((x) => x.centred),
    small: p.small && !q.some((x) => x.small),
    coloured: p.coloured && !q.some((x) => x.coloured),
    emphasised: p.emphasised && !q.some((x) => x.emphasised),
  };
}

/** A heading inside the candidate: a teaser card or a section, not a caption. */
function hasHeading(el: Element): boolean {
  return /^h[1-4]$/.test(el.name) || !!el.children.some((ch) => ch.type === 'tag' && (/^h[1-4]$/.test((ch as Element).name) || hasHeading(ch as Element)));
}

/**
 * A block beside the photo that is, or holds, a title with no link: a section's heading, a product's name in a
 * round-up, the article's headline. A photo's alt that repeats it labels the photo with that title; the heading
 * printed is no copy of a caption. A heading that is a sentence (ends with a full stop: a slide's caption set in an
 * <h2>) is not a title, and a figcaption or caption-class element holding a heading is no block: both still count.
 * A linked title is a teaser's, which text-is-link and links-elsewhere already weigh.
 */
function headingBlock(x: CaptionCandidate): boolean {
  if (x.source !== 'next-block' && x.source !== 'prev-block' && x.source !== 'own-block') return false;
  return !!x.el && (/^h[1-6]$/.test(x.el.name) || hasHeading(x.el)) && !linked(x.el) && !SENTENCE_END.test(x.text.trim());
}

/** A link in the element or in one of its three nearest ancestors. */
function linked(el: Element): boolean {
  const links = (e: Element): boolean => e.children.some((ch) => ch.type === 'tag' && ((ch as Element).name === 'a' || links(ch as Element)));
  return links(el) || ancestors(el, 3).some((a) => a.name === 'a');
}

const SENTENCE_END = /[.。][\s"'”’)）]*$/u;

/** The candidate element is a heading with no link in it or around it. */
function plainHeading(el: Element): boolean {
  return /^h[1-6]$/.test(el.name) && !linked(el);
}

/** The text holds one of the page's titles and more than it. */
function holdsTitle(norm: string, titles: string[]): boolean {
  return titles.some((t) => t.length >= 12 && norm.length > t.length * 1.3 && norm.includes(t));
}

export function describe(ac: AnchorCandidates, c: CaptionCandidate, page: PageContext, lang: 'en' | 'zh', good: Set<Element>): CandidateFeatures {
  const zh = lang === 'zh';
  const clean = cleanCaption(c.text, c.credit, lang);
  const text = clean?.caption ?? '';
  const chars = [...text].length;
  const words = text ? text.split(/\s+/).length : 0;
  const han = (text.match(/\p{Script=Han}/gu) ?? []).length;
  const latin = (text.match(/[A-Za-z]/g) ?? []).length;
  const langMatch = zh ? han > 0 : han * 2 <= latin;
  const img = ac.anchor.el;
  const el = c.el;
  let captionClass = false;
  let linkText = false;
  let heading = false;
  let isHeading = false;
  let video = false;
  if (el) {
    // Class words on the caption element and its ancestors up to the common ancestor with the photo.
    for (const a of [el, ...ancestors(el, 6)]) {
      if (contains(a, img)) break;
      if (CAPTION_CLASS.test(classId(a))) captionClass = true;
    }
    for (const a of [el, ...ancestors(el, 3)]) {
      if (a.name === 'a' && !isImageLink(a.attribs?.href ?? '') && !contains(a, img)) linkText = true;
    }
    // Most of the text is the text of links to other pages: a teaser headline, a product or portal link title.
    if (!linkText && c.text) linkText = (c.linkShare ?? linkedShare(el, img)) >= 0.8;
    isHeading = (c.source === 'next-block' || c.source === 'prev-block') && plainHeading(el);
    heading = (c.source === 'next-block' || c.source === 'own-block' || c.source === 'prev-block') && el !== img && !isHeading && hasHeading(el);
  }
  for (const a of ancestors(img, 6)) {
    if (a.name === 'video' || VIDEO_BLOCK.test(`${classId(a)} ${a.attribs?.['data-testid'] ?? ''} ${a.attribs?.['data-type'] ?? ''}`)) video = true;
  }
  if (/video player|play video|播放/i.test(img.attribs?.alt ?? '')) video = true;
  const pres = el && (c.source === 'next-block' || c.source === 'own-block' || c.source === 'class') ? distinctPresentation(el, c, good) : { centred: false, small: false, coloured: false, emphasised: false };
  const rawTail = c.text.slice(-40);
  // A credit from metadata (JSON-LD creditText) is not printed: only the text's own credit marks it.
  const metaCredit = c.source === 'json-ld' || c.source === 'script';
  const ownCredit = metaCredit ? !!cleanCaption(c.text, undefined, lang)?.credit : !!clean?.credit;
  const creditMarked = ownCredit || (zh ? ZH_MARKER.test(c.text.slice(0, 4)) || ZH_MARKER.test(rawTail) : false);
  const sentences = sentenceCount(text, zh);
  const n = zh ? chars : words;
  const marked = creditMarked || captionClass || CAPTION_LEAD.test(c.text);
  const bodyLike = zh ? (chars > 150 || (sentences > 3 && chars > 80)) && !marked : (words > 90 || (sentences > 4 && words > 60)) && !marked;
  const norm = normText(text);
  const inBody = page.bodyRoots.some((r) => contains(r, img));
  const sameAsAlt = c.source !== 'alt' && !!norm && ac.candidates.some((x) => x.source === 'alt' && similar(normText(x.text), norm));
  const normRaw = normText(c.text);
  const printedSame = !!norm && ac.candidates.some((x) => x !== c && !!x.el && x.source !== 'data-attr' && similar(normText(x.text), normRaw) && !headingBlock(x));
  // JSON-LD is never rendered; a gallery script's data and data-* captions are (the gallery shows them).
  const unprintedMeta = c.source === 'json-ld' && !printedSame;
  return {
    source: c.source,
    clean,
    chars,
    words,
    sentences,
    endsWithStop: /[。！？.!?”"’)）]$/u.test(text),
    langMatch,
    distance: el ? treeDistance(img, el) : 0,
    captionClass,
    creditMarked,
    captionLead: CAPTION_LEAD.test(c.text),
    ...pres,
    inBody,
    linksElsewhere: ac.linksElsewhere,
    textIsLink: linkText,
    headline: page.titles.some((t) => similar(norm, t)),
    repeated: Math.max(0, (page.repeats.get(normText(c.text)) ?? 1) - 1),
    bodyLike: bodyLike && n > 0,
    fileName: c.source === 'alt' && FILE_NAME.test(c.text.trim()),
    uiText: RELATED_TEXT.test(text) || ACTION_TEXT.test(c.text),
    video,
    videoText: VIDEO_TEXT.test(text) || /^(watch|video|视频|影片)\s*[:：|｜]/i.test(c.text),
    inFigure: ac.inFigure,
    printedCreditOnly: ac.printedCreditOnly,
    altPage: page.altCarriesCaptions,
    slide: ac.anchor.kind === 'data',
    scriptOnly: ac.anchor.kind === 'script',
    ldConfirmed: c.source !== 'json-ld' && ac.candidates.some((x) => x.source === 'json-ld' && similar(normText(x.text), normText(c.text))),
    hasHeading: heading,
    isHeading,
    authorText: AUTHOR_TEXT.test(c.text),
    holdsHeadline: holdsTitle(normText(c.text), page.titles),
    pointsAtPhoto: (c.source === 'prev-block' && DOWN_ARROW.test(c.text)) || ((c.source === 'next-block' || c.source === 'own-block' || c.source === 'table-row') && UP_ARROW.test(c.text)),
    furniture: ac.anchor.furniture ?? NO_FURNITURE,
    altEqual: sameAsAlt && !unprintedMeta && !headingBlock(c),
    altEcho: sameAsAlt && unprintedMeta,
    otherPrinted: ac.candidates.some((x) => x !== c && PRINTED_SOURCES.has(x.source) && !!cleanCaption(x.text, x.credit, lang)),
    printedSame,
    pagePhotos: page.photos,
    declaredWidth: declaredWidth(img),
  };
}
