// Sentence segmentation (sentencex + our Chinese ； rule), the caption bounds, and sentence alignment.
import { expect } from 'chai';
import { loadConfig } from '../src/config/load.js';
import { boundedSentences, createScorer, splitSentences } from '../src/lib/comparability/index.js';
import { alignSentences, type Span } from '../src/lib/comparability/align.js';
import { testLexiconDir } from './helpers/comparability.js';

const texts = (t: string, lang: 'en' | 'zh') => splitSentences(t, lang).map((s) => s.text);

describe('comparability: sentences', () => {
  it('splits English captions at sentence ends, not at abbreviations, initials, decimals or inside quotes', () => {
    expect(texts('Mr. J.R. Smith of the U.S. Army arrives in Washington, D.C., on Jan. 15, 2024. He said growth was 3.5 percent.', 'en')).to.deep.equal([
      'Mr. J.R. Smith of the U.S. Army arrives in Washington, D.C., on Jan. 15, 2024.',
      'He said growth was 3.5 percent.',
    ]);
    expect(texts('He said "Stop." Then he left!', 'en')).to.deep.equal(['He said "Stop."', 'Then he left!']);
    expect(texts('WASHINGTON, Jan. 15 (Reuters) - U.S. President Joe Biden speaks at the White House.', 'en')).to.have.length(1);
    // offsets point into the caption
    const s = splitSentences('  One dog. Two cats.', 'en');
    expect(s.map((x) => [x.start, x.end])).to.deep.equal([[2, 10], [11, 20]]);
  });

  it('splits Chinese at 。！？ and ；, keeps closing quotes with their sentence, in simplified and traditional script', () => {
    expect(texts('他说：“我们会赢。”然后离开了。这是第二句！第三句；第四句', 'zh')).to.deep.equal(['他说：“我们会赢。”', '然后离开了。', '这是第二句！', '第三句；', '第四句']);
    expect(texts('圖為民眾在台北市購買雞蛋。價格上漲了3.5%。', 'zh')).to.deep.equal(['圖為民眾在台北市購買雞蛋。', '價格上漲了3.5%。']);
    expect(texts('。。', 'zh')).to.deep.equal([]);
    expect(texts('. A stray full stop opens this caption.', 'en')).to.deep.equal(['A stray full stop opens this caption.']);
  });

  it('reads a caption only up to maxChars: cut at the last sentence end before it, refused when there is none', () => {
    const long = 'A dog runs on the beach. '.repeat(40_000); // 1 MB
    const b = boundedSentences(long, 'en', { maxChars: 100, maxSentences: 8 });
    expect(b.truncated).to.equal(true);
    expect(b.refused).to.equal(false);
    expect(b.sentences.map((s) => s.text)).to.deep.equal(Array(3).fill('A dog runs on the beach.')); // the 4th is cut at 100
    expect(b.sentences.at(-1)!.end).to.be.at.most(100);
    const blob = boundedSentences('word '.repeat(200_000), 'en', { maxChars: 100, maxSentences: 8 });
    expect([blob.refused, blob.sentences.length]).to.deep.equal([true, 0]);
    const many = boundedSentences('One. Two. Three. Four.', 'en', { maxChars: 1000, maxSentences: 2, skip: (f) => f === 'Two.' });
    expect([many.sentences.map((s) => s.text), many.dropped]).to.deep.equal([['One.', 'Three.'], 1]);
  });
});

describe('comparability: sentence alignment', () => {
  // a score table: C of each (English span, Chinese span), unknown combinations 0
  const table = (t: Record<string, number>) => (en: Span, zh: Span) => ({ c: t[`${en.join('-')}/${zh.join('-')}`] ?? 0 });
  const spans = (a: Array<{ en: Span; zh: Span }>) => a.map((x) => `${x.en.join('-')}/${x.zh.join('-')}`);

  it('one sentence each: that pair, whatever its C', () => {
    const calls: string[] = [];
    const a = alignSentences(1, 1, (en, zh) => (calls.push(`${en}/${zh}`), { c: 0.01 }));
    expect(spans(a)).to.deep.equal(['0-0/0-0']);
    expect(calls).to.have.length(1);
  });

  it('takes the best pairs one-to-one, in any order, and leaves a sentence without a counterpart unpaired', () => {
    // en 0 ↔ zh 1, en 1 ↔ zh 0 (the other outlet told it in the other order); en 2 has nothing left
    const a = alignSentences(3, 2, table({ '0-0/1-1': 0.8, '1-1/0-0': 0.7, '2-2/0-0': 0.3, '2-2/1-1': 0.2, '0-0/0-0': 0.1 }));
    expect(spans(a)).to.deep.equal(['0-0/1-1', '1-1/0-0']);
  });

  it('merges two sentences only when the merge scores higher than each of its one-to-one pairs', () => {
    // the translation split one English sentence in two Chinese ones
    expect(spans(alignSentences(1, 2, table({ '0-0/0-0': 0.5, '0-0/1-1': 0.3, '0-0/0-1': 0.7 })))).to.deep.equal(['0-0/0-1']);
    // an unrelated second Chinese sentence lowers C: no merge
    expect(spans(alignSentences(1, 2, table({ '0-0/0-0': 0.7, '0-0/1-1': 0.05, '0-0/0-1': 0.6 })))).to.deep.equal(['0-0/0-0']);
    // 2–1 likewise
    expect(spans(alignSentences(2, 1, table({ '0-0/0-0': 0.4, '1-1/0-0': 0.45, '0-1/0-0': 0.75 })))).to.deep.equal(['0-1/0-0']);
  });

  it('with the C-measure: a single-sentence pair scores exactly as the captions do; an added sentence finds no counterpart', function () {
    this.timeout(60_000);
    const { config } = loadConfig({ env: {} });
    const scorer = createScorer(config, { cacheDir: testLexiconDir() });
    const en = 'A brown dog runs across the snow.';
    const zh = '一只棕色的狗跑过雪地。';
    const one = scorer.align(en, zh);
    expect(one.pairs).to.have.length(1);
    const whole = scorer.score(en, zh);
    expect({ ...one.pairs[0]!, en: undefined, zh: undefined, enSpan: undefined, zhSpan: undefined }).to.deep.equal({ ...whole, en: undefined, zh: undefined, enSpan: undefined, zhSpan: undefined });
    const more = scorer.align(`The stock market fell sharply on Tuesday. ${en}`, `${zh}厨房里有一台冰箱。`);
    const best = more.pairs.reduce((a, b) => (b.c > a.c ? b : a));
    expect([best.en, best.zh]).to.deep.equal([en, zh]);
    expect(best.c).to.be.closeTo(whole.c, 1e-9);
    const other = more.pairs.find((p) => p !== best);
    if (other) expect(other.level).to.equal('inc');
  });
});
