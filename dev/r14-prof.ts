// Issue 35 round 14: retrieval-smvs's sources searched twice among a bench:index --cli bank's targets (run it under
// node --cpu-prof to see where a search that finds its match spends its CPU). Usage: node --cpu-prof --import tsx dev/r14-prof.ts --dir DIR
import fs from 'node:fs';
import path from 'node:path';
import { Bank } from '../src/bank/index.js';
import { search, searchParams, syncIndex } from '../src/lib/image-index/index.js';
import { decodeGrey, detectAndDescribe, siftParams, type Features } from '../src/lib/sift/index.js';
import { readSet, scaleScript } from '../bench/search-lib.js';

const { shared, opt, config, log } = scaleScript(import.meta.url);
const bank = await Bank.open(opt('dir', '/work/tmp-35/bank11'));
const { handle } = await syncIndex(bank, config);
const p = searchParams(config);
const smvs = readSet(path.join(shared, 'retrieval-smvs'));
const qs: Features[] = [];
for (const s of smvs.sources) {
  const c = config.sift;
  const g = await decodeGrey(fs.readFileSync(path.join(smvs.dir, s.image)), { maxSide: c.maxSide, maxPixels: c.maxPixels, minSide: c.minSide });
  qs.push(detectAndDescribe(g.grey, g.width, g.height, siftParams(c)));
}
let confident = 0;
const t0 = process.cpuUsage();
for (let k = 0; k < 2; k++) for (const q of qs) if ((await search(handle.index, (s) => handle.load(s), q, p)).hits.some((h) => h.score >= p.confidentScore)) confident++;
const t = process.cpuUsage(t0);
log(`${qs.length * 2} searches, ${confident} confident, ${Math.round((t.user + t.system) / 1000)} ms CPU`);
