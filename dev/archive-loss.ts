// Issue 33 round 7: where archive matching loses a retrieval set's pairs, per query. For each source of a cached
// featured bank (bench/.cache/banks/NAME, as bench:search leaves it): its plain search as `match` runs it (hits, the
// direct pass's ranking, the promise), whether it would reach archive matching (unconfident, promise at the gate, within
// the window's budget), then for those (and, with --all, every unconfident source) its dense views, the dense ranking,
// the fused ranking, and one archive comparison (archiveCompare, the production verification) with each of the fused
// ranking's first --depth candidates, the plain and dense rankings' first --depth and every true target. Writes one JSON
// line per source (stdout); the choices it supports are simulated offline from those lines (dev/archive-loss-sim.ts).
// Half of the sources (SHA-1 of "set:query", first byte even) are the development half, the others the check half.
// Usage: npx tsx dev/archive-loss.ts BANKDIR SETDIR [--depth 30] [--all] [--only s0001,s0002] > out.jsonl
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { Bank, DenseViewsRepo, FeaturesRepo, asStored } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { asiftSpecs, decodeGrey, siftParams } from '../src/lib/sift/index.js';
import { prepare, search, searchParams, syncIndex, type Features } from '../src/lib/image-index/index.js';
import {
  ViewPool, archiveCompare, archiveParams, denseKey, archiveVerifyParams, denseViews, fuseRankings, rankAgainstIndex, shortlistPromise,
} from '../src/stages/match/index.js';

const args = process.argv.slice(2);
const opt = (name: string, d: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : d;
};
// --set a.b.c=JSON (repeatable): config overlays, e.g. --set match.views.archive.checks=16
const { config } = loadConfig({});
for (let i = 0; i < args.length; i++) {
  if (args[i] !== '--set') continue;
  const [k, v] = args[i + 1]!.split('=');
  const keys = k!.split('.');
  let o = config as unknown as Record<string, unknown>;
  for (const key of keys.slice(0, -1)) o = o[key] as Record<string, unknown>;
  o[keys.at(-1)!] = JSON.parse(v!);
}
// --keep DIR: the bank copy kept between runs (targets' dense views stay in it); else a temporary copy
const KEEP = opt('keep', '');
// --fused-only: compare only the fused ranking's first --depth and the true targets
const FUSED_ONLY = args.includes('--fused-only');
const DEPTH = Number(opt('depth', '30'));
const ALL = args.includes('--all');
const ONE_SIDED = args.includes('--one-sided');
const ONLY = new Set(opt('only', '').split(',').filter(Boolean));
const cpu = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

export function half(set: string, query: string): 'dev' | 'check' {
  return createHash('sha1').update(`${set}:${query}`).digest()[0]! % 2 === 0 ? 'dev' : 'check';
}

async function grey(bank: Bank, sha: string) {
  const c = config.sift;
  try {
    return await decodeGrey(await bank.images.read(sha), { maxSide: c.maxSide, maxPixels: c.maxPixels, minSide: c.minSide });
  } catch {
    return undefined;
  }
}

