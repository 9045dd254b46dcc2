// The C-measure: C = α·fc + β·fe + γ·fl.
// fc: cosine between the TF-IDF vectors of the two captions in one shared space, the English lemma/WordNet
//     concept space: each Chinese word maps to the lemmas of its CC-CEDICT glosses, each English lemma to itself,
//     its frequent WordNet synsets (synonyms) and their near hypernyms, with discounts. Two tokens are linked by
//     their best shared concept; links are chosen one-to-one (greedy by weight), so a many-gloss word is never
//     counted twice. With exact links only this is the plain cosine of the aligned TF-IDF vectors.
// fe: joint co-occurrence rate of entities (numbers, dates, times, names): 2·shared / (entities_en + entities_zh).
// fl: length ratio in comparable units: min(r, 1/r), r = hanzi / (English words × hanziPerWord).
// fs: significance under the null model (null-model.ts): how far the chosen links are from what two random captions
//     of the bank with these words would share; one frequent word shared is what chance gives, a name or three
//     content words are not.
// fcov: coverage, the share of each side's content tokens that the chosen links reach (each weighted by its link's
//     similarity, counted per occurrence, no IDF), the lower of the two sides. A translation covers both sides;
//     two independent captions of one photo (com) usually each say something the other does not, which the cosine
//     alone hides when the shared words are rare ones.
import type { Analysis, Entity } from './analyze.js';
import type { IdfSource } from './idf.js';
import type { Lexicon } from './lexicon.js';
import { NO_SIGNIFICANCE, NULL_SCALE, significance, type Significance } from './null-model.js';

export interface MeasureOptions {
  /** WordNet synonyms and near hypernyms (off = the paper's plain gloss matching). */
  wordnet: boolean;
  /** Chinese compounds also match through their head word (小狗 → 狗 → dog). */
  compounds: boolean;
  synonymWeight: number;
  /** A Chinese compound may link once per part (黑狗 ↔ black + dog); off = strictly one-to-one. */
  multiLink: boolean;
  /** Derivationally related senses (skier ↔ ski, rider ↔ ride), 0 = off. */
  derivationWeight: number;
  hypernymWeights: [number, number];
  headWeight: number;
  /** Other parts of a compound (雪地 → 雪 snow), 0 = off. */
  partsWeight: number;
  /** A word ending in a locative (床上, 湖边, 海里) also stands for its stem. */
  locativeWeight: number;
  senseDecay: number;
  /** Hypernyms with more direct hyponyms than this are too general to link two words. */
  maxHyponyms: number;
  /** A CC-CEDICT gloss's weight falls by this factor per gloss before it (1 = every gloss of a word weighs the same). */
  glossDecay: number;
  /** Glosses at the head of a word's list that keep their full weight. */
  glossFree: number;
  /** Nats of null-model significance at which fs reaches 1 − 1/e (null-model.ts). */
  nullScale: number;
  /**
   * Two words that both name people (their most frequent WordNet sense is a person, or people: boy and 孩子 "child",
   * man and 人 "person", bride and 女人 "woman") link at this weight when nothing closer links them, 0 = off. WordNet
   * puts boy under male, child under juvenile, and both under person, a concept too general (over maxHyponyms) and
   * too far (three levels and more) for the hypernym links: without this class, captions written independently about
   * the same people share no word the lexicon can link.
   */
  personWeight: number;
  /** An English lemma also stands for the head of its usual Chinese word at this weight (ConceptSpace.addUsualHead), 0 = off. */
  usualWeight: number;
  /** How much a link through a word of many readings is discounted in C (specificity.ts), 0 = off. */
  specificity: number;
  /** The links' typical specificity, where C keeps its value, when the bank's own cannot be measured (the null margin
   *  off: under 20 reference captions a side). Else the bank's chance links give it (specificity.ts). */
  specificityTypical: number;
}

export const DEFAULT_MEASURE: MeasureOptions = {
  wordnet: true,
  compounds: true,
  synonymWeight: 0.9,
  multiLink: true,
  derivationWeight: 0.6,
  hypernymWeights: [0.6, 0.4],
  headWeight: 0.7,
  partsWeight: 0.5,
  locativeWeight: 0.9,
  senseDecay: 0.85,
  maxHyponyms: 300,
  glossDecay: 0.8,
  glossFree: 2,
  nullScale: NULL_SCALE,
  personWeight: 0.1,
  usualWeight: 0.3,
  specificity: 0.1,
  // the bank's value measured on the open labelled file (IDF and reference sample from its captions; issue 34 round 6)
  specificityTypical: 0.632,
};

