// The one decision: an L2-regularised logistic regression over the candidate features of features.ts (the
// probability that a candidate is the caption a reader sees for its photo). Its weights are fitted by
// bench/fit-extract.ts on the extraction sets with leave-one-site-out cross-validation, which also chooses the
// regularisation and the acceptance threshold; the result is committed as model-weights.ts beside this file (generated; do not edit).
//
// Why hand-written: the npm logistic regression (ml-logistic-regression 2.0.0) has no intercept, no regularisation
// and fixed-step gradient ascent (50,000 full passes by default); Newton's method (IRLS) with ml-matrix's solver
// converges in ~10 steps and regularisation is what keeps weights of rare features from fitting one site.
import { Matrix, solve } from 'ml-matrix';

export interface LinearModel {
  /** Feature names, in vector order (a model is refused when they differ from the extractor's). */
  features: string[];
  /** Weights per feature, then the intercept last. */
  weights: number[];
  /** Acceptance threshold on the probability. */
  threshold: number;
  /** L2 strength the weights were fitted with. */
  lambda: number;
  /** What it was fitted on (pages, sites, candidates), for the record. */
  fittedOn?: Record<string, unknown>;
}

export function sigmoid(z: number): number {
  return 1 / (1 + Math.exp(-z));
}

export function predict(m: Pick<LinearModel, 'weights'>, x: ArrayLike<number>): number {
  const w = m.weights;
  let z = w[w.length - 1]!;
  for (let i = 0; i < x.length; i++) z += w[i]! * x[i]!;
  return sigmoid(z);
}

export interface FitOptions {
  lambda: number;
  /** Newton steps at most. */
  maxIter?: number;
  /** Start from these weights (a fold of cross-validation starts from the all-data fit). */
  init?: number[];
  /** Weight of each row (default 1). */
  rowWeights?: number[];
  /**
   * Columns whose weight may not rise above 0: evidence that by its meaning speaks only against a caption (interface
   * text, a link to another story, a teaser card). Projected Newton: after each step such a weight is clipped to 0.
   */
  nonPositive?: boolean[];
}

/**
 * Fits weights by Newton's method on the penalised log-likelihood: minimise sum_i c_i * logloss(y_i, p_i) +
 * lambda/2 * |w|^2 (the intercept is not penalised).
 */
export function fitLogistic(X: number[][], y: number[], opts: FitOptions): number[] {
  const n = X.length;
  const d = X[0]?.length ?? 0;
  const D = d + 1;
  const w = opts.init?.length === D ? [...opts.init] : new Array<number>(D).fill(0);
  const c = opts.rowWeights ?? new Array<number>(n).fill(1);
  const maxIter = opts.maxIter ?? 25;
  // Rows are sparse (most features are 0/1 flags that are off): each row's non-zero columns, once.
  const nz = X.map((xi) => {
    const idx: number[] = [];
    for (let j = 0; j < d; j++) if (xi[j] !== 0) idx.push(j);
    return idx;
  });
  for (let iter = 0; iter < maxIter; iter++) {
    const H = new Float64Array(D * D);
    const g = new Float64Array(D);
    for (let i = 0; i < n; i++) {
      const xi = X[i]!;
      const idx = nz[i]!;
      let z = w[d]!;
      for (const j of idx) z += w[j]! * xi[j]!;
      const p = sigmoid(z);
      const r = c[i]! * (p - y[i]!);
      const s = c[i]! * Math.max(p * (1 - p), 1e-9);
      for (let a = 0; a < idx.length; a++) {
        const j = idx[a]!;
        const xj = xi[j]!;
        g[j]! += r * xj;
        const row = j * D;
        const sx = s * xj;
        for (let b = a; b < idx.length; b++) H[row + idx[b]!]! += sx * xi[idx[b]!]!;
        H[row + d]! += sx;
      }
      g[d]! += r;
      H[d * D + d]! += s;
    }
    for (let j = 0; j < D; j++) {
      for (let k = 0; k < j; k++) H[j * D + k] = H[k * D + j]!;
      if (j < d) {
        H[j * D + j]! += opts.lambda;
        g[j]! += opts.lambda * w[j]!;
      } else H[j * D + j]! += 1e-6;
    }
    const Hm = new Matrix(D, D);
    for (let j = 0; j < D; j++) for (let k = 0; k < D; k++) Hm.set(j, k, H[j * D + k]!);
    const step = solve(Hm, Matrix.columnVector([...g]));
    let maxStep = 0;
    for (let j = 0; j < D; j++) {
      const before = w[j]!;
      w[j]! -= step.get(j, 0);
      if (opts.nonPositive?.[j] && w[j]! > 0) w[j] = 0;
      maxStep = Math.max(maxStep, Math.abs(w[j]! - before));
    }
    if (maxStep < 1e-6) break;
  }
  return w;
}
