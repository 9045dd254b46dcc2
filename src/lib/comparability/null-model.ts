// The null model of a caption pair (issue 34): how much of what two captions share would two captions of the same
// length and vocabulary share by chance? The a-contrario question the match stage asks of its inliers, asked of
// the words.
//
// H0: the Chinese caption is a random caption of its bank (nothing to do with the English one). An English content
// word w then finds a counterpart in it with probability q(w), the share of captions that mention w: the bank's
// document frequency (the IDF table), taken on the English side as the stand-in for "a Chinese caption says w"
// (both banks report the same kind of news), with a prior for small banks (idf.ts `chance`). Each word of the
// English caption is an independent Bernoulli(q) under H0, and a word met carries its surprise −ln q. A word counts
// as met in full when its link is strong (similarity ≥ MIN_EVIDENCE_SIM: a direct gloss or a near synonym), and in
// proportion to its strength below that (`evidence`): a link through a broader concept or a compound's part is weak
// evidence, a word's minor gloss (a rare sense of a common character: 差 "official post" for "station") next to none.
// The statistic is the caption's total surprise s = Σ e·(−ln q) over its met words, e the link's evidence, and its
// chance is the tail probability
//     P_en = P(Σ_i X_i·(−ln q_i) ≥ s),  X_i ~ Bernoulli(q_i) over the caption's distinct content words,
// computed exactly by dynamic programming over s's range. The same from the Chinese side (the English caption
// random, its words' shares in the Chinese bank) gives P_zh. The pair's significance is S = −ln P_en − ln P_zh
// (nats; log10 NFA = −S / ln 10 with one test per side): one shared word frequent in the bank ("man", "dog" in
// captions of people and dogs, "new" in news) between two captions of seven words each is what chance gives
// (P near 1/2 a side); a named entity or three content words aligned are not (P of 10⁻³ a side and less).
// fs = 1 − exp(−S / nullScale) puts S on [0, 1) as the C-measure's other features are.
import type { IdfSource, Lang } from './idf.js';

/** Nats of significance at which fs reaches 1 − 1/e (MeasureOptions.nullScale; chosen on the fit part of the open labelled file). */
export const NULL_SCALE = 8;
/** Steps of the tail computation over [0, s]: a finer grid changes P by well under 1 %. */
const TAIL_STEPS = 200;

export interface Significance {
  /** Tail probability of the English side's surprise under H0, and of the Chinese side's. */
  pEn: number;
  pZh: number;
  /** −ln pEn − ln pZh, in nats. */
  s: number;
  /**
   * The same counting strong links only (similarity ≥ MIN_EVIDENCE_SIM, each whole): is there a real counterpart
   * beyond chance? The com gate (comMinSignificance) asks this; s, with weak links counted in part, says how much is
   * shared (the par score, the sentence choice).
   */
  sStrong: number;
  /** s on [0, 1): 1 − exp(−s / NULL_SCALE). */
  fs: number;
}

export const NO_SIGNIFICANCE: Significance = { pEn: 1, pZh: 1, s: 0, sStrong: 0, fs: 0 };

/**
 * P(Σ X_i·v_i ≥ s) for independent X_i ~ Bernoulli(q_i), v_i = −ln q_i: dynamic programming over the sum, binned on
 * [0, s] with everything at or above s in one absorbing bin. Each value is rounded up to its bin, so P is a little
 * generous to chance (never an overstated significance): the observed words alone always reach s. (Rounded down, as
 * before issue 34's round 2, one word met whose surprise is s could land a bin short of it by floating-point error,
 * v / (v / 200) = 199.999…, and its side's P came out 0: S ≈ 690 nats for one shared word, in 6 % of such pairs.)
 */