export const BASELINE_MEASURE: MeasureOptions = { ...DEFAULT_MEASURE, wordnet: false, compounds: false, multiLink: false, glossDecay: 1, glossFree: 0, personWeight: 0, usualWeight: 0, specificity: 0 };

/** Concept id → weight. Synsets are ids ≥ 0, lemmas negative ids (interned). */
type Concepts = Map<number, number>;
export interface ConceptSet {
  own: Concepts;
  up: Concepts;
  /** The word names people (its most frequent sense is a person or people). */
  person: boolean;
  /** The highest weight in `own`, and in `up` (0 when empty): a link through them weighs at most their product. */
  ownMax: number;
  upMax: number;
}

const maxWeight = (m: Concepts): number => {
  let best = 0;
  for (const w of m.values()) if (w > best) best = w;
  return best;
};

/** Where a Chinese word's English concepts come from: a gloss lemma, its weight, and a label for explanations. */
interface Source {
  lemma: string;
  weight: number;
  label: string;
  /** Which part of the Chinese word this is: 0 its head meaning, 1.. modifiers of a multi-word gloss, 10.. other parts. */
  slot: number;
}

/** The best link between an English lemma and a Chinese word. */
export interface LinkInfo {
  sim: number;
  slot: number;
  gloss: string;
}
const NO_LINK: LinkInfo = { sim: 0, slot: 0, gloss: '' };

export interface Link {
  en: string;
  zh: string;
  gloss: string;
  sim: number;
  weight: number;
}

export interface Features {
  fc: number;
  fe: number;
  fl: number;
  fcov: number;
  fs: number;
  links: Link[];
  entities: Array<{ en: string; zh: string; kind: string }>;
}

/** Chinese nominal suffixes and particles that are not the semantic head of a compound (桌子 is not "a child"). */
/** A single character inside a compound keeps only its first glosses (characters are very polysemous). */
const SINGLE_CHAR_SENSES = 2;
/** Hypernyms with more direct hyponyms than this (person, move, ...) are too general to link two words. */
const LOCATIVES = new Set(['上', '里', '边', '中', '下', '内', '外', '旁', '前', '后', '面', '头', '间', '部']);
const NOT_HEADS = new Set(['子', '儿', '们', '头', '者', '性', '化', '家', '的', '地', '上', '里', '中', '下', '边', '面', '着', '了', '过', '个', '只', '些', '士']);

function put(m: Concepts, key: number, w: number): void {
  const cur = m.get(key);
  if (cur === undefined || cur < w) m.set(key, w);
}

function bestShared(a: Concepts, b: Concepts): number {
  let best = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const [k, w1] of small) {
    const w2 = large.get(k);
    if (w2 !== undefined && w1 * w2 > best) best = w1 * w2;
  }
  return best;
}

export class ConceptSpace {
  private lemmaIds = new Map<string, number>();
  private enMemo = new Map<string, ConceptSet>();
  private srcMemo = new Map<string, Source[]>();
  private simMemo = new Map<string, Map<string, LinkInfo>>();
  private simCount = 0;
  private peopleRoots: Set<number> | null = null;
  private peopleMemo = new Map<number, boolean>();
  /** Inside addUsualHead: concepts without their usual heads, memoised apart. */
  private inUsual = false;
  private baseMemo = new Map<string, ConceptSet>();
  constructor(
    private readonly lex: Lexicon,
    readonly opts: MeasureOptions,
  ) {}

  private lemmaKey(lemma: string): number {
    let id = this.lemmaIds.get(lemma);
    if (id === undefined) this.lemmaIds.set(lemma, (id = -1 - this.lemmaIds.size));
    return id;
  }

