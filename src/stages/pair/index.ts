// The pair stage's public interface (run it through the registry, src/stages/index.ts: loadStage('pair')): the run,
// and the decision rules the benchmarks and `capbridge eval` read.
export { runPairing, decide, failedDecision, rulesOf, emptyPairingSummary, type DecisionRules, type PairingOptions, type PairingSummary } from './pairing.js';
export { chooseSentencePairs, sentenceMarginOf, bestAlternative, type SentenceChoice, type SentenceChoiceRules } from './sentence-choice.js';
