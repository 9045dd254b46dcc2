// Pure parts of the review layer: caption highlighting from the C-measure's explanation, strict query parsing,
// loopback detection, the match-lines SVG; and `capbridge serve` refusing a non-loopback host without a token.
import fs from 'node:fs';
import { expect } from 'chai';
import { highlight, parseExplain, isLoopbackAddress, isLoopbackHost } from '../src/review/index.js';
import { decodeCursor, encodeCursor, parseListQuery } from '../src/review/query.js';
import { matchSvg } from '../src/review/svg.js';
import { labelOf } from '../src/review/labelled.js';
import { tempDir } from './helpers.js';
import { runInProcess } from './review-helpers.js';

describe('review: highlighting, queries, SVG', () => {
  it('finds lemmas in surface words, compounds, entities; same colour index on both sides; escapes text', () => {
    const h = highlight(
      'Firefighters <b>spray</b> the burning fire hydrant as workers searched in Beijing.',
      '消防员在北京向燃烧的消防栓喷水，工人们在搜寻。',
      {
        matches: [
          { en: 'worker', zh: '工人', gloss: 'worker', weight: 0.2 },
          { en: 'fire_hydrant', zh: '消防栓', gloss: 'fire hydrant', weight: 0.3 },
          { en: 'search', zh: '搜寻', gloss: 'to search', weight: 0.1 },
          { en: 'child', zh: '孩子', gloss: 'child', weight: 0.1 },
        ],
        entities: [{ en: 'Beijing', zh: '北京', kind: 'name' }],
      },
    );
    const en = h.en.html;
    const zh = h.zh.html;
    expect(en).to.include('&lt;b&gt;spray&lt;/b&gt;');
    expect(en).to.match(/<mark class="hl c0 ent" data-c="0" [^>]*>Beijing<\/mark>/);
    expect(zh).to.match(/<mark class="hl c0 ent" data-c="0" [^>]*>北京<\/mark>/);
    expect(en).to.match(/data-c="1" [^>]*>workers<\/mark>/);
    expect(zh).to.match(/data-c="1" [^>]*>工人<\/mark>/);
    expect(en).to.match(/data-c="2" title="fire hydrant ↔ 消防栓: fire hydrant \(weight 0.3\)">fire hydrant<\/mark>/);
    expect(en).to.match(/data-c="3" [^>]*>searched<\/mark>/);
    const child = h.legend.find((l) => l.en === 'child')!;
    expect(child).to.include({ foundEn: false, foundZh: false, colour: 4 });
    // irregular and -s plurals through the lemmatizer; a link on words an entity already marks shares its mark
    const h2 = highlight('Children plant trees in the city park on Sunday morning.', '周日上午，孩子们在市公园里植树。', {
      matches: [
        { en: 'child', zh: '孩子', gloss: 'child', weight: 0.15 },
        { en: 'tree', zh: '植树', gloss: 'plant trees', weight: 0.15 },
        { en: 'sunday', zh: '周日', gloss: 'Sunday', weight: 0.15 },
      ],
      entities: [{ en: 'Sunday', zh: '周日', kind: 'date' }],
    });
    expect(h2.en.html).to.match(/data-c="1" [^>]*>Children<\/mark>/);
    expect(h2.en.html).to.match(/data-c="2" [^>]*>trees<\/mark>/);
    expect(h2.en.html).to.match(/<mark class="hl c0 ent" data-c="0" title="date: Sunday ↔ 周日; sunday ↔ 周日: Sunday \(weight 0.15\)">Sunday<\/mark>/);
    expect(h2.legend.find((l) => l.en === 'sunday')).to.include({ colour: 0, foundEn: true, foundZh: true });
    // two English words linked to one Chinese word: both in that word's colour
    const h3 = highlight('Fans greet the national team.', '球迷迎接国家队。', {
      matches: [
        { en: 'team', zh: '国家队', gloss: 'national team', weight: 0.14 },
        { en: 'fan', zh: '球迷', gloss: 'fan', weight: 0.14 },
        { en: 'national', zh: '国家队', gloss: 'national team', weight: 0.07 },
      ],
      entities: [],
    });
    expect(h3.en.html).to.match(/data-c="0" [^>]*>national<\/mark> <mark class="hl c0" data-c="0" [^>]*>team<\/mark>/);
    expect(h3.zh.html).to.match(/data-c="0" title="team ↔ 国家队: national team \(weight 0.14\); national ↔ 国家队: national team \(weight 0.07\)">国家队<\/mark>/);
    expect(h3.legend.map((l) => l.colour)).to.deep.equal([0, 1, 0]);
    expect(highlight('a <i>', '中', null).en.html).to.equal('a &lt;i&gt;');
    expect(parseExplain('{"test":true}')).to.equal(null);
    expect(parseExplain('not json')).to.equal(null);
    expect(parseExplain('{"matches":[{"en":"x","zh":"y","gloss":"g","weight":"0.5"}]}')!.matches[0]!.weight).to.equal(0.5);
  });

  it('parses list queries strictly and round-trips cursors', () => {
    expect(parseListQuery({}).filter).to.deep.equal({ kind: 'emitted', sort: 'c', dir: 'desc' });
    const q = parseListQuery({ kind: 'all', level: 'pse', cmin: '0.25', site: 'news.example.org', from: '2026-11-01', to: '2026-11-02', review: 'accepted', sort: 'date', limit: '10' });
    expect(q.filter).to.deep.include({ kind: 'all', level: 'pse', cMin: 0.25, site: 'news.example.org', from: '2026-11-01', to: '2026-11-03', review: 'accepted', sort: 'date', dir: 'desc' });
    expect(q.limit).to.equal(10);
    for (const bad of [{ limit: '201' }, { cmin: '1e3' }, { cmin: 'NaN' }, { site: '../x' }, { site: "a'b" }, { sort: 'x' }, { level: ['par', 'com'] }, { nope: '1' }]) {
      expect(() => parseListQuery(bad as never), JSON.stringify(bad)).to.throw(/./);
    }
    expect(decodeCursor(encodeCursor({ v: 0.5, id: 7 }), 'c')).to.deep.equal({ v: 0.5, id: 7 });
    expect(decodeCursor(encodeCursor({ v: null, id: 7 }), 'image')).to.deep.equal({ v: null, id: 7 });
    expect(() => decodeCursor(encodeCursor({ v: 'x', id: 7 }), 'c')).to.throw(/cursor/);
    expect(() => decodeCursor(encodeCursor({ v: 3, id: 7 }), 'id')).to.throw(/cursor/);
  });

  it('labels judgements for calibration only by a level the linguist set', () => {
    const base = { sourceItemId: 1, targetItemId: 2, en: 'e', zh: 'z', c: 0.5, fc: 0.5, fe: 0, fl: 1, reviewedAt: 'x' };
    expect(labelOf({ ...base, verdict: 'accepted', level: 'pse', machineLevel: 'par' })).to.equal('pse');
    expect(labelOf({ ...base, verdict: null, level: 'par', machineLevel: 'com' })).to.equal('par');
    // a verdict alone says keep or drop, not which level: no label
    expect(labelOf({ ...base, verdict: 'rejected', level: null, machineLevel: 'par' })).to.equal(null);
    expect(labelOf({ ...base, verdict: 'accepted', level: null, machineLevel: 'pse' })).to.equal(null);
    expect(labelOf({ ...base, verdict: null, level: null, machineLevel: 'par' })).to.equal(null);
  });

  it('tells loopback from other addresses', () => {
    for (const a of ['127.0.0.1', '127.3.4.5', '::1', '::ffff:127.0.0.1']) expect(isLoopbackAddress(a), a).to.equal(true);
    for (const a of ['10.0.0.1', '0.0.0.0', '::', '192.168.1.2', '::ffff:8.8.8.8', 'localhost', '', 'garbage']) expect(isLoopbackAddress(a), a).to.equal(false);
    expect(isLoopbackHost('localhost')).to.equal(true);
    expect(isLoopbackHost('0.0.0.0')).to.equal(false);
  });

  it('draws one line per match, scaled from each image to the common display height', () => {
    const svg = matchSvg({ href: '/image/a', width: 400, height: 300 }, { href: '/image/b', width: 200, height: 600 }, {
      inliers: [[0, 0, 0, 0], [400, 300, 200, 600]],
      rejected: [[10, 10, 10, 10]],
    });
    expect((svg.match(/<line class="inlier"/g) ?? []).length).to.equal(2);
    expect((svg.match(/<line class="rejected"/g) ?? []).length).to.equal(1);
    // display height 600: left scaled x2 (800 wide), gap 24, right scaled x1
    expect(svg).to.include('x1="800" y1="600" x2="1024" y2="600"');
    expect(svg).to.include('viewBox="0 0 1024 600"');
    expect(matchSvg({ href: 'a"><script>', width: 1, height: 1 }, { href: 'b', width: 1, height: 1 }, null)).not.to.include('"><script>');
  });

  it('serve refuses a non-loopback host without a token, and a bad port', async () => {
    const dir = tempDir();
    const saved = process.env.CAPBRIDGE_TOKEN;
    delete process.env.CAPBRIDGE_TOKEN;
    try {
      let r = await runInProcess(['serve', '--data', dir, '--host', '0.0.0.0', '--port', '0']);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.match(/refusing to listen on 0\.0\.0\.0.*token/);
      r = await runInProcess(['serve', '--data', dir, '--port', '99999']);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.include('--port');
    } finally {
      if (saved !== undefined) process.env.CAPBRIDGE_TOKEN = saved;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
