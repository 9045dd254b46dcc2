// The last `eval` run, as recorded in the bank's meta table, for the stats page's P@n chart.
import type { Bank } from '../bank/index.js';

export const EVAL_META_KEY = 'eval.last';

export interface EvalRun {
  key: string;
  at?: string;
  values: Array<{ label: string; value: number }>;
}

/** P@n values of the last eval run (keys like "p@1", "P@5", or {precisionAt: {1: x}}), or null when none. */
export function readEval(bank: Bank, key = EVAL_META_KEY): EvalRun | null {
  let v: unknown;
  try {
    v = bank.meta.getJson(key);
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object') return null;
  const values: Array<{ label: string; value: number; n: number }> = [];
  const visit = (o: Record<string, unknown>, depth: number) => {
    for (const [k, x] of Object.entries(o)) {
      const m = /^p@?(\d+)$/i.exec(k) ?? /^precisionAt(\d+)$/i.exec(k);
      if (m && typeof x === 'number' && Number.isFinite(x)) values.push({ label: `P@${m[1]}`, value: x, n: Number(m[1]) });
      else if (/^(precisionAt|precision|pAt)$/i.test(k) && x && typeof x === 'object') {
        for (const [n, y] of Object.entries(x as Record<string, unknown>)) if (/^\d+$/.test(n) && typeof y === 'number') values.push({ label: `P@${n}`, value: y, n: Number(n) });
      } else if (depth < 2 && x && typeof x === 'object' && !Array.isArray(x)) visit(x as Record<string, unknown>, depth + 1);
    }
  };
  visit(v as Record<string, unknown>, 0);
  if (!values.length) return null;
  const seen = new Set<string>();
  const uniq = values.sort((a, b) => a.n - b.n).filter((x) => (seen.has(x.label) ? false : (seen.add(x.label), true)));
  const o = v as Record<string, unknown>;
  const at = typeof o.at === 'string' ? o.at : typeof o.finishedAt === 'string' ? o.finishedAt : typeof o.date === 'string' ? o.date : undefined;
  return { key, at, values: uniq.map(({ label, value }) => ({ label, value })) };
}
