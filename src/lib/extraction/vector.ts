// The candidate features of features.ts as one numeric vector for the model (model.ts). Every feature is measured
// the same way on any site; none names a site. A feature can be read once for every page ("len:log") and once more
// only on Chinese pages ("zh:len:log", x * zh), so a model can learn where Chinese layouts differ; a model names the
// features it reads, and bench/fit-extract.ts chooses the set by leave-one-site-out.
import type { CandidateFeatures } from './features.js';
import type { SourceKind } from './candidates.js';

const SOURCES: SourceKind[] = ['figcaption', 'class', 'own-block', 'next-block', 'prev-block', 'table-row', 'itemprop', 'data-attr', 'script', 'json-ld', 'alt'];
const PRINTED = new Set<SourceKind>(['figcaption', 'class', 'itemprop']);
const LAYOUT = new Set<SourceKind>(['own-block', 'next-block', 'prev-block', 'table-row']);
const ATTRIBUTE = new Set<SourceKind>(['data-attr', 'script', 'json-ld', 'alt']);

type Feature = [name: string, value: (f: CandidateFeatures, zh: boolean) => number];

const b = (v: boolean) => (v ? 1 : 0);
/**
 * Where the text sits, as the model reads it: a line above the photo that points down at it (▼, ↓) reads as a line
 * under it. A gallery's script data keeps a place of its own and borrows no weight: the open data has almost no
 * script captions, and the script data of photos a page never prints (sign-up cards, products) is not caption text.
 */
const place = (f: CandidateFeatures): SourceKind => (f.source === 'prev-block' && f.pointsAtPhoto ? 'next-block' : f.source);
const furniture = (f: CandidateFeatures) => f.furniture.teaser || f.furniture.sidebar || f.furniture.ad || f.furniture.nav || f.furniture.aside || f.furniture.card;
/** Length in reading units: hanzi on Chinese pages, words on English ones. */
const units = (f: CandidateFeatures, zh: boolean) => (zh ? f.chars : f.words);

