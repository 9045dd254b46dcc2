// scratch (issue 34 round 6): mining-flickr8k's captions and true pairs, for the round's scratch scripts
import path from 'node:path';
import { readTsvObjects } from '../src/util/tsv.js';

export const MINING_SET = '/work/shared/data/mining-flickr8k';

export async function miningSet() {
  const src = await readTsvObjects(path.join(MINING_SET, 'source.tsv'), ['id', 'caption']);
  const tgt = await readTsvObjects(path.join(MINING_SET, 'target.tsv'), ['id', 'caption']);
  const truth = await readTsvObjects(path.join(MINING_SET, 'truth.tsv'), ['source_id', 'target_id']);
  const byId = new Map([...src, ...tgt].map((r) => [r.id!, r.caption!]));
  /** Every caption, for a scorer's IDF table and reference sample. */
  const captions = [...src.map((r) => ({ en: r.caption })), ...tgt.map((r) => ({ zh: r.caption }))];
  /** The true pairs' captions. */
  const pairs = truth.map((r) => ({ source: r.source_id!, en: byId.get(r.source_id!)!, zh: byId.get(r.target_id!)! }));
  return { src, tgt, truth, byId, captions, pairs };
}
