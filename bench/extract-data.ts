// The extraction sets of ../shared/data (every folder extraction-* with a truth.jsonl), the README's match rules,
// the figures, and the split into development sites and held-out sites. Shared by bench:extract and the model's
// fitting script (bench/fit-extract.ts).
//
// Match rules (extraction-news README): image URLs equal after normalisation (resolved, scheme/host lower-cased,
// fragment dropped, trailing empty "?" ignored) and caption char-bigram Dice >= 0.8 after NFKC, lower case,
// punctuation (P*) removed and whitespace collapsed; one-to-one matching, best Dice first.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { normaliseImageUrl } from '../src/lib/extraction/index.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** ../shared/data beside the repository (or beside the worktrees' folder, for a worktree under /work/wt-NAME). */
export function sharedData(): string {
  return (
    process.env.CAPBRIDGE_SHARED_DATA ??
    [path.resolve(repoRoot, '..', 'shared', 'data'), path.resolve(repoRoot, '..', '..', 'shared', 'data')].find((d) => fs.existsSync(d)) ??
    path.resolve(repoRoot, '..', 'shared', 'data')
  );
}

export interface TruthPair {
  image_url: string;
  caption: string;
  credit?: string;
}
export interface Truth {
  id: string;
  file: string;
  url: string;
  lang: 'en' | 'zh';
  site: string;
  pairs: TruthPair[];
}
export interface Page {
  set: string;
  t: Truth;
  buf: Buffer;
}
export interface PredPair {
  image_url: string;
  caption: string;
  credit?: string;
}

/** Every extraction set under the shared data folder, in name order. */
export function extractionSets(dir = sharedData()): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((d) => d.startsWith('extraction-') && fs.existsSync(path.join(dir, d, 'truth.jsonl')))
    .sort();
}

