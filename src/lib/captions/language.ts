// Caption language: the script decides between CJK and alphabetic text (franc confuses short Chinese with
// Japanese less often than with nothing, but a script count is exact), then franc picks among the languages
// that script is written in. Short captions are 'und' (undetermined) rather than guessed.
import { franc, francAll } from 'franc';
import { englishWordShare } from './english-words.js';

/** Latin-script languages that news sites publish in; restricting franc to them avoids exotic guesses
 * (Scots, Tok Pisin...) on short English captions. */
const LATIN_LANGS = ['eng', 'fra', 'deu', 'spa', 'por', 'ita', 'nld', 'ind', 'vie', 'tur', 'pol', 'swe', 'dan', 'nob', 'fin', 'ces', 'ron', 'hun', 'tgl', 'zlm'];
const CYRILLIC_LANGS = ['rus', 'ukr', 'bul', 'srp', 'bel', 'kaz'];

export interface LanguageGuess {
  lang: string; // ISO 639-3, or 'und'
  script: 'han' | 'latin' | 'cyrillic' | 'other' | 'none';
}

export function detectLanguage(text: string, minLength = 12): LanguageGuess {
  let han = 0, kana = 0, hangul = 0, latin = 0, cyr = 0, other = 0;
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if ((c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0x20000 && c <= 0x2ebef)) han++;
    else if (c >= 0x3040 && c <= 0x30ff) kana++;
    else if (c >= 0xac00 && c <= 0xd7af) hangul++;
    else if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0xc0 && c <= 0x24f)) latin++;
    else if (c >= 0x400 && c <= 0x4ff) cyr++;
    else if (/\p{L}/u.test(ch)) other++;
  }
  const cjk = han + kana + hangul;
  const letters = cjk * 2 + latin + cyr + other; // a hanzi carries about a word's worth of a Latin word's letters
  if (letters === 0) return { lang: 'und', script: 'none' };
  if (cjk * 2 >= letters * 0.5) {
    if (hangul > cjk * 0.3) return { lang: 'kor', script: 'other' };
    if (kana > cjk * 0.1) return { lang: 'jpn', script: 'other' };
    return { lang: han >= 2 ? 'cmn' : 'und', script: 'han' };
  }
  if (cyr > latin) {
    return { lang: text.length < minLength ? 'und' : franc(text, { only: CYRILLIC_LANGS, minLength: 1 }), script: 'cyrillic' };
  }
  if (latin >= other) {
    if (text.length < minLength) return { lang: 'und', script: 'latin' };
    return { lang: latinLanguage(text), script: 'latin' };
  }
  return { lang: text.length < minLength ? 'und' : franc(text, { minLength: 1 }), script: 'other' };
}

export interface CaptionCheck {
  lang: string | null;
  status: 'ok' | 'empty' | 'lang-mismatch';
  reason: string | null;
}

/** Checks a caption against the languages its bank expects. 'und' passes: too short to tell is not wrong. */
export function checkCaption(caption: string, expected: string[], opts: { check: boolean; minLength: number }): CaptionCheck {
  const text = caption.trim();
  if (!text) return { lang: null, status: 'empty', reason: null };
  const { lang } = detectLanguage(text, opts.minLength);
  if (!opts.check || lang === 'und' || expected.includes(lang)) return { lang, status: 'ok', reason: null };
  return { lang, status: 'lang-mismatch', reason: `language: detected ${lang}, expected ${expected.join('/')}` };
}

/** franc among Latin-script languages, with English kept when franc's own score for it is close to the top
 * or when nearly every word is an English dictionary word (franc is unreliable on ten-word captions). */
function latinLanguage(text: string): string {
  const scores = francAll(text, { only: LATIN_LANGS, minLength: 1 });
  const top = scores[0]!;
  if (top[0] === 'eng' || top[0] === 'und') return top[0];
  const eng = scores.find((s) => s[0] === 'eng')?.[1] ?? 0;
  if (eng >= 0.75 * top[1]) return 'eng';
  const { share, tokens } = englishWordShare(text);
  if (tokens >= 3 && share >= 0.85) return 'eng';
  return top[0];
}
