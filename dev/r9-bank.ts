// Issue 35 round 9: retrieval-smvs through the CLI's own index at 100k, looked into on a bank kept on disk
// (dev/r9-cli.ts). Opens the bank's index as the match stage does (syncIndex), then for every source of --set with a
// counterpart: what the CLI stored (rank-1 candidate right?), and its plain search again (search(), the match stage's
// plain pass) with the config and with each --variants spec (rv, rc, rh, s: lsh.recollideVoters, recollide,
// recollideHamming, shortlist): the best hit, the true target's hit (score/inliers), its shortlist rank (votes) and its
// rank by voting keypoints. Counted as the CLI counts a candidate (score >= match.minScore, inliers >= minInliers)
// and as the in-process benches count a hit (score > 0). Read-only. ONE JSON line on stdout.
// Usage: npx tsx dev/r9-bank.ts --dir /work/tmp-35/bank [--set retrieval-smvs] [--variants rv=12,s=60]
import os from 'node:os';
import path from 'node:path';
import { Bank, FeaturesRepo, PairsRepo } from '../src/bank/index.js';
import { prepare, search, searchParams, syncIndex, votePass } from '../src/lib/image-index/index.js';
import { asStored } from '../src/bank/index.js';
import { decodeGrey, siftParams } from '../src/lib/sift/index.js';
import { archiveParams, denseViews, fuseRankings, inThreadViews, shortlistPromise, storable } from '../src/stages/match/index.js';
import { readSet, scaleScript } from '../bench/search-lib.js';

