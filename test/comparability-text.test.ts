import { expect } from 'chai';
import { scanChineseNumbers, scanEnglishNumbers, parseChineseNumber, parseEnglishNumberWords } from '../src/lib/comparability/numbers.js';
import { Analyzer, toSimplified } from '../src/lib/comparability/analyze.js';
import { testLexicon } from './helpers/comparability.js';

const keys = (s: { entities: Array<{ key: string }> }) => s.entities.map((e) => e.key).sort();

describe('comparability: numbers, dates and times', () => {
  it('parses number words and Chinese numerals to the same values', () => {
    expect(parseEnglishNumberWords(['fifty', 'three'])).to.equal(53);
    expect(parseEnglishNumberWords(['two', 'hundred', 'and', 'five'])).to.equal(205);
    expect(parseChineseNumber('五十三')).to.equal(53);
    expect(parseChineseNumber('两千零一十六')).to.equal(2016);
    expect(parseChineseNumber('二〇一六')).to.equal(2016);
    expect(parseChineseNumber('十二')).to.equal(12);
    expect(parseChineseNumber('狗')).to.equal(null);
  });

  it('normalises counts, years, dates and times on both sides to shared keys', () => {
    expect(keys(scanEnglishNumbers('Fifty-three students met on May 5, 2016 at 3 pm.'))).to.deep.equal(
      ['date:5-5', 'number:53', 'time:15', 'year:2016'].sort(),
    );
    expect(keys(scanChineseNumbers('2016年5月5日下午3点，五十三名学生见面。'))).to.deep.equal(
      ['date:5-5', 'number:53', 'time:15', 'year:2016'].sort(),
    );
    expect(keys(scanEnglishNumbers('three cats and 3 dogs'))).to.deep.equal(['number:3', 'number:3']);
    expect(keys(scanChineseNumbers('三只猫'))).to.deep.equal(['number:3']);
  });

  it('does not take articles or number-like words for numbers', () => {
    expect(keys(scanEnglishNumbers('A man holds one cup.'))).to.deep.equal([]);
    expect(keys(scanChineseNumbers('一个男人在吃三明治，有一点累。'))).to.deep.equal([]);
  });
});

describe('comparability: tokenisation', () => {
  it('lower-cases, drops stopwords and lemmatises English, joining WordNet compounds', () => {
    const a = new Analyzer(testLexicon().lexicon);
    const r = a.english('The children were running past a fire hydrant with two dogs');
    expect(r.tokens).to.include.members(['child', 'run', 'fire_hydrant', 'dog', '#2']);
    expect(r.tokens).not.to.include('the');
    expect(r.tokens).not.to.include('were');
  });

  it('converts traditional Chinese to simplified before cutting with jieba', () => {
    expect(toSimplified('兩隻狗在雪地裡奔跑')).to.equal('两只狗在雪地里奔跑');
    const a = new Analyzer(testLexicon().lexicon);
    const trad = a.chinese('兩隻狗在雪地裡奔跑');
    const simp = a.chinese('两只狗在雪地里奔跑');
    expect(trad.tokens).to.deep.equal(simp.tokens);
    expect(simp.tokens).to.include.members(['狗', '奔跑', '#2']);
    expect(simp.tokens).not.to.include('在');
  });

  it('finds names on both sides: capitalised English spans and CC-CEDICT proper nouns', () => {
    const a = new Analyzer(testLexicon().lexicon);
    const en = a.english('Tourists walk along a street in Beijing.');
    expect(en.entities.map((e) => e.key)).to.include('beijing');
    expect(en.entities.map((e) => e.key)).not.to.include('tourists');
    const zh = a.chinese('游客走在北京的街道上。');
    expect(zh.entities.map((e) => e.text)).to.include('北京');
  });
});

describe('comparability: pairs files', () => {
  it('names the file and line of a missing column, a short row, an empty caption or an unknown level', async () => {
    const { readPairsFile } = await import('../src/lib/comparability/pairs-file.js');
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-'));
    const cases: Array<[string, string, boolean]> = [
      ['english\tchinese\nA dog.\t一只狗。\n', ':1:', false],
      ['en\tzh\tid\nA dog.\t一只狗。\t1\nA cat.\t一只猫。\n', ':3:', false],
      ['en\tzh\nA dog.\t一只狗。\n\t一只猫。\n', ':3:', false],
      ['level\ten\tzh\npar\tA dog.\t一只狗。\nsimilar\tA cat.\t一只猫。\n', ':3:', true],
    ];
    for (const [i, [text, where, requireLevel]] of cases.entries()) {
      const file = path.join(dir, `bad${i}.tsv`);
      fs.writeFileSync(file, text);
      let msg = '';
      await readPairsFile(file, { requireLevel }).catch((e: Error) => (msg = e.message));
      expect(msg, text).to.contain(`${file}${where}`);
    }
    const ok = path.join(dir, 'ok.tsv');
    fs.writeFileSync(ok, 'id\tzh\ten\n7\t一只狗。\tA dog.\n8\t一只猫。\tA cat.\n');
    expect((await readPairsFile(ok)).map((r) => [r.line, r.en])).to.deep.equal([[2, 'A dog.'], [3, 'A cat.']]);
  });
});
