// Caption extraction cost per page, for profiling and for checking that a speed change changes nothing.
//   npx tsx dev/extract-profile.ts --dump > out.jsonl    every page's candidate rows (anchor, source, text, feature
//                                                         vector, all features) and pairs, a JSON line a page
//   npx tsx dev/extract-profile.ts --only=ID --loop=N     the page(s) whose id contains ID, prepared and decided N
//                                                         times (run under `node --cpu-prof --import tsx`), then the
//                                                         mean CPU ms of each
// The sets are bench:extract's (CAPBRIDGE_SHARED_DATA picks another shared data folder).
import { createHash } from 'node:crypto';
import { decide, pageCandidates, predict, shippedModel } from '../src/lib/extraction/index.js';
import { loadAll } from '../bench/extract-data.js';

const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7);
const loop = Number(process.argv.find((a) => a.startsWith('--loop='))?.slice(7) ?? 0);
const dump = process.argv.includes('--dump');
const shipped = shippedModel();

function run(buf: Buffer, url: string) {
  const pc = pageCandidates(buf, { url });
  return { pc, r: decide(pc, (row) => predict(shipped, row.x), shipped.threshold) };
}

for (const page of loadAll(only)) {
  if (dump) {
    const { pc, r } = run(page.buf, page.t.url);
    const rows = pc.rows.map((row) => [row.anchor, row.cand.source, row.cand.text, row.x, row.f]);
    const digest = createHash('sha256').update(JSON.stringify([pc.lang, pc.anchors.map((a) => [a.url, a.kind]), rows])).digest('hex').slice(0, 16);
    process.stdout.write(JSON.stringify({ id: page.t.id, set: page.set, rows: rows.length, digest, pairs: r.pairs }) + '\n');
    continue;
  }
  run(page.buf, page.t.url); // warm-up
  const c0 = process.cpuUsage();
  for (let i = 0; i < Math.max(1, loop); i++) run(page.buf, page.t.url);
  const c = process.cpuUsage(c0);
  process.stdout.write(`${page.t.id}\t${page.buf.length}\t${((c.user + c.system) / 1000 / Math.max(1, loop)).toFixed(1)} ms\n`);
}