const { shared, opt, config, log } = scaleScript(import.meta.url);
const dir = opt('dir', '/work/tmp-35/bank');
const set = readSet(path.join(shared, opt('set', 'retrieval-smvs')));
const loadavgAtStart = os.loadavg().map((x) => Math.round(x * 10) / 10);
const bank = await Bank.open(dir);
const { handle } = await syncIndex(bank, config);
log(`index: ${handle.index.size} images`);
const p = searchParams(config);
const keys: Record<string, (v: number, o: typeof p) => typeof p> = {
  rv: (v, o) => ({ ...o, recollideVoters: v }), rc: (v, o) => ({ ...o, recollide: v }), rh: (v, o) => ({ ...o, recollideHamming: v }), s: (v, o) => ({ ...o, shortlist: v }),
};
const VARIANTS = ['base', ...opt('variants', '').split(',').filter(Boolean)];
const paramsOf = (spec: string) => (spec === 'base' ? p : spec.split('+').reduce((o, kv) => keys[kv.split('=')[0]!]!(Number(kv.split('=')[1]), o), p));
const extOf = new Map<number, string>();
const ext = async (itemId: number) => {
  if (!extOf.has(itemId)) extOf.set(itemId, (await bank.items.byId(itemId))?.extId ?? '?');
  return extOf.get(itemId)!;
};
const ranked = await bank.repo(PairsRepo).rankedTargets();
const slotOfItem = new Map<number, number>();
for (let s = 0; s < handle.index.slots; s++) {
  const info = handle.slot(s);
  if (info) slotOfItem.set(info.itemId, s);
}
const feats = bank.repo(FeaturesRepo);
const result: Record<string, { cand: number; hit: number; cpu: number[]; lost: string[] }> = {};
let cliStored = 0;
const wideOf: string[] = [];
const cliLost: string[] = [];
for (const [sid, rel] of set.truth) {
  const item = await bank.items.get('source', sid);
  if (!item) continue;
  const list = ranked.get(item.id) ?? [];
  const first = list.length ? await ext(list[0]!) : '';
  if (rel.has(first)) cliStored++;
  else cliLost.push(`${sid}→${first || '-'}`);
  const f = await feats.get(item.imageSha256);
  if (!f) continue;
  const q = prepare(f);
  // the true targets' slots
  const slots = new Set<number>();
  for (const tid of rel) {
    const t = await bank.items.get('target', tid);
    const s = t ? slotOfItem.get(t.id) : undefined;
    if (s !== undefined) slots.add(s);
  }
  for (const spec of VARIANTS) {
    const o = paramsOf(spec);
    const v = votePass(handle.index, q, { ...o, shortlist: 300 }, false);
    const rank = v.shortlist.findIndex((x) => slots.has(x));
    const byVoting = rank < 0 ? -1 : v.voting.filter((n) => n > v.voting[rank]!).length;
    const c0 = process.cpuUsage();
    const r = await search(handle.index, (s) => handle.load(s), f, o);
    const c = process.cpuUsage(c0);
    const R = (result[spec] ??= { cand: 0, hit: 0, cpu: [], lost: [] });
    R.cpu.push((c.user + c.system) / 1000);
    const best = r.hits[0];
    const t = r.hits.find((h) => slots.has(h.slot));
    const bestCand = r.hits.find((h) => storable(config, h));
    const okCand = !!bestCand && slots.has(bestCand.slot);
    const okHit = !!best && best.score > 0 && slots.has(best.slot);
    R.cand += Number(okCand);
    R.hit += Number(okHit);
    if (spec === 'base' && !rel.has(first)) {
      // what the wide-baseline stages saw: the gate (promise), the true target's place among the archive's candidates
      const promise = shortlistPromise(r.votes);
      const a = archiveParams(config);
      const c = config.sift;
      const g = await decodeGrey(await bank.images.read(item.imageSha256), { maxSide: c.maxSide, maxPixels: c.maxPixels, minSide: c.minSide });
      const qd = asStored(await denseViews(g, f, a.maxTilt, a.keypointsPerView, a.maxSide, { ...siftParams(c), upsample: a.upsample }, inThreadViews));
      const byDense = await search(handle.index, () => undefined, f, { ...o, mirror: false, recollide: 0, recollideVoters: 0 }, qd);
      const fused = fuseRankings([r.votes.slots, byDense.votes.slots], a.candidates);
      const dRank = byDense.votes.slots.findIndex((x) => slots.has(x));
      wideOf.push(`${sid}: promise ${promise.toFixed(1)} (gate ${config.match.views.minVotingKeypoints}) plain rank ${r.votes.slots.findIndex((x) => slots.has(x))} dense rank ${dRank} in the ${a.candidates} fused: ${fused.some((x) => slots.has(x)) ? 'y' : 'n'}; verified hits ${r.hits.filter((h) => h.score > 0).map((h) => `${slots.has(h.slot) ? 'TRUE' : h.slot}:${h.score.toFixed(3)}/${h.inliers}`).join(' ')}`);
    }
    if (!okCand || !okHit) {
      const bestExt = best ? (handle.slot(best.slot) ? await ext(handle.slot(best.slot)!.itemId) : '?') : '-';
      R.lost.push(`${sid}: cand ${okCand ? 'y' : 'n'} hit ${okHit ? 'y' : 'n'} best ${bestExt} ${best?.score.toFixed(3)}/${best?.inliers} true ${t ? `${t.score.toFixed(3)}/${t.inliers}` : 'none'} rank ${rank} byVoting ${byVoting} voting ${rank >= 0 ? v.voting[rank] : 0}`);
    }
  }
}
for (const [spec, R] of Object.entries(result)) {
  log(`${spec}: as candidates ${R.cand}, as hits (score > 0) ${R.hit} of ${R.cpu.length}`);
  for (const l of R.lost) log(`  ${l}`);
}
log(`stored by the CLI: ${cliStored}; lost ${cliLost.join(' ')}`);
for (const l of wideOf) log(`  ${l}`);
const pct = (xs: number[], f: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(f * xs.length))]!;
process.stdout.write(JSON.stringify({ bench: 'r9-bank', date: new Date().toISOString(), machine: { nproc: os.cpus().length, loadavgAtStart, loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10) }, dir, set: set.name, indexed: handle.index.size, cli: { stored: cliStored, lost: cliLost, wide: wideOf }, variants: Object.fromEntries(Object.entries(result).map(([k, R]) => [k, { candidates: R.cand, hits: R.hit, queries: R.cpu.length, cpuMs: { p50: pct(R.cpu, 0.5), p95: pct(R.cpu, 0.95) }, lost: R.lost }])) }) + '\n');
await bank.close();
