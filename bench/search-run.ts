// The CLI path of bench:search, for any retrieval-set folder (bench/search.ts over ../shared/data's sets,
// bench/gate-null.ts over the null of the wide-baseline gate): a featured bank (`import` source and target, the
// features stage), cached in bench/.cache/banks; then `match --top 5` and `export --format jsonl --candidates` on a copy
// of it, with each source's match CPU per stage and its promise as the match stage publishes them (observeSourceCosts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { Bank, DenseViewsRepo } from '../src/bank/index.js';
import type { Config } from '../src/config/schema.js';
import { importManifest } from '../src/import/manifest.js';
import { exportCandidatesJsonl } from '../src/stages/export/index.js';
import { observeSourceCosts } from '../src/stages/match/index.js';
import { loadStage } from '../src/stages/index.js';
import type { RetrievalSet } from './search-lib.js';

export const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;

export interface BankOptions {
  repoRoot: string;
  config: Config;
  /** The first N sources only (0: all). */
  queries: number;
  /** Rebuild the cached bank. */
  fresh: boolean;
  log: (m: string) => void;
}

/** What the featured bank depends on: the set (by name: a set whose manifests are generated names itself by their
 *  content), the layers that import, describe and index (their source) and their config. */
function bankKey(set: RetrievalSet, o: BankOptions): string {
  const h = createHash('sha1');
  const { config } = o;
  h.update(JSON.stringify({ set: set.name, queries: o.queries, sift: config.sift, lsh: { multiprobe: config.lsh.multiprobe, seed: config.lsh.seed }, import: config.import, database: config.database }));
  const feeds = /\/(sift|bank|ingest|import|captions|config|util|features)\/|\/(lsh|store|descriptors|mean-rootsift|features|searcher)\.ts$/;
  const walk = (d: string): string[] => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
  for (const f of walk(path.join(o.repoRoot, 'src')).filter((f) => f.endsWith('.ts') && feeds.test(f)).sort()) h.update(f).update(fs.readFileSync(f));
  return h.digest('hex').slice(0, 16);
}

/** The set's manifests, the sources cut to the first `queries`. */
function manifests(set: RetrievalSet, dir: string, queries: number): { source: string; target: string } {
  const source = path.join(set.dir, 'source.tsv');
  if (!queries) return { source, target: path.join(set.dir, 'target.tsv') };
  const lines = fs.readFileSync(source, 'utf8').split('\n').filter(Boolean);
  const head = lines[0]!.split('\t');
  const imageCol = head.indexOf('image');
  // absolute image paths: the cut manifest lives elsewhere
  const rows = lines.slice(1, queries + 1).map((l) => l.split('\t').map((c, i) => (i === imageCol ? path.resolve(set.dir, c) : c)).join('\t'));
  const cut = path.join(dir, 'source.tsv');
  fs.writeFileSync(cut, [lines[0], ...rows].join('\n') + '\n');
  return { source: cut, target: path.join(set.dir, 'target.tsv') };
}

/** A bank with the set imported and featured (the features stage: SIFT, LSH codes), from the cache or made now. */
export async function featuredBank(set: RetrievalSet, o: BankOptions): Promise<{ dir: string; featuresCpuMs: number | null }> {
  const dir = path.join(o.repoRoot, 'bench', '.cache', 'banks', `${set.name}-${bankKey(set, o)}`);
  const meta = path.join(dir, 'bench.json');
  if (!o.fresh && fs.existsSync(meta)) return { dir, featuresCpuMs: (JSON.parse(fs.readFileSync(meta, 'utf8')) as { featuresCpuMs: number }).featuresCpuMs };
  fs.rmSync(dir, { recursive: true, force: true });
  const tmp = `${dir}.tmp${process.pid}`;
  fs.mkdirSync(tmp, { recursive: true });
  const bank = await Bank.open(tmp);
  let featuresCpuMs = 0;
  try {
    const m = manifests(set, tmp, o.queries);
    for (const b of ['source', 'target'] as const) {
      const s = await importManifest(bank, { bank: b, manifest: m[b], config: o.config });
      if (s.failed) o.log(`${set.name}: ${s.failed} ${b} rows failed to import`);
    }
    const c0 = process.cpuUsage();
    await (await loadStage('features'))(bank, o.config, {});
    featuresCpuMs = cpuMs(process.cpuUsage(c0));
  } finally {
    await bank.close();
  }
  fs.writeFileSync(path.join(tmp, 'bench.json'), JSON.stringify({ featuresCpuMs }));
  fs.renameSync(tmp, dir);
  return { dir, featuresCpuMs };
}

