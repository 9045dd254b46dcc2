// Fitting and leave-one-site-out scoring of the extractor's model (src/lib/extraction/model.ts), shared by
// bench/fit-extract.ts (which chooses the setting and writes model-weights.ts) and bench:extract (which reports it).
// A candidate row is a positive when its photo is a labelled photo (URL equal after normalisation) and its cleaned
// caption matches the label (Dice >= 0.8, the README's rule); a row of the same photo under another URL (a mobile
// copy of a labelled photo) that matches the caption is left out of the fit (weight 0): it is neither right nor wrong.
//
// A model names its features (src/lib/extraction/vector.ts); a feature set is a list of names, and a fit may drop
// the features that fewer than `minSites` of its training sites ever show (a weight learnt from one or two sites is
// that site's layout, not a kind). In leave-one-site-out that choice is made inside each fold, from the training
// sites only.
import { againstFeatures, decide, featureVector, pageCandidates, photoIdentity, type PageCandidates } from '../src/lib/extraction/index.js';
import { fitLogistic, predict, type LinearModel } from '../src/lib/extraction/index.js';
import { normaliseImageUrl } from '../src/lib/extraction/index.js';
import { add, adjudicate, byLang, dice, loadDisputes, match, type ByLang, type Page, type PredPair, type Truth } from './extract-data.js';

export interface Prepared {
  page: Page;
  /** The page's truth with bench/extraction-disputes.json applied: what the fit learns from. */
  adj: Truth;
  pc: PageCandidates;
  y: number[];
  w: number[];
  cpuMs: number;
  crashed: boolean;
}

