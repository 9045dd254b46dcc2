// How specific the words that carry a caption pair's links are (issue 34, round 5). Short, vague captions meet
// unrelated ones through one common word: "play" ~ 玩 (a dog plays; a man plays on a skateboard), "new" ~ 新, or a
// character that links through one of its many CC-CEDICT senses (差: "differ", "short of", "official post" …). Such a
// word is weaker evidence of shared content than one with few readings: an English lemma that many Chinese words gloss
// (CC-CEDICT inverted: play → 玩, 打, 演, 放, 踢 …) says little about which of them the other caption meant, and a
// Chinese word with many senses says little about which English word it stands for.
//
// The factor is the links' weighted mean of 1 / ((1 + k·ln(1 + nEn)) · (1 + k·ln(1 + nZh))), nEn the Chinese words
// whose glosses give the English lemma, nZh the Chinese word's senses, divided by the typical value (the median over
// the fit part of the labelled pairs), so a pair of typical words keeps its C and a pair held by one vague word
// loses some. It multiplies C (with the null margin's scale); the par score does not use it. k = 0 turns it off.
// Chosen on the fit two thirds of the labelled pairs by fold (bench/RESULTS.md, "Issue 34, round 5").
import type { Lexicon } from './lexicon.js';
import type { Link } from './measure.js';

export interface SpecificityOptions {
  /** k above; 0 = off. */
  specificity: number;
  /** The typical value of the links' mean (the factor is 1 there). */
  specificityTypical: number;
}

export class Specificity {
  private readonly memo = new Map<string, number>();
  constructor(
    private readonly lexicon: Lexicon,
    private readonly opts: SpecificityOptions,
  ) {}

  get enabled(): boolean {
    return this.opts.specificity > 0;
  }

  /** C's factor for a pair whose chosen links are these (1 without links or when off). */
  factor(links: readonly Pick<Link, 'en' | 'zh' | 'weight'>[]): number {
    if (!this.enabled || !links.length) return 1;
    let sum = 0;
    let weights = 0;
    for (const l of links) {
      sum += l.weight * this.ofWord('en', l.en) * this.ofWord('zh', l.zh);
      weights += l.weight;
    }
    return weights > 0 ? sum / weights / this.opts.specificityTypical : 1;
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
