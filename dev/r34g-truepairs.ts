// scratch (issue 34 round 6): mining-flickr8k's 180 true caption pairs scored in memory (IDF and null-margin sample from
// the set's captions), com or better at each TYPICAL (specificityTypical), and the pairs near ϑ_com.
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer, LEVEL_RANK } from '../src/lib/comparability/index.js';
import { miningSet } from './r34g-mining.js';
const { config } = loadConfig({ env: {} });
const { truth, byId, captions } = await miningSet();
for (const t of (process.env.TYPICAL ?? '0.67').split(',')) {
  const sc = createScorer(config, { measure: { specificityTypical: Number(t) } });
  addCaptionsToIdf(sc, captions);
  const res = truth.map((r) => sc.score(byId.get(r.source_id!)!, byId.get(r.target_id!)!));
  const ok = res.filter((r) => LEVEL_RANK[r.level] >= LEVEL_RANK.com).length;
  const near = res.filter((r) => r.c >= config.comparability.thresholds.com * 0.85 && r.c < config.comparability.thresholds.com).length;
  console.log(`typical ${t}: com or better ${ok}/180 (${(ok / 180).toFixed(3)}), just under ϑ_com (within 15 %) ${near}`);
}
