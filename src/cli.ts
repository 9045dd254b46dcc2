// The `capbridge` command: parses arguments, calls the layers, prints. Each command lives in src/commands/.
import { Command } from 'commander';
import { createRequire } from 'node:module';
import { registerImport } from './commands/import.js';
import { registerStats } from './commands/stats.js';
import { registerScore } from './commands/score.js';
import { registerCalibrate } from './commands/calibrate.js';

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
  return program;
}

const isMain = process.argv[1] && /(?:^|[\\/])(cli\.(?:js|ts)|capbridge)$/.test(process.argv[1]);
if (isMain) {
  buildProgram()
    .parseAsync(process.argv)
    .catch((err: Error) => {
      process.stderr.write(`capbridge: ${err.message}\n`);
      process.exitCode = 1;
    });
}
