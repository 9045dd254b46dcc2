// scratch (issue 34 round 6): fit part only: com/inc pairs graded par (par's false positives) and par pairs missed
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer, readPairsFile, splitHoldout } from '../src/lib/comparability/index.js';
import fs from 'node:fs';
const { config } = loadConfig({ env: {} });
const rows = await readPairsFile('/work/shared/data/comparability/pairs.tsv', { requireLevel: true });
const judged = new Set(fs.readFileSync('/work/shared/data/comparability/judged-com.tsv', 'utf8').split('\n').slice(1).map((l) => l.split('\t')).filter((c) => c.length > 2).map((c) => c.join('\t')));
const { fit } = splitHoldout(rows, 1 / 3, 15);
const sc = createScorer(config, {});
addCaptionsToIdf(sc, rows);
let tp = 0, fp = 0;
for (const r of fit) {
  const s = sc.score(r.en, r.zh);
  if (s.level === 'par') { if (r.level === 'par') tp++; else if (r.level !== 'pse') { fp++; console.log(r.level, r.corpus, s.cPar.toFixed(3), s.fl.toFixed(2), 'S', s.explain.chance.s, r.en, '|', r.zh); } }
}
console.log('tp', tp, 'fp', fp);