  english(lemma: string): ConceptSet {
    const memo = this.inUsual ? this.baseMemo : this.enMemo;
    let c = memo.get(lemma);
    if (c) return c;
    const own: Concepts = new Map([[this.lemmaKey(lemma), 1]]);
    const up: Concepts = new Map();
    const synsets = this.opts.wordnet && !lemma.startsWith('#') ? this.lex.synsets(lemma) : undefined;
    if (synsets) {
      const [h1, h2] = this.opts.hypernymWeights;
      let decay = 1;
      for (const s of synsets) {
        put(own, s, this.opts.synonymWeight * decay);
        if (this.opts.derivationWeight > 0) for (const d of this.lex.derivations(s)) put(own, d, this.opts.derivationWeight * decay);
        for (const p of this.lex.hypernyms(s)) {
          if (this.lex.hyponymCount(p) <= this.opts.maxHyponyms) put(up, p, h1 * decay);
          for (const q of this.lex.hypernyms(p)) if (this.lex.hyponymCount(q) <= this.opts.maxHyponyms) put(up, q, h2 * decay);
        }
        decay *= this.opts.senseDecay;
      }
    }
    // A WordNet compound also stands for its head word, as a Chinese compound does (rough_water → water, ice_rink →
    // rink, tennis_ball → ball): joined, its parts would otherwise link nothing when the other caption names the head.
    const cut = this.opts.compounds ? lemma.lastIndexOf('_') : -1;
    if (cut > 0 && !lemma.startsWith('#')) {
      const head = this.english(lemma.slice(cut + 1));
      for (const [k, w] of head.own) put(own, k, w * this.opts.headWeight);
      for (const [k, w] of head.up) put(up, k, w * this.opts.headWeight);
    }
    if (!this.inUsual) this.addUsualHead(lemma, own);
    c = { own, up, person: this.opts.personWeight > 0 && synsets !== undefined && this.namesPeople(synsets[0]!), ownMax: maxWeight(own), upMax: maxWeight(up) };
    if (memo.size > 200_000) memo.clear();
    memo.set(lemma, c);
    return c;
  }

  /**
   * The head of the lemma's usual Chinese word (Lexicon.usualChinese) as a meaning of the lemma, at usualWeight: boy →
   * 男孩 → 孩 "child", man → 男人 → 人 "person", bicycle → 自行车 → 车 "vehicle". The Chinese side of a link stands for its
   * compound's head (sources); this is the same from the English side, through the word a Chinese caption would use,
   * so "boy" meets 小孩 as 男孩 would. Only the head's own concepts, without their own usual heads (no chains).
   */
  private addUsualHead(lemma: string, own: Concepts): void {
    const usual = this.opts.usualWeight > 0 && this.opts.compounds && !lemma.startsWith('#') ? this.lex.usualChinese(lemma) : undefined;
    const h = usual ? this.head(usual) : null;
    if (!h) return;
    const heads: Source[] = [];
    this.addSenses(heads, h, this.opts.usualWeight, '', h.length === 1 ? SINGLE_CHAR_SENSES : Infinity);
    this.inUsual = true;
    try {
      for (const src of heads) {
        if (src.slot !== 0 || src.lemma === lemma) continue; // the head lemma of each gloss, not its modifiers
        for (const [k, w] of this.english(src.lemma).own) put(own, k, w * src.weight);
      }
    } finally {
      this.inUsual = false;
    }
  }

  /** Whether a synset is person.n.01 or people.n.01 or under one of them (memoised; WordNet's depth is under 20). */
  private namesPeople(synset: number, depth = 0): boolean {
    this.peopleRoots ??= new Set(['person', 'people'].flatMap((w) => this.lex.synsets(w)?.slice(0, 1) ?? []));
    if (this.peopleRoots.has(synset)) return true;
    let r = this.peopleMemo.get(synset);
    if (r === undefined) {
      r = depth < 20 && this.lex.hypernyms(synset).some((p) => this.namesPeople(p, depth + 1));
      this.peopleMemo.set(synset, r);
    }
    return r;
  }

  /** The longest proper suffix of a word that the lexicon knows and that can head it. */
  private head(word: string): string | null {
    for (let len = Math.min(word.length - 1, this.lex.maxZhWordLength); len >= 1; len--) {
      const h = word.slice(word.length - len);
      if (this.lex.hasZh(h) && !NOT_HEADS.has(h)) return h;
    }
    return null;
  }

  private addSenses(out: Source[], word: string, scale: number, prefix: string, maxSenses = Infinity, slot = 0): boolean {
    const senses = this.lex.senses(word);
    if (!senses) return false;
    const { glossDecay, glossFree } = this.opts;
    for (const [k, s] of senses.slice(0, maxSenses).entries()) {
      const n = s.lemmas.length;
      const rank = glossDecay === 1 ? 1 : glossDecay ** Math.max(0, k - glossFree);
      for (let i = 0; i < n; i++) {
        out.push({ lemma: s.lemmas[i]!, weight: s.weights[i]! * scale * rank, label: prefix + s.text, slot: slot || (i === n - 1 ? 0 : 1 + i) });
      }
    }
    return true;
  }

