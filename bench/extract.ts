// bench:extract — caption extraction against extraction-news truth (../shared/data/extraction-news).
// Match rules of that set's README: image URLs equal after normalisation (resolved, scheme/host lower-cased,
// fragment dropped, trailing empty "?" ignored) and caption char-bigram Dice >= 0.8 after NFKC, lower case,
// punctuation (P*) removed and whitespace collapsed; one-to-one matching. Reports per language:
//   - precision/recall/F1 on the whole set (as `capbridge extract` runs, profiles where a page's host has one);
//   - leave-one-site-out: each site's pages scored with the rules that did not come from that site (rules.ts
//     `from`), summed per language;
//   - credits: labelled captions that carry a credit, and how many of them got it separated (matched pair whose
//     credit is the labelled one, Dice >= 0.5);
//   - p50/p95/max ms per page, crashes; extraction-dev (16 more zh pages) when present.
// Prints ONE JSON line on stdout. `--errors` lists per-page misses with the winning candidates on stderr;
// `--only=ID` restricts to pages whose id contains ID; `--ablate` disables each rule in turn and prints, per rule,
// the sites whose output it changes (the data behind the rules' `from` lists).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ACCEPT, extractPairs, RULES, type ExplainedCandidate, type ExtractedPair } from '../src/crawler/extract/index.js';
import { normaliseImageUrl } from '../src/crawler/extract/urls.js';
import { loadSites, profileFor } from '../src/crawler/sites.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// ../shared/data beside the repository (or beside the worktrees' folder, for a git worktree under /work/wt/NAME).
const shared =
  process.env.CAPBRIDGE_SHARED_DATA ??
  [path.resolve(repoRoot, '..', 'shared', 'data'), path.resolve(repoRoot, '..', '..', 'shared', 'data')].find((d) => fs.existsSync(d)) ??
  path.resolve(repoRoot, '..', 'shared', 'data');
const showErrors = process.argv.includes('--errors');
const ablate = process.argv.includes('--ablate');
const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7);

interface TruthPair { image_url: string; caption: string; credit?: string }
interface Truth { id: string; file: string; url: string; lang: 'en' | 'zh'; site: string; pairs: TruthPair[] }
interface Page { t: Truth; buf: Buffer }

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

