// The `capbridge` command: parses arguments, calls the layers, prints. Each command lives in src/commands/.
import { Command } from 'commander';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { registerImport } from './commands/import.js';
import { registerStats } from './commands/stats.js';
import { registerScore } from './commands/score.js';
import { registerCalibrate } from './commands/calibrate.js';
import { registerExport } from './commands/export.js';
import { registerFeatures } from './commands/features.js';
import { registerIndex } from './commands/index-cmd.js';

const require = createRequire(import.meta.url);
const pkg = require('../package.json') as { version: string };

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('capbridge')
    .description('Mine English–Chinese comparable sentence pairs from news photos and their captions.')
    .version(pkg.version)
    .option('--data <dir>', 'data directory (default: $CAPBRIDGE_DATA or ./capbridge-data)')
    .option('--config <file>', 'YAML file overriding config/default.yaml')
    .option('--log-level <level>', 'error | warn | info | debug')
    .showHelpAfterError()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  registerImport(program);
  registerStats(program);
  registerScore(program);
  registerCalibrate(program);
  registerExport(program);
  registerFeatures(program);
  registerIndex(program);
  return program;
}

/** Parses process.argv and runs the command (bin/capbridge calls this). */
export async function main(argv = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    process.stderr.write(`capbridge: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}

// Run when executed directly (`node dist/cli.js`, `tsx src/cli.ts`), not when imported by bin/ or tests.
const self = fileURLToPath(import.meta.url);
if (process.argv[1] && fs.existsSync(process.argv[1]) && fs.realpathSync(process.argv[1]) === self) void main();
