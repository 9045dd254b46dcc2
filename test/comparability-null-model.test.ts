// Issue 34: the null model of a caption pair (src/lib/comparability/null-model.ts), a minor gloss as weak evidence, and
// the margin by which a sentence pair is chosen inside a caption pair (src/stages/pair/sentence-choice.ts).
import { expect } from 'chai';
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer, DEFAULT_MEASURE } from '../src/lib/comparability/index.js';
import { TermStats } from '../src/lib/comparability/idf.js';
import { surpriseTail, significance } from '../src/lib/comparability/null-model.js';
import { chooseSentencePairs, sentenceMarginOf } from '../src/stages/pair/sentence-choice.js';
import { testLexiconDir } from './helpers/comparability.js';
import { mulberry32 } from '../src/util/random.js';

const { config } = loadConfig({ env: {} });

describe('comparability: the null model', () => {
  it('computes the tail of the surprise exactly for one and for several words', () => {
    // one word of chance q: P(surprise >= -ln q) = q
    expect(surpriseTail([0.2], -Math.log(0.2))).to.be.closeTo(0.2, 1e-9);
    // three words of chance 0.1: reaching the surprise of two of them needs two hits: 3·0.01·0.9 + 0.001
    expect(surpriseTail([0.1, 0.1, 0.1], -2 * Math.log(0.1))).to.be.closeTo(0.028, 1e-9);
    expect(surpriseTail([0.5, 0.5], 0)).to.equal(1);
  });

  it('never puts the observed words themselves out of reach (one word met: P is its chance, never 0)', () => {
    // binned, v / (v / 200) can come out 199.999…: rounded down, the one word met fell a bin short of its own surprise
    // and P was 0 (S ≈ 690 nats for one shared word); rounded up, the words met always reach s
    for (let i = 1; i < 2000; i++) {
      const q = i / 2000;
      expect(surpriseTail([q], -Math.log(q)), `q ${q}`).to.be.closeTo(q, 1e-9);
      expect(surpriseTail([q, 0.3, 0.05], -Math.log(q) - Math.log(0.05)), `q ${q}`).to.be.at.least(q * 0.05 * (1 - 1e-9));
    }
  });

  it('finds one frequent word shared by long captions to be chance, and rare words shared to be far beyond it', () => {
    const idf = new TermStats();
    // a bank where "man" is in half the captions and "falcon", "glove", "handler" in one each
    for (let i = 0; i < 200; i++) {
      idf.addDocument('en', i % 2 ? ['man', `w${i}`] : [`w${i}`]);
      idf.addDocument('zh', i % 2 ? ['男人', `z${i}`] : [`z${i}`]);
    }
    idf.addDocument('en', ['falcon', 'glove', 'handler']);
    idf.addDocument('zh', ['猎鹰', '手套', '驯兽师']);
    const en = ['man', 'walk', 'street', 'red', 'coat', 'city', 'morning'];
    const zh = ['男人', '走', '街道', '雨伞', '黑色', '晚上', '商店'];
    const one = significance(en, zh, new Map([['man', 1]]), new Map([['男人', 1]]), idf);
    expect(one.pEn).to.be.above(0.4);
    const rare = significance(['falcon', 'glove', 'handler', 'man'], ['猎鹰', '手套', '驯兽师'], new Map([['falcon', 1], ['glove', 1], ['handler', 1]]), new Map([['猎鹰', 1], ['手套', 1], ['驯兽师', 1]]), idf);
    expect(rare.pEn).to.be.below(1e-4);
    expect(rare.s).to.be.above(one.s + 10);
    // a weak link (a broader concept) is weaker evidence than a direct gloss, a minor gloss next to none
    const rareEn = ['falcon', 'walk', 'street', 'red', 'coat', 'city', 'morning'];
    const rareZh = ['猎鹰', '走', '街道', '雨伞', '黑色', '晚上', '商店'];
    const full = significance(rareEn, rareZh, new Map([['falcon', 1]]), new Map([['猎鹰', 1]]), idf).s;
    const weak = significance(rareEn, rareZh, new Map([['falcon', 0.3]]), new Map([['猎鹰', 0.3]]), idf).s;
    const minor = significance(rareEn, rareZh, new Map([['falcon', 0.05]]), new Map([['猎鹰', 0.05]]), idf).s;
    expect(weak).to.be.above(0).and.below(full);
    expect(minor).to.be.below(weak / 3);
    // the com gate counts strong links only: a weak link alone is no counterpart found; strong links alone, S itself
    const sig = (en: Array<[string, number]>, zh: Array<[string, number]>) => significance(rareEn, rareZh, new Map(en), new Map(zh), idf);
    expect(sig([['falcon', 0.3]], [['猎鹰', 0.3]]).sStrong).to.equal(0);
    expect(sig([['falcon', 1]], [['猎鹰', 1]]).sStrong).to.equal(full);
    const mixed = sig([['falcon', 1], ['walk', 0.3]], [['猎鹰', 1], ['走', 0.3]]);
    expect(mixed.s).to.be.above(full);
    expect(mixed.sStrong).to.be.closeTo(full, 1e-9);
    // from the evidence floor up, a link counts whole
    expect(significance(rareEn, rareZh, new Map([['falcon', 0.5]]), new Map([['猎鹰', 0.5]]), idf).s).to.be.closeTo(full, 1e-9);
  });

  it('scores a pair with its chance, and gives com only to content beyond chance', () => {
    const scorer = createScorer(config, { cacheDir: testLexiconDir() });
    const captions = [
      { en: 'A man walks down the street in the rain.', zh: '一个男人在雨中走在街上。' },
      { en: 'A man reads a newspaper on a bench.', zh: '一个男人在长椅上看报纸。' },
      { en: 'A man rides a bicycle past a shop.', zh: '一个男人骑自行车经过商店。' },
      { en: 'A man cooks noodles in a kitchen.', zh: '一个男人在厨房里煮面条。' },
    ];
    for (let i = 0; i < 10; i++) addCaptionsToIdf(scorer, captions);
    const r = scorer.score('A man walks down the street in the rain.', '一个男人在雨中走在街上。');
    expect(r.explain.chance.s).to.be.above(config.comparability.comMinSignificance);
    expect(r.level === 'com' || r.level === 'par').to.equal(true);
  });

  it('weighs a word linked only through a minor gloss of a common character (差 "official post" for "station") as weak evidence', () => {
    const scorer = createScorer(config, { cacheDir: testLexiconDir() });
    const weak = scorer.score('Vendors sell food by the station.', '他们以三分之差输了。');
    const link = weak.explain.matches.find((m) => m.en === 'station');
    const direct = scorer.score('Vendors sell food by the station.', '小贩在车站旁卖食物。').explain.matches.find((m) => m.en === 'station');
    expect(direct, 'a direct gloss links station').to.not.equal(undefined);
    expect(link?.weight ?? 0).to.be.below(direct!.weight / 5);
  });
});

