// Captions with the C-measure's alignment shown: each matched (English lemma, Chinese word) link and each shared
// entity gets one colour, used on both sides, with the gloss in the title (hover). The explanation names lemmas
// and jieba words, not character offsets, so the surface words are found again here: an English word matches a
// lemma when the comparability layer's lemmatizer (wink-lemmatizer candidates) derives that lemma from it
// (workers → worker, children → child, flooded → flood); a Chinese word or an entity is found as a substring.
// Words already marked for an entity (Sunday ↔ 周日) count as found for a link on the same words. A link whose words cannot be found in the text (irregular forms, traditional script)
// is still listed in the table under the captions, in the same colour.
import { lemmaCandidates } from '../lib/comparability/index.js';
import { html, raw, type Html } from './html.js';

export interface Explain {
  matches: Array<{ en: string; zh: string; gloss: string; weight: number }>;
  entities: Array<{ en: string; zh: string; kind: string }>;
  enTokens?: string[];
  zhTokens?: string[];
}

/** The explanation stored with a pair, or null when absent or not of the expected shape. */
export function parseExplain(json: string | null): Explain | null {
  if (!json) return null;
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return null;
  }
  const o = v as Partial<Explain>;
  if (!o || typeof o !== 'object' || !Array.isArray(o.matches)) return null;
  const str = (x: unknown) => (typeof x === 'string' ? x : String(x ?? ''));
  return {
    matches: o.matches.filter((m) => m && typeof m === 'object').map((m) => ({ en: str(m.en), zh: str(m.zh), gloss: str(m.gloss), weight: Number(m.weight) || 0 })),
    entities: (Array.isArray(o.entities) ? o.entities : []).filter((e) => e && typeof e === 'object').map((e) => ({ en: str(e.en), zh: str(e.zh), kind: str(e.kind) })),
    enTokens: Array.isArray(o.enTokens) ? o.enTokens.map(str) : undefined,
    zhTokens: Array.isArray(o.zhTokens) ? o.zhTokens.map(str) : undefined,
  };
}

interface Span {
  start: number;
  end: number;
  colour: number;
  title: string;
  entity: boolean;
}

/** The lemmas a surface word may stand for: itself and wink-lemmatizer's candidates, as the analyzer derives them. */
function lemmasOf(word: string): Set<string> {
  const w = word.toLowerCase().replace(/['’]s$/, '');
  return new Set([w, ...lemmaCandidates(w)]);
}

function overlaps(spans: Span[], start: number, end: number): boolean {
  return spans.some((s) => start < s.end && end > s.start);
}

function findSubstring(text: string, needle: string, spans: Span[]): [number, number] | null {
  if (!needle) return null;
  let from = 0;
  for (;;) {
    const i = text.indexOf(needle, from);
    if (i < 0) return null;
    if (!overlaps(spans, i, i + needle.length)) return [i, i + needle.length];
    from = i + 1;
  }
}

/** Finds the words of an English lemma (compounds: fire_hydrant → "fire hydrant") in the caption. */
function findEnglish(text: string, lemma: string, spans: Span[]): [number, number] | null {
  if (lemma.startsWith('#')) return null; // number tokens are shown through their entity
  const parts = lemma.toLowerCase().split('_');
  const words = [...text.matchAll(/[A-Za-z0-9]+(?:['’][A-Za-z]+)?/g)].map((m) => ({ start: m.index!, end: m.index! + m[0].length, lemmas: lemmasOf(m[0]) }));
  for (let i = 0; i + parts.length <= words.length; i++) {
    if (parts.every((p, k) => words[i + k]!.lemmas.has(p))) {
      const start = words[i]!.start;
      const end = words[i + parts.length - 1]!.end;
      if (!overlaps(spans, start, end)) return [start, end];
    }
  }
  return null;
}

function render(text: string, spans: Span[]): Html {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  const out: Html[] = [];
  let at = 0;
  for (const s of sorted) {
    out.push(html`${text.slice(at, s.start)}`);
    out.push(html`<mark class="hl c${s.colour % 10}${raw(s.entity ? ' ent' : '')}" data-c="${s.colour}" title="${s.title}">${text.slice(s.start, s.end)}</mark>`);
    at = s.end;
  }
  out.push(html`${text.slice(at)}`);
  return html`${out}`;
}

export interface Highlighted {
  en: Html;
  zh: Html;
  /** The links and entities with their colour and whether each side was found in the text. */
  legend: Array<{ colour: number; en: string; zh: string; note: string; entity: boolean; foundEn: boolean; foundZh: boolean }>;
}

export function highlight(en: string, zh: string, explain: Explain | null): Highlighted {
  const enSpans: Span[] = [];
  const zhSpans: Span[] = [];
  const legend: Highlighted['legend'] = [];
  if (explain) {
    let colour = 0;
    for (const e of explain.entities) {
      const title = `${e.kind}: ${e.en} ↔ ${e.zh}`;
      const a = findSubstring(en, e.en, enSpans);
      const b = findSubstring(zh, e.zh, zhSpans);
      if (a) enSpans.push({ start: a[0], end: a[1], colour, title, entity: true });
      if (b) zhSpans.push({ start: b[0], end: b[1], colour, title, entity: true });
      legend.push({ colour, en: e.en, zh: e.zh, note: e.kind, entity: true, foundEn: Boolean(a), foundZh: Boolean(b) });
      colour++;
    }
    for (const m of explain.matches) {
      const title = `${m.en.replace(/_/g, ' ')} ↔ ${m.zh}: ${m.gloss} (weight ${m.weight})`;
      const a = findEnglish(en, m.en, enSpans);
      const b = findSubstring(zh, m.zh, zhSpans);
      // words already marked (an entity: Sunday ↔ 周日; or another link: national ↔ 国家队 after team ↔ 国家队):
      // the link shares that mark and its colour, and the words on the other side take the same colour
      const sharedEn = a ? undefined : enSpans.find((sp) => lemmasOf(en.slice(sp.start, sp.end)).has(m.en.toLowerCase()));
      const sharedZh = b ? undefined : zhSpans.find((sp) => zh.slice(sp.start, sp.end) === m.zh);
      if (sharedEn) sharedEn.title += `; ${title}`;
      if (sharedZh) sharedZh.title += `; ${title}`;
      const c = sharedEn?.colour ?? sharedZh?.colour ?? colour++;
      if (a) enSpans.push({ start: a[0], end: a[1], colour: c, title, entity: false });
      if (b) zhSpans.push({ start: b[0], end: b[1], colour: c, title, entity: false });
      const entityWords = (sharedEn?.entity || sharedZh?.entity) ? ' (same words as the entity)' : '';
      legend.push({
        colour: c, en: m.en.replace(/_/g, ' '), zh: m.zh, note: `${m.gloss} · ${m.weight}${entityWords}`,
        // a side whose words carry another colour (two links crossing) is not shown in this link's colour
        entity: false, foundEn: Boolean(a || (sharedEn && sharedEn.colour === c)), foundZh: Boolean(b || (sharedZh && sharedZh.colour === c)),
      });
    }
  }
  return { en: render(en, enSpans), zh: render(zh, zhSpans), legend };
}
