// scratch (issue 34 round 6): mining-flickr8k true caption pairs whose level differs with the specificity factor on/off
import path from 'node:path';
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer } from '../src/lib/comparability/index.js';
import { readTsvObjects } from '../src/util/tsv.js';
const { config } = loadConfig({ env: {} });
const set = '/work/shared/data/mining-flickr8k';
const src = await readTsvObjects(path.join(set, 'source.tsv'), ['id', 'caption']);
const tgt = await readTsvObjects(path.join(set, 'target.tsv'), ['id', 'caption']);
const truth = await readTsvObjects(path.join(set, 'truth.tsv'), ['source_id', 'target_id']);
const byId = new Map([...src, ...tgt].map((r) => [r.id!, r.caption!]));
const mk = (measure: any) => { const sc = createScorer(config, { measure }); addCaptionsToIdf(sc, [...src.map((r) => ({ en: r.caption })), ...tgt.map((r) => ({ zh: r.caption }))]); return sc; };
const on = mk({}), off = mk({ specificity: 0 });
let n = 0;
for (const r of truth) {
  const en = byId.get(r.source_id!)!, zh = byId.get(r.target_id!)!;
  const a = on.score(en, zh), b = off.score(en, zh);
  if (a.level !== b.level || (a.c < config.comparability.thresholds.com && a.c > 0.09)) console.log(r.source_id, b.level, '->', a.level, b.c.toFixed(3), a.c.toFixed(3), 'spec', a.explain.margin.specificity, 'scale', a.explain.margin.scale, 'S', a.explain.chance.sStrong, en, '|', zh, a.explain.matches.map((m) => `${m.en}~${m.zh}(${m.weight})`).join(','));
  if (a.level === 'com' || a.level === 'par') n++;
}
console.log('on', n);