function loadSet(name: string): Page[] {
  const dir = path.join(shared, name);
  if (!fs.existsSync(path.join(dir, 'truth.jsonl'))) return [];
  return fs
    .readFileSync(path.join(dir, 'truth.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Truth)
    .filter((t) => !only || t.id.includes(only))
    .map((t) => ({ t, buf: fs.readFileSync(path.join(dir, 'pages', path.basename(t.file))) }));
}

interface Score { pages: number; pred: number; truth: number; matched: number; credits: number; creditsSeparated: number }
const zero = (): Score => ({ pages: 0, pred: 0, truth: 0, matched: 0, credits: 0, creditsSeparated: 0 });

/** One-to-one matching of predictions to truth: equal URLs and Dice >= 0.8, best Dice first. */
function match(t: Truth, pred: ExtractedPair[]): { usedP: Map<number, number>; usedQ: Set<number> } {
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
  const usedP = new Map<number, number>(), usedQ = new Set<number>();
  for (const e of edges) {
    if (usedP.has(e.p) || usedQ.has(e.q)) continue;
    usedP.set(e.p, e.q);
    usedQ.add(e.q);
  }
  return { usedP, usedQ };
}

const sites = loadSites();

function run(p: Page, disabled?: ReadonlySet<string>, explain = false) {
  const s0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const done = () => {
    const c = process.cpuUsage(c0);
    return { ms: Number(process.hrtime.bigint() - s0) / 1e6, cpuMs: (c.user + c.system) / 1000 };
  };
  try {
    const res = extractPairs(p.buf, { url: p.t.url, selectors: profileFor(p.t.url, sites)?.captions, disabledRules: disabled, explain });
    return { pairs: res.pairs, explain: res.explain ?? [], ...done(), crashed: false };
  } catch (err) {
    process.stderr.write(`${p.t.id}: CRASH ${(err as Error).stack}\n`);
    return { pairs: [] as ExtractedPair[], explain: [] as ExplainedCandidate[], ...done(), crashed: true };
  }
}

function add(s: Score, t: Truth, pred: ExtractedPair[]) {
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

function figures(s: Score) {
  const p = s.pred ? s.matched / s.pred : 0;
  const r = s.truth ? s.matched / s.truth : 0;
  const f = p + r ? (2 * p * r) / (p + r) : 0;
  return { pages: s.pages, predicted: s.pred, truth: s.truth, matched: s.matched, precision: +p.toFixed(4), recall: +r.toFixed(4), f1: +f.toFixed(4) };
}

function printErrors(t: Truth, pred: ExtractedPair[], explain: ExplainedCandidate[]) {
  const { usedP, usedQ } = match(t, pred);
  const creditMiss = [...usedP].filter(([i, j]) => t.pairs[j]!.credit && !(pred[i]!.credit && dice(pred[i]!.credit!, t.pairs[j]!.credit!) >= 0.5));
  if (usedP.size === pred.length && usedQ.size === t.pairs.length && !creditMiss.length) return;
  process.stderr.write(`== ${t.id} ${t.url}\n`);
  for (const [i, j] of creditMiss) process.stderr.write(`  CREDIT ${JSON.stringify(pred[i]!.credit ?? null)} labelled ${JSON.stringify(t.pairs[j]!.credit)} | ${pred[i]!.caption.slice(0, 80)}\n`);
  const why = (url: string, all = false) => {
    const u = normaliseImageUrl(url, t.url);
    for (const e of explain.filter((x) => normaliseImageUrl(x.image_url, t.url) === u).sort((a, b) => b.total - a.total).slice(0, all ? 6 : 1)) {
      process.stderr.write(`       ${e.total.toFixed(1)} ${e.source}: ${JSON.stringify(e.points)} ${all ? e.text.slice(0, 80) : ''}\n`);
    }
  };
  pred.forEach((p, i) => {
    if (usedP.has(i)) return;
    process.stderr.write(`  FP ${p.image_url.slice(0, 110)}\n     ${p.caption.slice(0, 160)} | ${p.credit ?? ''}\n`);
    why(p.image_url);
  });
  t.pairs.forEach((q, j) => {
    if (usedQ.has(j)) return;
    process.stderr.write(`  FN ${q.image_url.slice(0, 110)}\n     ${q.caption.slice(0, 160)} | ${q.credit ?? ''}\n`);
    why(q.image_url, true);
  });
}

function percentile(xs: number[], q: number): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return +s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!.toFixed(1);
}

/** The rule ids to leave out when scoring a site's pages: those that came from that site. */
function rulesFrom(site: string): Set<string> {
  return new Set(RULES.filter((r) => r.from.includes(site)).map((r) => r.id));
}

interface Dispute { id: string; action: 'add' | 'replace'; image_url: string; caption: string; credit?: string; labelled?: string; why: string }

/** The truth with bench/extraction-disputes.json applied (see that file: each entry names where the page prints it). */
function adjudicate(t: Truth, disputes: Dispute[]): Truth {
  const mine = disputes.filter((d) => d.id === t.id);
  if (!mine.length) return t;
  const pairs = t.pairs.map((q) => {
    const d = mine.find((x) => x.action === 'replace' && normaliseImageUrl(x.image_url, t.url) === normaliseImageUrl(q.image_url, t.url) && x.labelled === q.caption);
    return d ? { image_url: q.image_url, caption: d.caption, credit: d.credit } : q;
  });
  for (const d of mine) if (d.action === 'add') pairs.push({ image_url: d.image_url, caption: d.caption, credit: d.credit });
  return { ...t, pairs };
}

function main(): void {
  const news = loadSet('extraction-news');
  const disputesFile = path.join(repoRoot, 'bench', 'extraction-disputes.json');
  const disputes: Dispute[] = fs.existsSync(disputesFile) ? (JSON.parse(fs.readFileSync(disputesFile, 'utf8')) as { disputes: Dispute[] }).disputes : [];
  const adjudicated: Record<string, Score> = { en: zero(), zh: zero() };
  const dev = loadSet('extraction-dev');
  const base: Record<string, Score> = { en: zero(), zh: zero() };
  const loso: Record<string, Score> = { en: zero(), zh: zero() };
  const times: number[] = [];
  const cpuTimes: number[] = [];
  let crashes = 0;
  let slowest = { id: '', ms: 0 };
  const baseline = new Map<string, ExtractedPair[]>();
  for (const p of news) {
    const r = run(p, undefined, showErrors);
    // Timing: a second run of the same page, so that module loading and JIT warm-up of the first page do not count.
    const r2 = run(p);
    times.push(r2.ms);
    cpuTimes.push(r2.cpuMs);
    if (r2.ms > slowest.ms) slowest = { id: p.t.id, ms: Math.round(r2.ms) };
    if (r.crashed) crashes++;
    baseline.set(p.t.id, r.pairs);
    add(base[p.t.lang]!, p.t, r.pairs);
    add(adjudicated[p.t.lang]!, adjudicate(p.t, disputes), r.pairs);
    const disabled = rulesFrom(p.t.site);
    add(loso[p.t.lang]!, p.t, disabled.size ? run(p, disabled).pairs : r.pairs);
    if (showErrors) printErrors(process.argv.includes('--adjudicated') ? adjudicate(p.t, disputes) : p.t, r.pairs, r.explain);
  }
  // Support: the sites where a rule helps a labelled caption through (points to the winning candidate of a matched
  // pair) or keeps out a candidate that is not a labelled caption (points that take it below the bar). A rule
  // survives leaving site S out when, without S, it is still supported by three sites (the project's standard for
  // a rule) or comes from the HTML standard / a universal convention (no `from` sites).
  const support = new Map<string, Set<string>>();
  const supports = (rule: string, site: string) => {
    if (!support.has(rule)) support.set(rule, new Set());
    support.get(rule)!.add(site);
  };
  for (const p of news) {
    const r = run(p, undefined, true);
    const { usedP } = match(p.t, r.pairs);
    const good = new Set([...usedP.keys()].map((i) => `${r.pairs[i]!.image_url}\u0000${r.pairs[i]!.caption}`));
    const truthUrls = new Set(p.t.pairs.map((q) => normaliseImageUrl(q.image_url, p.t.url)));
    for (const e of r.explain) {
      const won = r.pairs.some((q) => q.image_url === e.image_url && good.has(`${q.image_url}\u0000${q.caption}`));
      for (const [rule, pts] of Object.entries(e.points)) {
        if (pts > 0 && e.total >= ACCEPT && won) supports(rule, p.t.site);
        if (pts < 0 && e.total < ACCEPT && e.total - pts >= ACCEPT && !truthUrls.has(normaliseImageUrl(e.image_url, p.t.url))) supports(rule, p.t.site);
      }
    }
  }
  const bySupport: Record<string, Score> = { en: zero(), zh: zero() };
  for (const p of news) {
    const disabled = new Set(RULES.filter((r) => r.from.length && [...(support.get(r.id) ?? [])].filter((x) => x !== p.t.site).length < 3).map((r) => r.id));
    add(bySupport[p.t.lang]!, p.t, disabled.size ? run(p, disabled).pairs : baseline.get(p.t.id)!);
  }

  const devScore: Record<string, Score> = { en: zero(), zh: zero() };
  for (const p of dev) {
    const r = run(p, undefined, showErrors);
    if (r.crashed) crashes++;
    add(devScore[p.t.lang]!, p.t, r.pairs);
    if (showErrors) printErrors(p.t, r.pairs, r.explain);
  }

  const actsOn = new Map<string, Set<string>>(); // site -> rules whose removal changes that site's output
  if (ablate) {
    // Which sites' output each rule changes: the pages a rule was written from, found by leaving it out.
    for (const rule of RULES) {
      const changed = new Map<string, string>();
      for (const p of news) {
        const a = baseline.get(p.t.id)!;
        const b = run(p, new Set([rule.id])).pairs;
        const ma = match(p.t, a).usedP.size, mb = match(p.t, b).usedP.size;
        if (ma !== mb || a.length !== b.length) changed.set(p.t.site, `${p.t.site}(${mb - ma >= 0 ? '+' : ''}${mb - ma}m,${b.length - a.length >= 0 ? '+' : ''}${b.length - a.length}p)`);
      }
      for (const site of changed.keys()) {
        if (!actsOn.has(site)) actsOn.set(site, new Set());
        actsOn.get(site)!.add(rule.id);
      }
      const listed = [...rule.from].sort().join(',');
      const found = [...changed.keys()].sort().join(',');
      process.stderr.write(`${rule.id.padEnd(28)} ${found === listed ? 'ok  ' : 'DIFF'} without it: ${[...changed.values()].join(' ') || '-'}${found === listed ? '' : `  (from lists: ${listed || '-'})`}\n`);
    }
  }

  // The strictest reading of leave-one-site-out: every rule that changes anything on a site's pages (conventions
  // and the HTML standard included) is left out when scoring that site.
  const strict: Record<string, Score> = { en: zero(), zh: zero() };
  if (ablate) for (const p of news) add(strict[p.t.lang]!, p.t, run(p, actsOn.get(p.t.site) ?? new Set()).pairs);

  const out: Record<string, unknown> = { bench: 'extract', set: 'extraction-news' };
  for (const lang of ['en', 'zh']) {
    const b = base[lang]!;
    out[lang] = {
      ...figures(b),
      leaveOneSiteOut: figures(loso[lang]!),
      leaveOneSiteOutBySupport: figures(bySupport[lang]!),
      ...(ablate ? { leaveOneSiteOutStrict: figures(strict[lang]!) } : {}),
      credits: { labelled: b.credits, separated: b.creditsSeparated },
      adjudicated: { ...figures(adjudicated[lang]!), disputes: disputes.filter((d) => d.id.startsWith(lang)).length },
    };
  }
  if (dev.length) out.dev = { set: 'extraction-dev', zh: figures(devScore.zh!) };
  const pages = news.length + dev.length;
  Object.assign(out, {
    pages,
    crashes,
    // Wall time depends on the machine's other load; CPU time (one thread) is what the page costs.
    msPerPage: { p50: percentile(times, 0.5), p95: percentile(times, 0.95), max: +Math.max(0, ...times).toFixed(1) },
    cpuMsPerPage: { p50: percentile(cpuTimes, 0.5), p95: percentile(cpuTimes, 0.95), max: +Math.max(0, ...cpuTimes).toFixed(1) },
    slowestPage: slowest,
    rules: RULES.length,
    rulesWithSites: RULES.filter((r) => r.from.length).length,
    ruleSupport: Object.fromEntries(RULES.map((r) => [r.id, [...(support.get(r.id) ?? [])].sort().join(',')])),
  });
  Object.assign(out, { date: new Date().toISOString(), cpu: os.cpus()[0]?.model.trim() ?? 'unknown', cores: os.cpus().length, loadavg: os.loadavg().map((x) => +x.toFixed(2)) });
  process.stdout.write(JSON.stringify(out) + '\n');
}

main();
