// npm run bench:align — sentence alignment inside caption pairs, on multi-sentence caption pairs built from the open
// comparability file (../shared/data/comparability/pairs.tsv): each par or com pair is one true sentence pair; around
// it, on either side, 0–2 sentences of captions of other images (other rows of the file) and, half the time, a photo
// credit in the agencies' styles are added in a seeded random order; a fifth of the par pairs whose Chinese sentence
// has a middle comma get that sentence split in two (the aligner must merge them back, 1–2). Then the caption pair is
// aligned with the shipped configuration, and the pairing stage's choice is emitted (src/stages/pair/sentence-choice.ts:
// the sentence pairs clear of their alternatives by export.sentenceMargin at their level floor, else the caption pair
// whole when it passes on its own).
// Then (issue 34, `newsCaptions`) the pipeline end to end on a news-caption mining set built from
// ../shared/data/mining-flickr8k (bench/news-captions.ts, seed BENCH_ALIGN_NEWS_SEED, 34): `capbridge eval` in a temp data dir,
// and of the emitted sentence pairs of correct image matches the share holding the photo's own sentences on both
// sides, with the image pairs' precision and coverage, for the fit part and the held-out third of the sources
// (BENCH_ALIGN_NEWS=0 skips it: SIFT and matching take a few minutes).
//   precision  emitted sentence pairs that are exactly the true pair (the split case: merged back) / all emitted
//   recall     true pairs emitted / true pairs whose own C-measure level (scored alone) is at least minLevel — the
//              alignment cannot emit what the measure would not emit alone (reported too: recall of all true pairs)
//   added wrongly emitted  added sentences (others' captions and credits) that are part of an emitted pair / added
// Figures for the whole file and for its held-out third (seed 15, stratified by level and corpus, as calibrate draws
// it). IDF from the file's own captions. Prints ONE JSON line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer, type Scorer } from '../src/lib/comparability/index.js';
import { readPairsFile, type PairRow } from '../src/lib/comparability/index.js';
import { splitHoldout } from '../src/lib/comparability/index.js';
import { LEVEL_RANK } from '../src/bank/index.js';
import { rulesOf } from '../src/stages/pair/index.js';
import { chooseSentencePairs } from '../src/stages/pair/index.js';
import { Bank } from '../src/bank/index.js';
import { runEval } from '../src/eval/eval.js';
import { buildNewsCaptionSet, scoreNewsCaptions } from './news-captions.js';
import { mulberry32 } from '../src/util/random.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shared = process.env.CAPBRIDGE_SHARED_DATA ?? path.resolve(repoRoot, '..', 'shared', 'data');
const file = path.join(shared, 'comparability', 'pairs.tsv');
const { config } = loadConfig({ env: {} });
const SEED = Number(process.env.BENCH_ALIGN_SEED ?? 15);
/** The news-caption set's seed: its held-out third was never looked at while the sentence choice was developed (issue 34). */
const NEWS_SEED = Number(process.env.BENCH_ALIGN_NEWS_SEED ?? 34);

type Row = PairRow & { level: 'par' | 'com' | 'pse' | 'inc'; image: string };

// Credits as agencies print them (names made up here): English slash/label styles, Chinese 摄/供图/agency styles.
const EN_NAMES = ['Jane Doe', 'Li Wei', 'Carlos Ruiz', 'Anna Berg', 'Tom Okafor', 'Mei Chen'];
const ZH_NAMES = ['李明', '王刚', '张华', '陈静', '刘洋', '赵雪'];
const EN_CREDITS = [(n: string) => `Photo: Reuters/${n}`, (n: string) => `(AP Photo/${n})`, (n: string) => `REUTERS/${n}`, (n: string) => `${n}/AFP via Getty Images`, () => 'Getty Images'];
const ZH_CREDITS = [(n: string) => `新华社记者 ${n} 摄`, (n: string) => `中新社记者 ${n} 摄`, () => '（视觉中国）', (n: string) => `${n}供图`, (n: string) => `图／${n}`];

