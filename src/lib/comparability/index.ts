// The comparability layer's public interface: createScorer(config, { bank?, dataDir? }) → { score(en, zh) }.
import type { Bank, IdRange } from '../../bank/index.js';
import { TermStatsRepo } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import { Analyzer, type Analysis } from './analyze.js';
import { TermStats, UNIFORM_IDF, type IdfSource } from './idf.js';
import { loadLexicon, type Lexicon } from './lexicon.js';
import { levelOf, type Level } from './levels.js';
import { ConceptSpace, DEFAULT_MEASURE, contentSimilarity, entityCooccurrence, lengthRatio, type MeasureOptions } from './measure.js';
import { alignSentences, type Span } from './align.js';
import { boundedSentences, chineseWordCount, type BoundedSentences } from './sentences.js';
import { isCreditOrDateline, splitCredit } from '../captions/index.js';
import { NullMargin } from './margin.js';
import { ReferenceIndex } from './reference.js';
import { NO_SIGNIFICANCE } from './null-model.js';
import { Specificity } from './specificity.js';

export type { Level } from './levels.js';
export { LEVELS, LEVEL_RANK, levelOf } from './levels.js';
export type { Span } from './align.js';
export { splitSentences, boundedSentences, chineseWordCount, type Sentence, type BoundedSentences } from './sentences.js';
export { loadLexicon, type Lexicon } from './lexicon.js';
export { TermStats } from './idf.js';
export { DEFAULT_MEASURE, BASELINE_MEASURE, type MeasureOptions } from './measure.js';

export interface ScoreResult {
  fc: number;
  fe: number;
  fl: number;
  fcov: number;
  /** Significance under the null model (null-model.ts), on [0, 1). */
  fs: number;
  /** The C-measure: the weighted features times the null margin's scale (margin.ts), at most 1. */
  c: number;
  /** The par score (comparability.parWeights): what decides par. */
  cPar: number;
  level: Level;
  explain: {
    matches: Array<{ en: string; zh: string; gloss: string; weight: number }>;
    /**
     * The null model: each side's chance of sharing this much with a random caption, S = −ln of their product, and S
     * counting strong links only (what the com gate asks).
     */
    chance: { en: number; zh: number; s: number; sStrong: number };
    /**
     * The null margin (margin.ts): C's scale, this pair's chance level d (how high its captions score with unrelated
     * captions of the bank) and the bank's typical one m; scale 1 and 0s when the margin is off. specificity: C's factor
     * for how specific the linked words are (specificity.ts; 1 when off), relative to the bank's typical value
     * specificityTypical (how specific the links of two unrelated captions of the bank usually are).
     */
    margin: { scale: number; chance: number; typical: number; specificity: number; specificityTypical: number };
    entities: Array<{ en: string; zh: string; kind: string }>;
    enTokens: string[];
    zhTokens: string[];
  };
}

/** One aligned sentence pair of a caption pair: the sentences' texts (two joined for a merge) and spans. */
export interface SentencePairScore extends ScoreResult {
  en: string;
  zh: string;
  enSpan: Span;
  zhSpan: Span;
}

export interface CaptionAlignment {
  /** The sentences scored on each side (credits and datelines left out, bounded by maxCaptionChars / maxSentences). */
  en: BoundedSentences;
  zh: BoundedSentences;
  /** Every alignment taken, best-first per sentence (levels may be inc: a sentence with no counterpart). */
  pairs: SentencePairScore[];
  /** C of every one-to-one sentence pair, [English sentence][Chinese sentence]: the alternatives of a margin. */
  grid: number[][];
  /** The caption pair whole (every sentence of each side), when a side has more than one sentence; else null. */
  whole: SentencePairScore | null;
  /** A side whose caption could not be scored within the bounds (its first sentence is longer than maxCaptionChars). */
  refused: 'en' | 'zh' | null;
}

/** What deciding a caption pair needs of a scorer (the pairing stage takes any such; tests of other layers pass their
 *  own, which may answer asynchronously). */
