import { expect } from 'chai';
import path from 'node:path';
import { buildProgram, COMMANDS, commandNameIn } from '../src/cli.js';
import { runCli, tempDir } from './helpers.js';

describe('cli', () => {
  it('every command answers --help with exit 0', async () => {
    const program = await buildProgram('all');
    const names = program.commands.map((c) => c.name());
    expect(names).to.have.members(COMMANDS.map((c) => c.name));
    for (const name of names) {
      const res = await runCli([name, '--help']);
      expect(res.code, `${name} --help: ${res.stderr}`).to.equal(0);
      expect(res.stdout).to.include(`Usage: capbridge ${name}`);
    }
  });

  it('finds the command name after global options', () => {
    expect(commandNameIn(['--data', 'x', 'stats', '--json'])).to.equal('stats');
    expect(commandNameIn(['--log-level', 'debug', '--config', 'c.yaml', 'import', '--bank', 'source'])).to.equal('import');
    expect(commandNameIn(['help', 'export'])).to.equal('export');
    expect(commandNameIn(['--version'])).to.equal(undefined);
  });

  it('an unknown command or a missing option fails on stderr with a non-zero exit', async () => {
    const res = await runCli(['frobnicate']);
    expect(res.code).to.not.equal(0);
    expect(res.stderr).to.match(/unknown command/);
    const res2 = await runCli(['import', '--bank', 'source', '--data', tempDir()]);
    expect(res2.code).to.not.equal(0);
    expect(res2.stderr).to.match(/--manifest/);
  });

  it('uses $CAPBRIDGE_DATA when --data is absent', async () => {
    const dir = tempDir();
    const res = await runCli(['stats', '--json'], { env: { CAPBRIDGE_DATA: dir } });
    expect(res.code, res.stderr).to.equal(0);
    expect(JSON.parse(res.stdout).dataDir).to.equal(path.resolve(dir));
  });
});