export type StageName = 'plain' | 'views' | 'archive';
export interface MatchRun {
  summary: Record<string, unknown>;
  cpuMs: number;
  wallMs: number;
  /** source ext id -> exported candidates, by rank */
  cands: Map<string, { target: string; score: number; inliers: number; model: string }[]>;
  /** per stage: CPU ms of each query that reached it */
  stages: Record<StageName, number[]>;
  /** per stage: source ext id -> CPU ms */
  bySource: Record<StageName, Map<string, number>>;
  /** source ext id -> its shortlist's promise (sources the plain search left unconfident) */
  promises: Map<string, number>;
  /** targets' dense views the run left in the bank (archive matching) */
  denseViews: { images: number; bytes: number };
}

/** `match --top 5` then `export --format jsonl --candidates` on a copy of the featured bank. */
export async function matchRun(set: RetrievalSet, base: string, cfg: Config): Promise<MatchRun> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `capbridge-bench-search-${set.name}-`));
  fs.cpSync(base, dir, { recursive: true });
  const bank = await Bank.open(dir);
  const costs: { itemId: number; stage: StageName; cpuMs: number; promise?: number }[] = [];
  try {
    // (a sharded run's 'shard-votes' are not a stage of one process's search)
    const stop = observeSourceCosts((s) => void ((s.stage === 'plain' || s.stage === 'views' || s.stage === 'archive') && costs.push({ itemId: s.itemId, stage: s.stage, cpuMs: s.cpuMs, promise: s.promise })));
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    const r = await (await loadStage('match'))(bank, cfg, { top: 5 }).finally(stop);
    const cpu = cpuMs(process.cpuUsage(c0));
    const wallMs = performance.now() - w0;
    const out = path.join(dir, 'candidates.jsonl');
    await exportCandidatesJsonl(bank, out);
    const cands = new Map<string, { target: string; score: number; inliers: number; model: string; rank: number }[]>();
    for (const line of fs.readFileSync(out, 'utf8').split('\n').filter(Boolean)) {
      const c = JSON.parse(line) as { source_id: string; target_id: string; rank: number; image_score: number; inliers: number; model: string };
      if (!cands.has(c.source_id)) cands.set(c.source_id, []);
      cands.get(c.source_id)!.push({ target: c.target_id, score: c.image_score, inliers: c.inliers, model: c.model, rank: c.rank });
    }
    for (const l of cands.values()) l.sort((a, b) => a.rank - b.rank);
    const items = await bank.items.byIds([...new Set(costs.map((c) => c.itemId))]);
    const stages: Record<StageName, number[]> = { plain: [], views: [], archive: [] };
    const bySource: Record<StageName, Map<string, number>> = { plain: new Map(), views: new Map(), archive: new Map() };
    const promises = new Map<string, number>();
    for (const c of costs) {
      const ext = items.get(c.itemId)?.extId ?? String(c.itemId);
      stages[c.stage].push(c.cpuMs);
      bySource[c.stage].set(ext, c.cpuMs);
      if (c.promise !== undefined) promises.set(ext, c.promise);
    }
    const denseViews = await bank.repo(DenseViewsRepo).size();
    return { summary: r.detail as unknown as Record<string, unknown>, cpuMs: cpu, wallMs, cands, stages, bySource, promises, denseViews };
  } finally {
    await bank.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
