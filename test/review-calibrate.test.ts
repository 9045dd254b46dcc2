// `capbridge calibrate --from-reviews`: the linguists' judgements become labelled pairs for the calibration.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ReviewsRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { labelledPairsFromReviews } from '../src/review/index.js';
import { testLexicon, testLexiconDir } from './helpers/comparability.js';
import { buildReviewBank, runInProcess, SCENES, type ReviewFixture } from './review-helpers.js';

describe('review: calibrate --from-reviews', function () {
  this.timeout(90_000);
  let fx: ReviewFixture;
  before(async () => {
    fx = await buildReviewBank();
    testLexicon();
    fs.cpSync(testLexiconDir(), path.join(fx.dataDir, 'lexicon'), { recursive: true });
  });
  after(async () => {
    await fx.bank.close();
    fs.rmSync(fx.dir, { recursive: true, force: true });
  });

  it('refuses without judgements, then calibrates on them and writes a config that loads', async () => {
    const out = path.join(fx.dir, 'calibrated.yaml');
    let r = await runInProcess(['calibrate', '--data', fx.dataDir, '--from-reviews', '--out', out]);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.match(/no judgement that sets a level/);
    r = await runInProcess(['calibrate', '--data', fx.dataDir, '--out', out]);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.match(/--pairs FILE\.tsv, --from-reviews, or both/);

    const [a, b, c] = fx.pairs;
    await fx.bank.transaction(async (tx) => {
      const reviews = tx.repo(ReviewsRepo);
      await reviews.set({ ...a!, verdict: 'accepted', level: 'par', en: SCENES[0]!.en, zh: SCENES[0]!.zh });
      await reviews.set({ ...b!, verdict: 'accepted', en: SCENES[1]!.en, zh: SCENES[1]!.zh });
      await reviews.set({ ...c!, verdict: 'rejected', en: SCENES[2]!.en, zh: SCENES[2]!.zh });
    });
    // only the judgement that set a level is a label
    expect((await labelledPairsFromReviews(fx.bank)).map((l) => l.label)).to.deep.equal(['par']);
    // a labelled file and the judgements together
    const file = path.join(fx.dir, 'labelled.tsv');
    fs.writeFileSync(file, 'level\ten\tzh\npar\tA black dog runs across the green field.\t一只黑狗跑过绿色的田野。\ninc\tA black dog runs across the green field.\t厨房里有一台冰箱和一个微波炉。\n');
    r = await runInProcess(['calibrate', '--data', fx.dataDir, '--from-reviews', '--pairs', file, '--out', out, '--json']);
    expect(r.code, r.stderr).to.equal(0);
    const res = JSON.parse(r.stdout.trim());
    expect(res.pairs).to.equal(3);
    const { config } = loadConfig({ configFile: out, env: {} });
    expect(config.comparability.thresholds).to.deep.equal(res.values.thresholds); // what was fitted is what loads
  });
});
