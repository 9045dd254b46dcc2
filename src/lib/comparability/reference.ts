// The null margin's reference captions, indexed (issue 34, round 4). The margin (margin.ts) scores every new caption
// or sentence text against the 64 reference captions of the other language; scored one by one through the full
// C-measure, that made the pair stage 5–6× as costly. Here the same numbers come cheaper, exactly:
//   - each reference caption's terms and TF-IDF weights are computed once (again only when the IDF table changes),
//     and a text's own once per text instead of once per reference;
//   - for each term of a text, the reference terms it links to are found once per term (memoised), through an
//     inverted index over the references' WordNet / gloss concepts: a link (ConceptSpace.computeLink) needs a shared
//     concept, or both words naming people, so only reference terms that share one are looked up at all;
//   - a reference that no term of the text links to has fc = fcov = 0, as the full computation gives it; one that
//     does goes through the same greedy choice (measure.ts chooseLinks) with its candidate links in the same order.
// `NullMargin.chanceLevelFull` computes d through the full C-measure; a test holds the two equal on generated captions.
import type { Analysis } from './analyze.js';
import type { IdfSource } from './idf.js';
import { LinkCandidates, chooseLinks, coverage, weightedTerms, type ConceptSet, type ConceptSpace, type Link, type LinkInfo, type WeightedTerms } from './measure.js';

type Lang = 'en' | 'zh';
/** C of an English and a Chinese caption given their content features (fc, fcov); entities and length are its own. */
export type FinishC = (en: Analysis, zh: Analysis, fc: number, fcov: number) => number;

/** A link of a text's term into the references: which reference, which of its terms (index in its weighted terms). */
interface RefLink {
  ref: number;
  term: number;
  link: LinkInfo;
}

/**
 * A text's links into the references, gathered once per text: entry k links English term i[k] and Chinese term j[k]
 * (indices among each side's weighted terms); each reference's entries form a list from head[ref] through next[k]
 * (-1 ends it), in the order added.
 */
class TextLinks {
  readonly i: number[] = [];
  readonly j: number[] = [];
  readonly link: LinkInfo[] = [];
  readonly next: number[] = [];
  readonly head: Int32Array;
  private readonly tail: Int32Array;
  constructor(refs: number) {
    this.head = new Int32Array(refs).fill(-1);
    this.tail = new Int32Array(refs).fill(-1);
  }
  add(ref: number, i: number, j: number, link: LinkInfo): void {
    const k = this.i.length;
    this.i.push(i);
    this.j.push(j);
    this.link.push(link);
    this.next.push(-1);
    if (this.head[ref]! < 0) this.head[ref] = k;
    else this.next[this.tail[ref]!] = k;
    this.tail[ref] = k;
  }
}

/** The `n` highest values offered so far (n is small: the margin's top K). */
class TopValues {
  private readonly values: number[] = [];
  constructor(
    private readonly n: number,
    initial: number[],
  ) {
    for (const v of initial) this.offer(v);
  }
  get full(): boolean {
    return this.values.length >= this.n;
  }
  /** The lowest of the n highest (meaningful when full). */
  get lowest(): number {
    return this.values[this.values.length - 1]!;
  }
  offer(v: number): void {
    if (this.full && v <= this.lowest) return;
    let at = this.values.length;
    while (at > 0 && this.values[at - 1]! < v) at--;
    this.values.splice(at, 0, v);
    if (this.values.length > this.n) this.values.pop();
  }
}

/** Reference terms by concept: those with the concept among their own, among their broader ones, and the people words. */
class ConceptIndex {
  readonly own = new Map<number, Set<string>>();
  readonly up = new Map<number, Set<string>>();
  readonly person = new Set<string>();

  add(term: string, sets: ConceptSet[]): void {
    const put = (m: Map<number, Set<string>>, k: number) => {
      let s = m.get(k);
      if (!s) m.set(k, (s = new Set()));
      s.add(term);
    };
    for (const c of sets) {
      for (const k of c.own.keys()) put(this.own, k);
      for (const k of c.up.keys()) put(this.up, k);
      if (c.person) this.person.add(term);
    }
  }

  /** Reference terms that share a concept with a term of these concept sets the way a link can (a superset of links). */
  candidates(sets: ConceptSet[]): Set<string> {
    const out = new Set<string>();
    const take = (s: Set<string> | undefined) => {
      if (s) for (const t of s) out.add(t);
    };
    for (const c of sets) {
      for (const k of c.own.keys()) {
        take(this.own.get(k));
        take(this.up.get(k));
      }
      for (const k of c.up.keys()) take(this.own.get(k));
      if (c.person) take(this.person);
    }
    return out;
  }
}

