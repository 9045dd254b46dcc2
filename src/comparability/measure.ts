// The C-measure: C = α·fc + β·fe + γ·fl.
// fc: cosine between the TF-IDF vectors of the two captions in one shared space, the English lemma/WordNet
//     concept space: each Chinese word maps to the lemmas of its CC-CEDICT glosses, each English lemma to itself,
//     its frequent WordNet synsets (synonyms) and their near hypernyms, with discounts. Two tokens are linked by
//     their best shared concept; links are chosen one-to-one (greedy by weight), so a many-gloss word is never
//     counted twice. With exact links only this is the plain cosine of the aligned TF-IDF vectors.
// fe: joint co-occurrence rate of entities (numbers, dates, times, names): 2·shared / (entities_en + entities_zh).
// fl: length ratio in comparable units: min(r, 1/r), r = hanzi / (English words × hanziPerWord).
import type { Analysis, Entity } from './analyze.js';
import type { IdfSource } from './idf.js';
import type { Lexicon } from './lexicon.js';

export interface MeasureOptions {
  /** WordNet synonyms and near hypernyms (off = the paper's plain gloss matching). */
  wordnet: boolean;
  /** Chinese compounds also match through their head word (小狗 → 狗 → dog). */
  compounds: boolean;
  synonymWeight: number;
  hypernymWeights: [number, number];
  headWeight: number;
  senseDecay: number;
}

export const DEFAULT_MEASURE: MeasureOptions = {
  wordnet: true,
  compounds: true,
  synonymWeight: 0.9,
  hypernymWeights: [0.75, 0.55],
  headWeight: 0.7,
  senseDecay: 0.85,
};

export const BASELINE_MEASURE: MeasureOptions = { ...DEFAULT_MEASURE, wordnet: false, compounds: false };

/** Concept → [weight, how it was reached]. */
type Concepts = Map<string, [number, string]>;
interface ConceptSet {
  own: Concepts;
  up: Concepts;
}

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
  links: Link[];
  entities: Array<{ en: string; zh: string; kind: string }>;
}

/** Chinese nominal suffixes that are not the semantic head of a compound (桌子 is not "a child"). */
const NOT_HEADS = new Set(['子', '儿', '们', '头', '者', '性', '化', '家', '的', '地', '上', '里', '中', '下', '边', '面', '着', '了', '过', '个', '只', '些', '士']);

function put(m: Concepts, key: string, w: number, via: string): void {
  const cur = m.get(key);
  if (!cur || cur[0] < w) m.set(key, [w, via]);
}

export class ConceptSpace {
  private enMemo = new Map<string, ConceptSet>();
  private zhMemo = new Map<string, ConceptSet>();
  private simMemo = new Map<string, Map<string, { sim: number; gloss: string }>>();
  private simCount = 0;
  constructor(
    private readonly lex: Lexicon,
    readonly opts: MeasureOptions,
  ) {}

  english(lemma: string): ConceptSet {
    let c = this.enMemo.get(lemma);
    if (c) return c;
    const own: Concepts = new Map([[`l:${lemma}`, [1, lemma]]]);
    const up: Concepts = new Map();
    const synsets = this.opts.wordnet && !lemma.startsWith('#') ? this.lex.synsets(lemma) : undefined;
    if (synsets) {
      const [h1, h2] = this.opts.hypernymWeights;
      synsets.forEach((s, i) => {
        const decay = this.opts.senseDecay ** i;
        put(own, `s:${s}`, this.opts.synonymWeight * decay, `synonym of ${lemma}`);
        for (const p of this.lex.hypernyms(s)) {
          put(up, `s:${p}`, h1 * decay, `hypernym of ${lemma}`);
          for (const q of this.lex.hypernyms(p)) put(up, `s:${q}`, h2 * decay, `hypernym of ${lemma}`);
        }
      });
    }
    c = { own, up };
    if (this.enMemo.size > 200_000) this.enMemo.clear();
    this.enMemo.set(lemma, c);
    return c;
  }

  private addSenses(target: ConceptSet, word: string, scale: number, label: (gloss: string) => string): boolean {
    const senses = this.lex.senses(word);
    if (!senses) return false;
    for (const s of senses) {
      s.lemmas.forEach((l, i) => {
        const w = s.weights[i]! * scale;
        const c = this.english(l);
        const via = label(s.text);
        for (const [k, [cw]] of c.own) put(target.own, k, cw * w, via);
        for (const [k, [cw]] of c.up) put(target.up, k, cw * w, via);
      });
    }
    return true;
  }

  /** The longest proper suffix of a word that the lexicon knows and that can head it. */
  private head(word: string): string | null {
    for (let len = Math.min(word.length - 1, this.lex.maxZhWordLength); len >= 1; len--) {
      const h = word.slice(word.length - len);
      if (this.lex.hasZh(h) && !NOT_HEADS.has(h)) return h;
    }
    return null;
  }

