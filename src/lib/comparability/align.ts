// Sentence alignment inside a matched caption pair. Every English sentence is scored against every Chinese
// sentence with the C-measure, and so are the 1–2 and 2–1 merges of adjacent sentences (as Gale–Church-style
// aligners allow, for a translation that splits or joins sentences). Alignments are then taken greedily, best C
// first, each sentence at most once. A merge is taken only when it is a translation split over two sentences: its
// level is par, its C is higher than that of each one-to-one pair inside it (it must raise C, not ride on one good
// sentence) and its length ratio fl is closer to 1 than theirs (Gale–Church's premise: a split translation's two
// halves together have the length of what they translate). Two captions written independently (com) say different
// things at different lengths, so any sentence on the same topic would "complete" the shorter one: no merge there. Order is not enforced: two newsrooms do not tell a
// photo in the same order. What is left unaligned has no counterpart; an alignment below the lowest level that
// counts (inc) is a sentence without a counterpart too, and the caller does not emit it.
// Written here rather than taken from a library: the aligners on npm (e.g. Gale–Church ports) score by length
// alone and enforce order, and ours must score by the C-measure.

/** A span of sentence indices, inclusive: [i, i] one sentence, [i, i + 1] two merged. */
export type Span = [number, number];

export interface Aligned<S> {
  en: Span;
  zh: Span;
  score: S;
}

/**
 * Aligns m English and n Chinese sentences. `score(en, zh)` scores two spans (it is called for every 1–1, 1–2
 * and 2–1 combination: m·n + (m−1)·n + m·(n−1) calls) and returns a C to maximise. With one sentence on each
 * side this is that one pair. Result in English sentence order.
 */
export function alignSentences<S extends { c: number; fl?: number; level?: string }>(m: number, n: number, score: (en: Span, zh: Span) => S): Aligned<S>[] {
  if (!m || !n) return [];
  if (m === 1 && n === 1) return [{ en: [0, 0], zh: [0, 0], score: score([0, 0], [0, 0]) }];
  const single: S[][] = [];
  const cands: Aligned<S>[] = [];
  for (let i = 0; i < m; i++) {
    single.push([]);
    for (let j = 0; j < n; j++) {
      const s = score([i, i], [j, j]);
      single[i]!.push(s);
      cands.push({ en: [i, i], zh: [j, j], score: s });
    }
  }
  const raises = (s: S, a: S, b: S) => (s.level ?? 'par') === 'par' && s.c > a.c && s.c > b.c && (s.fl ?? 0) >= Math.max(a.fl ?? 0, b.fl ?? 0);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j + 1 < n; j++) {
      const s = score([i, i], [j, j + 1]);
      if (raises(s, single[i]![j]!, single[i]![j + 1]!)) cands.push({ en: [i, i], zh: [j, j + 1], score: s });
    }
  }
  for (let i = 0; i + 1 < m; i++) {
    for (let j = 0; j < n; j++) {
      const s = score([i, i + 1], [j, j]);
      if (raises(s, single[i]![j]!, single[i + 1]![j]!)) cands.push({ en: [i, i + 1], zh: [j, j], score: s });
    }
  }
  // best C first; on a tie the smaller alignment, then text order (deterministic)
  const size = (a: Aligned<S>) => a.en[1] - a.en[0] + a.zh[1] - a.zh[0];
  cands.sort((a, b) => b.score.c - a.score.c || size(a) - size(b) || a.en[0] - b.en[0] || a.zh[0] - b.zh[0]);
  const usedE = new Uint8Array(m);
  const usedZ = new Uint8Array(n);
  const out: Aligned<S>[] = [];
  for (const a of cands) {
    if (usedE[a.en[0]] || usedE[a.en[1]] || usedZ[a.zh[0]] || usedZ[a.zh[1]]) continue;
    usedE[a.en[0]] = usedE[a.en[1]] = 1;
    usedZ[a.zh[0]] = usedZ[a.zh[1]] = 1;
    out.push(a);
  }
  return out.sort((a, b) => a.en[0] - b.en[0]);
}
