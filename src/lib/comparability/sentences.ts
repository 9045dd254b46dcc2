// Sentence segmentation of captions (English and Chinese), with the bounds that keep scoring cheap.
//
// The splitter is Wikimedia's sentencex (Rust, prebuilt for linux/macOS/windows): measured on the 170 labelled
// captions of extraction-news (bench/RESULTS.md, bench:segment) it split 168 correctly, found 19 of the 20 true
// sentence ends and made 1 false break, where Intl.Segmenter (Node 20 ICU) made 24 false breaks (it breaks after
// "U.S.", "Sen.", "Jan."), sbd 7, sentence-splitter 8 (and missed 5 ends), @echogarden/text-segmentation 13,
// cldr-segmentation 18, @stdlib/nlp-sentencize 0 but found only 13 of 20; none split more than 3 of the 4,896
// one-sentence captions of the comparability file. Handled by the library: abbreviations, initials, decimals,
// quotes (a sentence end inside closing quotes stays with the quote), 。！？ and full-width quotes.
// Added here: a Chinese sentence also ends at ；(clauses that English usually writes as separate sentences; the
// aligner merges them back when that scores better), and fragments with no letter or digit are dropped.
import { createRequire } from 'node:module';
import { getJieba } from './analyze.js';

const require = createRequire(import.meta.url);

export type Lang = 'en' | 'zh';

export interface Sentence {
  text: string;
  /** Offsets in the caption (UTF-16 code units), end exclusive. */
  start: number;
  end: number;
}

interface Boundary {
  text: string;
}
let splitter: ((lang: string, text: string) => Boundary[]) | null = null;
function sentencex(): (lang: string, text: string) => Boundary[] {
  if (!splitter) splitter = (require('sentencex') as { get_sentence_boundaries: (lang: string, text: string) => Boundary[] }).get_sentence_boundaries;
  return splitter;
}

const CONTENT = /[\p{L}\p{N}]/u;

/** The sentences of a text, in order, trimmed, with their offsets. */
export function splitSentences(text: string, lang: Lang): Sentence[] {
  const out: Sentence[] = [];
  if (!CONTENT.test(text)) return out;
  let pos = 0;
  for (const b of sentencex()(lang, text)) {
    const piece = b.text.trim();
    if (!piece) continue;
    const start = text.indexOf(piece, pos);
    if (start < 0) continue; // the library never changes the text; be safe if it did
    pos = start + piece.length;
    if (lang === 'zh') {
      let s = start;
      for (const m of piece.matchAll(/；+/g)) {
        const e = start + m.index + m[0].length;
        push(out, text, s, e);
        s = e;
      }
      push(out, text, s, pos);
    } else push(out, text, start, pos);
  }
  return out;
}

function push(out: Sentence[], text: string, start: number, end: number): void {
  const raw = text.slice(start, end);
  const lead = raw.length - raw.trimStart().length;
  const t = raw.trim();
  if (!t || !CONTENT.test(t)) return;
  out.push({ text: t, start: start + lead, end: start + lead + t.length });
}

export interface BoundedSentences {
  sentences: Sentence[];
  /** The caption was longer than maxChars: only the sentences that end before the cut are kept. */
  truncated: boolean;
  /** Nothing usable before the cut (a first sentence longer than maxChars): the caption is not scored. */
  refused: boolean;
  /** Sentences past maxSentences, left out. */
  dropped: number;
}

/**
 * The sentences of a caption that are scored: the caption is read only up to maxChars characters (a longer one is
 * cut at its last sentence end before the limit, so the cost of everything after is bounded by maxChars whatever
 * the caption's length), `clean` may take a credit or dateline off the text first (offsets are then in the cleaned
 * text), fragments that `skip` rejects (credits, datelines inside the caption) are left out, and at most
 * maxSentences are kept.
 */
export function boundedSentences(
  text: string,
  lang: Lang,
  opts: {
    maxChars: number;
    maxSentences: number;
    clean?: (text: string) => string;
    skip?: (fragment: string) => boolean;
    /** Characters of a credit or dateline at the start of a sentence (one printed between two sentences), to leave out. */
    lead?: (fragment: string) => number;
  },
): BoundedSentences {
  const truncated = text.length > opts.maxChars;
  const read = truncated ? text.slice(0, opts.maxChars) : text;
  let sentences = splitSentences(opts.clean ? opts.clean(read) : read, lang);
  // the last piece of a cut text is a sentence cut in the middle
  if (truncated) sentences = sentences.slice(0, -1);
  if (truncated && !sentences.length) return { sentences, truncated, refused: true, dropped: 0 };
  if (opts.skip) sentences = sentences.filter((s) => !opts.skip!(s.text));
  if (opts.lead) {
    sentences = sentences.flatMap((s) => {
      const k = opts.lead!(s.text);
      const text = s.text.slice(k).trim();
      return !k ? [s] : text ? [{ text, start: s.end - text.length, end: s.end }] : [];
    });
  }
  const dropped = Math.max(0, sentences.length - opts.maxSentences);
  return { sentences: sentences.slice(0, opts.maxSentences), truncated, refused: false, dropped };
}

/** Words of a Chinese text as jieba cuts it, punctuation and spaces not counted (the seed paper's length filter). */
export function chineseWordCount(text: string): number {
  return getJieba().cut(text, false).filter((w) => CONTENT.test(w)).length;
}
