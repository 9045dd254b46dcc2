import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig, envNameFor, writeConfigFile, DEFAULT_CONFIG_FILE } from '../src/config/load.js';
import { tempDir, runCli } from './helpers.js';

describe('config', () => {
  it('loads the shipped defaults', () => {
    const { config } = loadConfig({ env: {} });
    expect(config.sift.maxSide).to.equal(640);
    expect(config.match.ratio).to.equal(0.8);
    const w = config.comparability.weights;
    expect(w.alpha + w.beta + w.gamma + w.delta).to.be.closeTo(1, 1e-9);
    const t = config.comparability.thresholds;
    expect(t.par >= t.com && t.com >= t.pse).to.equal(true);
  });

  it('refuses the retired level keys with where they went', () => {
    const dir = tempDir();
    const file = path.join(dir, 'old-calibration.yaml');
    fs.writeFileSync(file, 'comparability:\n  levels:\n    par: 0.6\n    com: 0.5\n    pse: 0.4\n  a: 2.2\n');
    expect(() => loadConfig({ configFile: file, env: {} })).to.throw(/comparability\.levels" was replaced by comparability\.thresholds/);
  });

  it('refuses a retired value with why and what to use instead', () => {
    const file = path.join(tempDir(), 'old-order.yaml');
    fs.writeFileSync(file, 'match:\n  views:\n    archive:\n      views: unfound\n');
    expect(() => loadConfig({ configFile: file, env: {} })).to.throw(/old-order\.yaml.*"match\.views\.archive\.views".*"unfound" was removed.*use none \(the default\) or before/);
  });

  it('overrides from a file, then from CAPBRIDGE_* variables', () => {
    const dir = tempDir();
    const file = path.join(dir, 'my.yaml');
    fs.writeFileSync(file, 'sift:\n  maxSide: 800\nmatch:\n  ratio: 0.7\n');
    const { config, files } = loadConfig({ configFile: file, env: { [envNameFor(['sift', 'maxSide'])]: '1024', CAPBRIDGE_DAEMON__CRAWL_SCHEDULE: '*/5 * * * *' } });
    expect(envNameFor(['sift', 'maxSide'])).to.equal('CAPBRIDGE_SIFT__MAX_SIDE');
    expect(config.sift.maxSide).to.equal(1024);
    expect(config.match.ratio).to.equal(0.7);
    expect(config.daemon.crawlSchedule).to.equal('*/5 * * * *');
    expect(config.sift.maxKeypoints).to.equal(1000);
    expect(files).to.deep.equal([DEFAULT_CONFIG_FILE, path.resolve(file)]);
  });

  it('takes a renamed key (file or variable) under its new name for one release, with a warning naming both', () => {
    const dir = tempDir();
    const file = path.join(dir, 'old.yaml');
    fs.writeFileSync(file, 'bank:\n  url: postgres://u@h/db\nexport:\n  minImageScore: 0.35\n  minInliers: 15\n');
    const { config, warnings } = loadConfig({ configFile: file, env: {} });
    expect(config.database.url).to.equal('postgres://u@h/db');
    expect([config.match.minScore, config.match.minInliers]).to.deep.equal([0.35, 15]);
    expect(warnings.join('\n')).to.contain('"bank.url" is now "database.url"').and.to.contain('"export.minImageScore" is now "match.minScore"').and.to.contain(file);
    const fromEnv = loadConfig({ env: { CAPBRIDGE_BANK__URL: 'postgres://v@h/db' } });
    expect(fromEnv.config.database.url).to.equal('postgres://v@h/db');
    expect(fromEnv.warnings.join('\n')).to.contain('CAPBRIDGE_BANK__URL is now CAPBRIDGE_DATABASE__URL');
    // the new name wins where both are set, and the old one is named as ignored
    const both = loadConfig({ env: { CAPBRIDGE_BANK__URL: 'postgres://old@h/db', CAPBRIDGE_DATABASE__URL: 'postgres://new@h/db' } });
    expect(both.config.database.url).to.equal('postgres://new@h/db');
    expect(both.warnings.join('\n')).to.contain('CAPBRIDGE_BANK__URL is ignored');
  });

  it('refuses an unknown key, naming the key and the file', () => {
    const file = path.join(tempDir(), 'bad.yaml');
    fs.writeFileSync(file, 'sift:\n  maxSyde: 800\n');
    expect(() => loadConfig({ configFile: file, env: {} })).to.throw(/bad\.yaml.*unknown key "sift\.maxSyde"/);
  });

  it('refuses a wrong type, naming the key and the file', () => {
    const file = path.join(tempDir(), 'typo.yaml');
    fs.writeFileSync(file, 'match:\n  ratio: high\n');
    expect(() => loadConfig({ configFile: file, env: {} })).to.throw(/typo\.yaml.*"match\.ratio"/);
  });

  it('refuses an unknown CAPBRIDGE_ variable and a badly typed one', () => {
    expect(() => loadConfig({ env: { CAPBRIDGE_SIFT__NOPE: '1' } })).to.throw(/environment: unknown key CAPBRIDGE_SIFT__NOPE/);
    expect(() => loadConfig({ env: { CAPBRIDGE_SIFT__MAX_SIDE: 'big' } })).to.throw(/CAPBRIDGE_SIFT__MAX_SIDE.*"sift\.maxSide"/);
  });

  it('writes a config file atomically that loads back', () => {
    const file = path.join(tempDir(), 'calibrated.yaml');
    writeConfigFile(file, { comparability: { weights: { alpha: 0.7, beta: 0.2, gamma: 0.1 } } });
    expect(loadConfig({ configFile: file, env: {} }).config.comparability.weights.alpha).to.equal(0.7);
    expect(() => writeConfigFile(file, { comparability: { weights: { alpha: 'x' } } })).to.throw(/alpha/);
    expect(fs.readdirSync(path.dirname(file))).to.deep.equal(['calibrated.yaml']);
  });

  it('stops the CLI at start-up with the message on stderr and a non-zero exit', async () => {
    const file = path.join(tempDir(), 'bad.yaml');
    fs.writeFileSync(file, 'daemon:\n  port: "x"\n');
    const res = await runCli(['--config', file, 'stats', '--data', tempDir()]);
    expect(res.code).to.not.equal(0);
    expect(res.stderr).to.match(/bad\.yaml.*"daemon\.port"/);
  });
});
