// The page's DOM: the WHATWG parser cheerio uses (parse5, with the htmlparser2 tree adapter), giving the same tree as
// `cheerio.load(html)`, faster on heavy pages.
//
// Why: on modern pages most of the markup is inline script and style (1-1.8 MB pages of new sites carry 0.3-1.4 MB
// of it; issue 31's CPU per page). parse5's tokenizer reads raw text one code point at a time, dispatching each
// through its state machine and appending it to a character token, and flushes a token (one more append to the
// element's text node) each time the text turns from white space to other characters and back: 60-80 % of the
// extractor's time on such pages went there. So the raw-text states (RAWTEXT: <style>, <xmp>, <iframe>, <noembed>,
// <noframes>, <noscript>; SCRIPT DATA: <script>, and its escaped and double-escaped text after a "<!--") take, after
// the character they are given, the run of characters that cannot change their state at once: up to the next "<"
// (where an end tag or a script's "<!--" may begin), "-" in escaped script text ("-->" ends the escape), NUL
// (replaced), CR or LF (normalised, counted in lines) or surrogate (paired) — each of those still goes through
// parse5's own code. The tree is the same: the parser enters these states only through its "text" insertion
// mode (document parsing; a fragment's context is not used here), where every character token, white space or not, is
// appended to the text of the one element being read, so one token of the run appends exactly the characters the
// per-character tokens would have appended. Quoted attribute values (0.2-0.5 MB of srcset, data-* and SVG paths on
// such pages) are read the same way, up to the closing quote or an "&" (a character reference): the value is the same
// string. test/extraction-parse.test.ts compares the two trees.
//
// The run is read through parse5 7's tokenizer internals (its preprocessor's buffer and position); a parse5 without
// them is used as it is (checked once, at load).
import * as cheerio from 'cheerio';
import { Parser, Token, type ParserOptions } from 'parse5';
import { adapter, type Htmlparser2TreeAdapterMap } from 'parse5-htmlparser2-tree-adapter';

/** The parts of parse5's tokenizer the runs read and call (not in its typings). */
interface TokenizerInternals {
  preprocessor: { html: string; pos: number };
  consumedAfterSnapshot: number;
  currentAttr: { value: string };
  _stateRawtext(cp: number): void;
  _stateScriptData(cp: number): void;
  _stateScriptDataEscaped(cp: number): void;
  _stateScriptDataDoubleEscaped(cp: number): void;
  _stateAttributeValueDoubleQuoted(cp: number): void;
  _stateAttributeValueSingleQuoted(cp: number): void;
  _appendCharToCurrentCharacterToken(type: Token.TokenType, ch: string): void;
}

const LT = 0x3c;
const LF = 0x0a;
const NUL = 0;
const EOF = -1;

const AMP = 0x26;
const QUOT = 0x22;
const APOS = 0x27;
const HYPHEN = 0x2d;

/** End of the run of characters from `from` that leave a state as it is: up to `stop`, NUL, CR, LF or a surrogate. */
function runEnd(html: string, from: number, stop: number, stop2 = stop): number {
  let i = from;
  for (; i < html.length; i++) {
    const c = html.charCodeAt(i);
    if (c === stop || c === stop2 || c === NUL || c === 0x0d || c === LF || (c >= 0xd800 && c <= 0xdfff)) break;
  }
  return i;
}

/**
 * A state that, given an ordinary character, hands it and the run after it (up to `stop`, `stop2`, NUL, CR, LF or a
 * surrogate) to `append` at once; the characters the state acts on go through parse5's own code.
 */
function inRuns(state: (this: TokenizerInternals, cp: number) => void, stop: number, stop2: number, append: (t: TokenizerInternals, text: string) => void) {
  return function (this: TokenizerInternals, cp: number): void {
    if (cp === stop || cp === stop2 || cp === NUL || cp === EOF || cp === LF) {
      state.call(this, cp);
      return;
    }
    const p = this.preprocessor;
    const end = runEnd(p.html, p.pos + 1, stop, stop2);
    const run = end - 1 - p.pos;
    // The run is read before appending: appending may flush the token before and drop the parsed part of the buffer
    // (its position then restarts at 0).
    append(this, String.fromCodePoint(cp) + p.html.slice(p.pos + 1, end));
    p.pos += run;
    this.consumedAfterSnapshot += run;
  };
}

/** A raw-text state, appending the run as one character token. `also`: one more character the state acts on ("-" in
 *  a script's escaped text, where "-->" ends the escape). */
const withRuns = (state: (this: TokenizerInternals, cp: number) => void, also = LT) =>
  inRuns(state, LT, also, (t, text) => t._appendCharToCurrentCharacterToken(Token.TokenType.CHARACTER, text));

/** A quoted attribute value's state, appending the run to the value (up to the closing quote or a character reference). */
const valueRuns = (state: (this: TokenizerInternals, cp: number) => void, quote: number) =>
  inRuns(state, quote, AMP, (t, text) => {
    t.currentAttr.value += text;
  });

type Html2Parser = Parser<Htmlparser2TreeAdapterMap>;
const OPTIONS: ParserOptions<Htmlparser2TreeAdapterMap> = { treeAdapter: adapter, scriptingEnabled: true };

/** parse5's tokenizer has the internals the runs use (parse5 7). */
const runsSupported = ((): boolean => {
  const t = new Parser(OPTIONS).tokenizer as unknown as Partial<TokenizerInternals>;
  return (
    typeof t._stateRawtext === 'function' &&
    typeof t._stateScriptData === 'function' &&
    typeof t._stateScriptDataEscaped === 'function' &&
    typeof t._stateScriptDataDoubleEscaped === 'function' &&
    typeof t._stateAttributeValueDoubleQuoted === 'function' &&
    typeof t._stateAttributeValueSingleQuoted === 'function' &&
    typeof t._appendCharToCurrentCharacterToken === 'function' &&
    typeof t.consumedAfterSnapshot === 'number' &&
    typeof t.preprocessor?.html === 'string' &&
    typeof t.preprocessor.pos === 'number'
  );
})();

/** The document's tree, as `cheerio.load(html)` builds it; `runs: false` reads raw text one character at a time. */
export function parseDocument(html: string, runs = true): cheerio.CheerioAPI {
  const parser: Html2Parser = new Parser(OPTIONS);
  if (runs && runsSupported) {
    const t = parser.tokenizer as unknown as TokenizerInternals;
    t._stateRawtext = withRuns(t._stateRawtext);
    t._stateScriptData = withRuns(t._stateScriptData);
    t._stateScriptDataEscaped = withRuns(t._stateScriptDataEscaped, HYPHEN);
    t._stateScriptDataDoubleEscaped = withRuns(t._stateScriptDataDoubleEscaped, HYPHEN);
    t._stateAttributeValueDoubleQuoted = valueRuns(t._stateAttributeValueDoubleQuoted, QUOT);
    t._stateAttributeValueSingleQuoted = valueRuns(t._stateAttributeValueSingleQuoted, APOS);
  }
  parser.tokenizer.write(html, true);
  return cheerio.load(parser.document);
}
