// A multi-sentence mining set built from ../shared/data/mining-flickr8k the way news captions are printed (issue 34):
// each caption keeps the photo's own sentence and gets, seeded, a second sentence about something else (another
// photo's caption of the same bank: the same domain, often the same frequent words), a photo credit in an agency's
// style, and a dateline, in varied orders (the photo's sentence first three times in four, as a news caption
// describes its photo first and gives the background after, else second; the credit at the end or between the
// sentences; a dateline before the first sentence half the time). Images and truth are the set's own (the
// images folder is linked, not copied). A third of the sources, drawn with the seed, is the held-out part.
// `scoreNewsCaptions` reads the pairing stage's decisions from the bank that `capbridge eval` filled: of the emitted
// sentence pairs of correct image matches, the share that hold the photo's own sentence on both sides ("holds": the
// exported English text contains the photo's English sentence and the Chinese text the photo's Chinese sentence;
// "exact": it is just those two sentences), and the image pairs' precision and coverage.
import fs from 'node:fs';
import path from 'node:path';
import { PairsRepo, SentencePairsRepo, type Bank } from '../src/bank/index.js';
import { mulberry32 } from '../src/util/random.js';

/** Share of captions whose first sentence is the photo's. */
const PHOTO_FIRST = 0.75;
const EN_NAMES = ['Jane Doe', 'Li Wei', 'Carlos Ruiz', 'Anna Berg', 'Tom Okafor', 'Mei Chen'];
const ZH_NAMES = ['李明', '王刚', '张华', '陈静', '刘洋', '赵雪'];
const EN_CREDITS = [(n: string) => `REUTERS/${n}`, (n: string) => `(AP Photo/${n})`, (n: string) => `Photo: ${n}/AFP`, (n: string) => `${n}/Getty Images`, () => 'Photo: Getty Images'];
const ZH_CREDITS = [(n: string) => `新华社记者 ${n} 摄`, (n: string) => `（中新社记者 ${n} 摄）`, () => '（视觉中国）', (n: string) => `${n}供图`, (n: string) => `图／${n}`];
// a credit printed between two sentences is a bracketed one (a bare "Photo: Name" would run into the next sentence)
const EN_MID_CREDITS = [(n: string) => `(AP Photo/${n})`, (n: string) => `(Reuters/${n})`, () => '(Getty Images)'];
const ZH_MID_CREDITS = [(n: string) => `（中新社记者 ${n} 摄）`, () => '（视觉中国）', (n: string) => `（${n} 摄）`];
const EN_DATELINES = ['LONDON (Reuters) - ', 'BEIJING, March 19 (Xinhua) -- ', 'NEW YORK, NY - MAY 03: ', 'WASHINGTON (AP) - ', 'SYDNEY, Nov. 4 (Xinhua) -- '];
const ZH_DATELINES = ['新华社北京3月19日电 ', '中新网上海5月3日电 ', '新华社香港11月4日电（记者 张华） ', '（中央社記者陳靜台北19日電） '];

export interface NewsCaptionSet {
  dir: string;
  /** The photo's own sentence of each source and target (by ext id). */
  photoEn: Map<string, string>;
  photoZh: Map<string, string>;
  truth: Map<string, string>;
  heldOut: Set<string>;
  sources: string[];
}

type Row = { id: string; image: string; caption: string; url?: string };

function readTsv(file: string): Row[] {
  const [head, ...lines] = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const cols = head!.split('\t');
  return lines.map((l) => {
    const f = l.split('\t');
    return Object.fromEntries(cols.map((c, i) => [c, f[i] ?? ''])) as Row;
  });
}

