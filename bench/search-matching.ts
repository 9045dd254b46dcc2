// `npm run bench:search-matching`: which matching survives a change of viewpoint and light (issue 19). Every dev
// query of retrieval-scenes (the held-out scenes are not run) against every target, keypoints paired exhaustively
// (full sketch within Hamming 20, as the re-match does), verified under each matching variant: on same-scene pairs
// how many verify and with how many inliers; on unrelated pairs how many get a positive score; and P@1 when every
// target is ranked by its score. Prints ONE JSON line (bench/search.ts's feature cache, bench/.cache/ours).
// Flags: --set NAME (retrieval-scenes)  --variants a,b (all)
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.js';
import { LshIndex } from '../src/lib/image-index/index.js';
import { prepare, sketchCollisions, targetSketches } from '../src/lib/image-index/index.js';
import { verifyCandidate, type Prepared, type VerifyParams } from '../src/lib/image-index/index.js';
import { lshParams, searchParams } from '../src/lib/image-index/index.js';
import { benchArgs, holdoutScenes, ourFeatures, readSet, round, sharedDataDir } from './search-lib.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shared = sharedDataDir(repoRoot);
const { opt } = benchArgs();
const log = (s: string) => process.stderr.write(`[bench:search-matching] ${s}\n`);
const { config } = loadConfig({});
const base = searchParams(config);
const ep = base.epipolar!;

/** The variants: each changes the matching only (the models, thresholds and score stay). */
const VARIANTS: Record<string, (p: VerifyParams) => VerifyParams> = {
  current: (p) => p,
  unguided: (p) => ({ ...p, epipolar: { ...ep, guided: false } }),
  'ratio-0.8': (p) => ({ ...p, epipolar: { ...ep, guided: false, ratio: 0.8 } }),
  'ratio-0.95': (p) => ({ ...p, epipolar: { ...ep, guided: false, ratio: 0.95 } }),
  'region-8px': (p) => ({ ...p, epipolar: { ...ep, guided: false, regionRadius: 8 } }),
  'region-16px': (p) => ({ ...p, epipolar: { ...ep, guided: false, regionRadius: 16 } }),
  mutual: (p) => ({ ...p, epipolar: { ...ep, guided: false, mutual: true } }),
  guided: (p) => ({ ...p, epipolar: { ...ep, guided: true } }),
  'guided+mutual': (p) => ({ ...p, epipolar: { ...ep, guided: true, mutual: true } }),
};
// The state of the config file's keys is the 'current' variant; the named ones set theirs over it.
const NAMES = opt('variants', Object.keys(VARIANTS).join(',')).split(',');
for (const n of NAMES) if (!VARIANTS[n]) throw new Error(`--variants: unknown variant '${n}' (known: ${Object.keys(VARIANTS).join(', ')})`);

async function main() {
  const set = readSet(path.join(shared, opt('set', 'retrieval-scenes')));
  const feats = await ourFeatures(repoRoot, set, config, log);
  const held = holdoutScenes(set);
  const queries = set.sources.filter((s) => set.truth.get(s.id)?.size && !(set.scenes.size && held.has(set.scenes.get(s.id) ?? '')));
  const index = new LshIndex(lshParams(config, set.targets.reduce((a, t) => a + feats.get(t.id)!.count, 0)));
  const targets: Prepared[] = set.targets.map((t) => prepare(feats.get(t.id)!));
  for (const pr of targets) index.add(index.codes(pr.vecs, pr.f.count));
  index.merge();
  // The keypoint pairs of every (query, target), computed once for all variants.
  const pairs = queries.map((s) => {
    const q = prepare(feats.get(s.id)!);
    const nq = Math.min(q.f.count, 2048);
    const sk = index.probe(q.vecs, nq).sketches;
    return { id: s.id, q, cand: targets.map((_, slot) => sketchCollisions(sk, nq, targetSketches(index, targets[slot]!), 20)) };
  });
  log(`${set.name}: ${queries.length} dev queries x ${targets.length} targets`);
  const out: Record<string, unknown> = {};
  for (const name of NAMES) {
    const p = VARIANTS[name]!(base);
    const t0 = performance.now();
    let same = 0, sameVerified = 0, sameInliers = 0, sameScore = 0, unrelated = 0, unrelatedPositive = 0, unrelatedStored = 0, p1 = 0;
    for (const { id, q, cand } of pairs) {
      const rel = set.truth.get(id)!;
      let best = { score: 0, inliers: 0, right: false };
      set.targets.forEach((t, slot) => {
        const v = verifyCandidate(q, targets[slot]!, cand[slot]!, p);
        const right = rel.has(t.id);
        if (right) {
          same++;
          if (v.score > 0) (sameVerified++, (sameInliers += v.inliers), (sameScore += v.score));
        } else {
          unrelated++;
          if (v.score > 0) unrelatedPositive++;
          if (v.score >= config.match.minScore) unrelatedStored++;
        }
        if (v.score > best.score || (v.score === best.score && v.score > 0 && v.inliers > best.inliers)) best = { score: v.score, inliers: v.inliers, right };
      });
      if (best.score > 0 && best.right) p1++;
    }
    out[name] = {
      samePairs: same,
      sameVerified,
      sameMeanInliers: round(sameInliers / Math.max(1, sameVerified), 1),
      sameMeanScore: round(sameScore / Math.max(1, sameVerified)),
      unrelatedPairs: unrelated,
      unrelatedPositive,
      unrelatedStored,
      exhaustiveP1: round(p1 / pairs.length),
      ms: Math.round(performance.now() - t0),
    };
    log(`${name}: ${JSON.stringify(out[name])}`);
  }
  console.log(JSON.stringify({ bench: 'search-matching', date: new Date().toISOString(), machine: { nproc: os.cpus().length, loadavg: os.loadavg().map((x) => round(x, 1)) }, set: set.name, queries: queries.length, variants: out }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