  /** The English lemmas a Chinese word stands for: its own glosses, then (compounds) its head's and parts'. */
  sources(word: string): Source[] {
    let out = this.srcMemo.get(word);
    if (out) return out;
    out = [];
    if (word.startsWith('#')) out.push({ lemma: word, weight: 1, label: word, slot: 0 });
    else {
      const known = this.addSenses(out, word, 1, '');
      if (this.opts.compounds && word.length >= 2) {
        const last = word[word.length - 1]!;
        const stem = word.slice(0, -1);
        if (this.opts.locativeWeight > 0 && LOCATIVES.has(last) && this.lex.hasZh(stem) && !NOT_HEADS.has(stem)) {
          this.addSenses(out, stem, this.opts.locativeWeight, `${stem}: `);
        }
        const h = this.head(word);
        if (h) this.addSenses(out, h, this.opts.headWeight, `${h}: `, h.length === 1 ? SINGLE_CHAR_SENSES : Infinity);
        // The other parts, left to right, longest first: modifiers (雪地 → 雪), or all parts of a word CC-CEDICT
        // does not know.
        const partsWeight = known ? this.opts.partsWeight : Math.max(this.opts.partsWeight, this.opts.headWeight * 0.8);
        if (partsWeight > 0) {
          for (let i = 0, k = 0; i < word.length - (h?.length ?? 0); k++) {
            let len = Math.min(this.lex.maxZhWordLength, word.length - i, word.length - 1);
            for (; len > 1 && !this.lex.hasZh(word.slice(i, i + len)); len--);
            const part = word.slice(i, i + len);
            if (this.lex.hasZh(part) && !NOT_HEADS.has(part) && !LOCATIVES.has(part)) {
              this.addSenses(out, part, partsWeight, `${part}: `, len === 1 ? SINGLE_CHAR_SENSES : Infinity, 10 + k);
            }
            i += len;
          }
        }
      }
      if (!known && /^[a-z]/.test(word)) out.push({ lemma: word, weight: 1, label: word, slot: 0 }); // Latin words in Chinese text
    }
    if (this.srcMemo.size > 200_000) this.srcMemo.clear();
    this.srcMemo.set(word, out);
    return out;
  }

  /** The best link of an English lemma to a Chinese word: similarity in [0, 1], which part of it, which gloss. */
  private computeLink(en: string, zh: string): LinkInfo {
    const e = this.english(en);
    let best = 0;
    let bestSrc: Source | null = null;
    let rel = '';
    for (const src of this.sources(zh)) {
      if (src.weight <= best) continue;
      const l = this.english(src.lemma);
      const same = bestShared(e.own, l.own) * src.weight;
      if (same > best) {
        best = same;
        bestSrc = src;
        rel = '';
      }
      if (!this.opts.wordnet || best >= src.weight) continue;
      // a product of weights never exceeds the product of their maxima (rounding is monotone): a link that cannot beat
      // the best so far is not looked for
      const narrower = e.ownMax * l.upMax * src.weight > best ? bestShared(e.own, l.up) * src.weight : 0;
      if (narrower > best) {
        best = narrower;
        bestSrc = src;
        rel = ' (narrower)';
      }
      const broader = e.upMax * l.ownMax * src.weight > best ? bestShared(e.up, l.own) * src.weight : 0;
      if (broader > best) {
        best = broader;
        bestSrc = src;
        rel = ' (broader)';
      }
      const people = e.person && l.person ? this.opts.personWeight * src.weight : 0;
      if (people > best) {
        best = people;
        bestSrc = src;
        rel = ' (both people)';
      }
    }
    return bestSrc ? { sim: best, slot: bestSrc.slot, gloss: bestSrc.label + rel } : NO_LINK;
  }

  /**
   * The concept sets a link of this term is made through: an English lemma's own, a Chinese word's every source lemma's
   * (whatever the source's weight). computeLink is 0 for two terms unless one of the English side's `own` concepts
   * is among the Chinese side's `own` or `up` ones, or one of its `up` concepts among the Chinese side's `own` ones, or
   * both name people: the null margin's reference index (reference.ts) skips term pairs that share none.
   */
  conceptSets(term: string, lang: 'en' | 'zh'): ConceptSet[] {
    return lang === 'en' ? [this.english(term)] : this.sources(term).map((src) => this.english(src.lemma));
  }

