// Issue 35 round 4 diagnosis: one SQLite process matches a subset of bench:scale's harvest unsharded and with
// lsh.shards N, and prints where each run's match CPU went (observeSourceCosts: plain / views / archive) and whether
// the candidates are the same. Usage: npx tsx dev/shard-costs.ts --dir bench/out/scale/2500 --targets 450 --sources 50 --shards 4
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Bank, CandidatesRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import { importManifest } from '../src/import/manifest.js';
import { runFeatures } from '../src/stages/features/index.js';
import { observeSourceCosts, observeSourceRankings, runMatch } from '../src/stages/match/index.js';

const argv = process.argv.slice(2);
const arg = (n: string, d: string) => (argv.includes(`--${n}`) ? argv[argv.indexOf(`--${n}`) + 1]! : d);
const src = path.resolve(arg('dir', 'bench/out/scale/2500'));
const nT = Number(arg('targets', '450'));
const nS = Number(arg('sources', '50'));
const shards = Number(arg('shards', '4'));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shard-costs-'));
const read = (f: string) => fs.readFileSync(path.join(src, f), 'utf8').trim().split('\n');
const tRows = read('target.tsv');
const sRows = read('source.tsv');
const step = Math.floor((tRows.length - 1) / (sRows.length - 1) * 2);
// sources whose counterpart is among the first nT targets (s k -> t (k-1)*step+1), and as many without
const copies = sRows.slice(1).filter((r) => /^s\d+\t/.test(r) && (Number(r.split('\t')[0]!.slice(1)) - 1) * step < nT).slice(0, nS / 2);
const lone = sRows.slice(1).filter((r) => /^u\d+\t/.test(r)).slice(0, nS / 2);
const rows: string[] = [];
for (let k = 0; k < Math.max(copies.length, lone.length); k++) rows.push(...[copies[k], lone[k]].filter((x): x is string => !!x));
fs.writeFileSync(path.join(work, 'source.tsv'), [sRows[0], ...rows].join('\n') + '\n');
fs.writeFileSync(path.join(work, 'target.tsv'), [tRows[0], ...tRows.slice(1, nT + 1)].join('\n') + '\n');
const base = loadConfig({}).config;
const cfg = (s: number): Config => ({ ...base, lsh: { ...base.lsh, shards: s }, sift: { ...base.sift, threads: 1 } });
const log = (m: string) => process.stderr.write(`shard-costs: ${m}\n`);

const ref = path.join(work, 'ref');
{
  const bank = await Bank.open(ref);
  for (const k of ['target', 'source'] as const) await importManifest(bank, { bank: k, manifest: path.join(work, `${k}.tsv`), config: cfg(0) });
  const c0 = process.cpuUsage();
  await runFeatures(bank, cfg(0), { threads: 1 });
  log(`features ${((process.cpuUsage(c0).user + process.cpuUsage(c0).system) / 1e6).toFixed(1)} s CPU; ${copies.length} copies, ${lone.length} lone, ${nT} targets`);
  await bank.close();
}
fs.cpSync(ref, path.join(work, 'sharded'), { recursive: true });

async function matchIn(dir: string, s: number) {
  const bank = await Bank.open(dir);
  const per: Record<string, { n: number; cpuMs: number }> = {};
  const stop = observeSourceCosts((c) => {
    const p = (per[c.stage] ??= { n: 0, cpuMs: 0 });
    p.n++;
    p.cpuMs += c.cpuMs;
  });
  const rankings = new Map<string, string>();
  const stopRankings = observeSourceRankings((r) => void rankings.set(`${r.kind}:${r.itemId}`, JSON.stringify([r.ranked, r.promise])));
  const c0 = process.cpuUsage();
  const sum = await runMatch(bank, cfg(s), { threads: 1 });
  const cpu = process.cpuUsage(c0);
  stop();
  stopRankings();
  ranked.push(rankings);
  const cand: string[] = [];
  for await (const c of bank.repo(CandidatesRepo).iterateJoined()) cand.push(`${c.sourceExtId}→${c.targetExtId} #${c.rank} ${c.imageScore} ${c.inliers}`);
  await bank.close();
  const out = { shards: s, cpuS: Math.round((cpu.user + cpu.system) / 1e4) / 100, per, summary: sum };
  log(JSON.stringify(out));
  return cand.sort();
}
const ranked: Map<string, string>[] = [];
const a = await matchIn(ref, 0);
const b = await matchIn(path.join(work, 'sharded'), shards);
log(`same candidates: ${JSON.stringify(a) === JSON.stringify(b)} (${a.length} vs ${b.length})`);
// what each source's search ranked (plain shortlist, votes, promise; archive candidates): the same in both runs?
const [ra, rb] = ranked as [Map<string, string>, Map<string, string>];
const differ = [...new Set([...ra.keys(), ...rb.keys()])].filter((k) => ra.get(k) !== rb.get(k));
log(`same rankings: ${!differ.length} (${ra.size} vs ${rb.size}; differing: ${differ.slice(0, 10).join(', ')})`);
for (const k of differ.slice(0, 3)) log(`  ${k}: ${ra.get(k)?.slice(0, 300)} | ${rb.get(k)?.slice(0, 300)}`);
if (JSON.stringify(a) !== JSON.stringify(b)) {
  const sa = new Set(a), sb = new Set(b);
  log(`only unsharded: ${a.filter((x) => !sb.has(x)).slice(0, 20).join('; ')}`);
  log(`only sharded: ${b.filter((x) => !sa.has(x)).slice(0, 20).join('; ')}`);
}
fs.rmSync(work, { recursive: true, force: true });
