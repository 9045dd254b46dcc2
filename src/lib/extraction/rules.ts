// Scoring: hand rules over the features of features.ts. Each rule adds or subtracts points; a candidate is a
// caption when its total reaches ACCEPT, and each photo takes its best candidate. No rule names a site.
//
// Provenance: `from` lists the extraction-news sites whose pages a rule was written from (the pages where it
// changes the output, found by ablation: `npm run bench:extract -- --ablate`); rules from the HTML standard or a
// convention common to news sites everywhere have none. `basis` names where the pattern is seen (at least three
// sites). bench:extract's leave-one-site-out figures score each site's pages with the rules that did not come from
// that site (options.disabledRules).
import type { CaptionSelectors } from './candidates.js';
import type { CandidateFeatures } from './features.js';

export const ACCEPT = 2;
const REJECT = -100;

export interface RuleContext {
  lang: 'en' | 'zh';
  selectors?: CaptionSelectors;
}

export interface Rule {
  id: string;
  /** What the rule says, and the pattern behind it. */
  basis: string;
  /** extraction-news sites the rule was written from (empty: the HTML standard or a universal convention). */
  from: string[];
  score(f: CandidateFeatures, ctx: RuleContext): number;
}

const PRINTED = new Set(['profile', 'figcaption', 'class']);
const LAYOUT = new Set(['own-block', 'next-block']);
const ATTRIBUTE = new Set(['data-attr', 'json-ld', 'alt']);

