export { extractPairs, detectPageLang, type ExtractOptions, type ExtractResult, type ExtractedPair, type ExplainedCandidate } from './extract.js';
export { imageUrlOf, isDecorative } from './images.js';
export { type CaptionSelectors } from './candidates.js';
export { RULES, ACCEPT, type Rule } from './rules.js';
export { decodeHtml, declaredCharset, type Decoded } from './decode.js';
export { cleanCaption, isCreditOnly, collapse } from './caption-text.js';
export { resolveUrl, normaliseImageUrl, normalisePageUrl } from './urls.js';