describe('sentence choice: margin, not maximum', () => {
  const pair = (e: number, z: number, c: number, level: 'par' | 'com' | 'pse' | 'inc', s = 10) =>
    ({ enSpan: [e, e], zhSpan: [z, z], c, level, en: `e${e}`, zh: `z${z}`, fc: c, fe: 0, fl: 1, fcov: c, fs: 0, cPar: c, explain: { matches: [], entities: [], enTokens: [], zhTokens: [], chance: { en: 0, zh: 0, s } } }) as never;
  const rules = { minLevel: 'com' as const, minLevelMoreSentences: 'par' as const, sentenceMargin: 1.5, minSignificance: 1 };

  it('emits the pair that beats its row and column by the margin', () => {
    const grid = [[0.6, 0.1], [0.2, 0.05]];
    const pairs = [pair(0, 0, 0.6, 'com'), pair(1, 1, 0.05, 'inc')];
    expect(sentenceMarginOf(pairs[0]!, grid)).to.be.closeTo(3, 1e-9);
    const choice = chooseSentencePairs({ pairs, grid, whole: null }, rules);
    expect(choice.emitted).to.deep.equal([true, false]);
  });

  it('emits the caption pair whole when no sentence pair is clearly better and the whole passes, else nothing', () => {
    // the stray sentences (1, 1) share a word about as well as the photo's own (0, 0): neither is clear
    const grid = [[0.3, 0.25], [0.22, 0.32]];
    const pairs = [pair(0, 0, 0.3, 'com'), pair(1, 1, 0.32, 'com')];
    const whole = { ...(pair(0, 0, 0.4, 'com') as object), enSpan: [0, 1], zhSpan: [0, 1], en: 'e0 e1', zh: 'z0z1' } as never;
    const choice = chooseSentencePairs({ pairs, grid, whole }, rules);
    expect(choice.emitted.filter(Boolean)).to.have.length(1);
    expect(choice.pairs[choice.emitted.indexOf(true)]).to.equal(whole);
    const none = chooseSentencePairs({ pairs, grid, whole: { ...(whole as object), level: 'pse' } as never }, rules);
    expect([none.emitted.some(Boolean), none.refused]).to.deep.equal([false, 'margin']);
  });

  it('asks a pair chosen among several for more significance than a pair alone (the number of tests)', () => {
    const grid = [[0.6, 0.1], [0.2, 0.05]];
    const weak = [pair(0, 0, 0.6, 'com', 2), pair(1, 1, 0.05, 'inc', 0)];
    expect(chooseSentencePairs({ pairs: weak, grid, whole: null }, rules).emitted).to.deep.equal([false, false]); // 2 < 1 + ln 4
    const alone = chooseSentencePairs({ pairs: [pair(0, 0, 0.6, 'com', 2)], grid: [[0.6]], whole: null }, rules);
    expect(alone.emitted).to.deep.equal([true]);
  });
});