const BASE: Feature[] = [
  ...SOURCES.map((s): Feature => [`source:${s}`, (f) => b(place(f) === s)]),
  ['len:log', (f, zh) => Math.log1p(units(f, zh)) / 4],
  ['len:tiny', (f, zh) => b(units(f, zh) <= (zh ? 4 : 2))],
  ['len:short', (f, zh) => b(units(f, zh) <= (zh ? 12 : 6))],
  ['len:long', (f, zh) => b(units(f, zh) > (zh ? 120 : 60))],
  ['len:huge', (f, zh) => b(units(f, zh) > (zh ? 250 : 120))],
  ['sentences', (f) => Math.min(f.sentences, 6) / 6],
  ['ends-with-stop', (f) => b(f.endsWithStop)],
  ['lang-mismatch', (f) => b(!f.langMatch)],
  ['distance', (f) => Math.min(f.distance, 12) / 12],
  ['caption-class', (f) => b(f.captionClass)],
  ['credit-marked', (f) => b(f.creditMarked)],
  ['credit-split', (f) => b(!!f.clean?.credit && f.source !== 'json-ld' && f.source !== 'script')],
  ['dateline', (f) => b(!!f.clean?.dateline)],
  ['caption-lead', (f) => b(f.captionLead)],
  ['centred', (f) => b(f.centred)],
  ['small', (f) => b(f.small)],
  ['coloured', (f) => b(f.coloured)],
  ['emphasised', (f) => b(f.emphasised)],
  ['in-body', (f) => b(f.inBody)],
  ['links-elsewhere', (f) => b(f.linksElsewhere)],
  ['text-is-link', (f) => b(f.textIsLink)],
  ['has-heading', (f) => b(f.hasHeading)],
  ['headline', (f) => b(f.headline)],
  ['repeated', (f) => b(f.repeated >= 1)],
  ['repeated-2', (f) => b(f.repeated >= 2)],
  ['body-like', (f) => b(f.bodyLike)],
  ['file-name', (f) => b(f.fileName)],
  ['interface-text', (f) => b(f.uiText)],
  ['video-block', (f) => b(f.video)],
  ['video-text', (f) => b(f.videoText)],
  ['video-block*text', (f) => b(f.video && f.videoText)],
  ['in-figure', (f) => b(f.inFigure)],
  ['printed-credit-only', (f) => b(f.printedCreditOnly)],
  ['alt-page', (f) => b(f.altPage)],
  ['slide', (f) => b(f.slide)],
  ['script-only-photo', (f) => b(f.scriptOnly)],
  ['ld-confirmed', (f) => b(f.ldConfirmed)],
  ['alt-equal', (f) => b(f.altEqual)],
  ['other-printed', (f) => b(f.otherPrinted)],
  ['photos:log', (f) => Math.log1p(f.pagePhotos) / 5],
  ['width:known-small', (f) => b(f.declaredWidth > 0 && f.declaredWidth < 300)],
  ['width:known-large', (f) => b(f.declaredWidth >= 500)],
  ['img:decor-name', (f) => b(f.furniture.decorName)],
  ['img:teaser', (f) => b(f.furniture.teaser)],
  ['img:sidebar', (f) => b(f.furniture.sidebar)],
  ['img:ad', (f) => b(f.furniture.ad)],
  ['img:nav', (f) => b(f.furniture.nav)],
  ['img:aside', (f) => b(f.furniture.aside)],
  ['img:lightbox', (f) => b(f.furniture.lightbox)],
  ['img:hidden', (f) => b(f.furniture.hidden)],
  ['img:marked-body', (f) => b(f.furniture.markedBody)],
  ['img:card', (f) => b(f.furniture.card)],
  // Any furniture word at all, and furniture outside the article body: one feature gathers the evidence that the
  // single words have too little of on their own.
  ['img:furniture', (f) => b(furniture(f))],
  ['img:furniture*outside-body', (f) => b(furniture(f) && !f.inBody)],
  // Interactions the data shows to matter on several sites: a layout block is a caption by its marks, an
  // attribute text by its evidence.
  ['layout*credit-marked', (f) => b(LAYOUT.has(place(f)) && f.creditMarked)],
  ['layout*styled', (f) => b(LAYOUT.has(place(f)) && (f.centred || f.small || f.coloured || f.emphasised))],
  ['layout*caption-class', (f) => b(LAYOUT.has(place(f)) && f.captionClass)],
  ['layout*lead', (f) => b(LAYOUT.has(place(f)) && f.captionLead)],
  ['layout*body-like', (f) => b(LAYOUT.has(place(f)) && f.bodyLike)],
  ['layout*ld-confirmed', (f) => b(LAYOUT.has(place(f)) && f.ldConfirmed)],
  ['layout*alt-equal', (f) => b(LAYOUT.has(place(f)) && f.altEqual)],
  ['attribute*printed-same', (f) => b(ATTRIBUTE.has(place(f)) && f.printedSame)],
  ['attribute*unprinted', (f) => b(ATTRIBUTE.has(place(f)) && !f.printedSame && !f.slide && !f.scriptOnly)],
  ['attribute*outside', (f) => b(ATTRIBUTE.has(place(f)) && !f.inBody && !f.inFigure && !f.slide)],
  ['attribute*printed-credit-only', (f) => b(ATTRIBUTE.has(place(f)) && f.printedCreditOnly)],
  ['attribute*other-printed', (f) => b(ATTRIBUTE.has(place(f)) && f.otherPrinted)],
  ['alt*credit-marked', (f) => b(f.source === 'alt' && f.creditMarked)],
  ['alt*alt-page', (f) => b(f.source === 'alt' && f.altPage)],
  ['alt*repeated', (f) => b(f.source === 'alt' && f.repeated >= 1)],
  ['alt*sentence', (f, zh) => b(f.source === 'alt' && units(f, zh) >= (zh ? 10 : 8))],
  ['alt*headline', (f) => b(f.source === 'alt' && f.headline)],
  ['printed*headline', (f) => b((f.source === 'figcaption' || f.source === 'class') && f.headline)],
  // Round 2 of issue 31: kinds of text and place that the first fit had no word for.
  ['is-heading', (f) => b(f.isHeading)],
  ['author-text', (f) => b(f.authorText)],
  ['holds-headline', (f) => b(f.holdsHeadline)],
  ['points-at-photo', (f) => b(f.pointsAtPhoto)],
  ['img:card-list', (f) => b(f.furniture.cardList)],
  // The same places in four groups (a caption element, a line beside the photo, page data, alt): a kind with few
  // examples of its own (a table row, microdata) borrows the weight of its group.
  ['place:printed', (f) => b(PRINTED.has(place(f)))],
  ['place:layout', (f) => b(LAYOUT.has(place(f)) && place(f) !== 'prev-block')],
  ['place:above', (f) => b(place(f) === 'prev-block')],
  ['place:data', (f) => b(place(f) === 'data-attr' || place(f) === 'json-ld')],
  // Round 6: a caption element that holds a name or a short phrase ("Kate Winslet", "The restaurant's interior.").
  // Short texts are mostly interface words and credits elsewhere (len:short), but in a caption element they are
  // captions: 31 of 38 such lines over 20 open and private sites.
  ['printed*short', (f, zh) => b(PRINTED.has(place(f)) && units(f, zh) <= (zh ? 12 : 6))],
  // Round 11: a JSON-LD caption printed nowhere that only repeats the alt (WordPress's schema ImageObject for the lead
  // image) is told from a caption that equals the alt: alt-equal no longer counts it as confirmed (3 sites of the
  // dev halves took it as the lead photo's caption).
  ['json-ld*alt-echo', (f) => b(f.altEcho)],
];

