// A streaming pass over a fetched page before any DOM is built (htmlparser2's tokenizer, constant memory): counts
// elements and nesting depth so that a hostile page (a million elements, tags nested thousands deep) is refused
// before it costs memory or the extractor's time, and reads the page's canonical URL and <base href> (and, for a
// listing, its <a href> values: the listing walk builds no DOM at all).
// Bounds (crawler.maxPageElements, crawler.maxPageDepth) are far above real pages: on the 197 saved pages of
// extraction-news the most elements is 3,195 and the deepest nesting 34; browsers cap DOM depth at 512.
import { Parser } from 'htmlparser2';
import { permanent, type Failure } from './failures.js';

export interface PageScan {
  elements: number;
  depth: number;
  canonical: string | null;
  base: string | null;
  /** The <a href> values in page order (at most maxLinks), when asked for. */
  links: string[];
  /** Set when a bound was passed: the scan stopped there. */
  refused?: Failure;
}

export interface ScanLimits {
  maxElements: number;
  maxDepth: number;
  /** Collect up to this many <a href> values (0 or absent: none). */
  maxLinks?: number;
}

export function scanPage(html: string, url: string, limits: ScanLimits): PageScan {
  const out: PageScan = { elements: 0, depth: 0, canonical: null, base: null, links: [] };
  const maxLinks = limits.maxLinks ?? 0;
  let depth = 0;
  let stop = false;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (stop) return;
        out.elements++;
        depth++;
        if (depth > out.depth) out.depth = depth;
        if (name === 'link' && !out.canonical && /(^|\s)canonical(\s|$)/i.test(attrs.rel ?? '') && attrs.href) out.canonical = attrs.href.trim();
        if (name === 'meta' && !out.canonical && (attrs.property ?? '').toLowerCase() === 'og:url' && attrs.content) out.canonical = attrs.content.trim();
        if (name === 'base' && !out.base && attrs.href) out.base = attrs.href.trim();
        if (name === 'a' && attrs.href && out.links.length < maxLinks) out.links.push(attrs.href);
        if (out.elements > limits.maxElements) {
          out.refused = permanent(url, 'too-many-elements', `more than ${limits.maxElements} HTML elements (crawler.maxPageElements): not parsed`);
          stop = true;
          parser.pause();
        } else if (depth > limits.maxDepth) {
          out.refused = permanent(url, 'too-deep', `elements nested more than ${limits.maxDepth} deep (crawler.maxPageDepth): not parsed`);
          stop = true;
          parser.pause();
        }
      },
      onclosetag() {
        depth = Math.max(0, depth - 1);
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  return out;
}
