// `capbridge eval --set DIR`: imports a labelled set (layout of ../shared/data/README.md: source.tsv, target.tsv,
// truth.tsv, images/) into a bank, runs features → match → pair, and measures the ranking (P@1..5, hit@1, hit@5)
// and the emitted pairs (precision, coverage, false emission rate). Definitions, for a source s with R(s) its
// correct targets:
//   P@n        mean over sources with a counterpart of |top-n ∩ R(s)| / min(n, |R(s)|)
//   hit@k      share of sources with a counterpart whose top k holds a correct target
//   precision  share of emitted (source, target) pairs that are in truth.tsv
//   coverage   share of sources with a counterpart that got at least one correct emitted pair
//   false emission rate  share of sources without a counterpart that got any emitted pair
// The result is stored in bank.meta ('eval.last', and appended to 'eval.history') for the review page.
import fs from 'node:fs';
import path from 'node:path';
import type { Bank, Level } from '../bank/index.js';
import { PairsRepo } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import { importManifest, type ImportSummary } from '../import/manifest.js';
import { UserError } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { readTsvObjects } from '../util/tsv.js';
import type { PairingSummary } from '../stages/pair/index.js';
import { loadStage } from '../stages/index.js';

export interface EvalResult {
  set: string;
  at: string;
  sources: number;
  sourcesWithCounterpart: number;
  targets: number;
  truthPairs: number;
  pAt: Record<'1' | '2' | '3' | '4' | '5', number>;
  hitAt1: number;
  hitAt5: number;
  emitted: number;
  emittedCorrect: number;
  emittedPrecision: number | null;
  coverage: number;
  falseEmissionRate: number | null;
  emittedByLevel: Record<Level, number>;
  thresholds: { minLevel: Level; minInliers: number; minImageScore: number };
  import: { source: Pick<ImportSummary, 'added' | 'unchanged' | 'updated' | 'failed'>; target: Pick<ImportSummary, 'added' | 'unchanged' | 'updated' | 'failed'> };
  stages: Record<string, unknown>;
  seconds: number;
}

const round = (x: number) => Math.round(x * 10000) / 10000;

export type EvalMetrics = Pick<
  EvalResult,
  'sources' | 'sourcesWithCounterpart' | 'truthPairs' | 'pAt' | 'hitAt1' | 'hitAt5' | 'emitted' | 'emittedCorrect' | 'emittedPrecision' | 'coverage' | 'falseEmissionRate' | 'emittedByLevel'
>;

/** The metrics of the header comment, from ext ids: ranked targets per source, and the emitted pairs. */
export function evalMetrics(input: {
  sourceIds: string[];
  truth: Map<string, Set<string>>;
  ranked: Map<string, string[]>;
  emitted: { source: string; target: string; level: Level }[];
}): EvalMetrics {
  const { sourceIds, truth, ranked, emitted } = input;
  const withCp = sourceIds.filter((s) => truth.has(s));
  const pSum = [0, 0, 0, 0, 0];
  let hit1 = 0;
  let hit5 = 0;
  for (const s of withCp) {
    const R = truth.get(s)!;
    const list = ranked.get(s) ?? [];
    for (let n = 1; n <= 5; n++) {
      const hits = list.slice(0, n).filter((t) => R.has(t)).length;
      pSum[n - 1]! += hits / Math.min(n, R.size);
    }
    if (list.slice(0, 1).some((t) => R.has(t))) hit1++;
    if (list.slice(0, 5).some((t) => R.has(t))) hit5++;
  }
  let correct = 0;
  const covered = new Set<string>();
  const falseSources = new Set<string>();
  const byLevel: Record<Level, number> = { par: 0, com: 0, pse: 0, inc: 0 };
  for (const p of emitted) {
    byLevel[p.level]++;
    if (truth.get(p.source)?.has(p.target)) {
      correct++;
      covered.add(p.source);
    }
    if (!truth.has(p.source)) falseSources.add(p.source);
  }
  const without = sourceIds.length - withCp.length;
  const n = Math.max(1, withCp.length);
  return {
    sources: sourceIds.length,
    sourcesWithCounterpart: withCp.length,
    truthPairs: [...truth.values()].reduce((a, s) => a + s.size, 0),
    pAt: { '1': round(pSum[0]! / n), '2': round(pSum[1]! / n), '3': round(pSum[2]! / n), '4': round(pSum[3]! / n), '5': round(pSum[4]! / n) },
    hitAt1: round(hit1 / n),
    hitAt5: round(hit5 / n),
    emitted: emitted.length,
    emittedCorrect: correct,
    emittedPrecision: emitted.length ? round(correct / emitted.length) : null,
    coverage: round(covered.size / n),
    falseEmissionRate: without ? round(falseSources.size / without) : null,
    emittedByLevel: byLevel,
  };
}

