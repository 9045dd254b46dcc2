// scratch (issue 34 round 6): fit part, flickr8k-cn: the inc pairs with the highest C and the com pairs with the lowest
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer, readPairsFile, splitHoldout } from '../src/lib/comparability/index.js';
const { config } = loadConfig({ env: {} });
const rows = await readPairsFile('/work/shared/data/comparability/pairs.tsv', { requireLevel: true });
const { fit } = splitHoldout(rows, 1 / 3, 15);
const sc = createScorer(config, {});
addCaptionsToIdf(sc, rows);
const corpus = process.env.CORPUS ?? 'flickr8k-cn';
const res = fit.filter((r) => r.corpus === corpus && (r.level === 'com' || r.level === 'inc')).map((r) => ({ r, s: sc.score(r.en, r.zh) }));
const fmt = (x: (typeof res)[number]) => `${x.r.level} C ${x.s.c.toFixed(3)} ${x.s.level} S ${x.s.explain.chance.sStrong} spec ${x.s.explain.margin.specificity} scale ${x.s.explain.margin.scale} | ${x.r.en} | ${x.r.zh} | ${x.s.explain.matches.map((m) => `${m.en}~${m.zh}(${m.weight})`).join(',')}`;
console.log('--- inc, highest C');
for (const x of res.filter((x) => x.r.level === 'inc').sort((a, b) => b.s.c - a.s.c).slice(0, 15)) console.log(fmt(x));
console.log('--- com, lowest C');
for (const x of res.filter((x) => x.r.level === 'com').sort((a, b) => a.s.c - b.s.c).slice(0, 25)) console.log(fmt(x));
