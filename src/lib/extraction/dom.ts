// Small DOM helpers over cheerio's domhandler tree, shared by candidate generation and features. All walks are
// bounded (depth or count): hostile pages nest thousands of elements.
import type * as cheerio from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { collapse } from './caption-text.js';

export type $T = cheerio.CheerioAPI;

export const BLOCK_TAGS = new Set(['p', 'div', 'center', 'section', 'td', 'li', 'figure', 'span', 'a', 'strong', 'b', 'font', 'h2', 'h3', 'h4', 'h5', 'h6', 'dd', 'dt', 'em', 'i', 'picture', 'article', 'figcaption', 'blockquote']);

/** HTML's block-level elements (and table, figcaption): what ends a run of inline text and what makes a `<div>` more
 *  than a paragraph. */
export const BLOCK_ELEMENTS = new Set(['address', 'article', 'aside', 'blockquote', 'center', 'dd', 'div', 'dl', 'dt', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'table', 'ul']);

export function attr(el: Element, name: string): string | undefined {
  return el.attribs?.[name];
}

export function classId(el: Element): string {
  return `${attr(el, 'class') ?? ''} ${attr(el, 'id') ?? ''}`;
}

export function isTag(n: AnyNode | null | undefined): n is Element {
  return !!n && n.type === 'tag';
}

/** Ancestors of el, nearest first, below the root (at most max). */
export function ancestors(el: Element, max = 40): Element[] {
  const out: Element[] = [];
  let p = el.parent as Element | null;
  while (p && (p as AnyNode).type !== 'root' && out.length < max) {
    if (p.type === 'tag') out.push(p);
    p = p.parent as Element | null;
  }
  return out;
}

/**
 * Visits the elements below root depth-first (its last child first), popping at most `limit` nodes. visit returns
 * 'stop' to end the walk (walkBelow then returns true), 'skip' not to enter the element.
 */
export function walkBelow(root: Element, limit: number, visit: (e: Element) => 'stop' | 'skip' | void): boolean {
  const stack: AnyNode[] = [...root.children];
  for (let steps = 0; stack.length && steps < limit; steps++) {
    const n = stack.pop()!;
    if (n.type !== 'tag') continue;
    const e = n as Element;
    const v = visit(e);
    if (v === 'stop') return true;
    if (v !== 'skip') stack.push(...e.children);
  }
  return false;
}

export function contains(a: AnyNode, b: AnyNode): boolean {
  let p: AnyNode | null = b;
  for (let i = 0; p && i < 200; i++) {
    if (p === a) return true;
    p = p.parent;
  }
  return false;
}

/** The next element sibling, skipping whitespace; null when text comes first. */
export function nextElement(el: Element): Element | null {
  let n = el.next;
  while (n) {
    if (n.type === 'tag') return n as Element;
    if (n.type === 'text' && (n as unknown as { data: string }).data.trim()) return null;
    n = n.next;
  }
  return null;
}

/** The previous element sibling, skipping whitespace; null when text comes first. */
export function prevElement(el: Element): Element | null {
  let n = el.prev;
  while (n) {
    if (n.type === 'tag') return n as Element;
    if (n.type === 'text' && (n as unknown as { data: string }).data.trim()) return null;
    n = n.prev;
  }
  return null;
}

/** Element hops from a to b through their lowest common ancestor (the tree distance). */
export function treeDistance(a: Element, b: Element): number {
  const up = new Map<AnyNode, number>();
  let p: AnyNode | null = a;
  for (let i = 0; p && i < 60; i++, p = p.parent) up.set(p, i);
  let q: AnyNode | null = b;
  for (let j = 0; q && j < 60; j++, q = q.parent) {
    const i = up.get(q);
    if (i !== undefined) return i + j;
  }
  return 99;
}

