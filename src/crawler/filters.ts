// The seed paper's caption measures: sentences, and Chinese words (jieba). The crawler no longer filters captions
// with them (every caption is stored with its language check); the pairing decision uses them (issue 15).
import { Jieba } from '@node-rs/jieba';
import { dict } from '@node-rs/jieba/dict.js';

let jieba: Jieba | null = null;
function segmenter(): Jieba {
  if (!jieba) jieba = Jieba.withDict(dict);
  return jieba;
}

export function chineseWordCount(text: string): number {
  return segmenter()
    .cut(text, false)
    .filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}

/** Sentences: split after 。！？!? and after ". " before an upper-case letter (not after common abbreviations). */
export function sentenceCount(text: string): number {
  const t = text.trim().replace(/[。！？!?]+["”’」』)）]*$/u, '').replace(/\.+["”’)]*$/, '');
  const zh = t.split(/[。！？]+/u).filter((s) => s.trim()).length;
  const en = t.split(/(?<!\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Gen|Gov|Sen|Rep|Lt|Col|No|U\.S|U\.K|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|[A-Z]))[.!?]+\s+(?=[A-Z"“])/).filter((s) => s.trim()).length;
  return Math.max(zh, en, 1);
}
