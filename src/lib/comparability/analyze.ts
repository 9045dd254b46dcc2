// Tokenisation of captions on both sides into the units the C-measure compares:
// English: numbers/dates/times → canonical tokens, capitalised spans → entities, lower case, stopwords out,
// WordNet lemmas (wink-lemmatizer candidates checked against WordNet), WordNet compounds joined (fire_hydrant).
// Chinese: traditional → simplified (opencc-js), numbers/dates/times → canonical tokens, jieba words, stopwords out,
// CC-CEDICT proper nouns → entities.
import { createRequire } from 'node:module';
import { Jieba } from '@node-rs/jieba';
import * as OpenCC from 'opencc-js';
import { scanChineseNumbers, scanEnglishNumbers, type NumEntity } from './numbers.js';
import { EN_STOPWORDS, ZH_STOPWORDS, isPunctOrSpace } from './stopwords.js';
import { lemmaCandidates } from './lemma.js';
import type { EntityKind, Lexicon } from './lexicon.js';

const require = createRequire(import.meta.url);

export interface Entity {
  kind: NumEntity['kind'] | EntityKind;
  /** Canonical key: "number:53", "date:5-5", or for names the lower-case English name ("beijing"). */
  key: string;
  text: string;
}

export interface Analysis {
  /** Content tokens in text order: lemmas / jieba words, and "#53"-style number tokens. */
  tokens: string[];
  entities: Entity[];
  /** Length in comparable units: English words, or Chinese characters (hanzi + digit groups). */
  length: number;
}

export interface AnalyzeOptions {
  /** Join adjacent English words that form a WordNet compound ("fire hydrant" → fire_hydrant). */
  enCompounds: boolean;
}

let jieba: Jieba | null = null;
/** The one jieba segmenter of the process (its dictionary takes a moment to load). */
export function getJieba(): Jieba {
  if (!jieba) {
    const { dict } = require('@node-rs/jieba/dict') as { dict: Uint8Array };
    jieba = Jieba.withDict(dict);
  }
  return jieba;
}

let t2s: ((s: string) => string) | null = null;
const changesAlone = new Map<number, boolean>();
/**
 * Traditional → simplified (Taiwan / Hong Kong / generic traditional forms). The converter is only run when
 * some character would change on its own (memoised per character): most captions are simplified already.
 */
export function toSimplified(text: string): string {
  const conv = (t2s ??= OpenCC.Converter({ from: 'hk', to: 'cn' }));
  let needed = false;
  for (let i = 0; i < text.length && !needed; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x2e80) continue;
    let ch = changesAlone.get(code);
    if (ch === undefined) {
      ch = conv(text[i]!) !== text[i];
      changesAlone.set(code, ch);
    }
    needed = ch;
  }
  return needed ? conv(text) : text;
}

const numTok = (e: NumEntity): string => (e.kind === 'number' ? `#${e.key.slice(7)}` : `#${e.key}`);

/** Chinese length in comparable units: Han characters, plus one per run of digits or Latin letters. */
export function chineseLength(s: string): number {
  let n = 0;
  let inRun = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0xf900 && c <= 0xfaff)) {
      n++;
      inRun = false;
    } else if ((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 0xff10 && c <= 0xff19)) {
      if (!inRun) n++;
      inRun = true;
    } else inRun = false;
  }
  return n;
}

/** English length: words (runs of letters and digits, joined by apostrophes or hyphens). */
export function englishLength(s: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const alnum = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c > 0xbf;
    if (alnum) {
      if (!inWord) n++;
      inWord = true;
    } else if (inWord && (c === 39 || c === 0x2019 || c === 45) && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      inWord = (d >= 48 && d <= 57) || (d >= 65 && d <= 90) || (d >= 97 && d <= 122);
    } else inWord = false;
  }
  return n;
}

/** True when the text before `index` ends with . ! or ? and optional whitespace. */
function afterSentenceEnd(text: string, index: number): boolean {
  let i = index - 1;
  while (i >= 0 && /\s/.test(text[i]!)) i--;
  return i >= 0 && (text[i] === '.' || text[i] === '!' || text[i] === '?');
}

export class Analyzer {
  private enMemo = new Map<string, string>();
  private zhMemo = new Map<string, { token: string; entity: Entity | null } | null>();
  private compoundMemo = new Map<string, Map<string, string | null>>();
  constructor(
    private readonly lex: Lexicon,
    private readonly opts: AnalyzeOptions = { enCompounds: true },
  ) {}

  private lemma(word: string): string {
    let l = this.enMemo.get(word);
    if (l === undefined) {
      l = word;
      for (const c of lemmaCandidates(word)) {
        if (this.lex.isWordNetLemma(c)) {
          l = c;
          break;
        }
      }
      if (l === word && !this.lex.isWordNetLemma(word)) l = lemmaCandidates(word)[0] ?? word;
      if (this.enMemo.size > 100_000) this.enMemo.clear();
      this.enMemo.set(word, l);
    }
    return l;
  }