export interface CaptionScorer {
  score(en: string, zh: string): ScoreResult | Promise<ScoreResult>;
  /** The caption pair split into sentences and aligned. */
  align(en: string, zh: string): CaptionAlignment | Promise<CaptionAlignment>;
  /** Words of a Chinese text (jieba), for export.maxChineseWords. */
  chineseWordCount(text: string): number;
  /** Documents in the IDF table the scorer uses (pairs scored with a much smaller one are re-decided). */
  idfDocs?: number;
}

export interface Scorer extends CaptionScorer {
  /** The C-measure of two texts as they are (read up to maxCaptionChars, cut at a sentence end). */
  score(en: string, zh: string): ScoreResult;
  /** A caption pair split into sentences and aligned (src/lib/comparability/align.ts). */
  align(en: string, zh: string): CaptionAlignment;
  /** The features alone (no explanation objects), for calibration and benchmarks; margin: C's scale (the null margin's
   *  times the specificity factor). */
  features(en: string, zh: string): { fc: number; fe: number; fl: number; fcov: number; fs: number; s: number; margin: number; enLength: number; zhLength: number };
  /** Words of a Chinese text as jieba cuts them (the seed paper's length filter). */
  chineseWordCount(text: string): number;
  /** Documents (captions of both languages) in the IDF table in use. */
  readonly idfDocs: number;
  analyzer: Analyzer;
  lexicon: Lexicon;
  /** The IDF table in use (the bank's, loaded at creation, or a private one fed by addCaptions). */
  termStats: TermStats;
  /** The null margin's reference captions (the bank's sample, or those fed by addCaptionsToIdf). */
  nullMargin: NullMargin;
}

export interface ScorerOptions {
  bank?: Bank;
  dataDir?: string;
  /** Lexicon cache folder (default: <dataDir>/lexicon, else ~/.cache/capbridge). */
  cacheDir?: string;
  /** Feature options (benchmarks compare variants); default: everything on. */
  measure?: Partial<MeasureOptions>;
  /** Use uniform IDF whatever the bank holds. */
  uniformIdf?: boolean;
  /** With a bank: first count the captions that arrived since the last update into its IDF table (default true). */
  refreshIdf?: boolean;
}

/** With a bank, a promise (its IDF table is read, after counting new captions into it); without, the scorer. */
export function createScorer(config: Config, opts: ScorerOptions & { bank: Bank }): Promise<Scorer>;
export function createScorer(config: Config, opts?: ScorerOptions & { bank?: undefined }): Scorer;
export function createScorer(config: Config, opts?: ScorerOptions): Scorer | Promise<Scorer>;
export function createScorer(config: Config, opts: ScorerOptions = {}): Scorer | Promise<Scorer> {
  const lexicon = loadLexicon({ dataDir: opts.dataDir ?? opts.bank?.dataDir, cacheDir: opts.cacheDir });
  const measure: MeasureOptions = { ...DEFAULT_MEASURE, ...opts.measure };
  const analyzer = new Analyzer(lexicon, { enCompounds: measure.compounds });
  const bank = opts.bank;
  if (!bank) return buildScorer(config, opts, lexicon, analyzer, measure, new TermStats());
  return (async () => {
    const cfg = config.comparability;
    if (opts.refreshIdf !== false) await countCaptions(bank, analyzer, cfg.maxCaptionChars);
    const scorer = buildScorer(config, opts, lexicon, analyzer, measure, TermStats.from(await bank.repo(TermStatsRepo).load()));
    // the null margin's reference: a fixed sample of each bank's captions (read as scoring reads them)
    for (const [which, lang] of [['source', 'en'], ['target', 'zh']] as const) {
      for (const caption of await bank.repo(TermStatsRepo).sampleCaptions(which, cfg.nullMargin.sample)) {
        const text = splitCredit(caption.slice(0, cfg.maxCaptionChars), lang).caption;
        scorer.nullMargin.add(lang, lang === 'en' ? analyzer.english(text) : analyzer.chinese(text));
      }
    }
    return scorer;
  })();
}

