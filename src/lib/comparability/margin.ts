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
// d is computed through the reference index (reference.ts: the same numbers as the full C-measure against each
// reference, for a fraction of the CPU); chanceLevelFull computes it the long way, to check the index against.
import type { Analysis } from './analyze.js';
import type { ReferenceIndex } from './reference.js';
import type { Link } from './measure.js';
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
/** Indexes one language's reference captions: what gives a text's C against each of them at once. */
export type IndexReferences = (refLang: Lang, refs: readonly Analysis[]) => ReferenceIndex;

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
  private chance: Link[][] | null = null;
  private sampleVersion = 0;
  private readonly index: Partial<Record<Lang, ReferenceIndex>> = {};
  constructor(
    private readonly opts: MarginOptions,
    private readonly raw: RawC,
    private readonly indexReferences?: IndexReferences,
  ) {
    this.ref = { en: new Reservoir(opts.sample, 34), zh: new Reservoir(opts.sample, 35) };
  }

  /** Offers a caption of the bank to the reference sample (kept with the reservoir's chance). */
  add(lang: Lang, a: Analysis): void {
    if (this.opts.sample <= 0 || !a.tokens.length) return;
    if (this.ref[lang].offer(a)) this.reset();
  }

  private reset(): void {
    this.sampleVersion++;
    this.typical = null;
    this.chance = null;
    delete this.index.en;
    delete this.index.zh;
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
      const refLang = lang === 'en' ? 'zh' : 'en';
      const refs = this.ref[refLang].items;
      // the index gives the values that can be among the K highest (all of them when it cannot tell)
      if (this.indexReferences) d = this.topMean((this.index[refLang] ??= this.indexReferences(refLang, refs)).scores(a, this.topCount(refs.length)), refs.length);
      else d = this.chanceLevelFull(lang, a);
      if (memo.size > 50_000) memo.clear();
      memo.set(key, d);
    }
    return d;
  }

  /** d(x) through the full C-measure against each reference caption, not memoised (what the index must equal). */
  chanceLevelFull(lang: Lang, a: Analysis): number {
    const other = this.ref[lang === 'en' ? 'zh' : 'en'].items;
    return this.topMean(
      other.map((b) => (lang === 'en' ? this.raw(a, b) : this.raw(b, a))),
      other.length,
    );
  }

  /** K, or fewer when there are fewer references (at least 1). */
  private topCount(references: number): number {
    return Math.max(1, Math.min(this.opts.top, references));
  }

  /** The mean of the K highest of these C values (K as of `references` reference captions). */
  private topMean(values: number[], references: number): number {
    const k = this.topCount(references);
    return values
      .sort((x, y) => y - x)
      .slice(0, k)
      .reduce((s, x) => s + x, 0) / k;
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

  /** Changes whenever the reference sample does (what is computed from it, m and chanceLinks, is computed again). */
  get version(): number {
    return this.sampleVersion;
  }

  /**
   * How unrelated captions of this bank meet by chance: the chosen links of every reference caption with each of the K
   * reference captions of the other language it scores highest with (the pairs behind its chance level d), both
   * languages; empty when the margin is off or has no reference index. Computed once per sample, as m is.
   */
  chanceLinks(): Link[][] {
    if (!this.active || !this.indexReferences) return [];
    if (this.chance === null) {
      const out: Link[][] = [];
      for (const lang of ['en', 'zh'] as const) {
        const refLang = lang === 'en' ? 'zh' : 'en';
        const refs = this.ref[refLang].items;
        const index = (this.index[refLang] ??= this.indexReferences(refLang, refs));
        for (const a of this.ref[lang].items) out.push(...index.topLinks(a, this.topCount(refs.length)));
      }
      this.chance = out;
    }
    return this.chance;
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
