// The captions library's public interface: the rest of the code imports this file only.
export { type CreditLang, collapseSpace, isCreditOrDateline, splitCredit } from './credit.js';
export { checkCaption } from './language.js';
