import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { loadConfig } from '../src/config/load.js';
import { createScorer, updateIdf, levelOf, BASELINE_MEASURE, DEFAULT_MEASURE } from '../src/lib/comparability/index.js';
import { ConceptSpace } from '../src/lib/comparability/measure.js';
import { Bank, TermStatsRepo } from '../src/bank/index.js';
import { testLexicon, testLexiconDir } from './helpers/comparability.js';
import { forEachBackend } from './helpers/backends.js';

const { config } = loadConfig({ env: {} });

describe('comparability: the C-measure', () => {
  const scorer = () => createScorer(config, { cacheDir: testLexiconDir() });

  it('scores a translated pair above an unrelated pair, and explains the match', () => {
    const s = scorer();
    const en = 'Two children are playing football on the grass in the park.';
    const good = s.score(en, '两个孩子在公园的草地上踢足球。');
    const bad = s.score(en, '厨房的桌子上放着一碗热汤。');
    expect(good.c).to.be.greaterThan(bad.c + 0.2);
    expect(good.fc).to.be.greaterThan(bad.fc);
    expect(good.explain.matches.map((m) => `${m.en}|${m.zh}`)).to.include.members(['child|孩子', 'park|公园']);
    expect(good.explain.entities.map((e) => e.kind)).to.include('number');
    for (const m of good.explain.matches) expect(m.gloss).to.be.a('string').and.not.equal('');
    for (const r of [good, bad]) {
      for (const k of ['fc', 'fe', 'fl', 'c'] as const) expect(r[k]).to.be.within(0, 1);
    }
  });

  it('links synonyms and hypernyms through WordNet, which the plain gloss match misses', () => {
    const lex = testLexicon().lexicon;
    const full = new ConceptSpace(lex, DEFAULT_MEASURE);
    const plain = new ConceptSpace(lex, BASELINE_MEASURE);
    // furniture / 桌子 (table, desk): a hypernym
    expect(full.sim('furniture', '桌子').sim).to.be.greaterThan(0.3);
    expect(plain.sim('furniture', '桌子').sim).to.equal(0);
    // couch / 沙发 (sofa), kid / 孩子 (child): synonyms
    expect(full.sim('couch', '沙发').sim).to.be.greaterThan(0.5);
    expect(plain.sim('couch', '沙发').sim).to.equal(0);
    expect(full.sim('kid', '孩子').sim).to.be.greaterThan(0.5);
    // puppy / 狗 (dog): the Chinese word is broader
    expect(full.sim('puppy', '狗').gloss).to.contain('broader');
    // an exact gloss is the strongest link
    expect(full.sim('car', '汽车').sim).to.equal(1);
    // unrelated words stay apart
    expect(full.sim('banana', '汽车').sim).to.equal(0);
  });

  it('matches Chinese compounds through their head word (小狗 → 狗 → dog)', () => {
    const lex = testLexicon().lexicon;
    const compoundsOnly = new ConceptSpace(lex, { ...DEFAULT_MEASURE, wordnet: false, compounds: true });
    const none = new ConceptSpace(lex, BASELINE_MEASURE);
    expect(compoundsOnly.sim('dog', '小狗').sim).to.be.greaterThan(0.5);
    expect(compoundsOnly.sim('dog', '小狗').gloss).to.contain('狗');
    expect(none.sim('dog', '小狗').sim).to.equal(0);
    const s = scorer();
    expect(s.score('A dog runs on the beach.', '一只小狗在海滩上奔跑。').explain.matches.map((m) => m.zh)).to.include('小狗');
  });

  it('gives levels from the thresholds; par also needs the length ratio', () => {
    const lv = { thresholds: { par: 0.5, com: 0.3, pse: 0.1 }, parMinLengthRatio: 0.6 };
    expect(levelOf(0.55, 0.9, lv)).to.equal('par');
    expect(levelOf(0.55, 0.5, lv)).to.equal('com'); // as close as a translation in words, not in length
    expect(levelOf(0.45, 1, lv)).to.equal('com');
    expect(levelOf(0.2, 1, lv)).to.equal('pse');
    expect(levelOf(0.05, 1, lv)).to.equal('inc');
    const c2 = { ...config, comparability: { ...config.comparability, thresholds: { par: 0.9, com: 0.8, pse: 0.7 } } };
    const s = createScorer(c2, { cacheDir: testLexiconDir() });
    const r = s.score('A man rides a horse.', '一个男人在骑马。');
    expect(r.level).to.equal(levelOf(r.c, r.fl, c2.comparability, r.cPar, r.explain.chance.s));
  });

  it('keeps IDF in the bank current as captions arrive (incremental, each caption once)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-'));
    const bank = await Bank.open(dir);
    try {
      const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 10, g: 200, b: 30 } } }).png().toBuffer();
      const img = await bank.images.prepare(png);
      const add = (b: 'source' | 'target', id: string, caption: string) =>
        bank.transaction(async (tx) => {
          await tx.images.record(img);
          await tx.items.upsert({ bank: b, extId: id, caption, lang: b === 'source' ? 'eng' : 'cmn', captionStatus: 'ok', captionReason: null, imageSha256: img.sha256 });
        });
      await add('source', 'a', 'A dog runs on the beach.');
      await add('source', 'b', 'A dog sleeps on a sofa.');
      await add('target', 'c', '一只狗在海滩上奔跑。');
      const terms = bank.repo(TermStatsRepo);
      expect(await terms.anyUncounted()).to.equal(true);
      const first = await updateIdf(bank, config, { cacheDir: testLexiconDir() });
      expect(first.added).to.deep.equal({ source: 2, target: 1 });
      expect(await terms.anyUncounted()).to.equal(false);
      const again = await updateIdf(bank, config, { cacheDir: testLexiconDir() });
      expect(again.added).to.deep.equal({ source: 0, target: 0 });
      await add('source', 'd', 'A cat sleeps on a sofa.');
      expect([await terms.anyUncounted(), await terms.anyUncounted('source'), await terms.anyUncounted('target')]).to.deep.equal([true, true, false]);
      // A scorer made on the bank counts what arrived since (the pairing stage gets current IDF without a call).
      const s = await createScorer(config, { bank, cacheDir: testLexiconDir() });
      expect(s.termStats.docs.en).to.equal(3);
      const stats = (await bank.repo(TermStatsRepo).load());
      expect(stats.docs.en).to.equal(3);
      expect(stats.df.en.get('dog')).to.equal(2);
      expect(stats.df.en.get('cat')).to.equal(1);
      expect(stats.df.zh.get('狗')).to.equal(1);
      expect(s.termStats.idf('en', 'cat')).to.equal(1); // fewer captions than needed for IDF: uniform weights
    } finally {
      await bank.close();
    }
  });
});

