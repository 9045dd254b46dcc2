// Strict parsing of the review API's inputs. Everything arrives as text from the query string or the path; anything
// that is not exactly the expected shape (a second value for a key, a number with trailing junk, a site name with
// quotes, a cursor that does not decode) is refused with a 400 naming the parameter, before any query runs.
import { LEVELS, type ListCursor, type Level, type PairListFilter, type PairListKind, type PairListSort, type ReviewState } from '../bank/index.js';
import { badRequest } from './errors.js';

export const MAX_PAGE = 200;
export const DEFAULT_PAGE = 50;
const KINDS: PairListKind[] = ['emitted', 'candidate', 'all'];
const SORTS: PairListSort[] = ['c', 'image', 'date', 'id'];
const STATES: ReviewState[] = ['unreviewed', 'reviewed', 'accepted', 'rejected'];
const LIST_KEYS = new Set(['kind', 'level', 'cmin', 'cmax', 'imin', 'imax', 'site', 'from', 'to', 'review', 'sort', 'dir', 'after', 'before', 'limit', 'token']);

export type Query = Record<string, unknown>;

function one(q: Query, key: string): string | undefined {
  const v = q[key];
  if (v === undefined || v === '') return undefined;
  if (typeof v !== 'string') throw badRequest(`${key}: give one value`);
  if (v.length > 200) throw badRequest(`${key}: too long`);
  return v;
}

function choice<T extends string>(q: Query, key: string, options: readonly T[]): T | undefined {
  const v = one(q, key);
  if (v === undefined) return undefined;
  if (!options.includes(v as T)) throw badRequest(`${key}: expected one of ${options.join(', ')}`);
  return v as T;
}

function num(q: Query, key: string, min: number, max: number): number | undefined {
  const v = one(q, key);
  if (v === undefined) return undefined;
  if (!/^-?\d{1,6}(\.\d{1,12})?$/.test(v)) throw badRequest(`${key}: expected a number`);
  const n = Number(v);
  if (n < min || n > max) throw badRequest(`${key}: expected a number from ${min} to ${max}`);
  return n;
}

function day(q: Query, key: string): string | undefined {
  const v = one(q, key);
  if (v === undefined) return undefined;
  // Date.parse rolls an impossible day over (2024-02-30 -> March 1): a date is valid only if it reads back the same
  const t = /^\d{4}-\d{2}-\d{2}$/.test(v) ? Date.parse(`${v}T00:00:00Z`) : NaN;
  if (Number.isNaN(t)) throw badRequest(`${key}: expected a date YYYY-MM-DD`);
  if (new Date(t).toISOString().slice(0, 10) !== v) throw badRequest(`${key}: ${v} is not a date of the calendar`);
  return v;
}

export const SITE_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;

export interface ListQuery {
  filter: PairListFilter;
  after?: ListCursor;
  /** A page that ends just before this row (the "previous page" link). */
  before?: ListCursor;
  limit: number;
}

export function encodeCursor(c: ListCursor): string {
  return Buffer.from(JSON.stringify([c.v, c.id])).toString('base64url');
}

export function decodeCursor(s: string, sort: PairListSort, name = 'after'): ListCursor {
  let arr: unknown;
  try {
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(s)) throw new Error('charset');
    arr = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
  } catch {
    throw badRequest(`${name}: not a cursor of this list`);
  }
  if (!Array.isArray(arr) || arr.length !== 2 || !Number.isSafeInteger(arr[1]) || (arr[1] as number) < 1) throw badRequest(`${name}: not a cursor of this list`);
  const v = arr[0];
  const ok =
    sort === 'date' ? typeof v === 'string' && /^[0-9TZ:.+-]{1,40}$/.test(v)
    : sort === 'id' ? v === arr[1]
    : v === null || (typeof v === 'number' && Number.isFinite(v));
  if (!ok) throw badRequest(`${name}: not a cursor of this list`);
  return { v: v as ListCursor['v'], id: arr[1] as number };
}

/** The pair list's query string → filter, cursor and page size (400 on anything else). */
export function parseListQuery(q: Query): ListQuery {
  for (const k of Object.keys(q)) if (!LIST_KEYS.has(k)) throw badRequest(`unknown parameter "${k.slice(0, 40)}"`);
  const sort = choice(q, 'sort', SORTS) ?? 'c';
  const filter: PairListFilter = {
    kind: choice(q, 'kind', KINDS) ?? 'emitted',
    level: choice(q, 'level', LEVELS) as Level | undefined,
    cMin: num(q, 'cmin', -10, 10),
    cMax: num(q, 'cmax', -10, 10),
    imageMin: num(q, 'imin', 0, 1e6),
    imageMax: num(q, 'imax', 0, 1e6),
    review: choice(q, 'review', STATES),
    sort,
    dir: choice(q, 'dir', ['asc', 'desc'] as const) ?? (sort === 'id' ? 'asc' : 'desc'),
  };
  const site = one(q, 'site');
  if (site !== undefined) {
    if (!SITE_RE.test(site)) throw badRequest('site: expected a site name (letters, digits, . _ : -)');
    filter.site = site;
  }
  const from = day(q, 'from');
  const to = day(q, 'to');
  if (from) filter.from = from;
  if (to) filter.to = new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10); // inclusive day
  for (const k of Object.keys(filter) as (keyof PairListFilter)[]) if (filter[k] === undefined) delete filter[k];
  const limitText = one(q, 'limit');
  let limit = DEFAULT_PAGE;
  if (limitText !== undefined) {
    if (!/^\d{1,9}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_PAGE) throw badRequest(`limit: expected a page size from 1 to ${MAX_PAGE}`);
    limit = Number(limitText);
  }
  const afterText = one(q, 'after');
  const beforeText = one(q, 'before');
  if (afterText && beforeText) throw badRequest('give after or before, not both');
  return { filter, after: afterText ? decodeCursor(afterText, sort) : undefined, before: beforeText ? decodeCursor(beforeText, sort, 'before') : undefined, limit };
}

/** The list's query string (without cursor), to carry the list context to the pair view and back. */
export function listQueryString(f: PairListFilter, extra: Record<string, string> = {}): string {
  const p = new URLSearchParams();
  if (f.kind !== 'emitted') p.set('kind', f.kind);
  if (f.level) p.set('level', f.level);
  if (f.cMin !== undefined) p.set('cmin', String(f.cMin));
  if (f.cMax !== undefined) p.set('cmax', String(f.cMax));
  if (f.imageMin !== undefined) p.set('imin', String(f.imageMin));
  if (f.imageMax !== undefined) p.set('imax', String(f.imageMax));
  if (f.site) p.set('site', f.site);
  if (f.from) p.set('from', f.from);
  if (f.to) p.set('to', new Date(Date.parse(`${f.to}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10));
  if (f.review) p.set('review', f.review);
  if (f.sort !== 'c') p.set('sort', f.sort);
  if (f.dir !== (f.sort === 'id' ? 'asc' : 'desc')) p.set('dir', f.dir);
  for (const [k, v] of Object.entries(extra)) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** A positive item id from a path segment. */
export function itemId(v: unknown, name: string): number {
  if (typeof v !== 'string' || !/^[1-9]\d{0,14}$/.test(v)) throw badRequest(`${name}: expected an item id (a positive integer)`);
  return Number(v);
}

/** A sha256 from a path segment: 64 lower-case hex digits, nothing else (no dots, no slashes). */
export function sha256Param(v: unknown): string {
  if (typeof v !== 'string' || !/^[0-9a-f]{64}$/.test(v)) throw badRequest('expected an image sha256 (64 hex digits)');
  return v;
}
