// How specific the words that carry a caption pair's links are (issue 34, round 5). Short, vague captions meet
// unrelated ones through one common word: "play" ~ 玩 (a dog plays; a man plays on a skateboard), "new" ~ 新, or a
// character that links through one of its many CC-CEDICT senses (差: "differ", "short of", "official post" …). Such a
// word is weaker evidence of shared content than one with few readings: an English lemma that many Chinese words gloss
// (CC-CEDICT inverted: play → 玩, 打, 演, 放, 踢 …) says little about which of them the other caption meant, and a
// Chinese word with many senses says little about which English word it stands for.
//
// The factor is the links' weighted mean of 1 / ((1 + k·ln(1 + nEn)) · (1 + k·ln(1 + nZh))), nEn the Chinese words
// whose glosses give the English lemma, nZh the Chinese word's senses, divided by the bank's typical value, so the factor
// is relative to the bank as the null margin's scale is (m / d): a pair held by words vaguer than the bank's usual ones
// loses some, one of more specific words gains a little. The typical value (issue 34, round 6) is the median of the same
// mean over the pairs behind the null margin's chance levels: each reference caption with the K reference captions of the
// other language it scores highest with (margin.ts chanceLinks), i.e. what the links of two unrelated captions of this
// bank are made of; computed once per reference sample, as m is. Where the margin is off (under 20 reference captions a
// side) the fixed `specificityTypical` stands in: the same median on the open labelled file. It multiplies C (with the
// null margin's scale); the par score does not use it. k = 0 turns it off. k was chosen on the fit two thirds of the
// labelled pairs by fold (bench/RESULTS.md, "Issue 34, round 5").
import type { Lexicon } from './lexicon.js';
import type { Link } from './measure.js';

type Linked = readonly Pick<Link, 'en' | 'zh' | 'weight'>[];

/** Where the bank's chance links come from (margin.ts NullMargin): version changes with the reference sample. */
export interface ChanceLinks {
  readonly version: number;
  chanceLinks(): readonly Linked[];
}

/** Below this many chance pairs with a link the fixed typical value stands in. */
const MIN_CHANCE_PAIRS = 20;

export interface SpecificityOptions {
  /** k above; 0 = off. */
  specificity: number;
  /** The typical value of the links' mean (the factor is 1 there) where the bank's own cannot be measured. */
  specificityTypical: number;
}

export class Specificity {
  private readonly memo = new Map<string, number>();
  private typicalValue: number | null = null;
  private typicalAt = -1;
  constructor(
    private readonly lexicon: Lexicon,
    private readonly opts: SpecificityOptions,
    private readonly chance?: ChanceLinks,
  ) {}

  get enabled(): boolean {
    return this.opts.specificity > 0;
  }

  /** C's factor for a pair whose chosen links are these (1 without links or when off). */
  factor(links: Linked): number {
    if (!this.enabled || !links.length) return 1;
    return this.mean(links) / this.typical();
  }

  /** The links' typical mean in this bank: the median over its chance pairs (the fixed value without them). */
  typical(): number {
    const version = this.chance?.version ?? 0;
    if (this.typicalValue === null || this.typicalAt !== version) {
      const values = (this.chance?.chanceLinks() ?? []).filter((l) => l.length).map((l) => this.mean(l));
      this.typicalValue = values.length >= MIN_CHANCE_PAIRS ? median(values) : this.opts.specificityTypical;
      this.typicalAt = version;
    }
    return this.typicalValue;
  }

  /** The links' weight-weighted mean of their words' specificity (1 without weight). */
  private mean(links: Linked): number {
    let sum = 0;
    let weights = 0;
    for (const l of links) {
      sum += l.weight * this.ofWord('en', l.en) * this.ofWord('zh', l.zh);
      weights += l.weight;
    }
    return weights > 0 ? sum / weights : 1;
  }

  /** 1 / (1 + k·ln(1 + readings)) of one word, memoised. */
  private ofWord(lang: 'en' | 'zh', word: string): number {
    const key = lang + word;
    let v = this.memo.get(key);
    if (v === undefined) {
      const readings = lang === 'en' ? this.lexicon.zhFor(word).length : (this.lexicon.senses(word)?.length ?? 1);
      v = 1 / (1 + this.opts.specificity * Math.log(1 + readings));
      this.memo.set(key, v);
    }
    return v;
  }
}

/** The median (the upper one of an even count) of a non-empty list. */
function median(values: number[]): number {
  const s = [...values].sort((x, y) => x - y);
  return s[s.length >> 1]!;
}