describe('comparability: the null margin of C (issue 34, round 3)', () => {
  // a bank where half the captions are "a man plays near <something>" and the others name things
  const things: Array<[string, string]> = [
    ['kite', '风筝'], ['violin', '小提琴'], ['tractor', '拖拉机'], ['lighthouse', '灯塔'], ['bicycle', '自行车'],
    ['piano', '钢琴'], ['castle', '城堡'], ['bridge', '桥'], ['windmill', '风车'], ['train', '火车'],
    ['tower', '塔'], ['boat', '船'], ['church', '教堂'], ['temple', '寺庙'], ['ladder', '梯子'],
    ['umbrella', '伞'], ['clock', '钟'], ['camera', '相机'], ['guitar', '吉他'], ['tent', '帐篷'],
  ];
  const bank = (n: number) =>
    Array.from({ length: n }, (_, i) => {
      const [en, zh] = things[i % things.length]!;
      const [en2, zh2] = things[(i * 7 + 3) % things.length]!;
      return i % 2 ? { en: `A man plays near the ${en}.`, zh: `一个男人在${zh}旁边玩。` } : { en: `The ${en} stands by the ${en2}.`, zh: `${zh}在${zh2}旁边。` };
    });
  const scorerOf = (cfg: typeof config, n: number) => {
    const s = createScorer(cfg, { cacheDir: testLexiconDir() });
    addCaptionsToIdf(s, bank(n));
    return s;
  };
  const raw = (cfg: typeof config, r: { fc: number; fe: number; fl: number; fcov: number }) => {
    const w = cfg.comparability.weights;
    return w.alpha * r.fc + w.beta * r.fe + w.gamma * r.fl + w.delta * r.fcov;
  };

  it('lowers C for captions made of words many unrelated captions share, and raises it for specific ones', () => {
    const s = scorerOf(config, 40);
    expect(s.nullMargin.active).to.equal(true);
    const generic = s.score('A man plays.', '一个男人在玩。');
    const specific = s.score('A kite over the castle.', '城堡上空的风筝。');
    expect(generic.explain.margin.scale).to.be.lessThan(1);
    expect(specific.explain.margin.scale).to.be.greaterThan(1);
    expect(generic.explain.margin.chance).to.be.greaterThan(specific.explain.margin.chance);
    for (const r of [generic, specific]) {
      // the scale and the specificity factor are printed to 4 places
      expect(r.c).to.be.closeTo(Math.min(1, raw(config, r) * r.explain.margin.scale * r.explain.margin.specificity), 2e-3);
      expect(r.explain.margin.scale).to.be.at.most(4);
    }
    expect(generic.c).to.be.lessThan(raw(config, generic));
    const scaleOfC = generic.explain.margin.scale * generic.explain.margin.specificity;
    expect(s.features('A man plays.', '一个男人在玩。').margin).to.be.closeTo(scaleOfC, 1e-3);
  });

  it('is off (scale 1, C as weighted) when configured off, or with fewer than 20 reference captions a side', () => {
    const off = { ...config, comparability: { ...config.comparability, nullMargin: { sample: 0, top: 8 } } };
    const small = scorerOf(config, 19);
    for (const s of [scorerOf(off, 40), small]) {
      expect(s.nullMargin.active).to.equal(false);
      const r = s.score('A man plays.', '一个男人在玩。');
      expect(r.explain.margin.scale).to.equal(1);
      expect(r.c).to.be.closeTo(raw(config, r) * r.explain.margin.specificity, 1e-4);
    }
  });
});