  /** Similarity in [0, 1] of an English lemma and a Chinese word through their best shared concept. */
  simValue(en: string, zh: string): number {
    return this.simRow(en)(zh).sim;
  }

  /** A function giving the link of one English lemma to Chinese words (memoised per pair). */
  simRow(en: string): (zh: string) => LinkInfo {
    if (this.simCount > 1_000_000) {
      this.simMemo.clear();
      this.simCount = 0;
    }
    let row = this.simMemo.get(en);
    if (!row) this.simMemo.set(en, (row = new Map()));
    const memo = row;
    return (zh: string) => {
      let r = memo.get(zh);
      if (r === undefined) {
        r = this.computeLink(en, zh);
        memo.set(zh, r);
        this.simCount++;
      }
      return r;
    };
  }

  /** The similarity and the gloss that links them, e.g. "dog (broader)" or "狗: dog". */
  sim(en: string, zh: string): { sim: number; gloss: string } {
    const r = this.simRow(en)(zh);
    return { sim: r.sim, gloss: r.gloss };
  }
}

/** A caption's side of the cosine: its distinct terms in first-occurrence order, their counts and TF-IDF weights. */
export interface WeightedTerms {
  terms: string[];
  counts: number[];
  /** TF-IDF weight of each term, in the order of `terms`. */
  w: number[];
  /** Euclidean norm of the weights. */
  norm: number;
}

/** Term frequencies (counts) and TF-IDF weights, in first-occurrence order. */
export function weightedTerms(tokens: string[], lang: 'en' | 'zh', idf: IdfSource): WeightedTerms {
  const tf = new Map<string, number>();
  for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
  const terms = [...tf.keys()];
  const counts = [...tf.values()];
  for (const [t, n] of tf) tf.set(t, n * idf.idf(lang, t));
  return { terms, counts, w: [...tf.values()], norm: norm(tf) };
}

/** Share of the tokens reached by a link, each counted with its link's similarity. */
export function coverage(counts: number[], sims: Float64Array): number {
  let total = 0;
  let reached = 0;
  for (let i = 0; i < counts.length; i++) {
    total += counts[i]!;
    reached += counts[i]! * sims[i]!;
  }
  return total ? reached / total : 0;
}

const norm = (m: Map<string, number>): number => {
  let s = 0;
  for (const v of m.values()) s += v * v;
  return Math.sqrt(s);
};

/**
 * Candidate links of two captions: English term i, Chinese term j, score eW[i]·zW[j]·sim, in the order
 * contentSimilarity's scan produces them (i ascending, then j ascending), which the greedy choice's stable sort keeps
 * for equal scores. The null margin's reference index (reference.ts) builds the same list from its own lookups.
 */
export class LinkCandidates {
  readonly ci: number[] = [];
  readonly cj: number[] = [];
  readonly cs: number[] = [];
  readonly cl: LinkInfo[] = [];
  push(i: number, j: number, score: number, link: LinkInfo): void {
    this.ci.push(i);
    this.cj.push(j);
    this.cs.push(score);
    this.cl.push(link);
  }
}

/** Every term pair of the two sides with a link (similarity > 0), scanned in order. */
function scanLinks(space: ConceptSpace, E: WeightedTerms, Z: WeightedTerms): LinkCandidates {
  const out = new LinkCandidates();
  for (let i = 0; i < E.terms.length; i++) {
    const row = space.simRow(E.terms[i]!);
    for (let j = 0; j < Z.terms.length; j++) {
      const link = row(Z.terms[j]!);
      if (link.sim > 0) out.push(i, j, E.w[i]! * Z.w[j]! * link.sim, link);
    }
  }
  return out;
}

/**
 * The one-to-one choice of links (greedy by score) and what it gives: fc, the cosine of the aligned TF-IDF vectors,
 * and fcov, the lower side's coverage. Each English token links once. A Chinese token links once, or (compounds)
 * once per part: 黑狗 takes "black" through 黑 and "dog" through 狗, 小女孩 "little" and "girl" through the two words
 * of its gloss.
 */
