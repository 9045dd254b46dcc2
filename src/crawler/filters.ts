// The seed paper's caption filters: one sentence; Chinese captions of at most N words (jieba); the caption's
// language checked against the site's language. Each rejection has a reason, counted by the crawl summary.
import { Jieba } from '@node-rs/jieba';
import { dict } from '@node-rs/jieba/dict.js';
import { detectLanguage } from '../ingest/language.js';
import type { Config } from '../config/schema.js';

let jieba: Jieba | null = null;
function segmenter(): Jieba {
  if (!jieba) jieba = Jieba.withDict(dict);
  return jieba;
}

export type RejectReason = 'multi-sentence' | 'too-many-words' | 'language' | 'empty';

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

export function checkCaptionFilters(caption: string, siteLang: 'en' | 'zh', config: Config): RejectReason | null {
  const f = config.crawler.filters;
  const text = caption.trim();
  if (!text) return 'empty';
  if (f.checkLanguage) {
    const { lang } = detectLanguage(text, config.captions.minLengthForDetection);
    const expected = siteLang === 'en' ? config.captions.sourceLanguages : config.captions.targetLanguages;
    if (lang !== 'und' && !expected.includes(lang)) return 'language';
  }
  if (f.oneSentence && sentenceCount(text) > 1) return 'multi-sentence';
  if (siteLang === 'zh' && chineseWordCount(text) > f.maxChineseWords) return 'too-many-words';
  return null;
}