function buildScorer(config: Config, opts: ScorerOptions, lexicon: Lexicon, analyzer: Analyzer, measure: MeasureOptions, termStats: TermStats): Scorer {
  const cfg = config.comparability;
  const space = new ConceptSpace(lexicon, measure);
  const idf: IdfSource = opts.uniformIdf ? UNIFORM_IDF : termStats;
  type W = Config['comparability']['weights'];
  const combine = (w: W, f: { fc: number; fe: number; fl: number; fcov: number; fs: number }) =>
    w.alpha * f.fc + w.beta * f.fe + w.gamma * f.fl + w.delta * f.fcov + (w.epsilon ?? 0) * f.fs;

  const featuresOf = (a: Analysis, b: Analysis, explain = true, withSignificance = true) => {
    const { fc, fcov, sig, links } = contentSimilarity(space, a, b, idf, explain, withSignificance);
    const { fe, matches } = entityCooccurrence(a.entities, b.entities);
    const fl = lengthRatio(a, b, cfg.hanziPerWord);
    return { fc, fe, fl, fcov, fs: sig.fs, sig, links, matches };
  };
  // C before the margin, of a caption against a reference caption (the margin's chance level): the full computation,
  // and the reference index's (reference.ts), which gives the same C from the content features it computes
  const rawC = (a: Analysis, b: Analysis) => combine(cfg.weights, featuresOf(a, b, false, false));
  const finishC = (a: Analysis, b: Analysis, fc: number, fcov: number) =>
    combine(cfg.weights, { fc, fe: entityCooccurrence(a.entities, b.entities).fe, fl: lengthRatio(a, b, cfg.hanziPerWord), fcov, fs: NO_SIGNIFICANCE.fs });
  const nullMargin = new NullMargin(cfg.nullMargin, rawC, (refLang, refs) => new ReferenceIndex(space, idf, refLang, refs, finishC, cfg.weights.alpha >= 0 && cfg.weights.delta >= 0));
  const marginOf = (a: Analysis, b: Analysis) => nullMargin.scale(a, b, analysisKey(a), analysisKey(b));
  const specificity = new Specificity(lexicon, measure, nullMargin);
  const scoreAnalyses = (a: Analysis, b: Analysis): ScoreResult => {
    const f = featuresOf(a, b);
    const { fc, fe, fl, fcov, fs, sig, links, matches } = f;
    const margin = marginOf(a, b);
    const specific = specificity.factor(links);
    const c = Math.min(1, combine(cfg.weights, f) * margin.scale * specific);
    const cPar = combine(cfg.parWeights ?? cfg.weights, f);
    return {
      fc,
      fe,
      fl,
      fcov,
      fs,
      c,
      cPar,
      level: levelOf(c, fl, cfg, cPar, sig.sStrong),
      explain: {
        matches: links.map((l) => ({ en: l.en, zh: l.zh, gloss: l.gloss, weight: round(l.weight) })),
        chance: { en: round(sig.pEn), zh: round(sig.pZh), s: round(sig.s), sStrong: round(sig.sStrong) },
        margin: { scale: round(margin.scale), chance: round(margin.chance), typical: round(margin.typical), specificity: round(specific), specificityTypical: round(specificity.typical()) },
        entities: matches,
        enTokens: a.tokens,
        zhTokens: b.tokens,
      },
    };
  };
  // Captions are read within maxCaptionChars; a photo credit or a dateline printed with a caption is not text to
  // compare (src/lib/captions/credit.ts, shared with the extractor): taken off the caption's ends, and a fragment that is
  // wholly one is not a sentence.
  const bounds = (lang: 'en' | 'zh') => ({
    maxChars: cfg.maxCaptionChars,
    maxSentences: cfg.maxSentences,
    clean: (t: string) => splitCredit(t, lang).caption,
    skip: (fragment: string) => isCreditOrDateline(fragment, lang),
    lead: (fragment: string) => leadingCredit(fragment, lang),
  });
  /** A text read within maxCaptionChars: cut at the last sentence end before the limit when longer. */
  const bounded = (text: string, lang: 'en' | 'zh'): string => {
    if (text.length <= cfg.maxCaptionChars) return text;
    const b = boundedSentences(text, lang, { maxChars: cfg.maxCaptionChars, maxSentences: Infinity });
    return b.sentences.length ? text.slice(0, b.sentences[b.sentences.length - 1]!.end) : '';
  };

  return {
    analyzer,
    lexicon,
    termStats,
    nullMargin,
    chineseWordCount,
    get idfDocs() {
      return termStats.docs.en + termStats.docs.zh;
    },
    features(en, zh) {
      const a = analyzer.english(bounded(en, 'en'));
      const b = analyzer.chinese(bounded(zh, 'zh'));
      const { fc, fe, fl, fcov, fs, sig, links } = featuresOf(a, b, specificity.enabled);
      const margin = marginOf(a, b).scale * specificity.factor(links);
      return { fc, fe, fl, fcov, fs, s: sig.sStrong, margin, enLength: a.length, zhLength: b.length };
    },
    score(en, zh) {
      return scoreAnalyses(analyzer.english(bounded(en, 'en')), analyzer.chinese(bounded(zh, 'zh')));
    },
    align(en, zh) {
      const es = boundedSentences(en, 'en', bounds('en'));
      const zs = boundedSentences(zh, 'zh', bounds('zh'));
      const refused = es.refused ? 'en' : zs.refused ? 'zh' : null;
      if (refused) return { en: es, zh: zs, pairs: [], grid: [], whole: null, refused };
      return alignBounded(es, zs, scoreAnalyses, analyzer);
    },
  };
}