export class ReferenceIndex {
  /** Where each distinct reference term occurs: (reference, index among its weighted terms). */
  private readonly occurrences = new Map<string, Array<{ ref: number; term: number }>>();
  private readonly concepts = new ConceptIndex();
  /** A text's term → its links into the references, ordered by reference, then reference term. */
  private readonly rows = new Map<string, RefLink[]>();
  private weighted: WeightedTerms[] = [];
  private weightedAt: number | null = null;
  private readonly buffers = [new Float64Array(64), new Float64Array(64), new Float64Array(64)];
  private readonly queryLang: Lang;

  constructor(
    private readonly space: ConceptSpace,
    private readonly idf: IdfSource,
    private readonly refLang: Lang,
    private readonly refs: readonly Analysis[],
    private readonly finish: FinishC,
    /** finish() never decreases as fc or fcov grow (weights ≥ 0): references may be skipped by their upper bound. */
    private readonly bounded: boolean,
  ) {
    this.queryLang = refLang === 'en' ? 'zh' : 'en';
    this.refs.forEach((b, r) => {
      // distinct terms in first-occurrence order, as weightedTerms lists them
      [...new Set(b.tokens)].forEach((term, i) => {
        let occ = this.occurrences.get(term);
        if (!occ) {
          this.occurrences.set(term, (occ = []));
          this.concepts.add(term, space.conceptSets(term, refLang));
        }
        occ.push({ ref: r, term: i });
      });
    });
  }

  /**
   * C of a text of the other language against the reference captions that can be among its `top` highest: every
   * reference's C when `top` covers them all; else at least `top` values whose `top` highest are those of all references.
   * A reference whose C cannot reach the `top`-th highest found (its upper bound, upperBound, is below it) is left out.
   */
  scores(a: Analysis, top: number): number[] {
    const refW = this.refWeights();
    const Q = weightedTerms(a.tokens, this.queryLang, this.idf);
    const links = Q.norm ? this.linksOf(Q) : null;
    const out: number[] = [];
    const linked: number[] = [];
    const bounds = new Float64Array(this.refs.length);
    for (let r = 0; r < this.refs.length; r++) {
      // no link: fc = fcov = 0, as the full computation gives them
      if (!links || links.head[r]! < 0 || !refW[r]!.norm) out.push(this.c(a, r, 0, 0));
      else {
        linked.push(r);
        bounds[r] = this.bounded ? this.upperBound(a, Q, refW[r]!, links, r) : Infinity;
      }
    }
    // highest bound first; stop when the top-th highest C found is above every bound left
    linked.sort((x, y) => bounds[y]! - bounds[x]!);
    const best = new TopValues(top, out);
    for (const r of linked) {
      if (best.full && bounds[r]! < best.lowest) break;
      const [E, Z] = this.queryLang === 'en' ? [Q, refW[r]!] : [refW[r]!, Q];
      const { fc, fcov } = chooseLinks(this.space.opts.multiLink, E, Z, this.candidates(E, Z, links!, r), false);
      const c = this.c(a, r, fc, fcov);
      out.push(c);
      best.offer(c);
    }
    return out;
  }

  /**
   * The chosen links of the text with each of the `top` references it scores highest with (ties in reference order):
   * the chance pairs behind its chance level, as the full C-measure links them. Every reference is scored (no bound).
   */
  topLinks(a: Analysis, top: number): Link[][] {
    const refW = this.refWeights();
    const Q = weightedTerms(a.tokens, this.queryLang, this.idf);
    const links = Q.norm ? this.linksOf(Q) : null;
    const scored: Array<{ c: number; links: Link[] }> = [];
    for (let r = 0; r < this.refs.length; r++) {
      if (!links || links.head[r]! < 0 || !refW[r]!.norm) {
        scored.push({ c: this.c(a, r, 0, 0), links: [] });
        continue;
      }
      const [E, Z] = this.queryLang === 'en' ? [Q, refW[r]!] : [refW[r]!, Q];
      const chosen = chooseLinks(this.space.opts.multiLink, E, Z, this.candidates(E, Z, links, r), true);
      scored.push({ c: this.c(a, r, chosen.fc, chosen.fcov), links: chosen.links });
    }
    return scored
      .sort((x, y) => y.c - x.c)
      .slice(0, top)
      .map((x) => x.links);
  }

