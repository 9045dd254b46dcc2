// scratch (issue 34 round 6): the specificity factor's typical value the scorer measures from its reference sample, on
// the open labelled file as bench:comparability builds its scorer (IDF and sample from every row, in file order) and on
// mining-flickr8k's captions in memory; with its CPU.
import path from 'node:path';
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer, readPairsFile } from '../src/lib/comparability/index.js';
import { readTsvObjects } from '../src/util/tsv.js';
const { config } = loadConfig({ env: {} });
const rows = await readPairsFile('/work/shared/data/comparability/pairs.tsv', { requireLevel: true });
const show = (name: string, sc: any) => {
  const t0 = process.cpuUsage();
  const s = sc.score('A dog runs on the grass.', '草地上奔跑的狗。');
  const cpu = process.cpuUsage(t0);
  console.log(name, 'typical', (sc as any).specificityTypical?.() ?? 'n/a', 'explain', JSON.stringify(s.explain.margin), 'first score CPU ms', ((cpu.user + cpu.system) / 1000).toFixed(0));
};
{ const sc = createScorer(config, {}) as any; addCaptionsToIdf(sc, rows); show('labelled (bench order)', sc); }
const set = '/work/shared/data/mining-flickr8k';
const src = await readTsvObjects(path.join(set, 'source.tsv'), ['id', 'caption']);
const tgt = await readTsvObjects(path.join(set, 'target.tsv'), ['id', 'caption']);
{ const sc = createScorer(config, {}) as any; addCaptionsToIdf(sc, [...src.map((r) => ({ en: r.caption })), ...tgt.map((r) => ({ zh: r.caption }))]); show('mining (memory)', sc); }