/** Aligns two captions' sentences: every sentence and merge of two adjacent ones analysed once, the grid, the whole. */
function alignBounded(
  es: BoundedSentences,
  zs: BoundedSentences,
  scoreAnalyses: (a: Analysis, b: Analysis) => ScoreResult,
  analyzer: Analyzer,
): CaptionAlignment {
  const text = (sents: BoundedSentences, [i, j]: Span, sep: string) => sents.sentences.slice(i, j + 1).map((x) => x.text).join(sep);
  const memo = new Map<string, Analysis>();
  const analysis = (lang: 'en' | 'zh', t: string): Analysis => {
    let a = memo.get(lang + t);
    if (!a) memo.set(lang + t, (a = lang === 'en' ? analyzer.english(t) : analyzer.chinese(t)));
    return a;
  };
  const m = es.sentences.length;
  const n = zs.sentences.length;
  const grid: number[][] = Array.from({ length: m }, () => new Array<number>(n).fill(0));
  const scoreSpans = (e: Span, z: Span): SentencePairScore => {
    const enText = text(es, e, ' ');
    const zhText = text(zs, z, '');
    const r = { ...scoreAnalyses(analysis('en', enText), analysis('zh', zhText)), en: enText, zh: zhText, enSpan: e, zhSpan: z };
    if (e[0] === e[1] && z[0] === z[1]) grid[e[0]]![z[0]] = r.c;
    return r;
  };
  const aligned = alignSentences(m, n, scoreSpans);
  const whole = m > 1 || n > 1 ? scoreSpans([0, m - 1], [0, n - 1]) : null;
  return { en: es, zh: zs, pairs: aligned.map((a) => a.score), grid, whole, refused: null };
}

const round = (x: number): number => Math.round(x * 1e4) / 1e4;

/** What a caption's score against other captions depends on: its tokens, entities and length (the margin's memo key). */
function analysisKey(a: Analysis): string {
  return `${a.length}\u0002${a.tokens.join('\u0001')}\u0002${a.entities.map((e) => e.key).join('\u0001')}`;
}

/**
 * Length of a credit or dateline at the start of a sentence: a bracketed credit ("(AP Photo/Name)", "（中新社记者 X 摄）")
 * or a dateline printed before it ("LONDON (Reuters) -", "新华社北京3月19日电"), as a caption printed with a second
 * sentence carries them between the two. 0 when the sentence starts with its own words.
 */
