// Scratch study (issue 34, round 4): the null margin's d through the reference index (reference.ts) against the full
// C-measure on every caption of the open labelled file, and what each costs. `N=2807 npx tsx dev/r34d-prune-study.ts`;
// REP=k scores every text k more times under new keys (the index's rows warm), NOFULL=1 skips the full computation.
import path from 'node:path';
import { loadConfig } from '../src/config/load.js';
import { readPairsFile, createScorer, addCaptionsToIdf } from '../src/lib/comparability/index.js';

const { config } = loadConfig({ env: {} });
const rows = await readPairsFile(path.resolve('..', 'shared', 'data', 'comparability', 'pairs.tsv'), { requireLevel: true });
const scorer = createScorer(config);
addCaptionsToIdf(scorer, rows);
const n = Number(process.env.N ?? 600);
const texts = rows.slice(0, n).flatMap((r) => [['en', scorer.analyzer.english(r.en)], ['zh', scorer.analyzer.chinese(r.zh)]] as const);
const cpu = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};
let t = cpu();
const indexed = texts.map(([lang, a], k) => scorer.nullMargin.chanceLevel(lang, a, `k${k}`));
const indexedCold = cpu() - t;
t = cpu();
const rep = Number(process.env.REP ?? 1);
for (let r = 0; r < rep; r++) texts.forEach(([lang, a], k) => scorer.nullMargin.chanceLevel(lang, a, `again${r}:${k}`));
const indexedWarm = (cpu() - t) / rep;
t = cpu();
const full = process.env.NOFULL ? indexed : texts.map(([lang, a]) => scorer.nullMargin.chanceLevelFull(lang, a));
const fullSeconds = cpu() - t;
const differ = indexed.filter((d, k) => d !== full[k]).length;
console.log(JSON.stringify({ texts: texts.length, differ, indexedColdSeconds: indexedCold, indexedWarmSeconds: indexedWarm, fullSeconds }));
