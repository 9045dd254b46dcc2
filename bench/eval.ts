// bench:eval — `capbridge eval` on ../shared/data/mining-flickr8k in a fresh temp data dir: import, features,
// match, pair; prints one JSON line with the ranking and emission figures and the wall time.
// CAPBRIDGE_SHARED_DATA overrides the shared data folder; EVAL_SET another set's folder name.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bank } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { runEval } from '../src/eval/eval.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shared = process.env.CAPBRIDGE_SHARED_DATA ?? path.resolve(repoRoot, '..', 'shared', 'data');
delete process.env.CAPBRIDGE_SHARED_DATA; // the bench's own variable, not a config key (loadConfig refuses unknown CAPBRIDGE_*)
const set = path.join(shared, process.env.EVAL_SET ?? 'mining-flickr8k');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-bench-eval-'));
const { config } = loadConfig({});
const bank = await Bank.open(dir);
try {
  const r = await runEval(bank, config, { set });
  const cpu = (fs.readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) ?? [])[1] ?? 'unknown';
  const { stages: _s, import: _i, ...figures } = r;
  void _s;
  void _i;
  process.stdout.write(JSON.stringify({ bench: 'eval', ...figures, cpu, cores: os.cpus().length, date: new Date().toISOString() }) + '\n');
} finally {
  await bank.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