/** Visible text of a node: scripts, styles and buttons skipped, block ends become spaces. */
export function textOf(el: AnyNode, skip?: (e: Element) => boolean): string {
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

/** Up to max characters of text under a node, walked iteratively (deeply nested pages overflow recursion). */
export function sampleText(root: AnyNode | undefined, max: number): string {
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

export function isCentred(e: Element): boolean {
  return (
    e.name === 'center' ||
    /center/i.test(attr(e, 'align') ?? '') ||
    /text-align\s*:\s*center/i.test(attr(e, 'style') ?? '') ||
    /(^|[\s_-])(center|centre|centered|tc|txt-?c|text-?center|textAlignCenter|aligncenter)([\s_-]|$)/i.test(attr(e, 'class') ?? '')
  );
}

export function hiddenEl(e: Element): boolean {
  const c = classId(e);
  return HIDDEN_CLASS.test(c) || /display\s*:\s*none/i.test(attr(e, 'style') ?? '');
}

/**
 * Class words of text shown to screen readers only: the frameworks' own (Bootstrap sr-only, WordPress
 * screen-reader-text, HTML5 Boilerplate visually-hidden, Drupal element-invisible, a11y) and a site's prefixed copy of
 * one ("u-hide-visually", "is-visually-hidden"); "hidden" alone (a prefixed one is often a breakpoint's: "hidden-xs").
 */
const HIDDEN_CLASS = /(^|\s)(?:[a-z]{1,3}-)?(visually-?hidden|sr-only|screen-?reader(?:-text|-only)?|hide-visually|offscreen|a11y(?:-hidden)?|element-invisible|assistive-text)(\s|$)|(^|\s)hidden(\s|$)/i;

const counts = new WeakMap<Set<Element>, Map<Element, number>>();

/**
 * How many of the given images an element holds (counted up to 2). The counts are made once per image set by
 * walking up from each image, so asking is O(1) (walking down from a page-wide container for every photo was
 * quadratic on pages with thousands of elements).
 */
export function imgCount(el: Element, good: Set<Element>): number {
  let m = counts.get(good);
  if (!m) {
    m = new Map();
    for (const img of good) {
      for (let p: AnyNode | null = img, d = 0; p && d < 200; p = p.parent, d++) {
        if (p.type !== 'tag') continue;
        const e = p as Element;
        const n = m.get(e) ?? 0;
        if (n >= 2) break; // every ancestor above holds at least as many
        m.set(e, n + 1);
      }
    }
    counts.set(good, m);
  }
  return Math.min(2, m.get(el) ?? 0);
}

/** The element children of el (text that is only whitespace ignored). */
export function childElements(el: Element): Element[] {
  return el.children.filter((c): c is Element => c.type === 'tag');
}

/** Non-blank text nodes directly under el. */
export function ownText(el: Element): string {
  return collapse(el.children.filter((c) => c.type === 'text').map((c) => (c as unknown as { data: string }).data).join(' '));
}

/**
 * Presentation that sets a caption apart from body text, read from the element and the chain of single children
 * inside it (`<p><span style="color:#666;font-size:12px">…</span></p>`, `<p><font color=…>`, `<p><em>…</em></p>`,
 * `<p align="center"><strong>…</strong></p>`).
 */
export interface Presentation {
  centred: boolean;
  small: boolean;
  coloured: boolean;
  emphasised: boolean;
}

export function presentation(el: Element): Presentation {
  const out: Presentation = { centred: false, small: false, coloured: false, emphasised: false };
  let e: Element | undefined = el;
  for (let d = 0; e && d < 4; d++) {
    const style = attr(e, 'style') ?? '';
    if (isCentred(e)) out.centred = true;
    const size = /font-size\s*:\s*(\d+(?:\.\d+)?)(px|pt|em|rem|%)/i.exec(style);
    if (size) {
      const v = parseFloat(size[1]!);
      const px = size[2] === 'pt' ? v * 1.33 : size[2] === 'em' || size[2] === 'rem' ? v * 16 : size[2] === '%' ? (v / 100) * 16 : v;
      if (px <= 14) out.small = true;
    }
    if (e.name === 'small' || (e.name === 'font' && /^[12]$|^-/.test(attr(e, 'size') ?? ''))) out.small = true;
    if (/(^|;)\s*color\s*:/i.test(style) || (e.name === 'font' && attr(e, 'color'))) out.coloured = true;
    // Italic, <small>, <font>, a styled <span>: type set apart. Bold is not: body text bolds its key sentences.
    if (d > 0 && ['em', 'i', 'small', 'font', 'span', 'cite'].includes(e.name)) out.emphasised = out.emphasised || e.name !== 'span' || /font|color|size|italic/i.test(style);
    // Descend only through an element that is the sole content of its parent.
    const kids = childElements(e);
    if (kids.length !== 1 || ownText(e)) break;
    e = kids[0];
  }
  return out;
}

const FLOAT_CLASS = /(^|\s)(left|right|align-?left|align-?right|float-?left|float-?right|pull-?left|pull-?right|fl|fr|img-?left|img-?right)(\s|$)/i;

/** The photo, or the link around it, is floated left or right beside text (align, float style, a left/right class). */
export function floated(img: Element): boolean {
  const own = (e: Element) => /^(left|right)$/i.test(attr(e, 'align') ?? '') || /float\s*:\s*(left|right)/i.test(attr(e, 'style') ?? '') || FLOAT_CLASS.test(attr(e, 'class') ?? '');
  const parent = img.parent as Element | null;
  return own(img) || (!!parent && parent.type === 'tag' && parent.name === 'a' && own(parent));
}
