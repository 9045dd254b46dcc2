// HTML helpers: escaping (every value from the bank goes through esc) and the page layout.
export function esc(v: unknown): string {
  return String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Marks a string as already-escaped HTML. */
export class Html {
  constructor(readonly html: string) {}
  toString(): string {
    return this.html;
  }
}

/** Tagged template: interpolations are escaped unless they are Html (or arrays of Html). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!;
  });
  return new Html(out);
}

function render(v: unknown): string {
  if (v instanceof Html) return v.html;
  if (Array.isArray(v)) return v.map(render).join('');
  if (v === null || v === undefined || v === false) return '';
  return esc(v);
}

export const raw = (s: string): Html => new Html(s);

export function page(title: string, body: Html, opts: { nav?: string } = {}): string {
  const link = (href: string, label: string, key: string) => html`<a href="${href}"${raw(opts.nav === key ? ' class="on"' : '')}>${label}</a>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · capbridge review</title>
<link rel="stylesheet" href="/assets/review.css"><script src="/assets/review.js" defer></script></head>
<body><header><b>capbridge review</b> ${link('/', 'Pairs', 'list').html} ${link('/search', 'Search', 'search').html} ${link('/stats', 'Stats', 'stats').html}</header>
<main>${body.html}</main></body></html>`;
}

export const fmt = (x: number | null | undefined, digits = 3): string => (x === null || x === undefined ? '–' : x.toFixed(digits));
