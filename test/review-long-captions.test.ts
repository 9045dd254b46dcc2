// The review page and hostile item fields (issue 36, finding 7): only http(s) page URLs become links (a manifest may
// give `javascript:alert(1)`), and a caption of a megabyte is shown cut on the list (with its length and the way to
// the whole) and on its pair's page highlighted in its first part, the whole text behind "show all".
import { expect } from 'chai';
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Bank } from '../src/bank/index.js';
import { Bank as BankClass } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { createReviewServer } from '../src/review/index.js';
import { addItem, decision, storeDecisions } from './export-helpers.js';
import { tempDir } from './helpers.js';

describe('review page: hostile URLs and long captions', function () {
  this.timeout(60_000);
  const dir = tempDir('capbridge-review-long-');
  const { config } = loadConfig();
  let bank: Bank;
  let app: FastifyInstance;
  const long = 'The flood reached the old town. '.repeat(32_768) + 'END-OF-CAPTION'; // ~1 MB
  let ids: { js: [number, number]; long: [number, number] };

  before(async () => {
    bank = await BankClass.open(dir);
    const s1 = await addItem(bank, dir, 'source', 'js', 'A fire in the harbour.', 11, { pageUrl: 'javascript:alert(1)' });
    const t1 = await addItem(bank, dir, 'target', 'js-t', '港口发生火灾。', 12, { pageUrl: 'https://news.example/zh/1' });
    const s2 = await addItem(bank, dir, 'source', 'long', long, 13);
    const t2 = await addItem(bank, dir, 'target', 'long-t', '洪水到达老城。', 14);
    await storeDecisions(bank, [decision(s1, t1, 'A fire in the harbour.', '港口发生火灾。', 'com', 0.5), decision(s2, t2, long, '洪水到达老城。', 'com', 0.4)]);
    ids = { js: [s1, t1], long: [s2, t2] };
    app = createReviewServer(bank, config, { host: '127.0.0.1', token: '' });
    await app.ready();
  });
  after(async () => {
    await app?.close();
    await bank?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a javascript: page URL is shown as text, never as a link; an https one is a link', async () => {
    const res = await app.inject({ method: 'GET', url: `/pair/${ids.js[0]}/${ids.js[1]}` });
    expect(res.statusCode).to.equal(200);
    expect(res.body).to.not.match(/href="javascript:/i);
    expect(res.body).to.include('javascript:alert(1)');
    expect(res.body).to.include('href="https://news.example/zh/1"');
  });

  it('the list shows a 1 MB caption cut, with its length and a link to the pair; the API list too', async () => {
    const res = await app.inject({ method: 'GET', url: '/?kind=all' });
    expect(res.statusCode).to.equal(200);
    expect(res.body.length).to.be.below(60_000);
    expect(res.body).to.match(new RegExp(`… <a class="more" href="/pair/${ids.long[0]}/${ids.long[1]}[^"]*">\\(${long.length.toLocaleString('en')} characters in all: open the pair\\)</a>`));
    const api = await app.inject({ method: 'GET', url: '/api/pairs?kind=all' });
    expect(api.body.length).to.be.below(60_000);
    const row = (api.json() as { rows: { sourceItemId: number; sourceCaption: string; sourceCaptionChars: number }[] }).rows.find((r) => r.sourceItemId === ids.long[0])!;
    expect(row.sourceCaptionChars).to.equal(long.length);
    expect(row.sourceCaption).to.equal(long.slice(0, 600));
  });

  it('the pair page highlights the first part and holds the whole caption behind "show all"', async () => {
    const res = await app.inject({ method: 'GET', url: `/pair/${ids.long[0]}/${ids.long[1]}` });
    expect(res.statusCode).to.equal(200);
    expect(res.body).to.include(`show all ${long.length.toLocaleString('en')} characters`);
    expect(res.body).to.include('END-OF-CAPTION');
    expect(res.body).to.match(/<details class="caption-rest" id="caption-en-all">/);
  });
});