export function surpriseTail(q: ArrayLike<number>, s: number): number {
  if (!(s > 0)) return 1;
  const step = s / TAIL_STEPS;
  let dist = new Float64Array(TAIL_STEPS + 1);
  let next = new Float64Array(TAIL_STEPS + 1);
  dist[0] = 1;
  for (let i = 0; i < q.length; i++) {
    const qi = Math.min(1, Math.max(1e-12, q[i]!));
    const shift = Math.ceil(-Math.log(qi) / step);
    next.fill(0);
    for (let b = 0; b <= TAIL_STEPS; b++) {
      const p = dist[b]!;
      if (!p) continue;
      next[b]! += p * (1 - qi);
      next[Math.min(TAIL_STEPS, b + shift)]! += p * qi;
    }
    [dist, next] = [next, dist];
  }
  return Math.min(1, Math.max(0, dist[TAIL_STEPS]!));
}

/** A link this strong or stronger is a counterpart found (a direct gloss or a near synonym): its word's whole surprise
 *  counts. A weaker link (a broader concept, a part of a compound, the head of a word's usual translation, two words
 *  that both name people) counts in proportion to its strength (`evidence`), and a minor gloss (差's 16th, "official
 *  post" for "station", at 0.05) next to nothing. */
export const MIN_EVIDENCE_SIM = 0.5;

/**
 * The share of a met word's surprise a link of this similarity carries: 1 from MIN_EVIDENCE_SIM up, sim / MIN_EVIDENCE_SIM
 * below (issue 34, round 2: links at 0.2–0.4 — boy ~ 小孩 through 男孩's head, descend ~ 跳水 — were no evidence at all,
 * so short captions linked only by them never reached com). The tail below still lets every chance link count whole, so
 * P is, if anything, generous to chance.
 */
export function evidence(sim: number): number {
  return Math.min(1, Math.max(0, sim) / MIN_EVIDENCE_SIM);
}

/**
 * One side's tail probability: its distinct content words, each linked one counted as met with its link's evidence
 * (`strongOnly`: a strong link whole, a weaker one not at all).
 */
export function sideChance(tokens: readonly string[], linked: ReadonlyMap<string, number>, lang: Lang, idf: IdfSource, strongOnly = false): number {
  const words = [...new Set(tokens)];
  // a word met with evidence e: the chance event is "a link this strong or weaker", of probability q^e ≥ q, surprise
  // e·(−ln q) (a weak link is one a random caption often has; at e → 0 it is certain and tells nothing)
  const es = words.map((w) => {
    const e = evidence(linked.get(w) ?? 0);
    return strongOnly ? Math.floor(e) : e;
  });
  const q = words.map((w, i) => idf.chance(lang, w) ** (es[i]! > 0 ? es[i]! : 1));
  let s = 0;
  words.forEach((_, i) => {
    if (es[i]! > 0) s += -Math.log(q[i]!);
  });
  return s > 0 ? surpriseTail(q, s) : 1;
}

/** The pair's significance: both sides' distinct content words, and the linked ones with their best link's similarity. */
export function significance(
  enTerms: readonly string[],
  zhTerms: readonly string[],
  enLinked: ReadonlyMap<string, number>,
  zhLinked: ReadonlyMap<string, number>,
  idf: IdfSource,
  scale = NULL_SCALE,
): Significance {
  if (!enLinked.size || !zhLinked.size) return NO_SIGNIFICANCE;
  const nats = (p: number) => -Math.log(Math.max(p, 1e-300));
  const pEn = sideChance(enTerms, enLinked, 'en', idf);
  const pZh = sideChance(zhTerms, zhLinked, 'zh', idf);
  const s = nats(pEn) + nats(pZh);
  // strong links only: the same as s when every link is strong, nothing when none is
  const strong = (m: ReadonlyMap<string, number>) => [...m.values()].filter((v) => v >= MIN_EVIDENCE_SIM).length;
  const [strongEn, strongZh] = [strong(enLinked), strong(zhLinked)];
  const sStrong =
    !strongEn || !strongZh
      ? 0
      : strongEn === enLinked.size && strongZh === zhLinked.size
        ? s
        : nats(sideChance(enTerms, enLinked, 'en', idf, true)) + nats(sideChance(zhTerms, zhLinked, 'zh', idf, true));
  return { pEn, pZh, s, sStrong, fs: 1 - Math.exp(-s / scale) };
}