forEachBackend('comparability: the IDF table counted by several processes at once', (be) => {
  it('counts each caption once when two banks count at the same time, and a range counts only its items', async function () {
    this.timeout(60_000);
    const { config } = loadConfig({});
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-'));
    const url = await be.url();
    const a = await be.open(dir, { url });
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 10, g: 200, b: 30 } } }).png().toBuffer();
    const img = await a.images.prepare(png);
    await a.transaction(async (tx) => {
      await tx.images.record(img);
      for (let i = 0; i < 60; i++) {
        await tx.items.upsert({ bank: 'source', extId: `s${i}`, caption: `Dog number ${i} runs on the beach.`, lang: 'eng', captionStatus: 'ok', captionReason: null, imageSha256: img.sha256 });
        await tx.items.upsert({ bank: 'target', extId: `t${i}`, caption: i % 10 ? '一只狗在海滩上奔跑。' : '', lang: 'cmn', captionStatus: i % 10 ? 'ok' : 'empty', captionReason: null, imageSha256: img.sha256 });
      }
    });
    const ids = (await a.items.list('source', 100, 0)).map((i) => i.id);
    // a features job's range: the first 10 source items (and the target items among them)
    const ranged = await updateIdf(a, config, { cacheDir: testLexiconDir(), idRange: { first: ids[0]!, last: ids[9]! } });
    expect(ranged.added.source).to.equal(10);
    // two processes (two banks on one database) count the rest at once, in small batches so that they interleave
    const b = be.name === 'postgres' ? await be.open(dir, { url }) : a;
    const [x, y] = await Promise.all([updateIdf(a, config, { cacheDir: testLexiconDir(), batchSize: 7 }), updateIdf(b, config, { cacheDir: testLexiconDir(), batchSize: 7 })]);
    expect(x.added.source + y.added.source + ranged.added.source).to.equal(60);
    expect(x.added.target + y.added.target + ranged.added.target).to.equal(54); // 6 captions are empty
    const stats = await a.repo(TermStatsRepo).load();
    expect(stats.docs).to.deep.equal({ en: 60, zh: 54 });
    expect(stats.df.en.get('dog')).to.equal(60);
    expect(stats.df.zh.get('狗')).to.equal(54);
    // the null margin's reference (issue 34, round 3): a fixed sample of each bank's passed, non-empty captions
    const terms = a.repo(TermStatsRepo);
    const sample = await terms.sampleCaptions('target', 20);
    expect(sample).to.have.length(20);
    expect(sample.every((c) => c === '一只狗在海滩上奔跑。')).to.equal(true);
    expect(await terms.sampleCaptions('source', 100)).to.have.length(60);
    expect(await terms.sampleCaptions('source', 25)).to.deep.equal(await terms.sampleCaptions('source', 25));
    expect(await terms.sampleCaptions('source', 0)).to.deep.equal([]);
    const onBank = await createScorer(config, { bank: a, cacheDir: testLexiconDir() });
    expect(onBank.nullMargin.active).to.equal(true);
    if (b !== a) await b.close();
    await a.close();
  });
});

