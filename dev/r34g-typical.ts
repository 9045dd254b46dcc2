// scratch (issue 34 round 6): candidate per-bank typical values of the specificity factor, from the null margin's
// reference sample, on the labelled file (IDF and sample from the file's fit part or all) and on mining-flickr8k's
// captions (IDF and sample from its two banks); beside them the median raw factor of true pairs.
import { loadConfig } from '../src/config/load.js';
import { addCaptionsToIdf, createScorer, readPairsFile, splitHoldout, ConceptSpace, contentSimilarity, DEFAULT_MEASURE, type Scorer } from '../src/lib/comparability/index.js';
import { miningSet } from './r34g-mining.js';
const { config } = loadConfig({ env: {} });
const k = 0.1;
const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[s.length >> 1]! : NaN; };
function rawFactor(sc: Scorer, links0: { en: string; zh: string; weight: number; sim?: number }[], strong = false): number | null {
  const links = strong ? links0.filter((l) => (l.sim ?? 1) >= 0.5) : links0;
  if (!links.length) return null;
  let s = 0, w = 0;
  for (const l of links) {
    const a = 1 / (1 + k * Math.log(1 + sc.lexicon.zhFor(l.en).length));
    const b = 1 / (1 + k * Math.log(1 + (sc.lexicon.senses(l.zh)?.length ?? 1)));
    s += l.weight * a * b; w += l.weight;
  }
  return w > 0 ? s / w : null;
}
function study(name: string, sc: Scorer, truePairs: Array<[string, string]>, comPairs: Array<[string, string]> = truePairs) {
  const space = new ConceptSpace(sc.lexicon, DEFAULT_MEASURE);
  const ref = (sc.nullMargin as any).ref;
  const ens = ref.en.items, zhs = ref.zh.items;
  const t0 = performance.now();
  const grid: { c: number; f: number | null; w: number }[][] = ens.map((a: any) => zhs.map((b: any) => {
    const r = contentSimilarity(space, a, b, sc.termStats, true, false);
    return { c: r.fc, f: rawFactor(sc, r.links), fs: rawFactor(sc, r.links, true), w: r.links.reduce((s, l) => s + l.weight, 0) };
  }));
  const ms = performance.now() - t0;
  const strongAll = median(grid.flat().filter((x: any) => x.fs !== null).map((x: any) => x.fs));
  const all = grid.flat().filter((x) => x.f !== null).map((x) => x.f!);
  // top K by fc per reference caption, both directions
  const K = 8;
  const top: number[] = [];
  for (let i = 0; i < ens.length; i++) for (const x of [...grid[i]!].sort((p, q) => q.c - p.c).slice(0, K)) if (x.f !== null) top.push(x.f);
  for (let j = 0; j < zhs.length; j++) for (const x of grid.map((row) => row[j]!).sort((p, q) => q.c - p.c).slice(0, K)) if (x.f !== null) top.push(x.f);
  const best1: number[] = [];
  for (let i = 0; i < ens.length; i++) { const x = [...grid[i]!].sort((p, q) => q.c - p.c)[0]!; if (x.f !== null) best1.push(x.f); }
  for (let j = 0; j < zhs.length; j++) { const x = grid.map((row) => row[j]!).sort((p, q) => q.c - p.c)[0]!; if (x.f !== null) best1.push(x.f); }
  const wordSpec = (lang: 'en' | 'zh', w: string, lexOnly: boolean) => {
    const n = lang === 'en' ? sc.lexicon.zhFor(w).length : (sc.lexicon.senses(w)?.length ?? 0);
    if (lexOnly && !n) return null;
    return 1 / (1 + k * Math.log(1 + Math.max(1, n)));
  };
  const vocab = (items: any[], lang: 'en' | 'zh', lexOnly: boolean) => median(items.map((a) => { const v = [...new Set<string>(a.tokens)].map((w) => wordSpec(lang, w, lexOnly)).filter((x): x is number => x !== null); return v.length ? v.reduce((p, q) => p + q, 0) / v.length : NaN; }).filter((x) => !Number.isNaN(x)));
  const vocabIdf = (items: any[], lang: 'en' | 'zh') => median(items.map((a) => { let s = 0, w = 0; for (const t of new Set<string>(a.tokens)) { const x = wordSpec(lang, t, true); if (x === null) continue; const i = sc.termStats.idf(lang, t); s += i * x; w += i; } return w ? s / w : NaN; }).filter((x) => !Number.isNaN(x)));
  const v3 = vocabIdf(ens, 'en') * vocabIdf(zhs, 'zh');
  const comF = comPairs.map(([en, zh]) => rawFactor(sc, sc.score(en, zh).explain.matches)).filter((x): x is number => x !== null);
  const v1 = vocab(ens, 'en', false) * vocab(zhs, 'zh', false), v2 = vocab(ens, 'en', true) * vocab(zhs, 'zh', true);
  const trueF = truePairs.map(([en, zh]) => rawFactor(sc, sc.score(en, zh).explain.matches)).filter((x): x is number => x !== null);
  console.log(`${name.padEnd(24)} refs ${ens.length}/${zhs.length} linked pairs ${all.length}/${ens.length * zhs.length} (${ms.toFixed(0)} ms) median all ${median(all).toFixed(4)} topK ${median(top).toFixed(4)} (${top.length}) best1 ${median(best1).toFixed(4)}  vocab ${v1.toFixed(4)} vocabLex ${v2.toFixed(4)} vocabIdf ${v3.toFixed(4)} strongAll ${strongAll.toFixed(4)} com pairs ${median(comF).toFixed(4)} (${comF.length}) true pairs ${median(trueF).toFixed(4)} (${trueF.length})`);
}
const rows = await readPairsFile('/work/shared/data/comparability/pairs.tsv', { requireLevel: true });
const split = splitHoldout(rows as any, 1 / 3, 15) as any;
for (const [name, part] of [['labelled all', rows], ['labelled fit', split.fit]] as const) {
  if (process.env.ONLY && name !== process.env.ONLY) continue;
  const sc = createScorer(config, {}); addCaptionsToIdf(sc, part as any);
  const lab = name === 'labelled all' ? [] : (part as any[]);
  study(name, sc, lab.filter((r) => r.corpus !== 'xtd10').map((r) => [r.en, r.zh]), lab.filter((r) => r.corpus !== 'xtd10' && r.level === 'com').map((r) => [r.en, r.zh]));
  for (const corpus of ['flickr8k-cn', 'coco-cn']) {
    const sub = (part as any[]).filter((r) => r.corpus === corpus);
    const s2 = createScorer(config, {}); addCaptionsToIdf(s2, sub);
    const lsub = name === 'labelled all' ? [] : sub;
    study(`${name} ${corpus}`, s2, lsub.map((r) => [r.en, r.zh]), lsub.filter((r) => r.level === 'com').map((r) => [r.en, r.zh]));
  }
}
const { src, tgt, truth, byId, captions, pairs } = await miningSet();
const sc = createScorer(config, {});
addCaptionsToIdf(sc, captions);
study('mining-flickr8k', sc, pairs.map((p) => [p.en, p.zh]));
if (process.env.SHUFFLES) {
  const { mulberry32 } = await import('../src/util/random.js');
  for (let s = 1; s <= Number(process.env.SHUFFLES); s++) {
    const rnd = mulberry32(s);
    const caps = [...src.map((r) => ({ en: r.caption })), ...tgt.map((r) => ({ zh: r.caption }))].map((c) => [rnd(), c] as const).sort((a, b) => a[0] - b[0]).map((x) => x[1]);
    const s2 = createScorer(config, {}); addCaptionsToIdf(s2, caps);
    study(`mining shuffle ${s}`, s2, truth.slice(0, 20).map((r) => [byId.get(r.source_id!)!, byId.get(r.target_id!)!]));
  }
  for (let s = 1; s <= Number(process.env.SHUFFLES); s++) {
    const rnd = mulberry32(100 + s);
    const caps = (rows as any[]).map((c) => [rnd(), c] as const).sort((a, b) => a[0] - b[0]).map((x) => x[1]);
    const s2 = createScorer(config, {}); addCaptionsToIdf(s2, caps);
    study(`labelled shuffle ${s}`, s2, []);
  }
}