  /** C of the text and reference r given their content features. */
  private c(a: Analysis, r: number, fc: number, fcov: number): number {
    return this.queryLang === 'en' ? this.finish(a, this.refs[r]!, fc, fcov) : this.finish(this.refs[r]!, a, fc, fcov);
  }

  /** The candidate links of the text with reference r in the order the full scan lists them (English term, then Chinese). */
  private candidates(E: WeightedTerms, Z: WeightedTerms, links: TextLinks, r: number): LinkCandidates {
    const ks: number[] = [];
    for (let k = links.head[r]!; k >= 0; k = links.next[k]!) ks.push(k);
    // an English text's links come in scan order already; a Chinese text's terms are the scan's inner loop
    if (this.queryLang === 'zh') ks.sort((x, y) => links.i[x]! - links.i[y]! || links.j[x]! - links.j[y]!);
    const cand = new LinkCandidates();
    for (const k of ks) {
      const i = links.i[k]!;
      const j = links.j[k]!;
      cand.push(i, j, E.w[i]! * Z.w[j]! * links.link[k]!.sim, links.link[k]!);
    }
    return cand;
  }

  /**
   * An upper bound of C from the candidate links without choosing among them: each English term's best link score
   * (the greedy choice takes at most one per English term), each term's best similarity on either side (coverage),
   * raised by a relative 1e-9 so that summing in another order never puts it under the exact value.
   */
  private upperBound(a: Analysis, Q: WeightedTerms, R: WeightedTerms, links: TextLinks, r: number): number {
    const E = this.queryLang === 'en' ? Q : R;
    const Z = this.queryLang === 'en' ? R : Q;
    const bestScore = this.scratch(0, E.terms.length);
    const simE = this.scratch(1, E.terms.length);
    const simZ = this.scratch(2, Z.terms.length);
    for (let k = links.head[r]!; k >= 0; k = links.next[k]!) {
      const i = links.i[k]!;
      const j = links.j[k]!;
      const sim = links.link[k]!.sim;
      const score = E.w[i]! * Z.w[j]! * sim;
      if (score > bestScore[i]!) bestScore[i] = score;
      if (sim > simE[i]!) simE[i] = sim;
      if (sim > simZ[j]!) simZ[j] = sim;
    }
    let dot = 0;
    for (let i = 0; i < E.terms.length; i++) dot += bestScore[i]!;
    const fc = Math.min(1, dot / (E.norm * Z.norm));
    const fcov = Math.min(1, coverage(E.counts, simE), coverage(Z.counts, simZ));
    return this.c(a, r, fc, fcov) * (1 + 1e-9) + 1e-12;
  }

  /** Scratch buffer `which`, its first n values zeroed (coverage reads only as many as it has counts). */
  private scratch(which: number, n: number): Float64Array {
    let buf = this.buffers[which]!;
    if (buf.length < n) this.buffers[which] = buf = new Float64Array(Math.max(n, 2 * buf.length));
    buf.fill(0, 0, n);
    return buf;
  }

  /** The references' weighted terms under the IDF table as it is now. */
  private refWeights(): WeightedTerms[] {
    const version = this.idf.version ?? 0;
    if (this.weightedAt !== version) {
      this.weighted = this.refs.map((b) => weightedTerms(b.tokens, this.refLang, this.idf));
      this.weightedAt = version;
    }
    return this.weighted;
  }

  /** The text's links into the references, by reference (for an English text, in scan order). */
  private linksOf(Q: WeightedTerms): TextLinks {
    const en = this.queryLang === 'en';
    const links = new TextLinks(this.refs.length);
    for (let q = 0; q < Q.terms.length; q++) {
      for (const l of this.row(Q.terms[q]!)) links.add(l.ref, en ? q : l.term, en ? l.term : q, l.link);
    }
    return links;
  }

  /** A text term's links into the references (memoised per term). */
  private row(term: string): RefLink[] {
    let row = this.rows.get(term);
    if (row) return row;
    row = [];
    for (const v of this.concepts.candidates(this.space.conceptSets(term, this.queryLang))) {
      const link = this.queryLang === 'en' ? this.space.simRow(term)(v) : this.space.simRow(v)(term);
      if (link.sim > 0) for (const o of this.occurrences.get(v)!) row.push({ ref: o.ref, term: o.term, link });
    }
    row.sort((x, y) => x.ref - y.ref || x.term - y.term);
    if (this.rows.size > 200_000) this.rows.clear();
    this.rows.set(term, row);
    return row;
  }
}
