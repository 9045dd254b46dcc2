// The compiled CLI the benchmarks that spawn `capbridge` run (dist/cli.js), refused when it is older than a source
// file: a stale build measured yesterday's code under today's commit (issue 35 round 9: bench:index --cli used a
// dist/ built before the change it was meant to measure). `npm run build` makes it current.
import fs from 'node:fs';
import path from 'node:path';

/** The newest file under `dir` (recursively), with its modification time in ms. */
function newest(dir: string): { file: string; mtimeMs: number } {
  let best = { file: dir, mtimeMs: 0 };
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    const n = e.isDirectory() ? newest(p) : { file: p, mtimeMs: fs.statSync(p).mtimeMs };
    if (n.mtimeMs > best.mtimeMs) best = n;
  }
  return best;
}

/** dist/cli.js when it exists and is current; undefined when it was never built; an error naming the newer source
 *  file when it is stale. */
export function builtCli(repoRoot: string): string | undefined {
  const built = path.join(repoRoot, 'dist', 'cli.js');
  if (!fs.existsSync(built)) return undefined;
  const src = newest(path.join(repoRoot, 'src'));
  if (src.mtimeMs > fs.statSync(built).mtimeMs) throw new Error(`${built} is older than ${path.relative(repoRoot, src.file)}: run \`npm run build\` (or remove dist/ to run the sources through tsx)`);
  return built;
}

/** builtCli, required: the benchmarks that need the compiled CLI (npm run build first). */
export function requireBuiltCli(repoRoot: string): string {
  const built = builtCli(repoRoot);
  if (!built) throw new Error(`${path.join(repoRoot, 'dist', 'cli.js')} does not exist: run \`npm run build\``);
  return built;
}
