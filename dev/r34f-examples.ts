import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer, readPairsFile, splitHoldout } from '../src/lib/comparability/index.js';
const { config } = loadConfig({ env: {} });
const rows = await readPairsFile('/work/shared/data/comparability/pairs.tsv', { requireLevel: true });
const on = createScorer(config, {}); addCaptionsToIdf(on, rows);
const off = createScorer(config, { measure: { specificity: 0 } }); addCaptionsToIdf(off, rows);
for (const [en, zh] of [['A white dog plays in the grass.', '有一个人在玩滑板。'], ['The white dog has a ball in its mouth.', '嘴里叼着球的狗。'], ['People walking in the water along the beach.', '有一个女人望向远处。']]) {
  const a = on.score(en, zh), b = off.score(en, zh);
  console.log(en, zh, 'off', b.c.toFixed(3), b.level, 'on', a.c.toFixed(3), a.level, 'spec', a.explain.margin.specificity, a.explain.matches.map((m) => `${m.en}~${m.zh}`).join(','));
}
// which fit-part com/inc pairs change level
const fit = splitHoldout(rows as any, 1 / 3, 15).fit.filter((r: any) => (r.level === 'com' || r.level === 'inc') && r.corpus === 'flickr8k-cn');
for (const r of fit as any[]) { const a = on.score(r.en, r.zh), b = off.score(r.en, r.zh); if (a.level !== b.level) console.log(r.level, b.level, '->', a.level, a.c.toFixed(3), a.explain.margin.specificity, r.en, r.zh, a.explain.matches.map((m) => `${m.en}~${m.zh}`).join(',')); }
