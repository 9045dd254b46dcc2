// Issue 35 round 8: the frame check before RANSAC for images re-matched by full sketch (VerifyParams.poseCheck).
// Each query of the copies/scene sets against its true target(s) and against --unrelated other targets of its set,
// paired by full sketch as lsh.recollideVoters' re-match does (every keypoint pair within lsh.recollideHamming), then
// verified without and with each --checks setting (rotation degrees / scale octaves): true pairs whose verdict
// (score > 0) changes, unrelated pairs refused early, verification CPU. Halves (dev/held) by the first bit of the
// SHA-1 of `set:query`, as dev/recall-at-scale.ts. ONE JSON line on stdout.
// Usage: npx tsx dev/pose-check.ts [--half dev|held|all] [--checks 45/1,30/1] [--unrelated 4] [--flickr 60]
import os from 'node:os';
import { createHash } from 'node:crypto';
import { LshIndex, prepare, lshParams, searchParams, sketchCollisions, targetSketches, verifyCandidate } from '../src/lib/image-index/index.js';
import { p1Targets, scaleScript } from '../bench/search-lib.js';

const { repoRoot, shared, opt, config, log } = scaleScript(import.meta.url);
const HALF = opt('half', 'dev');
const CHECKS = opt('checks', '45/1,30/1,45/0.5,45/9').split(',').map((s) => ({ name: s, rotation: Number(s.split('/')[0]), octaves: Number(s.split('/')[1]) }));
const UNRELATED = Number(opt('unrelated', '4'));
const FLICKR = Number(opt('flickr', '60'));
const inHalf = (id: string) => HALF === 'all' || (createHash('sha1').update(id).digest()[0]! < 128) === (HALF === 'dev');
const { sets, feats, real } = await p1Targets(repoRoot, shared, config, () => undefined);
const index = new LshIndex(lshParams(config, 1000));
const p = searchParams(config);
const cpu = (f: () => void) => {
  const c0 = process.cpuUsage();
  f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};
type Tally = { changed: string[]; refused: number; unrelatedVerified: number; ms: number };
const tally: Record<string, Tally> = Object.fromEntries(['off', ...CHECKS.map((c) => c.name)].map((k) => [k, { changed: [], refused: 0, unrelatedVerified: 0, ms: 0 }]));
let truePairs = 0, trueVerified = 0, unrelatedPairs = 0;
let rnd = 1;
const next = () => ((rnd = (Math.imul(rnd, 1103515245) + 12345) >>> 0) / 2 ** 32);
for (const s of sets) {
  let ids = [...s.truth.keys()].filter((id) => inHalf(`${s.name}:${id}`));
  if (s.name === 'mining-flickr8k') ids = ids.slice(0, FLICKR);
  const targets = real.filter((r) => r.key.startsWith(`${s.name}:`));
  for (const id of ids) {
    const q = prepare(feats.get(s.name)!.get(id)!);
    const qs = index.sketches(q.vecs, q.f.count);
    const truth = s.truth.get(id)!;
    const pairs: { t: typeof targets[number]; rel: boolean }[] = targets.filter((t) => truth.has(t.key.slice(s.name.length + 1))).map((t) => ({ t, rel: true }));
    const others = targets.filter((t) => !truth.has(t.key.slice(s.name.length + 1)));
    for (let k = 0; k < UNRELATED && others.length; k++) pairs.push({ t: others[Math.floor(next() * others.length)]!, rel: false });
    for (const { t, rel } of pairs) {
      const c = sketchCollisions(qs, q.f.count, targetSketches(index, t.p), p.recollideHamming);
      let base = verifyCandidate(q, t.p, c, p);
      tally.off!.ms += cpu(() => (base = verifyCandidate(q, t.p, c, p)));
      if (rel) (truePairs++, (trueVerified += Number(base.score > 0)));
      else (unrelatedPairs++, (tally.off!.unrelatedVerified += Number(base.score > 0)));
      for (const ch of CHECKS) {
        let v = base;
        const ms = cpu(() => (v = verifyCandidate(q, t.p, c, { ...p, poseCheck: ch })));
        const T = tally[ch.name]!;
        T.ms += ms;
        if (v.reason?.startsWith('too few matches agree')) T.refused++;
        if (rel && (v.score > 0) !== (base.score > 0)) T.changed.push(`${s.name}:${id}→${t.key} ${base.score.toFixed(2)}/${base.inliers}`);
        if (!rel) T.unrelatedVerified += Number(v.score > 0);
      }
    }
  }
  log(`${s.name}: ${ids.length} queries`);
}
for (const [k, t] of Object.entries(tally)) log(`${k.padEnd(8)} true changed ${t.changed.length} ${t.changed.join(' ')} | refused ${t.refused} | unrelated verified ${t.unrelatedVerified}/${unrelatedPairs} | verify cpu ${(t.ms / 1000).toFixed(1)} s`);
process.stdout.write(JSON.stringify({ bench: 'pose-check', date: new Date().toISOString(), machine: { nproc: os.cpus().length, loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10) }, half: HALF, truePairs, trueVerified, unrelatedPairs, recollideHamming: p.recollideHamming, checks: Object.fromEntries(Object.entries(tally).map(([k, t]) => [k, { ...t, ms: Math.round(t.ms) }])) }) + '\n');
