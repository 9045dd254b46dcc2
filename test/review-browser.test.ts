/// <reference lib="dom" />
// End to end in real headless Chromium (Debian `chromium`, driven by playwright-core): `capbridge serve` on a bank
// built by import → SIFT features → LSH match → pairing with the real C-measure; the list, a pair with one match
// line per stored inlier, a judgement by keyboard that survives a reload, j/k navigation, an image search by
// upload, then `capbridge export --reviewed accepted` holds the accepted pair.
import fs from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { chromium, type Browser } from 'playwright-core';
import { Bank, CandidatesRepo, ReviewsRepo } from '../src/bank/index.js';
import { buildPipelineReviewBank, CHROMIUM, CHROMIUM_ARGS, runInProcess, startServe, type ReviewFixture } from './review-helpers.js';
import { highlight, parseExplain } from '../src/review/index.js';

describe('review: in headless Chromium, on pairs from the real pipeline', function () {
  this.timeout(120_000);
  let fx: ReviewFixture;
  let browser: Browser | null = null;
  let serve: ChildProcess | null = null;
  let base = '';

  before(async function () {
    if (!fs.existsSync(CHROMIUM)) {
      console.log(`    skipping the browser test: ${CHROMIUM} is missing (apt-get install -y chromium; .ci/run installs it)`);
      this.skip();
    }
    fx = await buildPipelineReviewBank();
    await fx.bank.close();
    const s = await startServe(fx.dataDir);
    serve = s.child;
    base = s.url.replace(/\/$/, '');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
    if (serve && serve.exitCode === null) {
      const exited = new Promise((r) => serve!.once('exit', r));
      serve.kill('SIGTERM');
      await exited;
    }
    if (fx) fs.rmSync(fx.dir, { recursive: true, force: true });
  });

  it('lists pairs, opens one, draws its matches, accepts it by keyboard, keeps it after reload, exports it', async () => {
    const page = await browser!.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));

    // what the list should show: the emitted pairs, best C first
    let bank = await Bank.open(fx.dataDir);
    const expected = (await bank.repo(ReviewsRepo).listPairs({ kind: 'emitted', sort: 'c', dir: 'desc' }, { limit: 50 })).rows;
    await bank.close();
    expect(expected.length, 'the fixture has emitted pairs').to.be.at.least(2);

    await page.goto(`${base}/`);
    const rows = page.locator('table.pairs tbody tr');
    expect(await rows.count()).to.equal(expected.length);
    expect(await rows.first().textContent()).to.include(expected[0]!.en);
    // thumbnails really load (served by sharp from the store)
    await page.waitForFunction(() => Array.from(document.querySelectorAll('table.pairs img')).every((i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth > 0));

    await rows.first().locator('a').first().click();
    await page.waitForURL(/\/pair\/\d+\/\d+/);
    const first = expected[0]!;
    const { sourceItemId: s, targetItemId: t } = first;
    expect(new URL(page.url()).pathname).to.equal(`/pair/${s}/${t}`);

    // match lines: one per inlier point pair the lsh-index layer stored for the pair's candidate
    bank = await Bank.open(fx.dataDir);
    const stored = (await bank.repo(CandidatesRepo).listFor(s)).find((c) => c.targetItemId === t)!;
    await bank.close();
    expect(stored.pairs!.length / 4).to.equal(first.inliers);
    expect(first.inliers).to.be.greaterThan(10);
    expect(await page.locator('svg.matches line.inlier').count()).to.equal(first.inliers);
    expect(await page.locator('#inlier-count').textContent()).to.equal(String(first.inliers));
    // the first line joins the first stored point pair (scaled to the common display height)
    const line = page.locator('svg.matches line.inlier').first();
    const [x1, y1] = [Number(await line.getAttribute('x1')), Number(await line.getAttribute('y1'))];
    const sImg = await page.locator('svg.matches image').first().getAttribute('height');
    const scale = Number(sImg) / (await (async () => { const b = await Bank.open(fx.dataDir); const h = (await b.images.get(first.sourceSha))!.height; await b.close(); return h; })());
    expect(x1).to.be.closeTo(stored.pairs![0]! * scale, 0.11);
    expect(y1).to.be.closeTo(stored.pairs![1]! * scale, 0.11);
    expect(await page.locator('svg.matches image').count()).to.equal(2);
    // every word pair the C-measure aligned and the page found on both sides shares one colour
    const explain = parseExplain(first.explain)!;
    expect(explain.matches.length, 'the real C-measure aligned words').to.be.greaterThan(0);
    const legend = highlight(first.en, first.zh, explain).legend.filter((l) => l.foundEn && l.foundZh);
    expect(legend.length).to.be.greaterThan(0);
    for (const l of legend) {
      expect(await page.locator(`#caption-en mark[data-c="${l.colour}"]`).count(), l.en).to.be.at.least(1);
      expect(await page.locator(`#caption-zh mark[data-c="${l.colour}"]`).allTextContents(), l.zh).to.include(l.zh);
      expect(await page.locator(`#caption-zh mark[data-c="${l.colour}"]`).first().getAttribute('title')).to.include(l.zh);
    }

    // accept with the keyboard, set the level too
    await page.keyboard.press('a');
    await page.waitForFunction(() => document.getElementById('review-state')?.getAttribute('data-verdict') === 'accepted');
    await page.keyboard.press('2');
    await page.waitForFunction(() => document.getElementById('review-state')?.getAttribute('data-level') === 'com');
    await page.reload();
    expect(await page.locator('#review-state').getAttribute('data-verdict')).to.equal('accepted');
    expect(await page.locator('#review-state').getAttribute('data-level')).to.equal('com');

    // j: next pair of the list, k: back
    await page.keyboard.press('j');
    await page.waitForURL(new RegExp(`/pair/${expected[1]!.sourceItemId}/${expected[1]!.targetItemId}$`));
    await page.keyboard.press('k');
    await page.waitForURL(new RegExp(`/pair/${s}/${t}$`));
    expect(errors, errors.join('\n')).to.deep.equal([]);

    // the list filtered on the review state shows it
    await page.goto(`${base}/?review=accepted`);
    expect(await page.locator('table.pairs tbody tr').count()).to.equal(1);
    // keyboard on the list: j j selects the second row, r rejects it
    await page.goto(`${base}/`);
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    expect(await page.locator('table.pairs tbody tr.sel').getAttribute('data-pair')).to.equal(`${expected[1]!.sourceItemId}-${expected[1]!.targetItemId}`);
    await page.keyboard.press('r');
    await page.waitForFunction(() => document.querySelector('tr.sel .review-state')?.getAttribute('data-verdict') === 'rejected');

    bank = await Bank.open(fx.dataDir);
    expect((await bank.repo(ReviewsRepo).get(s, t))).to.include({ verdict: 'accepted', level: 'com' });
    expect((await bank.repo(ReviewsRepo).get(expected[1]!.sourceItemId, expected[1]!.targetItemId))).to.include({ verdict: 'rejected', level: null });
    await bank.close();

    // search: upload the English photo, the Chinese outlet's copy comes first
    await page.goto(`${base}/search`);
    await page.setInputFiles('#search-file', path.join(fx.dir, 'set', `${first.sourceExtId}.jpg`));
    await page.waitForSelector('#search-results table tbody tr');
    expect(await page.locator('#search-results tbody tr').first().textContent()).to.include(first.zh).and.include(first.targetExtId);
    expect(errors, errors.join('\n')).to.deep.equal([]);

    const out = path.join(fx.dir, 'accepted.tsv');
    const res = await runInProcess(['export', '--data', fx.dataDir, '--format', 'tsv', '--out', out, '--reviewed', 'accepted', '--json']);
    expect(res.code, res.stderr).to.equal(0);
    const lines = fs.readFileSync(out, 'utf8').trim().split('\n');
    expect(lines).to.have.length(2); // header + the accepted pair
    expect(lines[1]).to.include(first.en).and.include(first.zh).and.match(/\tcom\t/);
  });
});
