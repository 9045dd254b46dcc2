export { extractPairs, detectPageLang, pageCandidates, decide, shippedModel, photoIdentity, type ExtractOptions, type ExtractResult, type ExtractedPair, type ExplainedCandidate, type PageCandidates, type CandidateRow } from './extract.js';
export { fitLogistic, predict, type LinearModel } from './model.js';
export { BASE_FEATURES, FEATURE_NAMES, againstFeatures, featureVector } from './vector.js';
export { imageUrlOf, isDecorative } from './images.js';
export { type CaptionSelectors } from './candidates.js';
export { decodeHtml, declaredCharset, type Decoded } from './decode.js';
export { cleanCaption, isCreditOnly, collapse } from './caption-text.js';
export { resolveUrl, normaliseImageUrl, normalisePageUrl } from './urls.js';
