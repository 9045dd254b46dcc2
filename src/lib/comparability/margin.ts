// The null margin of the C-measure (issue 34, round 3): how high does C get for THIS caption with captions of the other
// bank it has nothing to do with? The ratio margin of bitext mining (CCMatrix / LASER margin scoring), with a fixed
// reference sample of the bank standing in for the nearest neighbours.
//
// A four-word caption made of the bank's common words ("A white dog plays in the grass.", "有一个人在玩滑板。") shares
// one of them with many unrelated captions, and C, a cosine and a share of each side's words, is then high for one
// shared word: the better-scoring unrelated captions of flickr8k-cn share "play ~ 玩", "man ~ 男人", "sit ~ 坐". The
// word's frequency on one side (the IDF table, the null model's q) does not say this: in a bank of dogs and people
// "dog" is as frequent as "play", and a shared "dog" is real evidence where "play" is not. What says it is how the two
// captions fare against the other bank, which a random sample measures: d(x) = the mean of the K highest C of caption x
// against R reference captions of the other language (drawn once per bank). The pair's C is then scaled by
//     m / max(d, m / 4),   d = (d(en) + d(zh)) / 2,
// m = the median d of the reference captions themselves (what a typical caption of this bank gets by chance), so the
// scale stays that of C on any bank (a bank of dogs and people has a higher m, not lower C for all its pairs), a caption
// as prone to chance as the typical one keeps its C, a generic one loses, a specific one gains (at most × 4). C' is
// capped at 1. With fewer than MIN_REFERENCE captions a side (a small bank, `score` without a bank) the scale is 1.
import type { Analysis } from './analyze.js';
import { mulberry32 } from '../../util/random.js';

/** Below this many reference captions on either side the margin is off (scale 1), as IDF is uniform under 20 documents. */
export const MIN_REFERENCE = 20;
/** The scale never exceeds this: a caption that meets nothing in the reference is not made to look infinitely specific. */
const MAX_SCALE = 4;

export interface MarginOptions {
  /** Reference captions per language (R); 0 = off. */
  sample: number;
  /** How many of the highest C against the reference make a caption's chance level d (K). */
  top: number;
}

type Lang = 'en' | 'zh';
/** The raw C of an English and a Chinese analysis (no significance, no explanation). */
export type RawC = (en: Analysis, zh: Analysis) => number;

/** A seeded reservoir of at most n items: every item offered so far is in it with the same chance. */
class Reservoir<T> {
  readonly items: T[] = [];
  private seen = 0;
  private readonly rnd: () => number;
  constructor(
    private readonly n: number,
    seed: number,
  ) {
    this.rnd = mulberry32(seed);
  }
  offer(x: T): boolean {
    this.seen++;
    if (this.items.length < this.n) {
      this.items.push(x);
      return true;
    }
    const j = Math.floor(this.rnd() * this.seen);
    if (j >= this.n) return false;
    this.items[j] = x;
    return true;
  }
}

export class NullMargin {
  private readonly ref: Record<Lang, Reservoir<Analysis>>;
  private readonly memo: Record<Lang, Map<string, number>> = { en: new Map(), zh: new Map() };
  private typical: number | null = null;
  constructor(
    private readonly opts: MarginOptions,
    private readonly raw: RawC,
  ) {
    this.ref = { en: new Reservoir(opts.sample, 34), zh: new Reservoir(opts.sample, 35) };
  }

  /** Offers a caption of the bank to the reference sample (kept with the reservoir's chance). */
  add(lang: Lang, a: Analysis): void {
    if (this.opts.sample <= 0 || !a.tokens.length) return;
    if (this.ref[lang].offer(a)) this.reset();
  }

  private reset(): void {
    this.typical = null;
    this.memo.en.clear();
    this.memo.zh.clear();
  }

  get active(): boolean {
    return this.opts.sample > 0 && this.ref.en.items.length >= MIN_REFERENCE && this.ref.zh.items.length >= MIN_REFERENCE;
  }

  /** d(x): the mean of the K highest C of a caption against the other language's reference captions. */
  chanceLevel(lang: Lang, a: Analysis, key: string): number {
    const memo = this.memo[lang];
    let d = memo.get(key);
    if (d === undefined) {
      const other = this.ref[lang === 'en' ? 'zh' : 'en'].items;
      const cs = other.map((b) => (lang === 'en' ? this.raw(a, b) : this.raw(b, a))).sort((x, y) => y - x);
      const k = Math.max(1, Math.min(this.opts.top, cs.length));
      d = cs.slice(0, k).reduce((s, x) => s + x, 0) / k;
      if (memo.size > 50_000) memo.clear();
      memo.set(key, d);
    }
    return d;
  }

  /** m: the median chance level of the reference captions, averaged over the two languages. */
  private typicalLevel(): number {
    if (this.typical === null) {
      const median = (lang: Lang) => {
        const ds = this.ref[lang].items.map((a, i) => this.chanceLevel(lang, a, `\u0000ref${i}`)).sort((x, y) => x - y);
        return ds[ds.length >> 1]!;
      };
      this.typical = (median('en') + median('zh')) / 2;
    }
    return this.typical;
  }

  /** The scale of a pair's C: m / max(d, m / 4), 1 when the margin is off. Keys identify the texts (memo). */
  scale(en: Analysis, zh: Analysis, enKey: string, zhKey: string): { scale: number; chance: number; typical: number } {
    if (!this.active) return { scale: 1, chance: 0, typical: 0 };
    const m = this.typicalLevel();
    if (!(m > 0)) return { scale: 1, chance: 0, typical: m };
    const d = (this.chanceLevel('en', en, enKey) + this.chanceLevel('zh', zh, zhKey)) / 2;
    return { scale: m / Math.max(d, m / MAX_SCALE), chance: d, typical: m };
  }
}