async function readTruth(file: string): Promise<Map<string, Set<string>>> {
  if (!fs.existsSync(file)) throw new UserError(`${file}: missing (an eval set needs source.tsv, target.tsv, truth.tsv)`);
  const truth = new Map<string, Set<string>>();
  const rows = await readTsvObjects(file, ['source_id', 'target_id']);
  for (const r of rows) {
    const s = (r.source_id ?? '').trim();
    const t = (r.target_id ?? '').trim();
    if (!s || !t) continue;
    let set = truth.get(s);
    if (!set) truth.set(s, (set = new Set()));
    set.add(t);
  }
  return truth;
}

export async function runEval(bank: Bank, config: Config, opts: { set: string; logger?: Logger; signal?: AbortSignal }): Promise<EvalResult> {
  const t0 = performance.now();
  const dir = path.resolve(opts.set);
  for (const f of ['source.tsv', 'target.tsv', 'truth.tsv']) {
    if (!fs.existsSync(path.join(dir, f))) throw new UserError(`${path.join(dir, f)}: missing (an eval set needs source.tsv, target.tsv, truth.tsv and images/)`);
  }
  const [features, match, pair] = [await loadStage('features'), await loadStage('match'), await loadStage('pair')];
  const logger = opts.logger;
  const imp = async (b: 'source' | 'target') => {
    const s = await importManifest(bank, { bank: b, manifest: path.join(dir, `${b}.tsv`), config, onProblem: (p) => logger?.warn(`${p.file}:${p.line}: ${p.reason}`) });
    return { added: s.added, unchanged: s.unchanged, updated: s.updated, failed: s.failed };
  };
  const importRes = { source: await imp('source'), target: await imp('target') };
  const stages: Record<string, unknown> = {};
  stages.features = (await features(bank, config, { logger, signal: opts.signal })).detail;
  stages.match = (await match(bank, config, { logger, signal: opts.signal })).detail;
  const pairing: PairingSummary = (await pair(bank, config, { logger, signal: opts.signal })).detail;
  stages.pair = pairing;

  const truth = await readTruth(path.join(dir, 'truth.tsv'));
  const sourceIds = (await readTsvObjects(path.join(dir, 'source.tsv'), ['id'])).map((r) => (r.id ?? '').trim()).filter(Boolean);
  const targetCount = (await readTsvObjects(path.join(dir, 'target.tsv'), ['id'])).length;
  // item id ↔ ext id, for this set's items
  const srcItem = new Map<number, string>();
  for (const ext of sourceIds) {
    const it = await bank.items.get('source', ext);
    if (it) srcItem.set(it.id, ext);
  }
  const tgtExtCache = new Map<number, string | undefined>();
  const tgtExt = async (id: number) => {
    if (!tgtExtCache.has(id)) {
      const it = await bank.items.byId(id);
      tgtExtCache.set(id, it?.bank === 'target' ? it.extId : undefined);
    }
    return tgtExtCache.get(id);
  };
  const repo = bank.repo(PairsRepo);
  const ranked = await repo.rankedTargets();
  const rankedByExt = new Map<string, string[]>();
  for (const [sid, list] of ranked) {
    const ext = srcItem.get(sid);
    if (ext) rankedByExt.set(ext, await Promise.all(list.map(async (t) => (await tgtExt(t)) ?? '')));
  }
  const minLevel = config.export.minLevel;
  const emitted: { source: string; target: string; level: Level }[] = [];
  for (const p of await repo.emittedPairs(minLevel)) {
    if (srcItem.has(p.sourceItemId)) emitted.push({ source: srcItem.get(p.sourceItemId)!, target: (await tgtExt(p.targetItemId)) ?? '', level: p.level });
  }
  const m = evalMetrics({ sourceIds, truth, ranked: rankedByExt, emitted });
  const result: EvalResult = {
    set: dir,
    at: new Date().toISOString(),
    targets: targetCount,
    ...m,
    thresholds: { minLevel, minInliers: config.match.minInliers, minImageScore: config.match.minScore },
    import: importRes,
    stages,
    seconds: Math.round((performance.now() - t0) / 100) / 10,
  };
  const { stages: _omit, ...stored } = result;
  void _omit;
  await bank.transaction(async (tx) => {
    await tx.meta.setJson('eval.last', stored);
    const history = (await tx.meta.getJson<unknown[]>('eval.history')) ?? [];
    history.push(stored);
    await tx.meta.setJson('eval.history', history.slice(-50));
  });
  return result;
}
