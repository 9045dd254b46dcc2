// The server-rendered pages: pair list, pair view, search, stats. Every bank value is escaped (html`...`).
import type { BankStats, PairListFilter, ReviewPairRow, SentencePairRow } from '../bank/index.js';
import { LEVELS } from '../bank/index.js';
import { fmt, html, page, raw, type Html } from './html.js';
import { highlight, parseExplain } from './highlight.js';
import { encodeCursor, listQueryString, MAX_PAGE } from './query.js';
import type { EvalRun } from './eval.js';
import { barsChart, matchSvg, perDayChart, type MatchPoints } from './svg.js';

export const pairPath = (r: Pick<ReviewPairRow, 'sourceItemId' | 'targetItemId'>): string => `/pair/${r.sourceItemId}/${r.targetItemId}`;
export const reviewApi = (r: Pick<ReviewPairRow, 'sourceItemId' | 'targetItemId'>): string => `/api/pairs/${r.sourceItemId}/${r.targetItemId}/review`;

const levelBadge = (lv: string | null): Html => (lv ? html`<span class="lv lv-${lv}">${lv}</span>` : html`<span class="muted">–</span>`);

/** A list cell's caption, cut by the bank to LIST_TEXT_CHARS: what is cut is said, with the way to the whole text. */
function clipped(text: string, chars: number | undefined, href: string): Html {
  if (chars === undefined || chars <= text.length) return html`${text}`;
  return html`${text}… <a class="more" href="${href}">(${chars.toLocaleString('en')} characters in all: open the pair)</a>`;
}

/** Only http(s) URLs become links (a manifest may give any text as a page URL: javascript:, data:, file:). */
const linkable = (url: string | null): url is string => url !== null && /^https?:\/\/[^\s]+$/i.test(url);

/** Characters of a caption highlighted and shown at once on a pair's page; the rest is there behind "show all". */
export const PAIR_VIEW_CHARS = 5000;

/** The part of a caption beyond what the page highlights, behind a <details>: the whole text, on demand. */
function rest(text: string, id: string): Html {
  if (text.length <= PAIR_VIEW_CHARS) return html``;
  return html`<details class="caption-rest" id="${id}"><summary>… show all ${text.length.toLocaleString('en')} characters</summary><div class="caption">${text}</div></details>`;
}

function reviewState(r: Pick<ReviewPairRow, 'verdict' | 'reviewLevel' | 'reviewedAt'>, withId = false): Html {
  const text = r.reviewedAt ? [r.verdict ?? '', r.reviewLevel ? `level ${r.reviewLevel}` : ''].filter(Boolean).join(', ') + ` (${r.reviewedAt})` : 'not reviewed';
  return html`<span${raw(withId ? ' id="review-state"' : '')} class="review-state${raw(r.verdict ? ` verdict-${r.verdict}` : '')}" data-verdict="${r.verdict ?? ''}" data-level="${r.reviewLevel ?? ''}">${text}</span>`;
}

function select(name: string, value: string | undefined, options: Array<[string, string]>): Html {
  return html`<select name="${name}">${options.map(([v, label]) => html`<option value="${v}"${raw(v === (value ?? '') ? ' selected' : '')}>${label}</option>`)}</select>`;
}