export function chooseLinks(
  multi: boolean,
  E: WeightedTerms,
  Z: WeightedTerms,
  cand: LinkCandidates,
  explain: boolean,
): { fc: number; fcov: number; simE: Float64Array; simZ: Float64Array; links: Link[] } {
  const { ci, cj, cs, cl } = cand;
  const order = cs.map((_, k) => k);
  if (order.length > 1) order.sort((a, b) => cs[b]! - cs[a]!);
  const usedE = new Uint8Array(E.terms.length);
  const usedZ = new Uint32Array(Z.terms.length);
  let dot = 0;
  const links: Link[] = [];
  const simE = new Float64Array(E.terms.length);
  const simZ = new Float64Array(Z.terms.length);
  for (const k of order) {
    const i = ci[k]!;
    const j = cj[k]!;
    const bit = 1 << Math.min(cl[k]!.slot, 30);
    if (usedE[i] || (usedZ[j] && (!multi || usedZ[j]! & bit))) continue;
    usedE[i] = 1;
    usedZ[j]! |= bit;
    const sim = cl[k]!.sim;
    simE[i] = sim;
    if (sim > simZ[j]!) simZ[j] = sim;
    dot += cs[k]!;
    if (explain) links.push({ en: E.terms[i]!, zh: Z.terms[j]!, gloss: cl[k]!.gloss, sim, weight: cs[k]! / (E.norm * Z.norm) });
  }
  const fcov = Math.min(coverage(E.counts, simE), coverage(Z.counts, simZ));
  return { fc: Math.min(1, dot / (E.norm * Z.norm)), fcov, simE, simZ, links };
}

export function contentSimilarity(
  space: ConceptSpace,
  en: Analysis,
  zh: Analysis,
  idf: IdfSource,
  explain = true,
  withSignificance = true,
): { fc: number; fcov: number; sig: Significance; links: Link[] } {
  const E = weightedTerms(en.tokens, 'en', idf);
  const Z = weightedTerms(zh.tokens, 'zh', idf);
  if (!E.norm || !Z.norm) return { fc: 0, fcov: 0, sig: NO_SIGNIFICANCE, links: [] };
  const { fc, fcov, simE, simZ, links } = chooseLinks(space.opts.multiLink, E, Z, scanLinks(space, E, Z), explain);
  if (!withSignificance) return { fc, fcov, sig: NO_SIGNIFICANCE, links };
  const linked = (terms: string[], sims: Float64Array) => new Map(terms.flatMap((t, i) => (sims[i]! > 0 ? [[t, sims[i]!] as const] : [])));
  const sig = significance(E.terms, Z.terms, linked(E.terms, simE), linked(Z.terms, simZ), idf, space.opts.nullScale);
  return { fc, fcov, sig, links };
}

const GENERIC_NAME_WORDS = new Set(['city', 'river', 'mountain', 'lake', 'island', 'province', 'county', 'the', 'of', 'new', 'north', 'south', 'east', 'west', 'great', 'saint', 'st', 'mount', 'university', 'street', 'park']);

function nameWords(key: string): string[] {
  return key.split(/[\s-]+/).filter((w) => w.length > 1 && !GENERIC_NAME_WORDS.has(w));
}

export function entityCooccurrence(en: Entity[], zh: Entity[]): { fe: number; matches: Array<{ en: string; zh: string; kind: string }> } {
  if (!en.length || !zh.length) return { fe: 0, matches: [] };
  const usedZ = new Set<number>();
  const matches: Array<{ en: string; zh: string; kind: string }> = [];
  for (const e of en) {
    const isName = !e.key.includes(':');
    const eWords = isName ? nameWords(e.key) : [];
    for (let j = 0; j < zh.length; j++) {
      if (usedZ.has(j)) continue;
      const z = zh[j]!;
      const zIsName = !z.key.includes(':');
      let ok = false;
      if (!isName && !zIsName) ok = e.key === z.key;
      else if (isName && zIsName) {
        const zw = nameWords(z.key);
        ok = e.key === z.key || (eWords.length > 0 && eWords.some((w) => zw.includes(w)));
      }
      if (ok) {
        usedZ.add(j);
        matches.push({ en: e.text, zh: z.text, kind: isName ? (z.kind === 'name' ? 'name' : z.kind) : e.kind });
        break;
      }
    }
  }
  return { fe: (2 * matches.length) / (en.length + zh.length), matches };
}

export function lengthRatio(en: Analysis, zh: Analysis, hanziPerWord: number): number {
  return lengthFeature(en.length, zh.length, hanziPerWord);
}

export function lengthFeature(enWords: number, zhChars: number, hanziPerWord: number): number {
  if (!enWords || !zhChars) return 0;
  const r = zhChars / (enWords * hanziPerWord);
  return Math.min(r, 1 / r);
}