/**
 * Evidence that by its meaning speaks only against a caption: the fit may weigh it 0 or less, never more (a positive
 * weight would be the layout of the few open sites that show it beside a true caption, not a kind; on a new site it
 * would raise exactly the false captions it names: author boxes, teaser cards, interface lines). The Chinese copies
 * ("zh:…") are free: they only adjust the shared weight.
 */
const AGAINST = new Set(['json-ld*alt-echo', 'interface-text', 'author-text', 'video-text', 'video-block*text', 'links-elsewhere', 'text-is-link', 'file-name', 'holds-headline', 'body-like', 'img:card', 'img:card-list', 'img:decor-name', 'img:teaser', 'img:ad', 'img:nav', 'img:hidden', 'img:furniture*outside-body']);

/** For each named feature, whether its weight must stay at or below 0 (see AGAINST). */
export function againstFeatures(names: string[]): boolean[] {
  return names.map((n) => AGAINST.has(n));
}

/** Every base feature the extractor can compute, by name. */
export const BASE_FEATURES: string[] = BASE.map(([n]) => n);
const BY_NAME = new Map(BASE);
for (const n of AGAINST) if (!BY_NAME.has(n)) throw new Error(`vector.ts: AGAINST names no feature "${n}"`);

/**
 * A model names its inputs: a base feature ("len:log"), the same feature on Chinese pages only ("zh:len:log"), or
 * "zh" (1 on Chinese pages). Every name the extractor can compute, in the order of the full model.
 */
export const FEATURE_NAMES: string[] = [...BASE_FEATURES, ...BASE_FEATURES.map((n) => `zh:${n}`), 'zh'];

type Compiled = (f: CandidateFeatures, zh: boolean) => number;

function compileOne(name: string): Compiled {
  if (name === 'zh') return (_f, zh) => (zh ? 1 : 0);
  const zhOnly = name.startsWith('zh:');
  const v = BY_NAME.get(zhOnly ? name.slice(3) : name);
  if (!v) throw new Error(`unknown extraction feature "${name}": the model was fitted for other features (run \`npx tsx bench/fit-extract.ts\`)`);
  return zhOnly ? (f, zh) => (zh ? v(f, zh) : 0) : v;
}

const compiled = new WeakMap<string[], Compiled[]>();

/** The model's input for one candidate: the named features, in order (default: every feature). */
export function featureVector(f: CandidateFeatures, lang: 'en' | 'zh', names: string[] = FEATURE_NAMES): number[] {
  let fns = compiled.get(names);
  if (!fns) compiled.set(names, (fns = names.map(compileOne)));
  const zh = lang === 'zh';
  return fns.map((fn) => fn(f, zh));
}

/** Refuses a feature list naming something the extractor does not compute. */
export function checkFeatureNames(names: string[]): void {
  for (const n of names) compileOne(n);
}
