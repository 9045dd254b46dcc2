// Issue 35 round 14: the cost of recording a vote scan (VoteOptions.record) on the direct pass of retrieval-smvs's
// sources among a bench:index --cli bank's targets: vote pass CPU with and without, query after query in turn, and the
// collisions recorded. ONE JSON line. Usage: npx tsx dev/r14-record.ts --dir /work/tmp-35/bank11
import fs from 'node:fs';
import path from 'node:path';
import { Bank } from '../src/bank/index.js';
import { prepare, searchParams, syncIndex, votePass } from '../src/lib/image-index/index.js';
import { decodeGrey, detectAndDescribe, siftParams } from '../src/lib/sift/index.js';
import { readSet, scaleScript } from '../bench/search-lib.js';

const { shared, opt, config, log } = scaleScript(import.meta.url);
const bank = await Bank.open(opt('dir', '/work/tmp-35/bank11'));
const { handle } = await syncIndex(bank, config);
const p = searchParams(config);
const smvs = readSet(path.join(shared, 'retrieval-smvs'));
const cpu = { off: [] as number[], on: [] as number[], resumed: [] as number[], full: [] as number[] };
const recorded: number[] = [];
for (const [i, s] of smvs.sources.entries()) {
  const c = config.sift;
  const g = await decodeGrey(fs.readFileSync(path.join(smvs.dir, s.image)), { maxSide: c.maxSide, maxPixels: c.maxPixels, minSide: c.minSide });
  const q = prepare(detectAndDescribe(g.grey, g.width, g.height, siftParams(c)));
  for (let k = 0; k < 2; k++) {
    const on = (i + k) % 2 === 1;
    const t0 = process.cpuUsage();
    const v = votePass(handle.index, q, p, false, { record: on });
    const t = process.cpuUsage(t0);
    cpu[on ? 'on' : 'off'].push((t.user + t.system) / 1000);
    if (on) {
      recorded.push(v.record!.e.length);
      const r0 = process.cpuUsage();
      votePass(handle.index, q, p, false, { probes: p.reprobe, resume: v.record });
      const r = process.cpuUsage(r0);
      cpu.resumed.push((r.user + r.system) / 1000);
      const f0 = process.cpuUsage();
      votePass(handle.index, q, p, false, { probes: p.reprobe });
      const f = process.cpuUsage(f0);
      cpu.full.push((f.user + f.system) / 1000);
    }
  }
}
const sum = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0));
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
log('done');
process.stdout.write(JSON.stringify({ bench: 'r14-record', date: new Date().toISOString(), queries: smvs.sources.length, voteCpuMs: { off: sum(cpu.off), on: sum(cpu.on), ratio: Math.round((sum(cpu.on) / sum(cpu.off)) * 1000) / 1000 }, reprobeVoteCpuMs: { full: sum(cpu.full), resumed: sum(cpu.resumed), ratio: Math.round((sum(cpu.resumed) / sum(cpu.full)) * 1000) / 1000 }, recordedCollisions: { median: med(recorded), max: Math.max(...recorded) } }) + '\n');