describe('comparability: the specificity of the linked words (issue 34, round 5)', () => {
  it('discounts C for links through words of many readings, keeps it for specific ones, and is off at 0', () => {
    const s = createScorer(config, { cacheDir: testLexiconDir() });
    const off = createScorer(config, { cacheDir: testLexiconDir(), measure: { specificity: 0 } });
    const vague = s.score('A man plays.', '一个男人在玩。'); // man, play: glossed by many Chinese words; 玩: 8 senses
    const specific = s.score('A kite over the castle.', '城堡上空的风筝。'); // kite, castle, 风筝, 城堡: few readings
    expect(vague.explain.matches.map((m) => m.en).sort()).to.deep.equal(['man', 'play']);
    expect(specific.explain.matches.length).to.equal(2);
    expect(vague.explain.margin.specificity).to.be.lessThan(1);
    expect(specific.explain.margin.specificity).to.be.greaterThan(1);
    for (const [en, zh] of [['A man plays.', '一个男人在玩。'], ['A kite over the castle.', '城堡上空的风筝。']] as const) {
      const a = s.score(en, zh);
      const b = off.score(en, zh);
      expect(b.explain.margin.specificity).to.equal(1);
      expect(a.c).to.be.closeTo(Math.min(1, b.c * a.explain.margin.specificity), 2e-4);
      expect(a.cPar).to.equal(b.cPar); // the par score does not use it
      expect(s.features(en, zh).margin).to.be.closeTo(a.explain.margin.specificity, 1e-4); // no null margin here
    }
    const unlinked = s.score('A quiet morning.', '城堡。');
    expect(unlinked.explain.matches).to.deep.equal([]);
    expect(unlinked.explain.margin.specificity).to.equal(1); // nothing linked: nothing to discount
  });
});

