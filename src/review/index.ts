// The review layer: a local web page and JSON API for linguists to judge mined pairs.
export { createReviewServer, type ReviewServerOptions } from './server.js';
export { isLoopbackAddress, isLoopbackHost } from './auth.js';
export { labelledPairsFromReviews, labelOf, type ReviewLabel } from './labelled.js';
export { highlight, parseExplain, type Explain } from './highlight.js';