const endEn = (s: string) => (/[.!?]["”’)]?$/.test(s.trim()) ? s.trim() : `${s.trim()}.`);
const endZh = (s: string) => (/[。！？]["”’」）)]?$/.test(s.trim()) ? s.trim() : `${s.trim()}。`);
const norm = (s: string) => s.replace(/\s+/g, ' ').trim();

interface Case {
  base: Row;
  en: string;
  zh: string;
  trueEn: string;
  trueZh: string;
  split: boolean;
  added: Array<{ lang: 'en' | 'zh'; text: string }>;
}

/**
 * `unrelated(a, b, side)`: may caption b's sentence on that side be added to pair a as an unrelated sentence.
 * Mode "unrelated" (the main figures): it shares no content word with a's sentence on that side (the labelled file's
 * own rule for its inc pairs); mode "random": any caption of another image (same domain, often the same topic
 * words: a harder, pessimistic variant).
 */
function buildCases(rows: Row[], pool: Row[], seed: number, unrelated: (a: Row, b: Row, side: 'en' | 'zh') => boolean): Case[] {
  const rnd = mulberry32(seed);
  const pick = <T>(a: T[]): T => a[Math.floor(rnd() * a.length)]!;
  const imageOf = (r: Row, side: 'en' | 'zh') => (r.image.includes('|') ? r.image.split('|')[side === 'en' ? 0 : 1]! : r.image);
  const cases: Case[] = [];
  for (const base of rows) {
    if (base.level !== 'par' && base.level !== 'com') continue;
    const img = base.image;
    const other = (side: 'en' | 'zh'): string => {
      for (;;) {
        const r = pick(pool);
        if (imageOf(r, 'en') !== img && imageOf(r, 'zh') !== img && r !== base && unrelated(base, r, side)) return side === 'en' ? endEn(r.en) : endZh(r.zh);
      }
    };
    const added: Case['added'] = [];
    // the true sentences, the Chinese one split at a middle comma for a fifth of the par pairs that have one
    let zhParts = [endZh(base.zh)];
    const commas = [...base.zh.matchAll(/，/g)].map((m) => m.index);
    const mid = commas.find((i) => i > base.zh.length * 0.3 && i < base.zh.length * 0.7);
    const split = base.level === 'par' && mid !== undefined && rnd() < 0.2;
    if (split) zhParts = [`${base.zh.slice(0, mid)}。`, endZh(base.zh.slice(mid + 1))];
    // the true sentence(s) stay one block; the added sentences go anywhere around it
    const enSents = [endEn(base.en)];
    const zhSents = [zhParts.join('')];
    const insert = (list: string[], x: string) => list.splice(Math.floor(rnd() * (list.length + 1)), 0, x);
    for (let k = Math.floor(rnd() * 3); k > 0; k--) {
      const s = other('en');
      added.push({ lang: 'en', text: s });
      insert(enSents, s);
    }
    for (let k = Math.floor(rnd() * 3); k > 0; k--) {
      const s = other('zh');
      added.push({ lang: 'zh', text: s });
      insert(zhSents, s);
    }
    if (rnd() < 0.5) {
      const c = pick(EN_CREDITS)(pick(EN_NAMES));
      added.push({ lang: 'en', text: c });
      enSents.push(c);
    }
    if (rnd() < 0.5) {
      const c = pick(ZH_CREDITS)(pick(ZH_NAMES));
      added.push({ lang: 'zh', text: c });
      zhSents.push(c);
    }
    cases.push({ base, en: enSents.join(' '), zh: zhSents.join(''), trueEn: endEn(base.en), trueZh: zhParts.join(''), split, added });
  }
  return cases;
}

async function main(): Promise<void> {
  const rows = (await readPairsFile(file, { requireLevel: true })) as Row[];
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const imageCol = lines[0]!.split('\t').indexOf('image');
  if (imageCol < 0) throw new Error(`${file}: no image column`);
  for (const r of rows) r.image = lines[r.line - 1]!.split('\t')[imageCol]!;
  const scorer = createScorer(config, {});
  addCaptionsToIdf(scorer, rows);
  const minRank = LEVEL_RANK[config.export.minLevel];
  const rules = rulesOf(config);
  const { heldOut } = splitHoldout(rows, 1 / 3, 15);
  const held = new Set(heldOut);
  const t0 = process.cpuUsage();
  const tokens = new Map<string, Set<string>>();
  const tokensOf = (text: string, side: 'en' | 'zh') => {
    let t = tokens.get(side + text);
    if (!t) tokens.set(side + text, (t = new Set((side === 'en' ? scorer.analyzer.english(text) : scorer.analyzer.chinese(text)).tokens)));
    return t;
  };
  const noSharedWord = (a: Row, b: Row, side: 'en' | 'zh') => {
    const ta = tokensOf(side === 'en' ? a.en : a.zh, side);
    for (const w of tokensOf(side === 'en' ? b.en : b.zh, side)) if (ta.has(w)) return false;
    return true;
  };
  const results: Record<string, unknown> = {};
  for (const mode of ['unrelated', 'random'] as const) {
    results[mode] = runCases(buildCases(rows, rows, SEED, mode === 'unrelated' ? noSharedWord : () => true), { scorer, rules, minRank, held });
  }
  const main = results.unrelated as { open: Figures; heldOut: Figures };
  const cpu = process.cpuUsage(t0);
  const newsCaptions = process.env.BENCH_ALIGN_NEWS === '0' ? null : await runNewsCaptions();
  process.stdout.write(
    JSON.stringify({
      bench: 'align',
      file: path.relative(repoRoot, file),
      seed: SEED,
      date: new Date().toISOString(),
      cpu: os.cpus()[0]?.model ?? 'unknown',
      cores: os.cpus().length,
      loadAverage: Math.round(os.loadavg()[0]! * 10) / 10,
      minLevel: config.export.minLevel,
      minLevelMoreSentences: config.export.minLevelMoreSentences,
      ...results,
      cpuSeconds: Math.round((cpu.user + cpu.system) / 1e4) / 100,
      newsCaptions,
      // issue 15: precision >= 0.95, recall >= 0.90, added sentences wrongly emitted <= 2 %
      targetsMet: Object.fromEntries(
        (['open', 'heldOut'] as const).map((k) => [k, main[k].precision >= 0.95 && main[k].recall >= 0.9 && main[k].addedWronglyEmitted <= 0.02]),
      ),
    }) + '\n',
  );
}

/** The news-caption mining set through `capbridge eval` (import, features, match, pair) in a temp data dir. */
async function runNewsCaptions() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-bench-news-'));
  try {
    const set = buildNewsCaptionSet(path.join(shared, 'mining-flickr8k'), path.join(dir, 'set'), NEWS_SEED);
    const { config: evalConfig } = loadConfig({ env: {} });
    const bank = await Bank.open(path.join(dir, 'data'));
    try {
      const r = await runEval(bank, evalConfig, { set: set.dir });
      return {
        set: 'mining-flickr8k as news captions (bench/news-captions.ts)',
        seed: NEWS_SEED,
        all: { emittedPrecision: r.emittedPrecision, ...(await scoreNewsCaptions(bank, set, () => true)) }, // coverage: the news set's (as recorded)
        fit: await scoreNewsCaptions(bank, set, (s) => !set.heldOut.has(s)),
        heldOut: await scoreNewsCaptions(bank, set, (s) => set.heldOut.has(s)),
      };
    } finally {
      await bank.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

type Figures = ReturnType<typeof figures>;
const r4 = (x: number) => Math.round(x * 10000) / 10000;
const tally = () => ({ cases: 0, eligible: 0, found: 0, foundEligible: 0, emitted: 0, correct: 0, added: 0, addedEmitted: 0, split: 0, splitFound: 0 });
function figures(t: ReturnType<typeof tally>) {
  return {
    cases: t.cases,
    precision: r4(t.correct / t.emitted),
    recall: r4(t.foundEligible / t.eligible),
    recallOfAll: r4(t.found / t.cases),
    addedWronglyEmitted: r4(t.addedEmitted / t.added),
    added: t.added,
    emitted: t.emitted,
    splitMergedBack: t.split ? `${t.splitFound}/${t.split}` : null,
  };
}

function runCases(cases: Case[], ctx: { scorer: Scorer; rules: ReturnType<typeof rulesOf>; minRank: number; held: Set<Row> }) {
  const { scorer, rules, minRank, held } = ctx;
  const sets = { open: tally(), heldOut: tally(), par: tally(), com: tally() };
  for (const c of cases) {
    const choice = chooseSentencePairs(scorer.align(c.en, c.zh), rules);
    const emitted = choice.pairs.filter((_, i) => choice.emitted[i]);
    const isTrue = (p: { en: string; zh: string }) => norm(p.en) === norm(c.trueEn) && p.zh.replace(/\s/g, '') === c.trueZh.replace(/\s/g, '');
    const eligible = LEVEL_RANK[scorer.score(c.trueEn, c.trueZh).level] >= minRank;
    const found = emitted.some(isTrue);
    const correct = emitted.filter(isTrue).length;
    const addedEmitted = c.added.filter((a) => emitted.some((p) => (a.lang === 'en' ? p.en : p.zh).includes(a.text))).length;
    if (process.env.BENCH_ALIGN_DUMP) for (const p of emitted) if (!isTrue(p)) process.stderr.write(`WRONG ${p.level} ${p.c.toFixed(3)} fc ${p.fc.toFixed(2)} cov ${p.fcov.toFixed(2)} [${p.enSpan}/${p.zhSpan}] ${p.en} | ${p.zh}   TRUE: ${c.trueEn} | ${c.trueZh}\n`);
    for (const t of [sets.open, held.has(c.base) ? sets.heldOut : null, sets[c.base.level as 'par' | 'com']]) {
      if (!t) continue;
      t.cases++;
      t.eligible += eligible ? 1 : 0;
      t.found += found ? 1 : 0;
      t.foundEligible += found && eligible ? 1 : 0;
      t.emitted += emitted.length;
      t.correct += correct;
      t.added += c.added.length;
      t.addedEmitted += addedEmitted;
      t.split += c.split ? 1 : 0;
      t.splitFound += c.split && found ? 1 : 0;
    }
  }
  return { open: figures(sets.open), heldOut: figures(sets.heldOut), byLevel: { par: figures(sets.par), com: figures(sets.com) } };
}
main().catch((err: Error) => {
  process.stderr.write(`bench:align: ${err.stack ?? err.message}\n`);
  process.exitCode = 1;
});
