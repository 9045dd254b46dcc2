// Issue 33 round 6, a lead measured and not built: does intra-query burstiness (Jegou et al., CVPR 2009) tell the
// promise of repetitive structure without counterpart (slatted walls, window grids) from a hard same-scene photo's?
// For each source of the given cached featured banks (bench/.cache/banks/NAME, as bench:search and bench:gate-null
// leave them): its plain direct pass (votePass), its promise, and the same promise with each query keypoint counted
// 1/m (m: the query's keypoints sharing its first bucket within voteHamming of its sketch), over the top three images'
// collisions. Usage: npx tsx dev/burst-promise.ts BANKDIR[:SETDIR] ...  (prints one line per source, TSV)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Bank, FeaturesRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { prepare, searchParams, syncIndex, votePass } from '../src/lib/image-index/index.js';
import { shortlistPromise } from '../src/stages/match/index.js';

const { config } = loadConfig({});
const pop = (x: number) => {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
};

async function main() {
  for (const arg of process.argv.slice(2)) {
    const [bankDir, setDir] = arg.split(':');
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'burst-'));
    fs.cpSync(bankDir!, tmp, { recursive: true });
    const bank = await Bank.open(tmp);
    try {
      const { handle } = await syncIndex(bank, config);
      const p = searchParams(config);
      const ids = fs.readFileSync(path.join(setDir!, 'source.tsv'), 'utf8').split('\n').slice(1).filter(Boolean).map((l) => l.split('\t')[0]!);
      for (const ext of ids) {
        const it = await bank.items.get('source', ext);
        const f = it && (await bank.repo(FeaturesRepo).get(it.imageSha256));
        if (!f) continue;
        const v = prepare(f);
        const voted = votePass(handle.index, v, p, false);
        const promise = shortlistPromise({ slots: voted.shortlist, votes: voted.votes, keypoints: voted.keypoints, copy: voted.copy });
        const n = voted.keypoints;
        const per = Math.max(1, handle.index.params.probes);
        const { probes } = handle.index.probe(v.vecs, n);
        const s = voted.sketches;
        const m = new Float64Array(n).fill(0);
        for (let i = 0; i < n; i++)
          for (let j = 0; j < n; j++)
            if (probes[i * per] === probes[j * per] && pop(s[2 * i]! ^ s[2 * j]!) + pop(s[2 * i + 1]! ^ s[2 * j + 1]!) <= p.voteHamming) m[i]!++;
        const order = voted.votes.map((x, i) => [x, i] as const).sort((a, b) => b[0] - a[0]).slice(0, 3);
        let burst = 0;
        for (const [x, i] of order) {
          const qs = new Set<number>();
          const c = voted.coll[i]!;
          for (let k = 0; k < c.length; k += 2) qs.add(c[k]!);
          const w = [...qs].reduce((a, q) => a + 1 / m[q]!, 0);
          burst += qs.size ? ((x * n) / voted.copy) * (w / qs.size) : 0;
        }
        const selfShare = [...m].filter((x) => x > 1).length / Math.max(1, n);
        process.stdout.write(`${path.basename(setDir!)}\t${ext}\t${promise.toFixed(2)}\t${burst.toFixed(2)}\t${selfShare.toFixed(3)}\t${n}\n`);
      }
    } finally {
      await bank.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
}
main().catch((e) => {
  process.stderr.write(String((e as Error).stack) + '\n');
  process.exit(1);
});
