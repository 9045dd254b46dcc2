// The export stage's public interface (run it through the registry, src/stages/index.ts: loadStage('export')): the
// corpus formats, and the candidates export (`capbridge export --candidates`).
export { exportPairs, collapseGroup, MAX_SKIPPED_LISTED, type ExportOptions, type ExportOutput, type ExportSummary, type SkippedRecord } from './export.js';
export { EXPORT_FORMATS, createWriter, type CorpusWriter, type ExportFormat } from './writers/index.js';
export { exportCandidatesJsonl, type CandidatesExportSummary } from './candidates.js';
export { EXPORT_FIELDS, PROVENANCE_FIELDS, type ExportRecord } from './record.js';