  chinese(word: string): ConceptSet {
    let c = this.zhMemo.get(word);
    if (c) return c;
    c = { own: new Map(), up: new Map() };
    if (word.startsWith('#')) {
      c.own.set(`l:${word}`, [1, word]);
    } else {
      const known = this.addSenses(c, word, 1, (g) => g);
      if (this.opts.compounds && word.length >= 2) {
        const h = this.head(word);
        if (h) this.addSenses(c, h, this.opts.headWeight, (g) => `${h}: ${g}`);
        // A word CC-CEDICT does not know: also its other known parts, left to right, longest first.
        if (!known) {
          for (let i = 0; i < word.length - (h?.length ?? 0); ) {
            let len = Math.min(this.lex.maxZhWordLength, word.length - i);
            for (; len > 1 && !this.lex.hasZh(word.slice(i, i + len)); len--);
            const part = word.slice(i, i + len);
            if (this.lex.hasZh(part) && !NOT_HEADS.has(part)) this.addSenses(c, part, this.opts.headWeight * 0.8, (g) => `${part}: ${g}`);
            i += len;
          }
        }
      }
      if (!known && /^[a-z]/.test(word)) c.own.set(`l:${word}`, [1, word]); // Latin words inside Chinese text
    }
    if (this.zhMemo.size > 200_000) this.zhMemo.clear();
    this.zhMemo.set(word, c);
    return c;
  }

  /** Best link between an English lemma and a Chinese word: [similarity, the gloss that linked them]. */
  sim(en: string, zh: string): { sim: number; gloss: string } {
    let row = this.simMemo.get(en);
    if (!row) this.simMemo.set(en, (row = new Map()));
    let r = row.get(zh);
    if (r) return r;
    const e = this.english(en);
    const z = this.chinese(zh);
    let best = 0;
    let gloss = '';
    const scan = (a: Concepts, b: Concepts, rel: string) => {
      const [small, large, swapped] = a.size <= b.size ? [a, b, false] : [b, a, true];
      for (const [k, [w1, v1]] of small) {
        const hit = large.get(k);
        if (!hit) continue;
        const s = w1 * hit[0];
        if (s > best) {
          best = s;
          const zhVia = swapped ? v1 : hit[1];
          gloss = rel ? `${zhVia} (${rel})` : zhVia;
        }
      }
    };
    scan(e.own, z.own, '');
    if (best < 1 && this.opts.wordnet) {
      scan(e.own, z.up, 'narrower');
      scan(e.up, z.own, 'broader');
    }
    if (best > 0 && gloss.startsWith('synonym')) gloss = gloss.replace(/^synonym of /, '');
    r = { sim: best, gloss };
    if (++this.simCount > 1_000_000) {
      this.simMemo.clear();
      this.simCount = 0;
      this.simMemo.set(en, (row = new Map()));
    }
    row.set(zh, r);
    return r;
  }
}

function weighted(tokens: string[], lang: 'en' | 'zh', idf: IdfSource): Map<string, number> {
  const tf = new Map<string, number>();
  for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
  for (const [t, n] of tf) tf.set(t, n * idf.idf(lang, t));
  return tf;
}

const norm = (m: Map<string, number>): number => {
  let s = 0;
  for (const v of m.values()) s += v * v;
  return Math.sqrt(s);
};

export function contentSimilarity(space: ConceptSpace, en: Analysis, zh: Analysis, idf: IdfSource): { fc: number; links: Link[] } {
  const E = weighted(en.tokens, 'en', idf);
  const Z = weighted(zh.tokens, 'zh', idf);
  const ne = norm(E);
  const nz = norm(Z);
  if (!ne || !nz) return { fc: 0, links: [] };
  const cands: Array<Link & { score: number }> = [];
  for (const [e, we] of E) {
    for (const [z, wz] of Z) {
      const { sim, gloss } = space.sim(e, z);
      if (sim > 0) cands.push({ en: e, zh: z, gloss, sim, weight: 0, score: we * wz * sim });
    }
  }
  cands.sort((a, b) => b.score - a.score);
  const usedE = new Set<string>();
  const usedZ = new Set<string>();
  let dot = 0;
  const links: Link[] = [];
  for (const c of cands) {
    if (usedE.has(c.en) || usedZ.has(c.zh)) continue;
    usedE.add(c.en);
    usedZ.add(c.zh);
    dot += c.score;
    links.push({ en: c.en, zh: c.zh, gloss: c.gloss, sim: c.sim, weight: c.score / (ne * nz) });
  }
  return { fc: Math.min(1, dot / (ne * nz)), links };
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
