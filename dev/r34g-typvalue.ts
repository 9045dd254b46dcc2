// scratch (issue 34 round 6): the specificity factor's typical value the scorer measures from its reference sample, on
// the open labelled file as bench:comparability builds its scorer (IDF and sample from every row, in file order) and on
// mining-flickr8k's captions in memory; with its CPU.
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer, readPairsFile } from '../src/lib/comparability/index.js';
import { miningSet } from './r34g-mining.js';
const { config } = loadConfig({ env: {} });
const rows = await readPairsFile('/work/shared/data/comparability/pairs.tsv', { requireLevel: true });
const show = (name: string, sc: any) => {
  const t0 = process.cpuUsage();
  const s = sc.score('A dog runs on the grass.', '草地上奔跑的狗。');
  const cpu = process.cpuUsage(t0);
  console.log(name, 'typical', (sc as any).specificityTypical?.() ?? 'n/a', 'explain', JSON.stringify(s.explain.margin), 'first score CPU ms', ((cpu.user + cpu.system) / 1000).toFixed(0));
};
{ const sc = createScorer(config, {}) as any; addCaptionsToIdf(sc, rows); show('labelled (bench order)', sc); }
const { captions } = await miningSet();
{ const sc = createScorer(config, {}) as any; addCaptionsToIdf(sc, captions); show('mining (memory)', sc); }