export function labelRows(t: Truth, pc: PageCandidates): { y: number[]; w: number[] } {
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

let disputes: ReturnType<typeof loadDisputes> | null = null;

/**
 * Candidates and features of a page, each row labelled by the page's truth with the disputes applied (a caption the
 * labeller missed is still a caption; figures are reported both ways, the fit learns from the better truth).
 */
export function prepare(page: Page, features?: string[]): Prepared {
  disputes ??= loadDisputes();
  const adj = adjudicate(page.t, disputes);
  const c0 = process.cpuUsage();
  try {
    const pc = pageCandidates(page.buf, { url: page.t.url, features });
    const c = process.cpuUsage(c0);
    return { page, adj, pc, ...labelRows(adj, pc), cpuMs: (c.user + c.system) / 1000, crashed: false };
  } catch (err) {
    process.stderr.write(`${page.t.id}: CRASH ${(err as Error).stack}\n`);
    return { page, adj, pc: { url: page.t.url, lang: page.t.lang, charset: '', anchors: [], rows: [] }, y: [], w: [], cpuMs: 0, crashed: true };
  }
}

/** A feature set: the names a model reads, and the least number of training sites a feature must show on. */
export interface FeatureSet {
  name: string;
  names: string[];
  minSites: number;
}

/** Every prepared page's rows as vectors of one feature set (computed once per set). */
export class Design {
  private readonly rows = new Map<Prepared, number[][]>();
  constructor(readonly set: FeatureSet) {}
  x(p: Prepared): number[][] {
    let v = this.rows.get(p);
    if (!v) this.rows.set(p, (v = p.pc.rows.map((r) => featureVector(r.f, p.pc.lang, this.set.names))));
    return v;
  }
  /** Columns that at least minSites of the pages' sites show (non-zero on some candidate row). */
  supported(pages: Prepared[]): boolean[] {
    const d = this.set.names.length;
    const sites: Set<string>[] = Array.from({ length: d }, () => new Set());
    for (const p of pages) for (const x of this.x(p)) for (let j = 0; j < d; j++) if (x[j] !== 0) sites[j]!.add(p.page.t.site);
    return sites.map((s) => s.size >= this.set.minSites);
  }
}

export function fitOn(design: Design, pages: Prepared[], lambda: number, threshold: number, init?: number[]): LinearModel {
  const keep = design.supported(pages);
  const X: number[][] = [], y: number[] = [], c: number[] = [];
  for (const p of pages) {
    design.x(p).forEach((x, i) => {
      if (!p.w[i]) return;
      X.push(x.map((v, j) => (keep[j] ? v : 0)));
      y.push(p.y[i]!);
      c.push(p.w[i]!);
    });
  }
  const weights = fitLogistic(X, y, { lambda, rowWeights: c, init, nonPositive: againstFeatures(design.set.names) });
  const sites = new Set(pages.map((p) => p.page.t.site));
  // A column no training site shows keeps weight 0 (it is in the list so that the vector layout stays the set's).
  return {
    features: design.set.names,
    weights,
    threshold,
    lambda,
    fittedOn: { featureSet: design.set.name, minSites: design.set.minSites, featuresUsed: keep.filter(Boolean).length, pages: pages.length, sites: sites.size, candidates: X.length, positives: y.filter(Boolean).length },
  };
}

/** The pairs a model gives on a prepared page at a threshold. */
export function pairsOf(design: Design, p: Prepared, m: Pick<LinearModel, 'weights'>, threshold: number): PredPair[] {
  const x = design.x(p);
  return decide(p.pc, (_row, i) => predict(m, x[i]!), threshold).pairs;
}

/**
 * Leave-one-site-out: for each site of `test`, a model fitted on the pages of `pool` from every other site; returns
 * each test page's row probabilities under the model that never saw its site.
 */
export function losoProbabilities(design: Design, pool: Prepared[], test: Prepared[], lambda: number): Map<Prepared, number[]> {
  const init = fitOn(design, pool, lambda, 0.5).weights;
  const out = new Map<Prepared, number[]>();
  const sites = [...new Set(test.map((p) => p.page.t.site))];
  for (const site of sites) {
    const m = fitOn(design, pool.filter((p) => p.page.t.site !== site), lambda, 0.5, init);
    for (const p of test.filter((q) => q.page.t.site === site)) out.set(p, design.x(p).map((x) => predict(m, x)));
  }
  return out;
}

/** Scores pages whose row probabilities are given, at a threshold (against the truth as labelled, or adjudicated). */
export function scoreWith(probs: Map<Prepared, number[]>, threshold: number, adjudicated = false): ByLang {
  const s = byLang();
  for (const [p, pr] of probs) {
    const pairs = decide(p.pc, (_row, i) => pr[i]!, threshold).pairs;
    add(s[p.page.t.lang], adjudicated ? p.adj : p.page.t, pairs);
  }
  return s;
}

/** One site's leave-one-site-out counts. */
export interface SiteScore {
  site: string;
  lang: 'en' | 'zh';
  predicted: number;
  truth: number;
  matched: number;
}

export function perSite(probs: Map<Prepared, number[]>, threshold: number, adjudicated = false): SiteScore[] {
  const sites = new Map<string, SiteScore>();
  for (const [p, pr] of probs) {
    const t = adjudicated ? p.adj : p.page.t;
    const pairs = decide(p.pc, (_row, i) => pr[i]!, threshold).pairs;
    const s = sites.get(`${t.lang}|${t.site}`) ?? { site: t.site, lang: t.lang, predicted: 0, truth: 0, matched: 0 };
    s.predicted += pairs.length;
    s.truth += t.pairs.length;
    s.matched += match(t, pairs).usedP.size;
    sites.set(`${t.lang}|${t.site}`, s);
  }
  return [...sites.values()];
}

/**
 * How the figure spreads over sites, per language: of the sites where the extractor gave anything, how many have
 * precision under 0.8 (and under 0.5); of the sites with labelled pairs, how many have F1 under 0.8, and the mean
 * per-site F1 (every site counts once, whatever its number of photos).
 */
export function spread(sites: SiteScore[]) {
  const out: Record<string, unknown> = {};
  for (const lang of ['en', 'zh'] as const) {
    const mine = sites.filter((s) => s.lang === lang);
    const withPred = mine.filter((s) => s.predicted > 0);
    const precision = (s: SiteScore) => s.matched / s.predicted;
    const withTruth = mine.filter((s) => s.truth > 0);
    const f1 = (s: SiteScore) => (s.predicted + s.truth ? (2 * s.matched) / (s.predicted + s.truth) : 1);
    out[lang] = {
      sites: mine.length,
      sitesPredicting: withPred.length,
      precisionUnder08: withPred.filter((s) => precision(s) < 0.8).length,
      precisionUnder05: withPred.filter((s) => precision(s) < 0.5).length,
      sitesWithPairs: withTruth.length,
      f1Under08: withTruth.filter((s) => f1(s) < 0.8).length,
      meanSiteF1: withTruth.length ? +(withTruth.reduce((a, s) => a + f1(s), 0) / withTruth.length).toFixed(4) : null,
      falseOnEmptySites: mine.filter((s) => s.truth === 0 && s.predicted > 0).length,
    };
  }
  return out;
}
