import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer, readPairsFile } from '../src/lib/comparability/index.js';
const { config } = loadConfig({ env: {} });
const rows = await readPairsFile('/work/shared/data/comparability/pairs.tsv', { requireLevel: true });
const sc = createScorer(config, {}); addCaptionsToIdf(sc, rows);
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
let t = cpu(); sc.score('A dog runs.', '狗在跑。'); // m, and the typical (chance links)
console.log('first score (m + chance links + lexicon warm-up) ms', (cpu() - t).toFixed(0));
const nm = sc.nullMargin as any;
for (let i = 0; i < 3; i++) { nm.chance = null; t = cpu(); nm.chanceLinks(); console.log('chanceLinks again ms', (cpu() - t).toFixed(0)); }
