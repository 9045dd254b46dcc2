// A user's way to fix a site: a site profile may name its photos and captions with CSS selectors
// (`captions: { image, caption, credit }` in config/sites/NAME.yaml, optionally `container`). When it does, this path
// gives that site's pairs and the generic extractor is not asked, unless the selectors find nothing on a page (a
// redesign): then the generic extractor's pairs are used, and `capbridge extract --explain` shows both.
import type { Element } from 'domhandler';
import type * as cheerio from 'cheerio';
import { cleanCaption, collapse } from './caption-text.js';
import { captionFrom, type CaptionSelectors } from './candidates.js';
import { ancestors, contains, textOf } from './dom.js';
import { imageUrlOf } from './images.js';

export interface ProfilePair {
  image_url: string;
  caption: string;
  credit?: string;
}

/** The <img> a selected element is or holds. */
function imgOf($: cheerio.CheerioAPI, e: Element): Element | undefined {
  return e.name === 'img' ? e : ($(e).find('img').toArray()[0] as Element | undefined);
}

/** The caption element for one photo: in its container, else in the nearest ancestor (up to 4) that holds one. */
function captionElement($: cheerio.CheerioAPI, img: Element, sel: CaptionSelectors): Element | undefined {
  const ancs = ancestors(img, 8);
  const scopes = sel.container ? ancs.filter((a) => $(a).is(sel.container!)).slice(0, 1) : ancs.slice(0, 4);
  for (const a of scopes) {
    const found = $(a).find(sel.caption!).toArray().find((e) => !contains(e as Element, img)) as Element | undefined;
    if (found) return found;
  }
  return undefined;
}

export function profilePairs($: cheerio.CheerioAPI, base: string, sel: CaptionSelectors, lang: 'en' | 'zh', maxImages = 400): ProfilePair[] {
  if (!sel.caption && !sel.altFallback) return [];
  const imgs = sel.image ? $(sel.image).toArray().slice(0, maxImages).map((e) => imgOf($, e as Element)) : ($('img').toArray().slice(0, maxImages) as Element[]);
  const out: ProfilePair[] = [];
  const seen = new Set<string>();
  for (const img of imgs) {
    if (!img) continue;
    const url = imageUrlOf(img, base);
    if (!url || seen.has(url)) continue;
    const capEl = sel.caption ? captionElement($, img, sel) : undefined;
    let text = '';
    let credit: string | undefined;
    if (capEl) {
      ({ text, credit } = captionFrom($, capEl, sel.credit));
      if (!credit && sel.credit) {
        const scope = sel.container ? ancestors(img, 8).find((a) => $(a).is(sel.container!)) : capEl.parent;
        const c = scope ? ($(scope).find(sel.credit).toArray()[0] as Element | undefined) : undefined;
        if (c) credit = textOf(c) || undefined;
      }
    } else if (sel.altFallback) text = collapse(img.attribs?.alt ?? '');
    const clean = cleanCaption(text, credit, lang);
    if (!clean) continue;
    seen.add(url);
    const cr = [clean.credit, clean.dateline].filter(Boolean).join(' ');
    out.push(cr ? { image_url: url, caption: clean.caption, credit: cr } : { image_url: url, caption: clean.caption });
  }
  return out;
}
