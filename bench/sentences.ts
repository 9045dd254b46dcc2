// npm run bench:sentences — sentences of real captions, on the 170 labelled captions of extraction-news
// (../shared/data/extraction-news/truth.jsonl):
//   segmentation  against our labels of where each caption's sentences end (bench/data/extraction-news-sentence-ends.json:
//                 offsets into the truth caption, "r" a true sentence end, "o" a break either way is right: before a
//                 credit, inside a credit); for the shipped splitter (sentencex, src/lib/comparability/sentences.ts) and
//                 Node's built-in Intl.Segmenter as the reference: captions split exactly right, true ends found,
//                 false breaks;
//   eligible      captions that yield at least one sentence the pairing stage can emit (language check passed, a
//                 sentence left once credits and datelines are taken off, within the caption bounds), before this
//                 change (the crawler's seed-paper filters: one sentence, at most 20 Chinese words, the site's
//                 language; anything else was never stored) and after (every caption is stored and split).
// Prints ONE JSON line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.js';
import { boundedSentences, chineseWordCount, splitSentences } from '../src/lib/comparability/index.js';
import { isCreditOrDateline, splitCredit } from '../src/lib/captions/index.js';
import { checkCaption } from '../src/lib/captions/index.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shared = process.env.CAPBRIDGE_SHARED_DATA ?? path.resolve(repoRoot, '..', 'shared', 'data');
const set = path.join(shared, 'extraction-news');
const labels = JSON.parse(fs.readFileSync(path.join(repoRoot, 'bench', 'data', 'extraction-news-sentence-ends.json'), 'utf8')) as Record<string, { r: number[]; o: number[] }>;
const { config } = loadConfig({ env: {} });

interface Caption {
  id: string;
  lang: 'en' | 'zh';
  text: string;
}

/** The crawler's sentence count before this change (src/crawler/filters.ts as it was): the "before" reference. */
function oldSentenceCount(text: string): number {
  const t = text.trim().replace(/[。！？!?]+["”’」』)）]*$/u, '').replace(/\.+["”’)]*$/, '');
  const zh = t.split(/[。！？]+/u).filter((s) => s.trim()).length;
  const en = t.split(/(?<!\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Gen|Gov|Sen|Rep|Lt|Col|No|U\.S|U\.K|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|[A-Z]))[.!?]+\s+(?=[A-Z"“])/).filter((s) => s.trim()).length;
  return Math.max(zh, en, 1);
}

function starts(text: string, pieces: string[]): number[] {
  const out: number[] = [];
  let pos = 0;
  for (const p of pieces) {
    const t = p.trim();
    if (!t) continue;
    const i = text.indexOf(t, pos);
    if (i < 0) continue;
    out.push(i);
    pos = i + t.length;
  }
  return out.slice(1);
}

const segmenters: Record<string, (text: string, lang: 'en' | 'zh') => number[]> = {
  sentencex: (t, lang) => splitSentences(t, lang).map((s) => s.start).slice(1),
  'Intl.Segmenter': (t, lang) => starts(t, [...new Intl.Segmenter(lang, { granularity: 'sentence' }).segment(t)].map((s) => s.segment)),
};

function main(): void {
  const captions: Caption[] = [];
  for (const line of fs.readFileSync(path.join(set, 'truth.jsonl'), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const page = JSON.parse(line) as { id: string; lang: 'en' | 'zh'; pairs: Array<{ caption: string }> };
    page.pairs.forEach((p, i) => captions.push({ id: `${page.id}#${i}`, lang: page.lang, text: p.caption }));
  }
  const segmentation: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(segmenters)) {
    let exact = 0;
    let ends = 0;
    let found = 0;
    let falseBreaks = 0;
    for (const c of captions) {
      const gold = labels[c.id] ?? { r: [], o: [] };
      const got = f(c.text, c.lang);
      let ok = true;
      for (const b of gold.r) {
        ends++;
        if (got.includes(b)) found++;
        else ok = false;
      }
      for (const b of got) {
        if (!gold.r.includes(b) && !gold.o.includes(b)) {
          falseBreaks++;
          ok = false;
        }
      }
      if (ok) exact++;
    }
    segmentation[name] = { captionsExact: exact, endsFound: found, ends, falseBreaks };
  }

  const eligible = { before: { en: 0, zh: 0 }, after: { en: 0, zh: 0 }, captions: { en: 0, zh: 0 }, multiSentence: { en: 0, zh: 0 } };
  for (const c of captions) {
    eligible.captions[c.lang]++;
    const expected = c.lang === 'en' ? config.captions.sourceLanguages : config.captions.targetLanguages;
    const langOk = checkCaption(c.text, expected, { check: config.captions.checkLanguage, minLength: config.captions.minLengthForDetection }).status === 'ok';
    const oldOk = langOk && oldSentenceCount(c.text) <= 1 && (c.lang !== 'zh' || chineseWordCount(c.text) <= 20);
    if (oldOk) eligible.before[c.lang]++;
    const sentences = boundedSentences(c.text, c.lang, {
      maxChars: config.comparability.maxCaptionChars,
      maxSentences: config.comparability.maxSentences,
      clean: (t) => splitCredit(t, c.lang).caption,
      skip: (f) => isCreditOrDateline(f, c.lang),
    });
    if (langOk && sentences.sentences.length && !sentences.refused) eligible.after[c.lang]++;
    if (sentences.sentences.length > 1) eligible.multiSentence[c.lang]++;
  }
  process.stdout.write(
    JSON.stringify({
      bench: 'sentences',
      set: path.relative(repoRoot, set),
      date: new Date().toISOString(),
      cpu: os.cpus()[0]?.model ?? 'unknown',
      cores: os.cpus().length,
      loadAverage: Math.round(os.loadavg()[0]! * 10) / 10,
      captions: captions.length,
      segmentation,
      eligible,
    }) + '\n',
  );
}

main();
