// bench:extract — caption extraction against extraction-news truth (../shared/data/extraction-news).
// Match rules of that set's README: image URLs equal after normalisation (resolved, scheme/host lower-cased,
// fragment dropped, trailing empty "?" ignored) and caption char-bigram Dice >= 0.8 after NFKC, lower case,
// punctuation (P*) removed and whitespace collapsed; one-to-one matching. Precision/recall/F1 per language,
// pages per second. Prints ONE JSON line on stdout; `--errors` lists per-page misses on stderr.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractPairs } from '../src/crawler/extract/index.js';
import { normaliseImageUrl } from '../src/crawler/extract/urls.js';
import { loadSites, profileFor } from '../src/crawler/sites.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shared = process.env.CAPBRIDGE_SHARED_DATA ?? path.resolve(repoRoot, '..', 'shared', 'data');
const setDir = path.join(shared, 'extraction-news');
const showErrors = process.argv.includes('--errors');
const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7);

interface TruthPair { image_url: string; caption: string; credit?: string }
interface Truth { id: string; file: string; url: string; lang: 'en' | 'zh'; pairs: TruthPair[] }

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

function main(): void {
  const truth: Truth[] = fs.readFileSync(path.join(setDir, 'truth.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Truth);
  const stats: Record<string, { pred: number; truth: number; matched: number; pages: number }> = {
    en: { pred: 0, truth: 0, matched: 0, pages: 0 },
    zh: { pred: 0, truth: 0, matched: 0, pages: 0 },
  };
  const sites = loadSites();
  let crashes = 0;
  let slowest = { id: '', ms: 0 };
  const t0 = process.hrtime.bigint();
  for (const t of truth) {
    if (only && !t.id.includes(only)) continue;
    const buf = fs.readFileSync(path.join(setDir, t.file.includes('/') ? t.file : path.join('pages', t.file)));
    const s0 = process.hrtime.bigint();
    let pred: { image_url: string; caption: string; credit?: string }[] = [];
    try {
      pred = extractPairs(buf, { url: t.url, selectors: profileFor(t.url, sites)?.captions }).pairs;
    } catch (err) {
      crashes++;
      process.stderr.write(`${t.id}: CRASH ${(err as Error).stack}\n`);
    }
    const ms = Number(process.hrtime.bigint() - s0) / 1e6;
    if (ms > slowest.ms) slowest = { id: t.id, ms: Math.round(ms) };
    const st = stats[t.lang]!;
    st.pages++;
    st.pred += pred.length;
    st.truth += t.pairs.length;
    // One-to-one: candidate (pred, truth) pairs with equal URLs and Dice >= 0.8, best Dice first.
    const edges: { p: number; q: number; d: number }[] = [];
    pred.forEach((p, i) => {
      const pu = normaliseImageUrl(p.image_url, t.url);
      t.pairs.forEach((q, j) => {
        if (pu !== normaliseImageUrl(q.image_url, t.url)) return;
        const d = dice(p.caption, q.caption);
        if (d >= 0.8) edges.push({ p: i, q: j, d });
      });
    });
    edges.sort((a, b) => b.d - a.d);
    const usedP = new Set<number>(), usedQ = new Set<number>();
    for (const e of edges) {
      if (usedP.has(e.p) || usedQ.has(e.q)) continue;
      usedP.add(e.p);
      usedQ.add(e.q);
    }
    st.matched += usedP.size;
    if (showErrors && (usedP.size < pred.length || usedQ.size < t.pairs.length)) {
      process.stderr.write(`== ${t.id} ${t.url}\n`);
      pred.forEach((p, i) => {
        if (!usedP.has(i)) process.stderr.write(`  FP ${p.image_url.slice(0, 110)}\n     ${p.caption.slice(0, 160)} | ${p.credit ?? ''}\n`);
      });
      t.pairs.forEach((q, j) => {
        if (!usedQ.has(j)) process.stderr.write(`  FN ${q.image_url.slice(0, 110)}\n     ${q.caption.slice(0, 160)} | ${q.credit ?? ''}\n`);
      });
    }
  }
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const out: Record<string, unknown> = { bench: 'extract', set: 'extraction-news' };
  for (const [lang, s] of Object.entries(stats)) {
    const p = s.pred ? s.matched / s.pred : 0;
    const r = s.truth ? s.matched / s.truth : 0;
    const f = p + r ? (2 * p * r) / (p + r) : 0;
    out[lang] = { pages: s.pages, predicted: s.pred, truth: s.truth, matched: s.matched, precision: +p.toFixed(4), recall: +r.toFixed(4), f1: +f.toFixed(4) };
  }
  const pages = stats.en!.pages + stats.zh!.pages;
  Object.assign(out, { pages, crashes, seconds: +secs.toFixed(2), pagesPerSecond: +(pages / secs).toFixed(1), slowestPage: slowest });
  Object.assign(out, { date: new Date().toISOString(), cpu: os.cpus()[0]?.model.trim() ?? 'unknown', cores: os.cpus().length });
  process.stdout.write(JSON.stringify(out) + '\n');
}

main();