export const RULES: Rule[] = [
  // ---- where the text comes from
  { id: 'source-profile', basis: 'the site profile names the caption element', from: [], score: (f) => (f.source === 'profile' ? 4 : 0) },
  { id: 'source-figcaption', basis: 'HTML standard: <figcaption> captions its <figure>', from: [], score: (f) => (f.source === 'figcaption' ? 4 : 0) },
  {
    id: 'source-caption-class',
    basis: 'a caption/cutline/legend/pic-title/图注 class next to the photo: WordPress (wp-caption-text), BBC, CNN, Reuters, sina, cjn.cn',
    from: [],
    score: (f) => (f.source === 'class' ? 3 : 0),
  },
  {
    id: 'source-data-caption',
    basis: 'data-caption/data-description on a photo or gallery slide: lazy galleries of US papers (NYT, Boston Herald, Chicago Tribune), WordPress galleries',
    from: [],
    score: (f) => (f.source === 'data-attr' ? (f.chars > 10 ? 2 : 0) : 0),
  },
  {
    id: 'source-json-ld',
    basis: 'schema.org ImageObject.caption: the publisher\'s caption, often not printed (alone it added 12 false pairs on extraction-news en); it confirms a printed line instead',
    from: [],
    score: (f) => (f.source === 'json-ld' ? 1 : 0),
  },
  { id: 'layout-json-ld', basis: 'a line under the photo that is the JSON-LD caption of the photo', from: [], score: (f) => (LAYOUT.has(f.source) && f.ldConfirmed ? 2 : 0) },
  { id: 'source-alt', basis: 'HTML standard: alt is a text alternative, not a caption; it needs evidence', from: [], score: (f) => (f.source === 'alt' ? -1 : 0) },

  // ---- what is never a caption
  { id: 'gate-language', basis: 'a caption in another script than the page is an embed or an ad (English promos on Chinese pages: nytimes zh, rfi zh, sina)', from: ['nytimes'], score: (f) => (f.langMatch ? 0 : REJECT) },
  {
    id: 'gate-length',
    basis: 'captions are at most a few sentences (longest labelled: ~90 words en, ~150 hanzi zh); longer text under a photo is body text (nbcnews, dailynews, ifeng)',
    from: ['nbcnews'],
    score: (f, c) => ((c.lang === 'zh' ? f.chars > 300 : f.chars > 600) || f.chars < 2 ? REJECT : 0),
  },
  { id: 'gate-one-word', basis: 'one English word is a label or a name tag, not a caption', from: [], score: (f, c) => (c.lang === 'en' && f.words < 2 ? REJECT : 0) },
  { id: 'gate-interface', basis: 'interface text under photos: "Watch:", "3 hours ago", "5 min read", "Buy Now", 编辑/关键字 lines, "阅读 12" (abc13, abc7news, rollingstone, space.com, caijing, ltn, cbssports)', from: ['abc13', 'abc7news', 'rollingstone', 'space', 'caijing', 'ltn', 'cbssports'], score: (f) => (f.uiText ? REJECT : 0) },
  {
    id: 'gate-link-text',
    basis: 'the text is a link to another page or a card with a heading: a teaser headline or a product/portal link title (cbssports, freebeacon, dominicantoday; issue 20 kind 4)',
    from: ['cbssports', 'freebeacon', 'dominicantoday'],
    score: (f) => (f.textIsLink && f.source !== 'profile' ? REJECT : 0),
  },
  {
    id: 'gate-teaser-photo',
    basis: 'a photo that links to another page is a teaser card; only its own figure caption may caption it',
    from: [],
    score: (f) => (f.linksElsewhere && f.source !== 'profile' && !(f.inFigure && f.source === 'figcaption') ? REJECT : 0),
  },
  {
    id: 'gate-printed-credit-only',
    basis: 'the page prints only a credit under the photo, so no attribute text stands in for a caption (dailymaverick, gothamist, restofworld credit lines)',
    from: ['dailymaverick', 'gothamist'],
    score: (f) => (f.printedCreditOnly && ATTRIBUTE.has(f.source) ? REJECT : 0),
  },
  { id: 'video-teaser', basis: 'a photo in a video block (a poster), or text announcing a video, is a video teaser (nytimes "Video player loading" blocks, euronews and abcnews video posters; issue 20 kind 4)', from: ['nytimes'], score: (f) => (f.video && !PRINTED.has(f.source) ? -3 : 0) },
  {
    id: 'headline',
    basis: 'the text is the page headline (og:title or <title> reused as the photo\\\'s alt or label: ndtv, setn, 163; issue 20 kind 6)',
    from: ['ndtv'],
    score: (f) => (f.headline ? (PRINTED.has(f.source) ? -1 : -3) : 0),
  },
  { id: 'repeated', basis: 'the same text under several photos from different elements is template text', from: [], score: (f) => (f.repeated >= 2 ? -3 : 0) },

  // ---- layout captions (the block after an image-only block, the text after the photo in its own block)
  {
    id: 'layout-zh-marker',
    basis: 'Chinese captions end with a photo credit or open with 图为 (xinhua, chinanews, cjn.cn, youth.cn, CNA, 163, appledaily, ifeng, ettoday, ltn, setn, sina, gmw)',
    from: ['163', 'appledaily', 'ifeng', 'youth'],
    score: (f, c) => (LAYOUT.has(f.source) && c.lang === 'zh' && f.creditMarked && f.chars <= 150 && f.sentences <= 3 ? 2.5 : 0),
  },
  {
    id: 'layout-zh-centred',
    basis: 'a short centred line under a photo (gsc.org.cn, cmse.gov.cn, guancha, 163, qq, setn, sina, gmw)',
    from: ['cmse', 'gsc'],
    score: (f, c) => (LAYOUT.has(f.source) && c.lang === 'zh' && f.centred && f.chars <= 60 && f.sentences <= 1 ? 2 : 0),
  },
  {
    id: 'layout-en-credit',
    basis: 'a paragraph under the photo ending in its agency credit ("(Xinhua/Name)", "REUTERS/Name", "(AP Photo/…)"): agency photo stories (issue 20 kind 1), gothamist, livescience, space.com, foxnews, tribune242',
    from: ['foxnews', 'gothamist'],
    score: (f, c) => (LAYOUT.has(f.source) && c.lang === 'en' && f.creditMarked && f.chars >= 20 ? 2 : 0),
  },
  {
    id: 'layout-styled',
    basis: 'a short line under the photo in small, coloured or italic type that no body paragraph around it shares (livescience, space.com, cjn.cn, gmw, guancha, thepaper, xinhua, sina; agency photo stories, issue 20 kind 1); pages whose every paragraph is coloured or bold (dailynews, huanqiu) show why it must be distinct',
    from: ['thepaper', 'dailynews', 'huanqiu'],
    score: (f, c) => (LAYOUT.has(f.source) && (f.small || f.coloured || f.emphasised || (c.lang === 'en' && f.centred)) && f.sentences <= 3 && (c.lang === 'zh' ? f.chars <= 100 : f.words >= 3 && f.words <= 60) ? 2 : 0),
  },
  { id: 'layout-caption-class', basis: 'a caption class on the layout block', from: [], score: (f) => (LAYOUT.has(f.source) && f.captionClass ? 2 : 0) },
  { id: 'layout-lead', basis: 'caption openings: 图为/圖為/▲/上图/Pictured:/Above:/FILE -', from: [], score: (f) => (LAYOUT.has(f.source) && f.captionLead ? 1.5 : 0) },
  { id: 'layout-body-text', basis: 'a long paragraph of several sentences with no caption marker is body text', from: [], score: (f) => (LAYOUT.has(f.source) && f.bodyLike ? -3 : 0) },

  // ---- alt text (kind 6): a caption only where it reads like one, and never a file name or the headline
  { id: 'alt-file-name', basis: 'alt holding a file name, a slug or a generic word', from: [], score: (f) => (f.source === 'alt' && f.fileName ? REJECT : 0) },
  {
    id: 'alt-sentence',
    basis: 'an alt that is a sentence (8+ words with lower-case words, or 10+ hanzi) describes the photo',
    from: ['cnn'],
    score: (f, c) => (f.source === 'alt' && (c.lang === 'zh' ? f.chars >= 10 : f.words >= 8) ? 1 : 0),
  },
  { id: 'alt-repeated', basis: 'the same alt on several photos is a generic label: the headline or the section (setn, and the portal lists of sina and 163)', from: ['setn'], score: (f) => (f.source === 'alt' && f.repeated >= 1 ? -3 : 0) },
  { id: 'alt-credit', basis: 'an alt ending in the photo credit is the agency caption pasted in', from: [], score: (f) => (f.source === 'alt' && f.creditMarked ? 2 : 0) },
  {
    id: 'alt-page-convention',
    basis: 'on a page whose printed captions repeat their photos\\\' alt texts (cnn, apnews, bostonherald, seattletimes, guardian, voanews, cna, sina), an alt is a caption where none is printed (issue 20 kind 6)',
    from: ['cnn'],
    score: (f, c) => (f.source === 'alt' && f.altPage && (c.lang === 'zh' ? f.chars >= 8 : f.words >= 6) ? 2 : 0),
  },
  { id: 'alt-profile', basis: 'the site profile says its alt texts are captions', from: [], score: (f, c) => (f.source === 'alt' && c.selectors?.altFallback && (c.lang === 'zh' ? f.chars >= 8 : f.words >= 4) ? 4 : 0) },
  { id: 'attribute-outside-body', basis: 'attribute text of a photo outside the article body and outside any figure', from: [], score: (f) => (ATTRIBUTE.has(f.source) && !f.inBody && !f.inFigure && !f.slide ? -1 : 0) },
];

export interface Scored {
  total: number;
  /** Rule id -> points, for rules that gave any. */
  points: Record<string, number>;
}

export function scoreCandidate(f: CandidateFeatures, ctx: RuleContext, disabled?: ReadonlySet<string>): Scored {
  if (!f.clean) return { total: REJECT, points: { empty: REJECT } };
  const points: Record<string, number> = {};
  let total = 0;
  for (const r of RULES) {
    if (disabled?.has(r.id)) continue;
    const p = r.score(f, ctx);
    if (p) {
      points[r.id] = p;
      total += p;
    }
  }
  return { total, points };
}
