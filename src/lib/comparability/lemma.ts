// English lemmas: wink-lemmatizer (WordNet's exception lists and detachment rules) gives noun, verb and
// adjective candidates; the caller picks the first one WordNet knows.
import wink from 'wink-lemmatizer';

const memo = new Map<string, string[]>();

/** Lemma candidates in preference order: -ing/-ed forms prefer the verb, others the noun, then verb, then adjective. */
export function lemmaCandidates(word: string): string[] {
  let c = memo.get(word);
  if (c) return c;
  const n = wink.noun(word);
  const a = wink.adjective(word);
  const v = wink.verb(word);
  // "riding" is ride, not rid: a single final consonant after a single vowel would have been doubled (ridding).
  // The caller keeps the first candidate WordNet knows, so "opening" still gives open.
  const base = word.endsWith('ing') ? word.slice(0, -3) : '';
  const eForm = base && v === base && /[^aeiou][aeiou][^aeiouwxy]$/.test(base) ? `${base}e` : '';
  const verbish = /(?:ing|ed)$/.test(word) && v !== word;
  const order = verbish ? [eForm, v, n, a, word] : [n, eForm, v, a, word];
  c = [...new Set(order.filter(Boolean))];
  if (memo.size > 200_000) memo.clear();
  memo.set(word, c);
  return c;
}
