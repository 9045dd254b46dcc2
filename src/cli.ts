// The `capbridge` command: parses arguments, calls the layers, prints. Each command lives in src/commands/.
import { Command } from 'commander';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const pkg = require('../package.json') as { version: string };

type Register = (program: Command) => void;

/**
 * Every command: its name, a one-line summary for the top-level help, and how to load its module. Modules are
 * loaded only for the command being run: the layers pull in heavy libraries (sharp and the SIFT WebAssembly, the crawler's
 * parsers, the lexicon's dictionaries), and `capbridge stats` should not pay for the crawler. One module may register several commands.
 */
export const COMMANDS: Array<{ name: string; summary: string; load: () => Promise<Register> }> = [
  { name: 'import', summary: 'import (image, caption) items from a TSV manifest into a bank', load: async () => (await import('./commands/import.js')).registerImport },
  { name: 'stats', summary: 'counts per bank and status, failures by reason, database and image-store size', load: async () => (await import('./commands/stats.js')).registerStats },
  { name: 'images', summary: "the image store: copy a bank's images to another store (folder, s3://bucket/prefix), check it holds them", load: async () => (await import('./commands/images.js')).registerImages },
  { name: 'crawl', summary: 'one harvest cycle over the site profiles into the banks', load: async () => (await import('./commands/crawl.js')).registerCrawl },
  { name: 'extract', summary: 'extract (image, caption) pairs from a saved article page', load: async () => (await import('./commands/extract.js')).registerExtract },
  { name: 'features', summary: "the features stage: SIFT for every bank item still new, the target bank's index, caption counts", load: async () => (await import('./commands/features.js')).registerFeatures },
  { name: 'index', summary: 'old name of `features` (goes away in the next release)', load: async () => (await import('./commands/features.js')).registerIndex },
  { name: 'keypoints', summary: 'SIFT keypoints and descriptors of image files, one JSON line each', load: async () => (await import('./commands/keypoints.js')).registerKeypoints },
  { name: 'search', summary: 'rank the target items that show the same scene as an image', load: async () => (await import('./commands/search.js')).registerSearch },
  { name: 'match', summary: 'rank target candidates for every source not yet matched', load: async () => (await import('./commands/match.js')).registerMatch },
  { name: 'score', summary: 'C-measure of caption pairs (fc, fe, fl, c, level, and why)', load: async () => (await import('./commands/score.js')).registerScore },
  { name: 'calibrate', summary: 'fit C-measure weights and level thresholds on labelled pairs', load: async () => (await import('./commands/calibrate.js')).registerCalibrate },
  { name: 'pair', summary: 'decide pairs: score verified image candidates with the C-measure', load: async () => (await import('./commands/export.js')).registerExport },
  { name: 'export', summary: 'write the emitted pairs as TSV, JSONL, TMX or Moses', load: async () => (await import('./commands/export.js')).registerExport },
  { name: 'worker', summary: 'claim and run jobs (features, match, pair) from a PostgreSQL bank shared with other workers', load: async () => (await import('./commands/worker.js')).registerWorker },
  { name: 'daemon', summary: 'run the pipeline on schedules, with /healthz and /metrics', load: async () => (await import('./commands/daemon.js')).registerDaemon },
  { name: 'eval', summary: 'P@n, emitted precision, coverage on a labelled set', load: async () => (await import('./commands/eval.js')).registerEval },
  { name: 'serve', summary: 'the review page: pairs, both photos with keypoint matches, aligned captions, judgements', load: async () => (await import('./commands/serve.js')).registerServe },
];

const GLOBAL_WITH_VALUE = new Set(['--data', '--config', '--log-level', '--images', '--db']);

/**
 * The database option's old spellings, kept until the next release: `--bank postgres://…` (anywhere on the line; it
 * shared its name with `import --bank source|target`) and `--bank-url URL` become `--db URL`, each with a warning.
 */
export function oldDbArgs(args: string[], warn: (msg: string) => void = (m) => process.stderr.write(`capbridge: ${m}\n`)): string[] {
  const out: string[] = [];
  const told = () => warn('`--bank postgres://…` and `--bank-url` are now `--db URL` (the old spellings work until the next release)');
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const eq = a.startsWith('--bank=') ? a.slice(7) : a.startsWith('--bank-url=') ? a.slice(11) : undefined;
    if (eq !== undefined && (a.startsWith('--bank-url=') || /^postgres(ql)?:\/\//.test(eq))) (out.push('--db', eq), told());
    else if ((a === '--bank' && /^postgres(ql)?:\/\//.test(args[i + 1] ?? '')) || a === '--bank-url') (out.push('--db', args[++i] ?? ''), told());
    else out.push(a);
  }
  return out;
}

/** The command named in argv (skipping global options and their values), if any. */
export function commandNameIn(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (GLOBAL_WITH_VALUE.has(a)) {
      i++;
      continue;
    }
    if (a.startsWith('-')) continue;
    return a === 'help' ? args[i + 1] : a;
  }
  return undefined;
}

/** Builds the program with the real definition of `only` (or of every command) and summaries for the rest. */
export async function buildProgram(only?: string | 'all'): Promise<Command> {
  const program = new Command();
  program
    .name('capbridge')
    .description('Mine English–Chinese comparable sentence pairs from news photos and their captions.')
    .version(pkg.version)
    .option('--data <dir>', 'data directory (default: $CAPBRIDGE_DATA or ./capbridge-data)')
    .option('--config <file>', 'YAML file overriding config/default.yaml')
    .option('--log-level <level>', 'error | warn | info | debug')
    .option('--db <url>', 'a PostgreSQL database (postgres://user:pass@host:port/db) holding both banks, instead of the SQLite file in the data dir (default: config database.url, $CAPBRIDGE_DATABASE__URL)')
    .option('--images <store>', 'where image bytes live: folder (the data dir) or s3://bucket/prefix (default: config images.store, $CAPBRIDGE_IMAGES__STORE)')
    .showHelpAfterError()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  const loaded = new Set<Register>();
  for (const c of COMMANDS) {
    if (only === 'all' || c.name === only) {
      const register = await c.load();
      if (!loaded.has(register)) register(program);
      loaded.add(register);
    }
  }
  for (const c of COMMANDS) {
    if (!program.commands.some((cmd) => cmd.name() === c.name)) program.command(c.name).description(c.summary);
  }
  return program;
}

/** Parses process.argv and runs the command (bin/capbridge calls this). */
export async function main(argv = process.argv): Promise<void> {
  try {
    argv = [...argv.slice(0, 2), ...oldDbArgs(argv.slice(2))];
    const name = commandNameIn(argv.slice(2));
    const known = COMMANDS.some((c) => c.name === name);
    await (await buildProgram(known ? name : undefined)).parseAsync(argv);
  } catch (err) {
    process.stderr.write(`capbridge: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}

// Run when executed directly (`node dist/cli.js`, `tsx src/cli.ts`), not when imported by bin/ or tests.
const self = fileURLToPath(import.meta.url);
if (process.argv[1] && fs.existsSync(process.argv[1]) && fs.realpathSync(process.argv[1]) === self) void main();
