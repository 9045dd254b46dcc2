// Fitting and leave-one-site-out scoring of the extractor's model (src/lib/extraction/model.ts), shared by
// bench/fit-extract.ts (which chooses the setting and writes model-weights.ts) and bench:extract (which reports it).
// A candidate row is a positive when its photo is a labelled photo (URL equal after normalisation) and its cleaned
// caption matches the label (Dice >= 0.8, the README's rule); a row of the same photo under another URL (a mobile
// copy of a labelled photo) that matches the caption is left out of the fit (weight 0): it is neither right nor wrong.
import { decide, pageCandidates, photoIdentity, type PageCandidates } from '../src/lib/extraction/index.js';
import { fitLogistic, predict, type LinearModel } from '../src/lib/extraction/index.js';
import { FEATURE_NAMES } from '../src/lib/extraction/index.js';
import { normaliseImageUrl } from '../src/lib/extraction/index.js';
import { add, byLang, dice, type ByLang, type Page, type PredPair } from './extract-data.js';

export interface Prepared {
  page: Page;
  pc: PageCandidates;
  y: number[];
  w: number[];
  cpuMs: number;
  crashed: boolean;
}

export function labelRows(page: Page, pc: PageCandidates): { y: number[]; w: number[] } {
  const t = page.t;
  const truth = t.pairs.map((q) => ({ url: normaliseImageUrl(q.image_url, t.url), id: photoIdentity(q.image_url), caption: q.caption }));
  const y: number[] = [], w: number[] = [];
  for (const row of pc.rows) {
    const a = pc.anchors[row.anchor]!;
    const url = normaliseImageUrl(a.url, t.url);
    const cap = row.f.clean!.caption;
    const same = truth.some((q) => q.url === url && dice(cap, q.caption) >= 0.8);
    const copy = !same && truth.some((q) => q.id === photoIdentity(a.url) && dice(cap, q.caption) >= 0.8);
    y.push(same ? 1 : 0);
    w.push(copy ? 0 : 1);
  }
  return { y, w };
}

export function prepare(page: Page): Prepared {
  const c0 = process.cpuUsage();
  try {
    const pc = pageCandidates(page.buf, { url: page.t.url });
    const c = process.cpuUsage(c0);
    return { page, pc, ...labelRows(page, pc), cpuMs: (c.user + c.system) / 1000, crashed: false };
  } catch (err) {
    process.stderr.write(`${page.t.id}: CRASH ${(err as Error).stack}\n`);
    return { page, pc: { url: page.t.url, lang: page.t.lang, charset: '', anchors: [], rows: [] }, y: [], w: [], cpuMs: 0, crashed: true };
  }
}

export function fitOn(pages: Prepared[], lambda: number, threshold: number, init?: number[]): LinearModel {
  const X: number[][] = [], y: number[] = [], c: number[] = [];
  for (const p of pages) {
    p.pc.rows.forEach((r, i) => {
      if (!p.w[i]) return;
      X.push(r.x);
      y.push(p.y[i]!);
      c.push(p.w[i]!);
    });
  }
  const weights = fitLogistic(X, y, { lambda, rowWeights: c, init });
  const sites = new Set(pages.map((p) => p.page.t.site));
  return { features: FEATURE_NAMES, weights, threshold, lambda, fittedOn: { pages: pages.length, sites: sites.size, candidates: X.length, positives: y.filter(Boolean).length } };
}

/** The pairs a model gives on a prepared page at a threshold. */
export function pairsOf(p: Prepared, m: Pick<LinearModel, 'weights'>, threshold: number): PredPair[] {
  return decide(p.pc, (row) => predict(m, row.x), threshold).pairs;
}

/**
 * Leave-one-site-out: for each site of `test`, a model fitted on the pages of `pool` from every other site; returns
 * each test page's row probabilities under the model that never saw its site.
 */
export function losoProbabilities(pool: Prepared[], test: Prepared[], lambda: number): Map<Prepared, number[]> {
  const init = fitOn(pool, lambda, 0.5).weights;
  const out = new Map<Prepared, number[]>();
  const sites = [...new Set(test.map((p) => p.page.t.site))];
  for (const site of sites) {
    const m = fitOn(pool.filter((p) => p.page.t.site !== site), lambda, 0.5, init);
    for (const p of test.filter((q) => q.page.t.site === site)) out.set(p, p.pc.rows.map((r) => predict(m, r.x)));
  }
  return out;
}

/** Scores pages whose row probabilities are given, at a threshold. */
export function scoreWith(probs: Map<Prepared, number[]>, threshold: number): ByLang {
  const s = byLang();
  for (const [p, pr] of probs) {
    const pairs = decide(p.pc, (_row, i) => pr[i]!, threshold).pairs;
    add(s[p.page.t.lang], p.page.t, pairs);
  }
  return s;
}
