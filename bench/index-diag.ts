// `npx tsx bench/index-diag.ts --n 10000 --set retrieval-scenes [--probes P] [--shortlist 100]` (issue 35): where the true
// target of each query of one set sits in the shortlist of the index of before (bench/reference) and of today's, with
// the verification of the true target and the top hit, over the same padded targets as bench:index. A diagnostic,
// not a benchmark: it prints to stderr only.
import { LshIndex } from '../src/lib/image-index/index.js';
import { prepare, search } from '../src/lib/image-index/index.js';
import { lshParams, searchParams } from '../src/lib/image-index/index.js';
import type { Prepared } from '../src/lib/image-index/index.js';
import * as ref from './reference/searcher.js';
import { LshIndex as RefIndex } from './reference/lsh.js';
import { lshParams as refParams } from './reference/params.js';
import { paddingRefs, readPadding } from './padding.js';
import { ourFeatures, p1Targets, scaleScript } from './search-lib.js';

const { repoRoot, shared, opt, config, log, n: N } = scaleScript(import.meta.url);
const SET = opt('set', 'retrieval-scenes');
const { sets, real } = await p1Targets(repoRoot, shared, config, log);
const pads = paddingRefs(config, shared, N - real.length, true);
const padCodes = (codes: (p: Prepared) => Uint32Array) => pads.map((r) => codes(prepare(readPadding(r).features)));
const set = sets.find((s) => s.name === SET)!;
const feats = await ourFeatures(repoRoot, set, config, log);
const load = (slot: number) => (slot < real.length ? real[slot]!.p : prepare(readPadding(pads[slot - real.length]!).features));
const kp = real.reduce((a, r) => a + r.p.f.count, 0) + pads.reduce((a, r) => a + r.count, 0);
const p = { ...searchParams(config), shortlist: Number(opt('shortlist', '100')), mirror: false, recollide: Number(opt('recollide', '0')) };
const probes = Number(opt('probes', String(config.lsh.multiprobe)));
const kinds = {
  reference: () => {
    const ix = new RefIndex(refParams(config, kp));
    ix.addBatch(real.map((r) => ix.codes(r.p.vecs, r.p.f.count)));
    ix.addBatch(padCodes((pr) => ix.codes(pr.vecs, pr.f.count)));
    ix.merge();
    return (q: Parameters<typeof search>[2]) => ref.search(ix, load, q, p);
  },
  today: () => {
    const ix = new LshIndex({ ...lshParams(config, kp), probes });
    ix.addBatch(real.map((r) => ix.codes(r.p.vecs, r.p.f.count)));
    ix.addBatch(padCodes((pr) => ix.codes(pr.vecs, pr.f.count)));
    ix.merge();
    return (q: Parameters<typeof search>[2]) => search(ix, load, q, p);
  },
};
const out: Record<string, string[]> = {};
for (const [name, make] of Object.entries(kinds)) {
  const s = make();
  out[name] = [];
  for (const [sid, rel] of set.truth) {
    const r = await s(feats.get(sid)!);
    const truth = [...rel].map((t) => real.findIndex((x) => x.key === `${SET}:${t}`));
    const rank = r.shortlist.findIndex((x) => truth.includes(x));
    const hit = r.hits.find((h) => truth.includes(h.slot));
    const best = r.hits[0];
    out[name]!.push(`${sid}: rank ${rank} ${hit ? `score ${hit.score.toFixed(2)} inl ${hit.inliers} m ${hit.matches} v ${hit.votes} ${hit.reason ?? ''}` : '-'} | top ${best ? `${best.slot < real.length ? real[best.slot]!.key : 'pad'} ${best.score.toFixed(2)}` : '-'}`);
  }
}
for (const [sid] of set.truth) log(`${sid}\n   ref   ${out.reference![[...set.truth.keys()].indexOf(sid)]}\n   today ${out.today![[...set.truth.keys()].indexOf(sid)]}`);
