// scratch (issue 34 round 6): `capbridge eval` on mining-flickr8k with a kept bank. BUILD=1 runs the whole eval into
// BANK (import, features, match, pair); otherwise the pair stage is re-run with --all on that bank for each
// TYPICAL value (specificityTypical override; 'bank' = the scorer's own) and the eval metrics printed.
import fs from 'node:fs';
import path from 'node:path';
import { Bank, PairsRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { runEval, evalMetrics } from '../src/eval/eval.js';
import { runPairing } from '../src/stages/pair/index.js';
import { createScorer } from '../src/lib/comparability/index.js';
import { readTsvObjects } from '../src/util/tsv.js';

const set = process.env.EVAL_SET ?? '/work/shared/data/mining-flickr8k';
const dir = process.env.BANK ?? '/tmp/r34g-bank';
const { config } = loadConfig({ env: {} });
if (process.env.THCOM) config.comparability.thresholds.com = Number(process.env.THCOM);
if (process.env.WEIGHTS) Object.assign(config.comparability.weights, JSON.parse(process.env.WEIGHTS));
if (process.env.THPSE) config.comparability.thresholds.pse = Number(process.env.THPSE);
if (process.env.BUILD) {
  fs.mkdirSync(dir, { recursive: true });
  const bank = await Bank.open(dir);
  const r = await runEval(bank, config, { set });
  console.log(JSON.stringify({ ...r, stages: undefined }));
  await bank.close();
} else {
  const bank = await Bank.open(dir);
  const truth = new Map<string, Set<string>>();
  for (const r of await readTsvObjects(path.join(set, 'truth.tsv'), ['source_id', 'target_id'])) truth.set(r.source_id!, new Set([...(truth.get(r.source_id!) ?? []), r.target_id!]));
  const sourceIds = (await readTsvObjects(path.join(set, 'source.tsv'), ['id'])).map((r) => r.id!);
  for (const t of (process.env.TYPICAL ?? 'bank').split(',')) {
    const measure = t === 'bank' ? {} : { specificityTypical: Number(t) };
    const scorer = await createScorer(config, { bank, dataDir: bank.dataDir, measure });
    if (t !== 'bank') (scorer.nullMargin as any).indexReferences = undefined; // the fixed typical (round 5's way)
    const typical = scorer.score('A dog.', '狗。').explain.margin.specificityTypical;
    await runPairing(bank, config, { all: true, scorer });
    const emitted: { source: string; target: string; level: any }[] = [];
    for (const p of await bank.repo(PairsRepo).emittedPairs(config.export.minLevel)) {
      const s = await bank.items.byId(p.sourceItemId);
      const g = await bank.items.byId(p.targetItemId);
      if (s?.bank === 'source' && g) emitted.push({ source: s.extId, target: g.extId, level: p.level });
    }
    const m = evalMetrics({ sourceIds, truth, ranked: new Map(), emitted });
    console.log(JSON.stringify({ typical: t, measured: typical, emitted: m.emitted, correct: m.emittedCorrect, precision: m.emittedPrecision, coverage: m.coverage, byLevel: m.emittedByLevel }));
  }
  await bank.close();
}