export function listPage(f: PairListFilter, rows: ReviewPairRow[], next: string | null, prev: string | null, sites: string[], limit: number, first: boolean, noPairs = false): string {
  const ctx = listQueryString(f);
  const input = (name: string, v: number | string | undefined, type = 'text', extra = '') => html`<input name="${name}" type="${type}" value="${v ?? ''}"${raw(extra)}>`;
  const toDay = f.to ? new Date(Date.parse(`${f.to}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10) : undefined;
  const filters = html`<form class="filters" method="get" action="/">
    <label>pairs ${select('kind', f.kind, [['emitted', 'emitted'], ['candidate', 'not emitted (candidates)'], ['all', 'all']])}</label>
    <label>level ${select('level', f.level, [['', 'any'], ...LEVELS.map((l) => [l, l] as [string, string])])}</label>
    <label>C from ${input('cmin', f.cMin, 'number', ' step="any"')}</label><label>C to ${input('cmax', f.cMax, 'number', ' step="any"')}</label>
    <label>image score from ${input('imin', f.imageMin, 'number', ' step="any" min="0"')}</label><label>to ${input('imax', f.imageMax, 'number', ' step="any" min="0"')}</label>
    <label>site ${select('site', f.site, [['', 'any'], ...sites.map((s) => [s, s] as [string, string])])}</label>
    <label>decided from ${input('from', f.from, 'date')}</label><label>to ${input('to', toDay, 'date')}</label>
    <label>review ${select('review', f.review, [['', 'any'], ['unreviewed', 'not reviewed'], ['reviewed', 'reviewed'], ['accepted', 'accepted'], ['rejected', 'rejected']])}</label>
    <label>sort ${select('sort', f.sort, [['c', 'C'], ['image', 'image score'], ['date', 'decided'], ['id', 'pair id']])}</label>
    <label>order ${select('dir', f.dir, [['desc', 'high → low'], ['asc', 'low → high']])}</label>
    <label>per page ${input('limit', limit, 'number', ` min="1" max="${MAX_PAGE}"`)}</label>
    <button type="submit">Show</button> <a href="/">reset</a></form>`;
  const body = rows.length
    ? html`<table class="pairs"><thead><tr><th>source</th><th>target</th><th>English</th><th>Chinese</th><th>level</th><th>C</th><th>image</th><th>inliers</th><th>review</th></tr></thead><tbody>
      ${rows.map((r) => {
        const href = pairPath(r) + ctx;
        return html`<tr data-href="${href}" data-review-url="${reviewApi(r)}" data-pair="${r.sourceItemId}-${r.targetItemId}">
          <td><a href="${href}"><img loading="lazy" src="/thumb/${r.sourceSha}" alt="source ${r.sourceExtId}"></a></td>
          <td><a href="${href}"><img loading="lazy" src="/thumb/${r.targetSha}" alt="target ${r.targetExtId}"></a></td>
          <td>${clipped(r.sourceCaption, r.sourceCaptionChars, href)}</td><td lang="zh">${clipped(r.targetCaption, r.targetCaptionChars, href)}</td>
          <td>${levelBadge(r.level)}${r.emitted ? '' : html`<div class="muted">not emitted: ${r.reason ?? ''}</div>`}</td>
          <td class="num">${fmt(r.c)}</td><td class="num">${fmt(r.imageScore)}</td><td class="num">${r.inliers ?? '–'}</td>
          <td>${reviewState(r)}</td></tr>`;
      })}</tbody></table>`
    : noPairs
      ? html`<p class="muted" id="no-pairs">This bank has no pairs yet: they appear once the pipeline has run (<code>capbridge match</code>, <code>pair</code>, or the daemon).</p>`
      : html`<p class="muted">No pair matches these filters.</p>`;
  const size: Record<string, string> = limit !== 50 ? { limit: String(limit) } : {};
  const nav = html`<p>${first ? '' : html`<a href="/${listQueryString(f, size)}">first page</a> · `}${prev && !first ? html`<a id="prev-page" href="/${listQueryString(f, { before: prev, ...size })}">← previous page</a> · ` : ''}${next ? html`<a id="next-page" href="/${listQueryString(f, { after: next, ...size })}">next page →</a>` : html`<span class="muted">end of list</span>`}</p>
    <p class="muted">Keys: <kbd>j</kbd>/<kbd>k</kbd> select, <kbd>Enter</kbd> open, <kbd>a</kbd> accept, <kbd>r</kbd> reject, <kbd>1</kbd>–<kbd>4</kbd> level par/com/pse/inc, <kbd>u</kbd> clear.</p>`;
  return page('Pairs', html`${filters}${body}${nav}`, { nav: 'list' });
}

export interface PairViewData {
  row: ReviewPairRow;
  filter: PairListFilter;
  next: string | null;
  prev: string | null;
  source: { width: number; height: number };
  target: { width: number; height: number };
  points: MatchPoints | null;
  /** Why no lines are drawn, when points is null. */
  pointsNote: string;
  /** The caption pair's aligned sentence pairs (what the exports write), in English sentence order. */
  sentences: SentencePairRow[];
}

const span = (a: number, b: number): string => (a === b ? String(a + 1) : `${a + 1}–${b + 1}`);

/** The sentence pairs the aligner found in the two captions: each with its own level and C, emitted or not. */
function sentenceTable(rows: SentencePairRow[]): Html {
  if (!rows.length) return html`<p class="muted" id="sentence-pairs">No sentence pairs: the captions were not scored (see the reason above).</p>`;
  return html`<h3>Sentence pairs (what the exports write)</h3><table class="pairs" id="sentence-pairs"><thead><tr><th>en #</th><th>English</th><th>zh #</th><th>Chinese</th><th>level</th><th>C</th><th></th></tr></thead><tbody>${rows.map(
    (x) => html`<tr class="${x.emitted ? 'emitted' : 'muted'}"><td class="num">${span(x.enFirst, x.enLast)}</td><td>${x.en}</td><td class="num">${span(x.zhFirst, x.zhLast)}</td><td lang="zh">${x.zh}</td><td>${levelBadge(x.level)}</td><td class="num">${fmt(x.c)}</td><td>${x.emitted ? 'emitted' : 'not emitted'}</td></tr>`,
  )}</tbody></table>`;
}

export function pairPage(d: PairViewData): string {
  const r = d.row;
  const explain = parseExplain(r.explain);
  // a caption of a megabyte is highlighted in its first PAIR_VIEW_CHARS characters, and shown whole on demand
  const hl = highlight(r.en.slice(0, PAIR_VIEW_CHARS), r.zh.slice(0, PAIR_VIEW_CHARS), explain);
  const ctx = listQueryString(d.filter);
  const svg = matchSvg({ href: `/image/${r.sourceSha}`, ...d.source }, { href: `/image/${r.targetSha}`, ...d.target }, d.points);
  const lines = d.points
    ? html`<p class="muted"><span id="inlier-count">${d.points.inliers.length}</span> verified inlier matches (green)${d.points.rejected ? html`, ${d.points.rejected.length} ratio-test matches rejected by RANSAC (red, dashed)` : ' — rejected ratio-test matches are not stored'}.</p>`
    : html`<p class="muted" id="no-points">No keypoint lines drawn: ${d.pointsNote}</p>`;
  const changed = r.sourceCaption !== r.en || r.targetCaption !== r.zh;
  const reviewedOther = r.reviewedAt && (r.reviewEn !== r.sourceCaption || r.reviewZh !== r.targetCaption);
  const legend = hl.legend.length
    ? html`<table class="legend"><tr><th></th><th>English</th><th>Chinese</th><th>gloss / kind</th></tr>${hl.legend.map(
        (l) => html`<tr><td><mark class="hl c${l.colour % 10}${raw(l.entity ? ' ent' : '')}">&nbsp;&nbsp;</mark></td><td>${l.en}${l.foundEn ? '' : html` <span class="muted">(not found in text)</span>`}</td><td lang="zh">${l.zh}${l.foundZh ? '' : html` <span class="muted">(not found in text)</span>`}</td><td>${l.note}</td></tr>`,
      )}</table>`
    : html`<p class="muted">${explain ? 'The C-measure aligned no words of these captions.' : 'No C-measure explanation is stored for this pair.'}</p>`;
  const prov = (side: 'source' | 'target') => {
    const s = side === 'source';
    const url = s ? r.sourceUrl : r.targetUrl;
    return html`<div><b>${side}</b> ${s ? r.sourceExtId : r.targetExtId} · site ${(s ? r.sourceSite : r.targetSite) ?? '–'}<br>
      page: ${linkable(url) ? html`<a href="${url}" rel="noreferrer noopener" target="_blank">${url}</a>` : (url ?? '–')}<br>
      image URL: ${(s ? r.sourceImageUrl : r.targetImageUrl) ?? '–'}<br>harvested: ${(s ? r.sourceHarvestedAt : r.targetHarvestedAt) ?? '–'}</div>`;
  };
  const body = html`<div data-pair-view data-review-url="${reviewApi(r)}" data-next="${d.next ?? ''}" data-prev="${d.prev ?? ''}">
    <p><a href="/${ctx}">← list</a> · ${d.prev ? html`<a id="prev" href="${d.prev}">← previous (k)</a>` : html`<span class="muted">first</span>`} · ${d.next ? html`<a id="next" href="${d.next}">next (j) →</a>` : html`<span class="muted">last</span>`} <span id="nav-msg" class="muted"></span></p>
    ${raw(svg)}${lines}
    <div class="captions"><div><div class="caption" id="caption-en">${hl.en}</div>${rest(r.en, 'caption-en-all')}</div><div lang="zh"><div class="caption" id="caption-zh">${hl.zh}</div>${rest(r.zh, 'caption-zh-all')}</div></div>
    ${changed ? html`<p class="err">A caption changed after this pair was decided; the scores are for the texts above, the items now read: ${r.sourceCaption.slice(0, PAIR_VIEW_CHARS)}${r.sourceCaption.length > PAIR_VIEW_CHARS ? '…' : ''} / ${r.targetCaption.slice(0, PAIR_VIEW_CHARS)}${r.targetCaption.length > PAIR_VIEW_CHARS ? '…' : ''}</p>` : ''}
    <div class="scores">level ${levelBadge(r.level)} <span>C <b id="score-c">${fmt(r.c)}</b></span><span>fc <b>${fmt(r.fc)}</b></span><span>fe <b>${fmt(r.fe)}</b></span><span>fl <b>${fmt(r.fl)}</b></span>
      <span>image score <b>${fmt(r.imageScore)}</b></span><span>inliers <b>${r.inliers ?? '–'}</b></span><span>rank <b>${r.candidateRank ?? '–'}</b></span>
      <span>${r.emitted ? 'emitted' : `not emitted (${r.reason ?? ''})`}</span><span class="muted">decided ${r.decidedAt}${r.exportedAt ? `, exported ${r.exportedAt}` : ''}</span></div>
    <div class="judge">Judgement: ${reviewState(r, true)}${reviewedOther ? html` <span class="err">(reviewed on other caption texts)</span>` : ''}<br>
      <button data-key="a">accept <kbd>a</kbd></button><button data-key="r">reject <kbd>r</kbd></button>
      <button data-key="1">par <kbd>1</kbd></button><button data-key="2">com <kbd>2</kbd></button><button data-key="3">pse <kbd>3</kbd></button><button data-key="4">inc <kbd>4</kbd></button>
      <button data-key="u">clear <kbd>u</kbd></button> <span class="muted"><kbd>j</kbd> next, <kbd>k</kbd> previous</span></div>
    ${sentenceTable(d.sentences)}
    ${legend}
    <div class="prov">${prov('source')}${prov('target')}</div></div>`;
  return page(`Pair ${r.sourceExtId} ↔ ${r.targetExtId}`, body);
}

export function searchPage(): string {
  const body = html`<h2>Search the target bank with an image</h2>
      <div class="drop" id="search-drop">Paste an image (Ctrl+V), drop a file here, or choose one: <input type="file" id="search-file" accept="image/*">
      <label>top <input id="search-top" type="number" min="1" max="100" value="10"></label></div><div id="search-results"></div>`;
  return page('Search', body, { nav: 'search' });
}

export interface StatsData {
  stats: BankStats;
  pairs: { emitted: number; candidate: number };
  byLevel: Record<string, number>;
  reviews: { accepted: number; rejected: number; levelOnly: number; total: number };
  perDay: Array<{ day: string; level: string | null; n: number }>;
  evalRun: EvalRun | null;
  evalKey: string;
}

export function statsPage(d: StatsData): string {
  const banks = Object.entries(d.stats.banks).map(
    ([name, c]) => html`<tr><td>${name}</td><td class="num">${c.items}</td><td>${Object.entries(c.byStatus).map(([k, n]) => `${k} ${n}`).join(', ')}</td><td>${Object.entries(c.captions).map(([k, n]) => `${k} ${n}`).join(', ')}</td></tr>`,
  );
  // every failed item and pair, with its reason (the stage that failed it went on)
  const failures = [
    ...Object.entries(d.stats.banks).flatMap(([name, c]) => Object.entries(c.failures).map(([reason, n]) => html`<tr><td>${name} items</td><td class="num">${n}</td><td>${reason}</td></tr>`)),
    ...Object.entries(d.stats.pairs?.failures ?? {}).map(([reason, n]) => html`<tr><td>caption pairs</td><td class="num">${n}</td><td>${reason}</td></tr>`),
  ];
  const body = html`<h2>Banks</h2><table class="pairs" id="bank-counts"><thead><tr><th>bank</th><th>items</th><th>by status</th><th>captions</th></tr></thead><tbody>${banks}</tbody></table>
    ${failures.length ? html`<h3>Failed, with the reason</h3><table class="pairs" id="failures"><thead><tr><th>what</th><th>n</th><th>reason</th></tr></thead><tbody>${failures}</tbody></table>` : html`<p class="muted" id="failures">Nothing failed.</p>`}
    <p>images: ${d.stats.images.files} files, ${(d.stats.images.bytes / 1e6).toFixed(1)} MB · database ${(d.stats.database.bytes / 1e6).toFixed(1)} MB · schema ${d.stats.schemaVersion}</p>
    <h2>Pairs</h2><p id="pair-counts">${d.pairs.emitted} emitted (par ${d.byLevel.par ?? 0}, com ${d.byLevel.com ?? 0}, pse ${d.byLevel.pse ?? 0}), ${d.pairs.candidate} candidates not emitted ·
      reviews: ${d.reviews.accepted} accepted, ${d.reviews.rejected} rejected, ${d.reviews.levelOnly} level only</p>
    <h3>Emitted pairs per day (by decision time) and level</h3>${raw(perDayChart(d.perDay))}
    <h2>Last evaluation</h2>${d.evalRun ? html`<p class="muted" id="eval-run">set ${d.evalRun.set ?? '–'}, ${d.evalRun.at ?? ''}</p>${raw(barsChart(d.evalRun.values))}
      <p>${d.evalRun.extra.map((x) => `${x.label} ${x.value.toFixed(3)}`).join(' · ')}</p>` : html`<p class="muted">No eval run recorded in this bank (meta "${d.evalKey}").</p>`}`;
  return page('Stats', body, { nav: 'stats' });
}

export { encodeCursor };