describe('comparability: derivations', () => {
  it('links an agent noun to its activity through WordNet derivations (skier ↔ 滑雪 ski)', () => {
    const lex = testLexicon().lexicon;
    const full = new ConceptSpace(lex, DEFAULT_MEASURE);
    const noDeriv = new ConceptSpace(lex, { ...DEFAULT_MEASURE, derivationWeight: 0 });
    expect(full.sim('skier', '滑雪').sim).to.be.greaterThan(0.3);
    expect(noDeriv.sim('skier', '滑雪').sim).to.be.lessThan(full.sim('skier', '滑雪').sim);
  });
});

describe('comparability: compounds linking once per part', () => {
  it('links people to people, an English word to the head of its usual Chinese word, adjectives to their nouns', () => {
    // issue 34, round 2: independent captions of one photo name the same people and things in different words
    const lex = testLexicon().lexicon;
    const on = new ConceptSpace(lex, DEFAULT_MEASURE);
    const off = new ConceptSpace(lex, { ...DEFAULT_MEASURE, personWeight: 0, usualWeight: 0 });
    // boy → 男孩 (its usual word) → 孩 "child": meets 小孩 as 男孩 would; man → 男人 → 人 "person"
    expect(lex.usualChinese('boy')).to.equal('男孩');
    expect(on.sim('boy', '小孩').sim).to.be.greaterThan(off.sim('boy', '小孩').sim);
    expect(on.sim('man', '人').sim).to.be.greaterThan(0.2);
    expect(off.sim('man', '人').sim).to.equal(0);
    // bride and 女人 share no gloss: both name people, a weak link; a dog and a woman, a man and a dog: none
    expect(on.sim('bride', '女人').sim).to.be.closeTo(DEFAULT_MEASURE.personWeight, 1e-9);
    expect(off.sim('bride', '女人').sim).to.equal(0);
    expect(on.sim('dog', '女人').sim).to.equal(0);
    expect(on.sim('man', '狗').sim).to.equal(0);
    // an adjective through WordNet's derivation pointers (snowy → snow), a WordNet compound through its head
    expect(on.sim('snowy', '雪').sim).to.be.greaterThan(0.4);
    expect(on.sim('rough_water', '水').sim).to.be.greaterThan(0.5);
  });

  it('lets 黑狗 take both "black" (through 黑) and "dog" (through 狗), but only one-to-one in the baseline', () => {
    const full = createScorer(config, { cacheDir: testLexiconDir() });
    const base = createScorer(config, { cacheDir: testLexiconDir(), measure: { ...BASELINE_MEASURE, compounds: true } });
    const en = 'A black dog by the river.';
    const zh = '河边的黑狗。';
    const links = full.score(en, zh).explain.matches.filter((m) => m.zh === '黑狗').map((m) => m.en);
    expect(links).to.have.members(['black', 'dog']);
    expect(base.score(en, zh).explain.matches.filter((m) => m.zh === '黑狗')).to.have.length(1);
    expect(full.score(en, zh).fc).to.be.greaterThan(base.score(en, zh).fc);
  });
});

describe('comparability: names, dates and numbers in news captions', () => {
  it('links names through CC-CEDICT proper nouns and shares dates and counts as entities', () => {
    const s = createScorer(config, { cacheDir: testLexiconDir() });
    const r = s.score(
      'Rescue workers carry a survivor in Shanghai on May 5, 2016; fifty-three people were evacuated.',
      '2016年5月5日，救援人员在上海抬出一名幸存者，五十三人被疏散。',
    );
    expect(r.explain.matches.map((m) => `${m.en}|${m.zh}`)).to.include('shanghai|上海');
    const kinds = r.explain.entities.map((e) => e.kind);
    expect(kinds).to.include.members(['date', 'year', 'number', 'place']);
    expect(r.fe).to.be.greaterThan(0.6);
    expect(r.level).to.be.oneOf(['par', 'com']);
  });
});
