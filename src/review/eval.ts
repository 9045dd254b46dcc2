// The last `capbridge eval` run, as the evaluation harness (src/eval/eval.ts) stores it in the bank's meta table ('eval.last':
// { set, at, pAt: { '1': x, ... '5': x }, hitAt1, hitAt5, emittedPrecision, coverage, ... }), for the stats page.
import type { Bank } from '../bank/index.js';

export const EVAL_META_KEY = 'eval.last';

export interface EvalRun {
  key: string;
  at?: string;
  set?: string;
  values: Array<{ label: string; value: number }>;
  extra: Array<{ label: string; value: number }>;
}

const num = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** P@n values of the last eval run, or null when there is none (or it is not of the expected shape). */
export async function readEval(bank: Bank, key = EVAL_META_KEY): Promise<EvalRun | null> {
  let v: Record<string, unknown> | undefined;
  try {
    v = await bank.meta.getJson<Record<string, unknown>>(key);
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object' || !v.pAt || typeof v.pAt !== 'object') return null;
  const values = Object.entries(v.pAt as Record<string, unknown>)
    .filter(([n, x]) => /^\d{1,3}$/.test(n) && num(x))
    .sort((a, b) => Number(a[0]) - Number(b[0]))
    .map(([n, x]) => ({ label: `P@${n}`, value: x as number }));
  if (!values.length) return null;
  const extra: EvalRun['extra'] = [];
  for (const [k, label] of [['hitAt1', 'hit@1'], ['hitAt5', 'hit@5'], ['emittedPrecision', 'emitted precision'], ['coverage', 'coverage'], ['falseEmissionRate', 'false emission rate']] as const) {
    if (num(v[k])) extra.push({ label, value: v[k] as number });
  }
  return { key, at: typeof v.at === 'string' ? v.at : undefined, set: typeof v.set === 'string' ? v.set : undefined, values, extra };
}