function leadingCredit(fragment: string, lang: 'en' | 'zh'): number {
  const m = /^\s*[（(]([^（）()]{1,60})[）)]\s*/u.exec(fragment);
  if (m && isCreditOrDateline(m[1]!, lang)) return m[0].length;
  const rest = splitCredit(fragment, lang).caption;
  const at = rest ? fragment.indexOf(rest) : -1;
  return at > 0 ? at : 0;
}

/**
 * Brings the bank's IDF table up to date with the captions not counted yet (items with a non-empty caption in status
 * 'ok'; one transaction per batch), or only those of the items in `idRange` (a features job counts its own, so the
 * workers share the counting and the pairing starts with nothing left). The pairing stage calls it before scoring;
 * it is cheap when nothing is new. Processes counting at the same time count each caption once.
 */
export async function updateIdf(
  bank: Bank,
  config: Config,
  opts: { signal?: AbortSignal; batchSize?: number; dataDir?: string; cacheDir?: string; idRange?: IdRange } = {},
): Promise<{ added: { source: number; target: number } }> {
  const repo = bank.repo(TermStatsRepo);
  if (!opts.idRange && !(await repo.anyUncounted())) return { added: { source: 0, target: 0 } };
  const analyzer = new Analyzer(loadLexicon({ dataDir: opts.dataDir ?? bank.dataDir, cacheDir: opts.cacheDir }), { enCompounds: true });
  return { added: await countCaptions(bank, analyzer, config.comparability.maxCaptionChars, opts) };
}

/** Counts the captions not counted yet (of `idRange` only, when given), batch by batch, one transaction each. */
async function countCaptions(
  bank: Bank,
  analyzer: Analyzer,
  maxChars: number,
  opts: { signal?: AbortSignal; batchSize?: number; idRange?: IdRange } = {},
): Promise<{ source: number; target: number }> {
  const repo = bank.repo(TermStatsRepo);
  const added = { source: 0, target: 0 };
  for (const which of ['source', 'target'] as const) {
    const lang = which === 'source' ? 'en' : 'zh';
    for (let after = 0; ; ) {
      if (opts.signal?.aborted) return added;
      const items = await repo.uncounted(which, opts.batchSize ?? 500, after, opts.idRange);
      if (!items.length) break;
      after = items[items.length - 1]!.id;
      // A caption counts by its first maxChars characters, the most that scoring ever reads of it.
      const docs = items.map((it) => {
        if (it.caption === null) return { itemId: it.id, tokens: null };
        const text = it.caption.length > maxChars ? it.caption.slice(0, maxChars) : it.caption;
        return { itemId: it.id, tokens: (lang === 'en' ? analyzer.english(text) : analyzer.chinese(text)).tokens };
      });
      added[which] += await bank.transaction((tx) => tx.repo(TermStatsRepo).addDocuments(lang, docs));
      await new Promise((r) => setImmediate(r));
    }
  }
  return added;
}

/** Adds captions to a scorer's in-memory IDF table (no bank): e.g. the captions about to be scored. */
export function addCaptionsToIdf(scorer: Scorer, captions: Array<{ en?: string; zh?: string }>): void {
  for (const c of captions) {
    if (c.en) {
      const a = scorer.analyzer.english(c.en);
      scorer.termStats.addDocument('en', a.tokens);
      scorer.nullMargin.add('en', a);
    }
    if (c.zh) {
      const a = scorer.analyzer.chinese(c.zh);
      scorer.termStats.addDocument('zh', a.tokens);
      scorer.nullMargin.add('zh', a);
    }
  }
}
export { type Figures, calibrate, chooseParRule, figures, scoreRows, splitHoldout, stratifiedFolds } from './calibrate.js';
export { MIN_DOCS_FOR_IDF } from './idf.js';
export { lemmaCandidates } from './lemma.js';
export { clearLoadedLexicons, lexiconCacheFile } from './lexicon.js';
export { ConceptSpace, contentSimilarity } from './measure.js';
export { auc, evaluate } from './metrics.js';
export { type PairRow, readPairsFile } from './pairs-file.js';
