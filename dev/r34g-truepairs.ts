// scratch (issue 34 round 6): mining-flickr8k's 180 true caption pairs scored in memory (IDF and null-margin sample from
// the set's captions), com or better at each TYPICAL (specificityTypical), and the pairs near ϑ_com.
import path from 'node:path';
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer, LEVEL_RANK } from '../src/lib/comparability/index.js';
import { readTsvObjects } from '../src/util/tsv.js';
const { config } = loadConfig({ env: {} });
const set = '/work/shared/data/mining-flickr8k';
const src = await readTsvObjects(path.join(set, 'source.tsv'), ['id', 'caption']);
const tgt = await readTsvObjects(path.join(set, 'target.tsv'), ['id', 'caption']);
const truth = await readTsvObjects(path.join(set, 'truth.tsv'), ['source_id', 'target_id']);
const byId = new Map([...src, ...tgt].map((r) => [r.id!, r.caption!]));
for (const t of (process.env.TYPICAL ?? '0.67').split(',')) {
  const sc = createScorer(config, { measure: { specificityTypical: Number(t) } });
  addCaptionsToIdf(sc, [...src.map((r) => ({ en: r.caption })), ...tgt.map((r) => ({ zh: r.caption }))]);
  const res = truth.map((r) => sc.score(byId.get(r.source_id!)!, byId.get(r.target_id!)!));
  const ok = res.filter((r) => LEVEL_RANK[r.level] >= LEVEL_RANK.com).length;
  const near = res.filter((r) => r.c >= config.comparability.thresholds.com * 0.85 && r.c < config.comparability.thresholds.com).length;
  console.log(`typical ${t}: com or better ${ok}/180 (${(ok / 180).toFixed(3)}), just under ϑ_com (within 15 %) ${near}`);
}
