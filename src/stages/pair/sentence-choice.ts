// Which sentence pairs of a caption pair are emitted (issue 34): margin, not maximum.
// The aligner (comparability/align.ts) pairs each sentence with its best counterpart. Being the best is not enough:
// in a news caption the photo's own sentence is often the vague one ("很多的人。") and a second sentence about
// something else may share a word with the other caption's second sentence by chance. As in bitext mining's
// ratio-margin criterion (Artetxe & Schwenk 2019; CCMatrix, LASER), an aligned pair counts only when it beats the
// alternatives in its row and its column (the same English sentence with the other Chinese sentences, the same
// Chinese sentence with the other English ones) by a margin: C / max(alternatives) ≥ export.sentenceMargin. With
// one sentence on each side there is no alternative and the pair stands on its own level, as before.
// News captions describe their photo first and give the background after: the pair of the two captions' first
// sentences has its C multiplied by export.firstSentencePrior when it is weighed against its alternatives (as the
// candidate and as an alternative; its level is its own C's).
// Among the clear pairs, the best one (highest C) needs export.minLevel, the others (context the photo does not
// show) export.minLevelMoreSentences. When no sentence pair is clearly better than its alternatives, the caption
// pair is emitted whole (all its sentences on each side, credits and datelines already left out) when that whole
// pair reaches minLevel on its own, else nothing: the photo's sentence is in it, whichever it is.
import type { Level } from '../../bank/index.js';
import { LEVEL_RANK } from '../../bank/index.js';
import type { CaptionAlignment, SentencePairScore } from '../../lib/comparability/index.js';

export interface SentenceChoiceRules {
  minLevel: Level;
  /** The floor of a caption pair's clear sentence pairs other than its best one (default minLevel). */
  minLevelMoreSentences?: Level;
  /** C / best alternative an aligned sentence pair needs (1 = being the best suffices). */
  sentenceMargin?: number;
  /** Weight of the pair of first sentences in the margin (1 = none). */
  firstSentencePrior?: number;
  /** The null model's significance (nats) a sentence pair needs, before the correction for the pairs tested. */
  minSignificance?: number;
}

/**
 * Every one-to-one sentence pair of a caption pair is a test: a pair chosen among m·n needs ln(m·n) nats more
 * significance than the caption pair alone (the a-contrario number of tests; a Bonferroni correction), so that two
 * stray sentences sharing a word by chance do not stand in for the photo's.
 */
function significantAmong(p: SentencePairScore, tests: number, min: number): boolean {
  return (p.explain.chance?.s ?? Infinity) >= min + Math.log(Math.max(1, tests));
}

export interface SentenceChoice {
  /** The sentence pairs to store: the aligned ones, and the whole caption pair when it is the one emitted. */
  pairs: SentencePairScore[];
  emitted: boolean[];
  /** Why nothing was emitted, when nothing was: no pair reached its level, or none was clear and the whole did not pass. */
  refused: 'level' | 'margin' | null;
}

/** C of the best alternative to an aligned pair in its rows and columns (-Infinity when it has none). */
export function bestAlternative(p: Pick<SentencePairScore, 'enSpan' | 'zhSpan'>, grid: number[][], prior = 1): number {
  const [e0, e1] = p.enSpan;
  const [z0, z1] = p.zhSpan;
  let best = -Infinity;
  for (let i = 0; i < grid.length; i++) {
    const inE = i >= e0 && i <= e1;
    const row = grid[i]!;
    for (let j = 0; j < row.length; j++) {
      const inZ = j >= z0 && j <= z1;
      const c = i === 0 && j === 0 ? row[j]! * prior : row[j]!;
      if (inE !== inZ && c > best) best = c; // same row or same column, not the pair itself
    }
  }
  return best;
}

/** The ratio margin of an aligned pair: its C over its best alternative's (Infinity without alternatives). */
export function sentenceMarginOf(p: SentencePairScore, grid: number[][], prior = 1): number {
  const alt = bestAlternative(p, grid, prior);
  if (alt === -Infinity) return Infinity;
  const c = p.enSpan[0] === 0 && p.zhSpan[0] === 0 ? p.c * prior : p.c;
  return c / Math.max(alt, 1e-6);
}

/** The emission decision of one caption pair's sentence pairs (pure). */
export function chooseSentencePairs(al: Pick<CaptionAlignment, 'pairs' | 'grid' | 'whole'>, t: SentenceChoiceRules): SentenceChoice {
  const pairs = al.pairs;
  const grid = al.grid ?? [];
  const need = LEVEL_RANK[t.minLevel];
  const needMore = Math.max(need, LEVEL_RANK[t.minLevelMoreSentences ?? t.minLevel]);
  const margin = t.sentenceMargin ?? 1;
  const tests = grid.length * (grid[0]?.length ?? 0);
  const clear = pairs.map((p) => sentenceMarginOf(p, grid, t.firstSentencePrior ?? 1) >= margin && significantAmong(p, tests, t.minSignificance ?? 0));
  // the best clear pair (highest C) is what the photo shows; the other clear ones are context
  let best = -1;
  pairs.forEach((p, k) => {
    if (clear[k] && (best < 0 || p.c > pairs[best]!.c)) best = k;
  });
  const emitted = pairs.map((p, k) => clear[k]! && LEVEL_RANK[p.level] >= (k === best ? need : needMore));
  if (emitted.some(Boolean)) return { pairs, emitted, refused: null };
  const whole = al.whole ?? null;
  if (whole && LEVEL_RANK[whole.level] >= need) {
    // stored beside the aligned pairs, it takes the place of the one that starts where it does (a stored sentence pair
    // is keyed by its first sentences)
    const others = pairs.filter((p) => p.enSpan[0] !== 0 || p.zhSpan[0] !== 0);
    return { pairs: [...others, whole], emitted: [...others.map(() => false), true], refused: null };
  }
  return { pairs, emitted, refused: pairs.some((p) => LEVEL_RANK[p.level] >= need) ? 'margin' : 'level' };
}
