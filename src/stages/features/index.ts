// The features stage's public interface (run it through the registry, src/stages/index.ts: loadStage('features')).
export { runFeatures, computeMissingFeatures, type FeaturesSummary, type FeaturesOptions, type SiftStageOptions, type SiftStageSummary } from './stage.js';