async function main() {
  const [bankDir, setDir] = args;
  const set = path.basename(setDir!);
  const truth = new Map<string, Set<string>>();
  for (const l of fs.readFileSync(path.join(setDir!, 'truth.tsv'), 'utf8').split('\n').slice(1).filter(Boolean)) {
    const [s, t] = l.split('\t');
    if (!truth.has(s!)) truth.set(s!, new Set());
    truth.get(s!)!.add(t!);
  }
  const tmp = KEEP || fs.mkdtempSync(path.join(os.tmpdir(), 'archive-loss-'));
  if (!KEEP || !fs.existsSync(path.join(KEEP, 'capbridge.db'))) fs.cpSync(bankDir!, tmp, { recursive: true });
  const bank = await Bank.open(tmp);
  const pool = new ViewPool(config);
  try {
    const { handle } = await syncIndex(bank, config);
    const ext = new Map<number, string>();
    const slotOf = new Map<string, number>();
    for (let s = 0, miss = 0; miss < 1000; s++) {
      if (!handle.slot(s)) {
        miss++;
        continue;
      }
      const info = handle.slot(s);
      const it = info && (await bank.items.byIds([info.itemId])).get(info.itemId);
      if (it) ext.set(s, it.extId), slotOf.set(it.extId, s);
    }
    const a = archiveParams(config);
    const sp = { ...siftParams(config.sift), upsample: a.upsample };
    const verify = archiveVerifyParams(searchParams(config), a, config.match.views.poolRadius);
    // --archive-ratio R: Lowe's ratio of archive comparisons only (the plain search keeps match.ratio)
    if (opt('archive-ratio', '')) verify.ratio = Number(opt('archive-ratio', ''));
    const msFile = path.join(tmp, 'target-ms.json');
    const keptMs = (fs.existsSync(msFile) ? JSON.parse(fs.readFileSync(msFile, 'utf8')) : {}) as Record<string, number>;
    const targetDense = new Map<number, { f: Features; ms: number }>();
    const dense = async (slot: number) => {
      let d = targetDense.get(slot);
      if (d) return d;
      const info = handle.slot(slot)!;
      const plain = (await handle.load(slot))!.f;
      const g = await grey(bank, info.sha);
      const key = `dev-r9|${denseKey(asiftSpecs(a.targetMaxTilt), a.targetKeypointsPerView, a.maxSide, sp)}`;
      const repo = bank.repo(DenseViewsRepo);
      const kept = await repo.get(info.sha, key);
      if (kept) {
        // the CPU it cost when computed (recorded beside the kept bank)
        targetDense.set(slot, (d = { f: kept, ms: keptMs[`${info.sha}|${key}`] ?? 0 }));
        return d;
      }
      const c0 = cpu();
      const f = g ? asStored(await denseViews(g, plain, a.targetMaxTilt, a.targetKeypointsPerView, a.maxSide, sp, pool.run)) : plain;
      const spent = cpu() - c0;
      if (g) await repo.put(info.sha, key, f, spent);
      keptMs[`${info.sha}|${key}`] = spent;
      if (KEEP) fs.writeFileSync(path.join(KEEP, 'target-ms.json'), JSON.stringify(keptMs));
      targetDense.set(slot, (d = { f, ms: spent }));
      return d;
    };
    const ids = fs.readFileSync(path.join(setDir!, 'source.tsv'), 'utf8').split('\n').slice(1).filter(Boolean).map((l) => l.split('\t')[0]!);
    // the plain searches first (as a window does), then the budget's choice
    const plain: { id: string; sha: string; q: Features; hits: { slot: number; score: number; inliers: number; matches: number }[]; ranking: number[]; promise: number; unconfident: boolean; ms: number }[] = [];
    for (const id of ids) {
      const it = await bank.items.get('source', id);
      const q = it && (await bank.repo(FeaturesRepo).get(it.imageSha256));
      if (!it || !q) continue;
      const c0 = cpu();
      const r = await rankAgainstIndex(handle, config, q, 5, undefined, pool.run, () => false);
      const unconfident = !r.hits.some((h) => h.score >= config.match.views.confidence);
      plain.push({ id, sha: it.imageSha256, q, hits: r.hits.map((h) => ({ slot: h.slot, score: h.score, inliers: h.inliers, matches: h.matches })), ranking: r.votes.slots, promise: shortlistPromise(r.votes), unconfident, ms: cpu() - c0 });
    }
    const gate = config.match.views.minVotingKeypoints;
    const hopeful = plain.filter((p) => p.unconfident && p.promise >= gate).sort((x, y) => y.promise - x.promise);
    const budget = Math.max(1, Math.floor(config.match.views.archive.budget * Math.min(ids.length, config.worker.batch.match)));
    const reaches = new Set(hopeful.slice(0, budget).map((p) => p.id));
    for (const p of plain) {
      if (ONLY.size && !ONLY.has(p.id)) continue;
      const t = truth.get(p.id) ?? new Set<string>();
      const tslots = [...t].map((x) => slotOf.get(x)).filter((x): x is number => x !== undefined);
      const line: Record<string, unknown> = {
        set, id: p.id, half: half(set, p.id), truth: [...t], promise: Number(p.promise.toFixed(2)), unconfident: p.unconfident,
        gated: p.unconfident && p.promise < gate, budgeted: p.unconfident && p.promise >= gate && !reaches.has(p.id), reaches: reaches.has(p.id),
        plainMs: Math.round(p.ms), plainHits: p.hits.filter((h) => h.score > 0).map((h) => ({ t: ext.get(h.slot), score: Number(h.score.toFixed(4)), inliers: h.inliers, matches: h.matches })),
        plainRank: tslots.map((s) => p.ranking.indexOf(s)),
      };
      if (p.unconfident && (reaches.has(p.id) || ALL)) {
        const g = await grey(bank, p.sha);
        if (g) {
          const c0 = cpu();
          // --query-upsample: the query's dense views with SIFT's initial x2 upsampling (the targets' as configured)
          const qsp = args.includes('--query-upsample') ? { ...sp, upsample: true } : sp;
          const qd = asStored(await denseViews(g, p.q, a.maxTilt, a.keypointsPerView, a.maxSide, qsp, pool.run));
          const c1 = cpu();
          const byDense = await search(handle.index, () => undefined, p.q, { ...searchParams(config), mirror: false, recollide: 0 }, qd);
          const c2 = cpu();
          const fused = fuseRankings([p.ranking, byDense.votes.slots], DEPTH);
          const denseVotes = new Map(byDense.votes.slots.map((s, i) => [s, byDense.votes.votes[i]!]));
          const compare = [...new Set(FUSED_ONLY ? [...fused, ...tslots] : [...fused, ...p.ranking.slice(0, DEPTH), ...byDense.votes.slots.slice(0, DEPTH), ...tslots])];
          const qa = prepare(qd);
          const c3 = cpu();
          const comps = [];
          for (const s of compare) {
            const td = await dense(s);
            const k0 = cpu();
            const r = archiveCompare(qa, td.f, a, verify);
            const k1 = cpu();
            // --one-sided: the query's dense views against the candidate's plain features (no dense views of it)
            const o = ONE_SIDED ? archiveCompare(qa, (await handle.load(s))!.f, a, verify) : undefined;
            const oneSided = o && { matches: o.matches, inliers: o.inliers, logNfa: o.logNfa === undefined ? null : Number(o.logNfa.toFixed(2)), ms: Math.round(cpu() - k1) };
            comps.push({ oneSided, t: ext.get(s), true: tslots.includes(s), fused: fused.indexOf(s), plain: p.ranking.indexOf(s), dense: byDense.votes.slots.indexOf(s), denseVotes: Number((denseVotes.get(s) ?? 0).toFixed(2)), matches: r.matches, inliers: r.inliers, score: Number(r.score.toFixed(4)), logNfa: r.logNfa === undefined ? null : Number(r.logNfa.toFixed(2)), spread: Number(r.spread.toFixed(3)), reason: r.reason ?? null, ms: Math.round(k1 - k0), targetKeypoints: td.f.count, targetDenseMs: Math.round(td.ms) });
          }
          Object.assign(line, { queryDenseMs: Math.round(c1 - c0), denseSearchMs: Math.round(c2 - c1), prepareMs: Math.round(cpu() - c3 - comps.reduce((x, c) => x + c.ms, 0)), queryKeypoints: qd.count, denseRank: tslots.map((s) => byDense.votes.slots.indexOf(s)), fusedRank: tslots.map((s) => fused.indexOf(s)), comps });
        }
      }
      process.stdout.write(JSON.stringify(line) + '\n');
      process.stderr.write(`${p.id} ${line.reaches ? 'archive' : p.unconfident ? (line.gated ? 'gated' : 'budget') : 'confident'}\n`);
    }
  } finally {
    await pool.close();
    await bank.close();
    if (!KEEP) fs.rmSync(tmp, { recursive: true, force: true });
  }
}
main().catch((e) => {
  process.stderr.write(String((e as Error).stack) + '\n');
  process.exit(1);
});