describe("comparability: the specificity factor's typical value is the bank's (issue 34, round 6)", () => {
  // two banks of 40 captions: one where every caption is made of vague words (people doing common things), one of things
  const vagueBank = Array.from({ length: 40 }, (_, i) => ({
    en: [`A man plays.`, `A woman walks.`, `People sit.`, `A man stands.`, `The girl plays.`][i % 5]!,
    zh: [`一个男人在玩。`, `一个女人在走路。`, `人们坐着。`, `一个男人站着。`, `女孩在玩。`][i % 5]!,
  }));
  const things: Array<[string, string]> = [
    ['kite', '风筝'], ['violin', '小提琴'], ['tractor', '拖拉机'], ['lighthouse', '灯塔'], ['bicycle', '自行车'],
    ['piano', '钢琴'], ['castle', '城堡'], ['windmill', '风车'], ['church', '教堂'], ['temple', '寺庙'],
  ];
  const thingBank = Array.from({ length: 40 }, (_, i) => {
    const [a, za] = things[i % things.length]!;
    const [b, zb] = things[(i * 3 + 1) % things.length]!;
    return { en: `The ${a} by the ${b}.`, zh: `${zb}旁边的${za}。` };
  });
  const scorerOf = (captions: Array<{ en: string; zh: string }>) => {
    const s = createScorer(config, { cacheDir: testLexiconDir() });
    addCaptionsToIdf(s, captions);
    return s;
  };
  // the factor's word measure, written out: 1 / ((1 + k ln(1 + nEn)) (1 + k ln(1 + nZh))), weighted by the links' weights
  const meanOf = (s: ReturnType<typeof scorerOf>, links: ReadonlyArray<{ en: string; zh: string; weight: number }>) => {
    const k = DEFAULT_MEASURE.specificity;
    let sum = 0;
    let w = 0;
    for (const l of links) {
      sum += (l.weight / (1 + k * Math.log(1 + s.lexicon.zhFor(l.en).length))) * (1 / (1 + k * Math.log(1 + (s.lexicon.senses(l.zh)?.length ?? 1))));
      w += l.weight;
    }
    return sum / w;
  };

  it("is the median over the null margin's chance pairs, lower in a bank of vague words, and relative to it", () => {
    const vague = scorerOf(vagueBank);
    const specific = scorerOf(thingBank);
    const typicals = [vague, specific].map((s) => {
      const values = s.nullMargin.chanceLinks().filter((l) => l.length).map((l) => meanOf(s, l)).sort((x, y) => x - y);
      expect(values.length).to.be.at.least(20);
      const typical = s.score('A man plays.', '一个男人在玩。').explain.margin.specificityTypical;
      expect(typical).to.be.closeTo(values[values.length >> 1]!, 1e-4);
      return typical;
    });
    expect(typicals[0]).to.be.lessThan(typicals[1]! - 0.02);
    // the same pair is discounted less where such links are the bank's usual ones
    const inVague = vague.score('A man plays.', '一个男人在玩。');
    const inSpecific = specific.score('A man plays.', '一个男人在玩。');
    expect(inVague.explain.matches.map((m) => m.en).sort()).to.deep.equal(['man', 'play']);
    expect(inVague.explain.margin.specificity).to.be.greaterThan(inSpecific.explain.margin.specificity);
    expect(inVague.explain.margin.specificity).to.be.closeTo(meanOf(vague, inVague.explain.matches) / typicals[0]!, 2e-3);
  });

  it('falls back to the fixed value without a reference sample, and follows the sample when it changes', () => {
    const small = scorerOf(vagueBank.slice(0, 19));
    expect(small.nullMargin.active).to.equal(false);
    expect(small.score('A man plays.', '一个男人在玩。').explain.margin.specificityTypical).to.equal(DEFAULT_MEASURE.specificityTypical);
    // 21 more captions a side: the margin starts, and the typical value is the sample's own
    addCaptionsToIdf(small, thingBank.slice(0, 21));
    expect(small.nullMargin.active).to.equal(true);
    const values = small.nullMargin.chanceLinks().filter((l) => l.length).map((l) => meanOf(small, l)).sort((x, y) => x - y);
    expect(small.score('A man plays.', '一个男人在玩。').explain.margin.specificityTypical).to.be.closeTo(values[values.length >> 1]!, 1e-4);
  });
});

