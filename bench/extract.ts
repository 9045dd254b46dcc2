// bench:extract — caption extraction against every extraction set of ../shared/data (extraction-*/truth.jsonl).
// Prints ONE JSON line on stdout with, per set and per language and for all sets together:
//   - whole: precision/recall/F1 of the shipped extractor on the pages as a whole (as `capbridge extract` runs);
//   - loso: leave-one-site-out: each site's pages scored by an extractor that learnt nothing from that site;
//   - credits: labelled captions that carry a credit, and how many got it separated (matched pair, Dice >= 0.5);
//   - adjudicated: the same with bench/extraction-disputes.json applied.
// "sets" and "all" count every page; "dev" and "heldOut" split them by the held-out group of sites (extract-data.ts
// heldOutSites: ~20 % of the sites, seeded, stratified by language), which development decisions never look at.
// CPU ms per page (p50/p95/max, a second run of each page so that start-up does not count) and crashes. Options:
//   --dev         leave the held-out sites out altogether (what development runs use)
//   --errors      per-page misses of the leave-one-site-out run on stderr (of the development sites only, unless --final)
//   --final       include the held-out sites in --errors
//   --whole       with --errors: the shipped extractor's misses instead (what a private set of new sites, scored on
//                 its own, measures: its "loso" is then a refit on that set's other sites, not the shipped model)
//   --only=ID     pages whose id contains ID
import os from 'node:os';
import { decide, shippedModel, type ExplainedCandidate, type ExtractedPair } from '../src/lib/extraction/index.js';
import { predict } from '../src/lib/extraction/index.js';
import { normaliseImageUrl } from '../src/lib/extraction/index.js';
import { add, adjudicate, byLang, dice, figures, heldOutSites, loadAll, loadDisputes, match, percentile, type ByLang, type Truth } from './extract-data.js';
import { Design, fitOn, losoProbabilities, perSite, prepare, spread } from './extract-fit.js';

const showErrors = process.argv.includes('--errors');
const final = process.argv.includes('--final');
const devOnly = process.argv.includes('--dev');
const wholeErrors = process.argv.includes('--whole');
const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7);