  private wordMemo = new Map<string, string | null>();
  /** The lemma of a word, or null for a stopword, a one-letter word or digits (memoised). */
  private contentLemma(w: string): string | null {
    let l = this.wordMemo.get(w);
    if (l === undefined) {
      l = EN_STOPWORDS.has(w) || w.length < 2 || /^\d+$/.test(w) ? null : this.lemma(w);
      if (this.wordMemo.size > 200_000) this.wordMemo.clear();
      this.wordMemo.set(w, l);
    }
    return l;
  }

  english(text: string): Analysis {
    const { entities: nums, rest } = scanEnglishNumbers(text);
    const entities: Entity[] = nums.map((e) => ({ kind: e.kind, key: e.key, text: e.text }));
    const length = englishLength(text);
    // Capitalised spans that are not just the sentence's first word: names of people, places, organisations.
    const spanRe = /\b[A-Z][\w'’.-]*(?:\s+(?:(?:of|de|the|and)\s+)?[A-Z][\w'’.-]*)*/g;
    // (looked at around each span, never by re-reading the text before it: linear in the caption's length)
    const lead = /^[\s"'“‘(]*/.exec(rest)![0].length;
    for (const m of rest.matchAll(spanRe)) {
      let words = m[0].split(/\s+/);
      const atStart = m.index <= lead || afterSentenceEnd(rest, m.index);
      if (atStart) {
        const first = words[0]!.toLowerCase();
        if (EN_STOPWORDS.has(first) || this.lex.isWordNetLemma(this.lemma(first))) words = words.slice(1);
      }
      if (!words.length) continue;
      const name = words.join(' ').replace(/['’]s$/, '').replace(/[.'’-]+$/, '');
      if (words.length === 1 && EN_STOPWORDS.has(name.toLowerCase())) continue;
      entities.push({ kind: 'name', key: name.toLowerCase(), text: name });
    }
    const raw = rest.toLowerCase().match(/[a-z0-9]+(?:['’-][a-z0-9]+)*/g) ?? [];
    const words: string[] = [];
    for (let w of raw) {
      w = w.replace(/['’]s$/, '');
      if (w.includes('-') && !this.lex.isWordNetLemma(w)) words.push(...w.split('-'));
      else words.push(w);
    }
    const tokens: string[] = [];
    let prevWord: string | null = null; // previous kept word, for compounds (stopwords break a compound)
    for (const w of words) {
      const l = this.contentLemma(w);
      if (l === null) {
        prevWord = null;
        continue;
      }
      if (this.opts.enCompounds && prevWord !== null) {
        let row = this.compoundMemo.get(prevWord);
        if (!row) this.compoundMemo.set(prevWord, (row = new Map()));
        let hit = row.get(w);
        if (hit === undefined) {
          const compound = `${prevWord}_${l}`;
          const compound2 = `${prevWord}_${w}`;
          hit = this.lex.isWordNetLemma(compound) ? compound : this.lex.isWordNetLemma(compound2) ? compound2 : null;
          row.set(w, hit);
          if (this.compoundMemo.size > 100_000) this.compoundMemo.clear();
        }
        if (hit) {
          tokens[tokens.length - 1] = hit;
          prevWord = null;
          continue;
        }
      }
      tokens.push(l);
      prevWord = w;
    }
    for (const e of nums) tokens.push(numTok(e));
    return { tokens, entities, length };
  }

  chinese(text: string): Analysis {
    const simp = toSimplified(text);
    const { entities: nums, rest } = scanChineseNumbers(simp);
    const entities: Entity[] = nums.map((e) => ({ kind: e.kind, key: e.key, text: e.text }));
    const length = chineseLength(simp);
    const tokens: string[] = [];
    for (const w of getJieba().cut(rest, false)) {
      // One memo lookup per word instead of the stopword, punctuation, proper-noun and Latin checks.
      let info = this.zhMemo.get(w);
      if (info === undefined) {
        if (ZH_STOPWORDS.has(w) || isPunctOrSpace(w)) info = null;
        else {
          const p = this.lex.properNoun(w);
          info = {
            token: /^[A-Za-z]+$/.test(w) ? this.lemma(w.toLowerCase()) : w,
            entity: p ? { kind: p.kind, key: p.name.toLowerCase(), text: w } : null,
          };
        }
        if (this.zhMemo.size > 200_000) this.zhMemo.clear();
        this.zhMemo.set(w, info);
      }
      if (info === null) continue;
      if (info.entity) entities.push({ ...info.entity });
      tokens.push(info.token);
    }
    for (const e of nums) tokens.push(numTok(e));
    return { tokens, entities, length };
  }
}