describe("comparability: the null margin's reference index (issue 34, round 4)", () => {
  // generated captions: people words (links of the person class), things, colours, numbers and names (entities), a word
  // said twice, one to three sentences
  const en = {
    who: ['A man', 'Two women', 'The boy', 'A girl', 'The players', 'A dog', 'Three children', 'The mayor of London', 'A tourist in Beijing'],
    does: ['rides', 'plays near', 'walks past', 'paints', 'stands by', 'watches', 'sells', 'repairs', 'runs to'],
    what: ['a red kite', 'the old bridge', 'a small boat', 'the train', '5 bicycles', 'a white church', 'the piano', 'a dog and a dog', 'the market on Monday', 'a tower in Paris'],
  };
  const zh = {
    who: ['一个男人', '两个女人', '男孩', '一个女孩', '球员们', '一只狗', '三个孩子', '伦敦市长', '北京的游客'],
    does: ['骑着', '在旁边玩', '走过', '画着', '站在', '看着', '卖', '修理', '跑向'],
    what: ['红色的风筝', '老桥', '一条小船', '火车', '5辆自行车', '白色的教堂', '钢琴', '狗和狗', '星期一的市场', '巴黎的塔'],
  };
  const pick = <T>(rnd: () => number, xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const sentences = (rnd: () => number, words: typeof en, join: (w: string, d: string, t: string) => string) =>
    Array.from({ length: 1 + Math.floor(rnd() * 2.5) }, () => join(pick(rnd, words.who), pick(rnd, words.does), pick(rnd, words.what)));
  const english = (rnd: () => number) => sentences(rnd, en, (w, d, t) => `${w} ${d} ${t}.`).join(' ');
  const chinese = (rnd: () => number) => sentences(rnd, zh, (w, d, t) => `${w}${d}${t}。`).join('');

  // uniform IDF: many candidate links of equal score, where the greedy choice depends on their order
  for (const [margin, uniformIdf] of [[{ sample: 64, top: 8 }, false], [{ sample: 64, top: 1 }, false], [{ sample: 30, top: 40 }, false], [{ sample: 64, top: 8 }, true]] as const) {
    it(`gives the same d as the full C-measure against every reference, to the last bit (sample ${margin.sample}, top ${margin.top}${uniformIdf ? ', uniform IDF' : ''})`, () => {
      const rnd = mulberry32(34 + margin.top + (uniformIdf ? 1 : 0));
      const cfg = { ...config, comparability: { ...config.comparability, nullMargin: margin } };
      const s = createScorer(cfg, { cacheDir: testLexiconDir(), uniformIdf });
      addCaptionsToIdf(s, Array.from({ length: 150 }, () => ({ en: english(rnd), zh: chinese(rnd) })));
      expect(s.nullMargin.active).to.equal(true);
      for (let k = 0; k < 150; k++) {
        const a = s.analyzer.english(english(rnd));
        const b = s.analyzer.chinese(chinese(rnd));
        expect(s.nullMargin.chanceLevel('en', a, `en${k}`), a.tokens.join(' ')).to.equal(s.nullMargin.chanceLevelFull('en', a));
        expect(s.nullMargin.chanceLevel('zh', b, `zh${k}`), b.tokens.join(' ')).to.equal(s.nullMargin.chanceLevelFull('zh', b));
      }
    });
  }

  it('follows the IDF table when it changes after the references were indexed', () => {
    const rnd = mulberry32(35);
    const s = createScorer(config, { cacheDir: testLexiconDir() });
    addCaptionsToIdf(s, Array.from({ length: 100 }, () => ({ en: english(rnd), zh: chinese(rnd) })));
    const a = s.analyzer.english('A man rides a red kite near the old bridge.');
    const before = s.nullMargin.chanceLevel('en', a, 'before');
    expect(before).to.equal(s.nullMargin.chanceLevelFull('en', a));
    // more captions counted into the IDF table, none offered to the reference sample
    for (let k = 0; k < 200; k++) s.termStats.addDocument('zh', s.analyzer.chinese('一个男人骑着红色的风筝。').tokens);
    const after = s.nullMargin.chanceLevel('en', a, 'after');
    expect(after).to.equal(s.nullMargin.chanceLevelFull('en', a));
    expect(after).to.not.equal(before);
  });
});
