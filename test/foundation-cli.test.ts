import { expect } from 'chai';
import path from 'node:path';
import { buildProgram, COMMANDS, commandNameIn, oldDbArgs } from '../src/cli.js';
import { runCli, tempDir } from './helpers.js';

describe('cli', () => {
  it('every command answers --help with exit 0', async function () {
    this.timeout(300000); // one process per command; slow on a loaded 2-core machine
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

  it("the database option is --db; the old --bank postgres://… and --bank-url become --db with a warning, import's --bank stays", () => {
    const told: string[] = [];
    const warn = (m: string) => told.push(m);
    expect(oldDbArgs(['--bank', 'postgres://u@h/db', 'import', '--bank', 'source'], warn)).to.deep.equal(['--db', 'postgres://u@h/db', 'import', '--bank', 'source']);
    expect(oldDbArgs(['--bank-url=postgres://u@h/db', 'stats'], warn)).to.deep.equal(['--db', 'postgres://u@h/db', 'stats']);
    expect(told).to.have.length(2);
    expect(told[0]).to.contain('--db URL');
    expect(oldDbArgs(['--db', 'postgres://u@h/db', 'import', '--bank', 'target'], warn)).to.deep.equal(['--db', 'postgres://u@h/db', 'import', '--bank', 'target']);
    expect(told).to.have.length(2);
  });

  it('`features` runs the features stage; `index` (its old name) and `features FILE` (now `keypoints`) still work with a warning', async function () {
    this.timeout(120000);
    const data = tempDir();
    const stage = await runCli(['--data', data, 'features', '--json']);
    expect(stage.code, stage.stderr).to.equal(0);
    expect(JSON.parse(stage.stdout)).to.include({ featured: 0, failed: 0, indexed: 0, captionsCounted: 0 });
    const old = await runCli(['--data', data, 'index', '--json']);
    expect(old.code, old.stderr).to.equal(0);
    expect(old.stderr).to.contain('`capbridge index` is now `capbridge features`');
    const dump = await runCli(['--data', data, 'features', path.join(data, 'missing.jpg')]);
    expect(dump.stderr).to.contain('is now `capbridge keypoints FILE…`');
    expect(JSON.parse(dump.stdout.trim())).to.have.property('error');
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