const endEn = (s: string) => (/[.!?]["”’)]?$/.test(s.trim()) ? s.trim() : `${s.trim()}.`);
const endZh = (s: string) => (/[。！？]["”’」）)]?$/.test(s.trim()) ? s.trim() : `${s.trim()}。`);

/** One printed caption: the photo's sentence, another sentence, a credit and maybe a dateline, in a drawn order. */
function newsCaption(rnd: () => number, lang: 'en' | 'zh', own: string, other: string): string {
  const pick = <T>(a: T[]): T => a[Math.floor(rnd() * a.length)]!;
  const sep = lang === 'en' ? ' ' : '';
  const sentences = rnd() < PHOTO_FIRST ? [own, other] : [other, own];
  const where = rnd();
  const name = lang === 'en' ? pick(EN_NAMES) : pick(ZH_NAMES);
  const credit = (where < 0.6 ? (lang === 'en' ? pick(EN_CREDITS) : pick(ZH_CREDITS)) : lang === 'en' ? pick(EN_MID_CREDITS) : pick(ZH_MID_CREDITS))(name);
  const parts = where < 0.6 ? [...sentences, credit] : where < 0.85 ? [sentences[0]!, credit, sentences[1]!] : sentences;
  const dateline = rnd() < 0.5 ? (lang === 'en' ? pick(EN_DATELINES) : pick(ZH_DATELINES)) : '';
  return dateline + parts.join(sep);
}

/** Writes the set under outDir (source.tsv, target.tsv, truth.tsv, a link to the images) and returns its key. */
export function buildNewsCaptionSet(setDir: string, outDir: string, seed: number): NewsCaptionSet {
  const rnd = mulberry32(seed);
  const src = readTsv(path.join(setDir, 'source.tsv'));
  const tgt = readTsv(path.join(setDir, 'target.tsv'));
  const truthRows = readTsv(path.join(setDir, 'truth.tsv')) as unknown as Array<{ source_id: string; target_id: string }>;
  const photoEn = new Map(src.map((r) => [r.id, endEn(r.caption)]));
  const photoZh = new Map(tgt.map((r) => [r.id, endZh(r.caption)]));
  const otherOf = (rows: Row[], self: Row, end: (s: string) => string) => {
    for (;;) {
      const r = rows[Math.floor(rnd() * rows.length)]!;
      if (r !== self && r.caption.trim()) return end(r.caption);
    }
  };
  fs.mkdirSync(outDir, { recursive: true });
  const write = (file: string, rows: Row[], lang: 'en' | 'zh') => {
    const lines = rows.map((r) => {
      const own = lang === 'en' ? photoEn.get(r.id)! : photoZh.get(r.id)!;
      const caption = r.caption.trim() ? newsCaption(rnd, lang, own, otherOf(rows, r, lang === 'en' ? endEn : endZh)) : '';
      return [r.id, r.image, caption, r.url ?? ''].join('\t');
    });
    fs.writeFileSync(path.join(outDir, file), ['id\timage\tcaption\turl', ...lines].join('\n') + '\n');
  };
  write('source.tsv', src, 'en');
  write('target.tsv', tgt, 'zh');
  fs.copyFileSync(path.join(setDir, 'truth.tsv'), path.join(outDir, 'truth.tsv'));
  const link = path.join(outDir, 'images');
  if (!fs.existsSync(link)) fs.symlinkSync(path.resolve(setDir, 'images'), link, 'dir');
  // the held-out third of the sources, drawn with its own stream so the captions above do not depend on it
  const hr = mulberry32(seed ^ 0x9e3779b9);
  const sources = src.map((r) => r.id);
  const heldOut = new Set(sources.filter(() => hr() < 1 / 3));
  return { dir: outDir, photoEn, photoZh, truth: new Map(truthRows.map((t) => [t.source_id, t.target_id])), heldOut, sources };
}

const squash = (s: string) => s.replace(/\s+/g, '');

export interface NewsCaptionFigures {
  sourcesWithCounterpart: number;
  /** Emitted caption pairs, and those whose images are a true pair. */
  emitted: number;
  emittedCorrect: number;
  imagePrecision: number | null;
  coverage: number;
  /** Emitted sentence pairs of correct image matches; of those, holding the photo's sentences on both sides / exactly them. */
  sentencePairs: number;
  holds: number;
  exact: number;
  holdsShare: number | null;
  exactShare: number | null;
  /** Correct image matches that emitted nothing (refused: no sentence pair clearly better and the caption pair failing alone). */
  correctRefused: number;
}

/** The figures of one part of the set (`part` = source ids to count) from the pairing stage's stored decisions. */
export async function scoreNewsCaptions(bank: Bank, set: NewsCaptionSet, part: (sourceId: string) => boolean): Promise<NewsCaptionFigures> {
  const repo = bank.repo(PairsRepo);
  const pairs = [...(await repo.list({ limit: 1_000_000 })), ...(await repo.list({ emitted: false, limit: 1_000_000 }))];
  const sp = bank.repo(SentencePairsRepo);
  const ext = new Map<number, string>();
  const extOf = async (id: number) => {
    let e = ext.get(id);
    if (e === undefined) ext.set(id, (e = (await bank.items.byId(id))!.extId));
    return e;
  };
  const f = { emitted: 0, emittedCorrect: 0, sentencePairs: 0, holds: 0, exact: 0, correctRefused: 0 };
  const covered = new Set<string>();
  for (const p of pairs) {
    const s = await extOf(p.sourceItemId);
    if (!part(s)) continue;
    const t = await extOf(p.targetItemId);
    const correct = set.truth.get(s) === t;
    if (!p.emitted) {
      if (correct && p.inliers !== null) f.correctRefused++;
      continue;
    }
    f.emitted++;
    if (!correct) continue;
    f.emittedCorrect++;
    covered.add(s);
    const en = squash(set.photoEn.get(s)!);
    const zh = squash(set.photoZh.get(t)!);
    for (const row of await sp.ofPair(p.id)) {
      if (!row.emitted) continue;
      f.sentencePairs++;
      const holds = squash(row.en).includes(en) && squash(row.zh).includes(zh);
      if (holds) f.holds++;
      if (squash(row.en) === en && squash(row.zh) === zh) f.exact++;
    }
  }
  const withCp = set.sources.filter((s) => part(s) && set.truth.has(s)).length;
  const r = (a: number, b: number) => (b ? Math.round((a / b) * 10000) / 10000 : null);
  return {
    sourcesWithCounterpart: withCp,
    ...f,
    imagePrecision: r(f.emittedCorrect, f.emitted),
    coverage: r(covered.size, withCp) ?? 0,
    holdsShare: r(f.holds, f.sentencePairs),
    exactShare: r(f.exact, f.sentencePairs),
  };
}
