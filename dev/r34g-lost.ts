// scratch (issue 34 round 6): mining-flickr8k true caption pairs whose level differs with the specificity factor on/off
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer } from '../src/lib/comparability/index.js';
import { miningSet } from './r34g-mining.js';
const { config } = loadConfig({ env: {} });
const { truth, byId, captions } = await miningSet();
const mk = (measure: any) => { const sc = createScorer(config, { measure }); addCaptionsToIdf(sc, captions); return sc; };
const on = mk({}), off = mk({ specificity: 0 });
let n = 0;
for (const r of truth) {
  const en = byId.get(r.source_id!)!, zh = byId.get(r.target_id!)!;
  const a = on.score(en, zh), b = off.score(en, zh);
  if (a.level !== b.level || (a.c < config.comparability.thresholds.com && a.c > 0.09)) console.log(r.source_id, b.level, '->', a.level, b.c.toFixed(3), a.c.toFixed(3), 'spec', a.explain.margin.specificity, 'scale', a.explain.margin.scale, 'S', a.explain.chance.sStrong, en, '|', zh, a.explain.matches.map((m) => `${m.en}~${m.zh}(${m.weight})`).join(','));
  if (a.level === 'com' || a.level === 'par') n++;
}
console.log('on', n);
