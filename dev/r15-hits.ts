// Issue 35 round 15: every query's hits and CPU on a bench:index --cli bank (dev/r9-cli.ts), one line a query, so that
// two trees whose index layouts differ (dev/r14-ab.ts needs one layout) can be compared by a diff of their hits:
// retrieval-smvs's sources and mining-flickr8k's sources without counterpart, each searched twice (the second timed).
// Usage: npx tsx dev/r15-hits.ts --dir /work/tmp-35/bank11 > hits.jsonl
import path from 'node:path';
import { Bank } from '../src/bank/index.js';
import { search, searchParams, syncIndex } from '../src/lib/image-index/index.js';
import type { Features } from '../src/lib/sift/index.js';
import { plainFeatures, readSet, scaleScript } from '../bench/search-lib.js';

const { shared, opt, config, log } = scaleScript(import.meta.url);
const bank = await Bank.open(opt('dir', '/work/tmp-35/bank11'));
const { handle } = await syncIndex(bank, config);
const p = searchParams(config);
const featuresOf = (file: string): Promise<Features> => plainFeatures(file, config);
const smvs = readSet(path.join(shared, 'retrieval-smvs'));
const f8k = readSet(path.join(shared, 'mining-flickr8k'));
const queries: { id: string; f: Features }[] = [];
for (const s of smvs.sources) if (smvs.truth.has(s.id)) queries.push({ id: `smvs:${s.id}`, f: await featuresOf(path.join(smvs.dir, s.image)) });
for (const s of f8k.sources) if (!f8k.truth.has(s.id)) queries.push({ id: `null:${s.id}`, f: await featuresOf(path.join(f8k.dir, s.image)) });
log(`${queries.length} queries`);
for (const q of queries) {
  await search(handle.index, (s) => handle.load(s), q.f, p);
  const c0 = process.cpuUsage();
  const r = await search(handle.index, (s) => handle.load(s), q.f, p);
  const c = process.cpuUsage(c0);
  process.stdout.write(JSON.stringify({ id: q.id, cpuMs: Math.round((c.user + c.system) / 100) / 10, voteMs: Math.round(r.timings.voteMs * 10) / 10, hits: r.hits.map((h) => [h.slot, h.score, h.inliers, h.votes]) }) + '\n');
}
process.exit(0);