function printErrors(t: Truth, pred: ExtractedPair[], explain: ExplainedCandidate[]): void {
  const { usedP, usedQ } = match(t, pred);
  const creditMiss = [...usedP].filter(([i, j]) => t.pairs[j]!.credit && !(pred[i]!.credit && dice(pred[i]!.credit!, t.pairs[j]!.credit!) >= 0.5));
  if (usedP.size === pred.length && usedQ.size === t.pairs.length && !creditMiss.length) return;
  process.stderr.write(`== ${t.id} ${t.url}\n`);
  for (const [i, j] of creditMiss) process.stderr.write(`  CREDIT ${JSON.stringify(pred[i]!.credit ?? null)} labelled ${JSON.stringify(t.pairs[j]!.credit)} | ${pred[i]!.caption.slice(0, 80)}\n`);
  const why = (url: string, all = false) => {
    const u = normaliseImageUrl(url, t.url);
    for (const e of explain.filter((x) => normaliseImageUrl(x.image_url, t.url) === u).sort((a, b) => b.total - a.total).slice(0, all ? 6 : 1)) {
      process.stderr.write(`       ${e.total.toFixed(2)} ${e.source}: ${JSON.stringify(e.points)} ${all ? e.text.slice(0, 80) : ''}\n`);
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

interface Tally {
  whole: ByLang;
  loso: ByLang;
  adjudicated: ByLang;
  losoAdjudicated: ByLang;
}
const tally = (): Tally => ({ whole: byLang(), loso: byLang(), adjudicated: byLang(), losoAdjudicated: byLang() });

function report(t: Tally) {
  const out: Record<string, unknown> = {};
  for (const lang of ['en', 'zh'] as const) {
    if (!t.whole[lang].pages) continue;
    out[lang] = {
      whole: figures(t.whole[lang]),
      loso: figures(t.loso[lang]),
      credits: { labelled: t.whole[lang].credits, separated: t.whole[lang].creditsSeparated },
      adjudicated: figures(t.adjudicated[lang]),
      losoAdjudicated: figures(t.losoAdjudicated[lang]),
    };
  }
  return out;
}

function main(): void {
  const everyPage = loadAll();
  const held = heldOutSites(everyPage);
  const disputes = loadDisputes();
  const prepared = everyPage.filter((p) => !(devOnly && held.has(p.t.site))).map((p) => prepare(p));
  const devPool = prepared.filter((p) => !held.has(p.page.t.site));
  const shipped = shippedModel();
  // Leave-one-site-out: each site scored by the shipped setting fitted on every other site of the pool (with
  // --dev the development sites only); the held-out sites by the shipped setting fitted on the development sites.
  const scored = prepared.filter((p) => !only || p.page.t.id.includes(only));
  const design = new Design({ name: String(shipped.fittedOn?.featureSet ?? 'shipped'), names: shipped.features, minSites: Number(shipped.fittedOn?.minSites ?? 0) });
  const loso = losoProbabilities(design, prepared, scored, shipped.lambda);
  const devModel = fitOn(design, devPool, shipped.lambda, shipped.threshold);
  const sets = new Map<string, Tally>();
  const all = tally(), dev = tally(), heldOut = tally(), heldOutDevModel = byLang();
  const cpuTimes: number[] = [];
  let crashes = 0;
  let slowest = { id: '', cpuMs: 0 };
  for (const p of scored) {
    const t = p.page.t;
    const isHeld = held.has(t.site);
    // Timing: the page again (candidates, features, decision), so that module loading and JIT warm-up do not count.
    const c0 = process.cpuUsage();
    const again = prepare(p.page);
    const r = decide(again.pc, (row) => predict(shipped, row.x), shipped.threshold, showErrors);
    const c = process.cpuUsage(c0);
    const cpuMs = (c.user + c.system) / 1000;
    cpuTimes.push(cpuMs);
    if (cpuMs > slowest.cpuMs) slowest = { id: t.id, cpuMs: Math.round(cpuMs) };
    if (p.crashed) crashes++;
    const pr = loso.get(p)!;
    const lp = decide(p.pc, (_row, i) => pr[i]!, shipped.threshold).pairs;
    const dx = design.x(p);
    if (!sets.has(p.page.set)) sets.set(p.page.set, tally());
    for (const x of [all, sets.get(p.page.set)!, isHeld ? heldOut : dev]) {
      add(x.whole[t.lang], t, r.pairs);
      add(x.loso[t.lang], t, lp);
      add(x.adjudicated[t.lang], adjudicate(t, disputes), r.pairs);
      add(x.losoAdjudicated[t.lang], adjudicate(t, disputes), lp);
    }
    if (isHeld) add(heldOutDevModel[t.lang], t, decide(p.pc, (_row, i) => predict(devModel, dx[i]!), shipped.threshold).pairs);
    if (showErrors && (!isHeld || final)) {
      const le = wholeErrors ? r : decide(p.pc, (_row, i) => pr[i]!, shipped.threshold, true);
      printErrors(t, le.pairs, le.explain ?? []);
    }
  }
  const out: Record<string, unknown> = {
    bench: 'extract',
    method: `logistic regression (lambda ${shipped.lambda}, threshold ${shipped.threshold}, ${shipped.features.length} features)`,
    sets: Object.fromEntries([...sets].map(([k, v]) => [k, report(v)])),
    all: report(all),
    dev: { ...report(dev), losoSpread: spread(perSite(new Map([...loso].filter(([p]) => !held.has(p.page.t.site))), shipped.threshold)) },
    heldOut: {
      note: 'seen: round 1 of issue 31 scored these sites twice and fixed a kind found there; not a clean unseen figure',
      sites: [...held].sort(),
      ...report(heldOut),
      fittedOnDevSitesOnly: { en: figures(heldOutDevModel.en), zh: figures(heldOutDevModel.zh) },
    },
    shippedFittedOn: shipped.fittedOn,
    disputes: disputes.length,
    pages: scored.length,
    crashes,
    cpuMsPerPage: { p50: percentile(cpuTimes, 0.5), p95: percentile(cpuTimes, 0.95), max: +Math.max(0, ...cpuTimes).toFixed(1) },
    slowestPage: slowest,
  };
  Object.assign(out, { date: new Date().toISOString(), cpu: os.cpus()[0]?.model.trim() ?? 'unknown', cores: os.cpus().length, loadavg: os.loadavg().map((x) => +x.toFixed(2)) });
  process.stdout.write(JSON.stringify(out) + '\n');
}

main();
