// kill -9 in the middle of a daemon cycle, restart: nothing lost, nothing duplicated — the restarted data dir
// ends in the same state as an uninterrupted run on the same input.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { Bank, PairsRepo, StatsRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { generateSites, writeManifest } from '../src/demo/sites.js';
import { importManifest } from '../src/import/manifest.js';
import { REPO_ROOT, runCli, tempDir } from './helpers.js';

const config = loadConfig({}).config;

// smaller SIFT work than the defaults: the test is about resuming, not about matching quality
// and no site profiles: the crawl stage fetches nothing (tests use no network)
const FAST = {
  CAPBRIDGE_SIFT__UPSAMPLE: 'false', CAPBRIDGE_SIFT__MAX_SIDE: '400', CAPBRIDGE_SIFT__MAX_KEYPOINTS: '400',
  CAPBRIDGE_CRAWLER__SITES_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-nosites-')),
};

async function importSites(data: string, sitesDir: string): Promise<void> {
  const sites = await generateSites(sitesDir);
  const bank = await Bank.open(data);
  try {
    for (const s of sites) {
      // a subset of the demo's stories: 3 shared scenes plus one unshared photo on each side
      const file = writeManifest(s, `https://${s.name}.example`);
      const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
      const keep = lines.filter((l, i) => i === 0 || /images\/(harbour-fire|flood-rescue|bridge|museum|gangkou-huozai|hongshui|liugan|gaotie)\.jpg/.test(l));
      fs.writeFileSync(file, keep.join('\n') + '\n');
      await importManifest(bank, { bank: s.name === 'en' ? 'source' : 'target', manifest: file, config });
    }
  } finally {
    await bank.close();
  }
}

async function snapshot(data: string) {
  const bank = await Bank.open(data);
  try {
    const stats = bank.repo(StatsRepo);
    const pairs = bank.repo(PairsRepo);
    return {
      source: (await stats.bankCounts('source')).byStatus,
      target: (await stats.bankCounts('target')).byStatus,
      candidates: await pairs.countCandidates(),
      emitted: await pairs.count(true),
      decided: (await pairs.count(true)) + (await pairs.count(false)),
      byLevel: await pairs.countByLevel(),
    };
  } finally {
    await bank.close();
  }
}

describe('daemon: SIGKILL mid-cycle, then restart', function () {
  this.timeout(180000);

  it('resumes with nothing lost and no pair duplicated', async () => {
    const dir = tempDir();
    const sitesDir = path.join(dir, 'sites');
    const killed = path.join(dir, 'killed');
    const reference = path.join(dir, 'reference');
    await importSites(killed, sitesDir);
    await importSites(reference, path.join(dir, 'sites2'));

    // the stage to kill in: the longest one present in this build
    const killAt = 'match: started';
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'src', 'cli.ts'), '--data', killed, 'daemon', '--once'], {
      cwd: REPO_ROOT,
      env: { ...process.env, CI: '1', CAPBRIDGE_LOG_LEVEL: 'info', ...FAST },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
    await new Promise<void>((resolve) => {
      child.stderr!.on('data', (d) => {
        err += d;
        if (err.includes(killAt)) resolve();
      });
      void exited.then(() => resolve());
    });
    // killed on the event (the match stage has started: features committed, match under way), not after a delay
    const killedMidway = child.exitCode === null;
    if (killedMidway) child.kill('SIGKILL');
    const sig = await exited;
    expect(killedMidway, `daemon exited before "${killAt}": ${err}`).to.equal(true);
    expect(sig).to.equal('SIGKILL');
    // the lock of the killed daemon is stale; the restart takes it over and completes the cycle
    expect(fs.existsSync(path.join(killed, 'daemon.lock'))).to.equal(true);
    const restart = await runCli(['--data', killed, 'daemon', '--once', '--json'], { env: FAST });
    expect(restart.code, restart.stderr).to.equal(0);
    expect(restart.stderr).to.match(/took over a stale lock/);

    // the comparability lexicon cache built by the restart serves the reference run too (saves its build time)
    if (fs.existsSync(path.join(killed, 'lexicon'))) fs.cpSync(path.join(killed, 'lexicon'), path.join(reference, 'lexicon'), { recursive: true });
    const ref = await runCli(['--data', reference, 'daemon', '--once', '--json'], { env: FAST });
    expect(ref.code, ref.stderr).to.equal(0);
    const refSnap = await snapshot(reference);
    // the input is made so that the cycle has real work: shared photos are matched and some pairs emitted
    expect(refSnap.candidates).to.be.greaterThan(0);
    expect(refSnap.emitted).to.be.greaterThan(0);
    expect(await snapshot(killed)).to.deep.equal(refSnap);

    // a further cycle changes nothing and duplicates nothing; an export holds each pair once
    const again = await runCli(['--data', killed, 'daemon', '--once'], { env: FAST });
    expect(again.code, again.stderr).to.equal(0);
    expect(await snapshot(killed)).to.deep.equal(await snapshot(reference));
    const out = path.join(dir, 'pairs.tsv');
    const exp = await runCli(['--data', killed, 'export', '--format', 'tsv', '--out', out, '--min-level', 'pse']);
    expect(exp.code, exp.stderr).to.equal(0);
    const lines = fs.readFileSync(out, 'utf8').trim().split('\n').slice(1);
    expect(new Set(lines).size).to.equal(lines.length);
  });
});
