// The comparability layer's public interface: createScorer(config, { bank?, dataDir? }) → { score(en, zh) }.
import type { Bank } from '../bank/index.js';
import { TermStatsRepo } from '../bank/term-stats.js';
import type { Config } from '../config/schema.js';
import { Analyzer, type Analysis } from './analyze.js';
import { TermStats, UNIFORM_IDF, type IdfSource } from './idf.js';
import { loadLexicon, type Lexicon } from './lexicon.js';
import { levelOf, thresholds, type Level } from './levels.js';
import { ConceptSpace, DEFAULT_MEASURE, contentSimilarity, entityCooccurrence, lengthRatio, type MeasureOptions } from './measure.js';

export type { Level } from './levels.js';
export { LEVELS, LEVEL_RATING, levelOf, thresholds } from './levels.js';
export { loadLexicon, type Lexicon } from './lexicon.js';
export { TermStats } from './idf.js';
export { DEFAULT_MEASURE, BASELINE_MEASURE, type MeasureOptions } from './measure.js';

export interface ScoreResult {
  fc: number;
  fe: number;
  fl: number;
  c: number;
  level: Level;
  explain: {
    matches: Array<{ en: string; zh: string; gloss: string; weight: number }>;
    entities: Array<{ en: string; zh: string; kind: string }>;
    enTokens: string[];
    zhTokens: string[];
  };
}

export interface Scorer {
  score(en: string, zh: string): ScoreResult;
  /** The features alone (no explanation objects), for calibration and benchmarks. */
  features(en: string, zh: string): { fc: number; fe: number; fl: number; enLength: number; zhLength: number };
  analyzer: Analyzer;
  lexicon: Lexicon;
  /** The IDF table in use (the bank's, loaded at creation, or a private one fed by addCaptions). */
  termStats: TermStats;
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

export function createScorer(config: Config, opts: ScorerOptions = {}): Scorer {
  const cfg = config.comparability;
  const lexicon = loadLexicon({ dataDir: opts.dataDir ?? opts.bank?.dataDir, cacheDir: opts.cacheDir });
  const measure: MeasureOptions = { ...DEFAULT_MEASURE, ...opts.measure };
  const analyzer = new Analyzer(lexicon, { enCompounds: measure.compounds });
  const space = new ConceptSpace(lexicon, measure);
  if (opts.bank && opts.refreshIdf !== false) countNewCaptions(opts.bank, analyzer);
  const termStats = opts.bank ? opts.bank.repo(TermStatsRepo).load() : new TermStats();
  const idf: IdfSource = opts.uniformIdf ? UNIFORM_IDF : termStats;
  const t = thresholds(cfg);
  const { alpha, beta, gamma } = cfg.weights;

  const featuresOf = (a: Analysis, b: Analysis, explain = true) => {
    const { fc, links } = contentSimilarity(space, a, b, idf, explain);
    const { fe, matches } = entityCooccurrence(a.entities, b.entities);
    const fl = lengthRatio(a, b, cfg.hanziPerWord);
    return { fc, fe, fl, links, matches };
  };

  return {
    analyzer,
    lexicon,
    termStats,
    features(en, zh) {
      const a = analyzer.english(en);
      const b = analyzer.chinese(zh);
      const { fc, fe, fl } = featuresOf(a, b, false);
      return { fc, fe, fl, enLength: a.length, zhLength: b.length };
    },
    score(en, zh) {
      const a = analyzer.english(en);
      const b = analyzer.chinese(zh);
      const { fc, fe, fl, links, matches } = featuresOf(a, b);
      const c = alpha * fc + beta * fe + gamma * fl;
      return {
        fc,
        fe,
        fl,
        c,
        level: levelOf(c, t),
        explain: {
          matches: links.map((l) => ({ en: l.en, zh: l.zh, gloss: l.gloss, weight: round(l.weight) })),
          entities: matches,
          enTokens: a.tokens,
          zhTokens: b.tokens,
        },
      };
    },
  };
}

const round = (x: number): number => Math.round(x * 1e4) / 1e4;

/**
 * Brings the bank's IDF table up to date with captions that arrived since the last call (items with a
 * non-empty caption in status 'ok', walked by id from a watermark; one transaction per batch). The export
 * stage calls it before scoring; it is cheap when nothing is new.
 */
export async function updateIdf(
  bank: Bank,
  config: Config,
  opts: { signal?: AbortSignal; batchSize?: number; dataDir?: string; cacheDir?: string } = {},
): Promise<{ added: { source: number; target: number } }> {
  void config;
  const lexicon = loadLexicon({ dataDir: opts.dataDir ?? bank.dataDir, cacheDir: opts.cacheDir });
  const analyzer = new Analyzer(lexicon, { enCompounds: true });
  const added = { source: 0, target: 0 };
  for (;;) {
    if (opts.signal?.aborted) break;
    const step = countNewCaptions(bank, analyzer, opts.batchSize ?? 500, 1);
    added.source += step.source;
    added.target += step.target;
    if (!step.more) break;
    await new Promise((r) => setImmediate(r));
  }
  return { added };
}

/** Counts captions past the watermarks, batch by batch (one transaction each), at most maxBatches per bank. */
function countNewCaptions(bank: Bank, analyzer: Analyzer, batch = 500, maxBatches = Infinity): { source: number; target: number; more: boolean } {
  const repo = bank.repo(TermStatsRepo);
  const added = { source: 0, target: 0, more: false };
  for (const which of ['source', 'target'] as const) {
    const lang = which === 'source' ? 'en' : 'zh';
    for (let b = 0; ; b++) {
      if (b >= maxBatches) {
        added.more = true;
        break;
      }
      const items = bank.items.list(which, batch, repo.watermark(which));
      if (!items.length) break;
      const docs: string[][] = [];
      for (const it of items) {
        if (it.captionStatus !== 'ok' || !it.caption.trim()) continue;
        docs.push((lang === 'en' ? analyzer.english(it.caption) : analyzer.chinese(it.caption)).tokens);
      }
      bank.transaction(() => repo.addDocuments(lang, docs, which, items[items.length - 1]!.id));
      added[which] += docs.length;
    }
  }
  return added;
}

/** Adds captions to a scorer's in-memory IDF table (no bank): e.g. the captions about to be scored. */
export function addCaptionsToIdf(scorer: Scorer, captions: Array<{ en?: string; zh?: string }>): void {
  for (const c of captions) {
    if (c.en) scorer.termStats.addDocument('en', scorer.analyzer.english(c.en).tokens);
    if (c.zh) scorer.termStats.addDocument('zh', scorer.analyzer.chinese(c.zh).tokens);
  }
}
