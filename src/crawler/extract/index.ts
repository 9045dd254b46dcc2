export { extractPairs, imageUrlOf, isDecorative, type CaptionSelectors, type ExtractOptions, type ExtractResult, type ExtractedPair } from './extract.js';
export { decodeHtml, declaredCharset, type Decoded } from './decode.js';
export { cleanCaption, isCreditOnly, collapse } from './caption-text.js';
export { resolveUrl, normaliseImageUrl, normalisePageUrl } from './urls.js';
