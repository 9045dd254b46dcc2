// `capbridge export --format jsonl --candidates --out FILE`: one JSON line per stored candidate (source then rank),
// with both external ids, the image verification figures, captions and provenance. Atomic: the file appears whole.
import type { Bank } from '../../bank/index.js';
import { CandidatesRepo } from '../../bank/index.js';
import { AtomicWriter } from '../../util/atomic.js';

export interface CandidatesExportSummary {
  out: string;
  candidates: number;
  sources: number;
}

export async function exportCandidatesJsonl(bank: Bank, out: string): Promise<CandidatesExportSummary> {
  const w = new AtomicWriter(out);
  let n = 0;
  const sources = new Set<number>();
  try {
    for await (const c of bank.repo(CandidatesRepo).iterateJoined()) {
      n++;
      sources.add(c.sourceItemId);
      w.write(
        JSON.stringify({
          source_id: c.sourceExtId,
          target_id: c.targetExtId,
          rank: c.rank,
          image_score: c.imageScore,
          model: c.model,
          verified_by: c.verifiedBy,
          matches: c.matches,
          inliers: c.inliers,
          mirrored: c.mirrored,
          matched_at: c.matchedAt,
          source_caption: c.sourceCaption,
          target_caption: c.targetCaption,
          source_provenance: c.source,
          target_provenance: c.target,
        }) + '\n',
      );
    }
    w.commit();
  } catch (err) {
    w.abort();
    throw err;
  }
  return { out, candidates: n, sources: sources.size };
}