export function loadSet(name: string, only?: string, dir = sharedData()): Page[] {
  const root = path.join(dir, name);
  return fs
    .readFileSync(path.join(root, 'truth.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Truth)
    .filter((t) => !only || t.id.includes(only))
    .map((t) => ({ set: name, t, buf: fs.readFileSync(path.join(root, 'pages', path.basename(t.file))) }));
}

export function loadAll(only?: string): Page[] {
  return extractionSets().flatMap((s) => loadSet(s, only));
}

export function normCaption(s: string): string {
  return s.normalize('NFKC').toLowerCase().replace(/\p{P}/gu, '').replace(/\s+/g, ' ').trim();
}

export function dice(a: string, b: string): number {
  const x = [...normCaption(a)], y = [...normCaption(b)];
  if (x.length < 2 || y.length < 2) return x.join('') === y.join('') ? 1 : 0;
  const grams = new Map<string, number>();
  for (let i = 0; i + 1 < x.length; i++) {
    const g = x[i]! + x[i + 1]!;
    grams.set(g, (grams.get(g) ?? 0) + 1);
  }
  let inter = 0;
  for (let i = 0; i + 1 < y.length; i++) {
    const g = y[i]! + y[i + 1]!;
    const n = grams.get(g) ?? 0;
    if (n > 0) {
      inter++;
      grams.set(g, n - 1);
    }
  }
  return (2 * inter) / (x.length - 1 + y.length - 1);
}

/** One-to-one matching of predictions to truth: equal URLs and Dice >= 0.8, best Dice first. */
export function match(t: Truth, pred: PredPair[]): { usedP: Map<number, number>; usedQ: Set<number> } {
  const edges: { p: number; q: number; d: number }[] = [];
  const truthUrls = t.pairs.map((q) => normaliseImageUrl(q.image_url, t.url));
  pred.forEach((p, i) => {
    const pu = normaliseImageUrl(p.image_url, t.url);
    t.pairs.forEach((q, j) => {
      if (pu !== truthUrls[j]) return;
      const d = dice(p.caption, q.caption);
      if (d >= 0.8) edges.push({ p: i, q: j, d });
    });
  });
  edges.sort((a, b) => b.d - a.d);
  const usedP = new Map<number, number>(), usedQ = new Set<number>();
  for (const e of edges) {
    if (usedP.has(e.p) || usedQ.has(e.q)) continue;
    usedP.set(e.p, e.q);
    usedQ.add(e.q);
  }
  return { usedP, usedQ };
}

export interface Score {
  pages: number;
  pred: number;
  truth: number;
  matched: number;
  credits: number;
  creditsSeparated: number;
}
export const zero = (): Score => ({ pages: 0, pred: 0, truth: 0, matched: 0, credits: 0, creditsSeparated: 0 });

export function add(s: Score, t: Truth, pred: PredPair[]): void {
  const { usedP } = match(t, pred);
  s.pages++;
  s.pred += pred.length;
  s.truth += t.pairs.length;
  s.matched += usedP.size;
  for (const q of t.pairs) if (q.credit) s.credits++;
  for (const [i, j] of usedP) {
    const q = t.pairs[j]!;
    if (q.credit && pred[i]!.credit && dice(pred[i]!.credit!, q.credit) >= 0.5) s.creditsSeparated++;
  }
}

export function figures(s: Score) {
  const p = s.pred ? s.matched / s.pred : 0;
  const r = s.truth ? s.matched / s.truth : 0;
  const f = p + r ? (2 * p * r) / (p + r) : 0;
  return { pages: s.pages, predicted: s.pred, truth: s.truth, matched: s.matched, precision: +p.toFixed(4), recall: +r.toFixed(4), f1: +f.toFixed(4) };
}

/** Per-language scores keyed "en"/"zh". */
export type ByLang = Record<'en' | 'zh', Score>;
export const byLang = (): ByLang => ({ en: zero(), zh: zero() });

// ---- held-out sites

function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (const ch of s) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * A seeded group of about `share` of the sites, stratified by language (the language of most of a site's pages) and
 * by whether the site has any labelled pair: in each stratum the sites are ordered by a hash of (seed, site) and the
 * first round(share * n) are held out. The model is fitted and chosen without them; they are scored at the end.
 */
export function heldOutSites(pages: Page[], seed = 31, share = 0.2): Set<string> {
  const info = new Map<string, { en: number; zh: number; pairs: number }>();
  for (const p of pages) {
    const i = info.get(p.t.site) ?? { en: 0, zh: 0, pairs: 0 };
    i[p.t.lang]++;
    i.pairs += p.t.pairs.length;
    info.set(p.t.site, i);
  }
  const strata = new Map<string, string[]>();
  for (const [site, i] of info) {
    const key = `${i.zh > i.en ? 'zh' : 'en'}|${i.pairs > 0}`;
    strata.set(key, [...(strata.get(key) ?? []), site]);
  }
  const out = new Set<string>();
  for (const sites of strata.values()) {
    sites.sort((a, b) => fnv(`${seed}:${a}`) - fnv(`${seed}:${b}`) || (a < b ? -1 : 1));
    for (const s of sites.slice(0, Math.round(share * sites.length))) out.add(s);
  }
  return out;
}

// ---- disputed labels (bench/extraction-disputes.json)

export interface Dispute {
  id: string;
  action: 'add' | 'replace' | 'remove';
  image_url: string;
  caption: string;
  credit?: string;
  labelled?: string;
  why: string;
}

export function loadDisputes(): Dispute[] {
  const file = path.join(repoRoot, 'bench', 'extraction-disputes.json');
  if (!fs.existsSync(file)) return [];
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { disputes: Dispute[] }).disputes;
}

/** The truth with the disputes applied (each entry names where the page prints it, or why a label is wrong). */
export function adjudicate(t: Truth, disputes: Dispute[]): Truth {
  const mine = disputes.filter((d) => d.id === t.id);
  if (!mine.length) return t;
  const same = (d: Dispute, q: TruthPair) => normaliseImageUrl(d.image_url, t.url) === normaliseImageUrl(q.image_url, t.url) && d.labelled === q.caption;
  const pairs = t.pairs
    .filter((q) => !mine.some((d) => d.action === 'remove' && same(d, q)))
    .map((q) => {
      const d = mine.find((x) => x.action === 'replace' && same(x, q));
      return d ? { image_url: q.image_url, caption: d.caption, credit: d.credit } : q;
    });
  for (const d of mine) if (d.action === 'add') pairs.push({ image_url: d.image_url, caption: d.caption, credit: d.credit });
  return { ...t, pairs };
}

export function percentile(xs: number[], q: number): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return +s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!.toFixed(1);
}
