// Server-side SVG: the two photos side by side with the verified keypoint matches drawn as lines, and the small
// charts of the stats page. No client library: the browser scales the SVG, lines stay on their keypoints.
import { esc } from './html.js';

export interface MatchPoints {
  /** [xSource, ySource, xTarget, yTarget] in each image's own pixel coordinates. */
  inliers: Array<[number, number, number, number]>;
  /** Ratio-test matches RANSAC rejected, when stored. */
  rejected?: Array<[number, number, number, number]>;
}

export interface Side {
  href: string;
  width: number;
  height: number;
}

const GAP = 24;

/** Both images scaled to one height, side by side, and a line per match (inliers green, rejected red). */
export function matchSvg(left: Side, right: Side, points: MatchPoints | null): string {
  const H = Math.max(240, Math.min(900, Math.max(left.height, right.height)));
  const sl = H / left.height;
  const sr = H / right.height;
  const wl = left.width * sl;
  const wr = right.width * sr;
  const W = wl + GAP + wr;
  const r = (x: number) => Math.round(x * 10) / 10;
  const line = (p: [number, number, number, number], cls: string) =>
    `<line class="${cls}" x1="${r(p[0] * sl)}" y1="${r(p[1] * sl)}" x2="${r(wl + GAP + p[2] * sr)}" y2="${r(p[3] * sr)}"/>`;
  const rejected = points?.rejected?.map((p) => line(p, 'rejected')).join('') ?? '';
  const inliers = points?.inliers.map((p) => line(p, 'inlier')).join('') ?? '';
  return (
    `<svg class="matches" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${r(W)} ${r(H)}" preserveAspectRatio="xMidYMid meet">` +
    `<image href="${esc(left.href)}" x="0" y="0" width="${r(wl)}" height="${r(H)}" preserveAspectRatio="none"/>` +
    `<image href="${esc(right.href)}" x="${r(wl + GAP)}" y="0" width="${r(wr)}" height="${r(H)}" preserveAspectRatio="none"/>` +
    `<g class="rejected-lines">${rejected}</g><g class="inlier-lines">${inliers}</g></svg>`
  );
}

const LEVEL_COLOURS: Record<string, string> = { par: '#1b7f3b', com: '#3b6fb6', pse: '#c98a1a', inc: '#999999' };

/** Stacked bars: emitted pairs per day and level. */
export function perDayChart(rows: Array<{ day: string; level: string | null; n: number }>): string {
  const days = [...new Set(rows.map((r) => r.day))].slice(-60);
  if (!days.length) return '<p class="muted">No emitted pairs yet.</p>';
  const levels = ['par', 'com', 'pse', 'inc'];
  const by = new Map<string, Record<string, number>>();
  for (const r of rows) {
    if (!days.includes(r.day)) continue;
    const o = by.get(r.day) ?? {};
    o[r.level ?? 'inc'] = (o[r.level ?? 'inc'] ?? 0) + r.n;
    by.set(r.day, o);
  }
  const max = Math.max(...days.map((d) => Object.values(by.get(d) ?? {}).reduce((a, b) => a + b, 0)));
  const W = 640;
  const H = 180;
  const top = 10;
  const bottom = 30;
  const bw = Math.max(4, Math.min(40, (W - 40) / days.length - 4));
  const parts: string[] = [];
  days.forEach((d, i) => {
    const x = 40 + i * (bw + 4);
    let y = H - bottom;
    for (const lv of levels) {
      const n = by.get(d)?.[lv] ?? 0;
      if (!n) continue;
      const h = ((H - top - bottom) * n) / max;
      y -= h;
      parts.push(`<rect x="${x}" y="${y.toFixed(1)}" width="${bw}" height="${h.toFixed(1)}" fill="${LEVEL_COLOURS[lv]}"><title>${esc(d)} ${lv}: ${n}</title></rect>`);
    }
    if (days.length <= 12 || i % Math.ceil(days.length / 8) === 0) parts.push(`<text x="${x}" y="${H - 12}" font-size="10">${esc(d.slice(5))}</text>`);
  });
  parts.push(`<text x="0" y="${top + 10}" font-size="10">${max}</text><text x="0" y="${H - bottom}" font-size="10">0</text>`);
  const legend = levels.map((lv, i) => `<rect x="${W - 200 + i * 50}" y="0" width="10" height="10" fill="${LEVEL_COLOURS[lv]}"/><text x="${W - 186 + i * 50}" y="9" font-size="10">${lv}</text>`).join('');
  return `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}">${parts.join('')}${legend}</svg>`;
}

/** Bars for named values in [0, 1] (P@n of the last eval). */
export function barsChart(values: Array<{ label: string; value: number }>): string {
  const W = 80 + values.length * 70;
  const H = 160;
  const base = H - 24;
  const parts = values.map((v, i) => {
    const x = 50 + i * 70;
    const h = Math.max(0, Math.min(1, v.value)) * (base - 10);
    return `<rect x="${x}" y="${(base - h).toFixed(1)}" width="40" height="${h.toFixed(1)}" fill="#3b6fb6"><title>${esc(v.label)}: ${v.value.toFixed(3)}</title></rect>` +
      `<text x="${x}" y="${(base - h - 3).toFixed(1)}" font-size="10">${v.value.toFixed(3)}</text><text x="${x}" y="${H - 8}" font-size="11">${esc(v.label)}</text>`;
  });
  return `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}"><line x1="45" y1="${base}" x2="${W}" y2="${base}" stroke="#888"/><text x="0" y="14" font-size="10">1.0</text><text x="0" y="${base}" font-size="10">0</text>${parts.join('')}</svg>`;
}
