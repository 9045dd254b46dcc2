// Functions of layers built in parallel (search: lsh-index), loaded on demand. A layer that is not in this build is
// reported as missing (null) and the page says so; nothing stands in for it.
import type { Bank } from '../bank/index.js';
import type { Config } from '../config/schema.js';

export interface SearchHit {
  itemId?: number;
  targetItemId?: number;
  score?: number;
  imageScore?: number;
  inliers?: number;
  [k: string]: unknown;
}
export type SearchImage = (bank: Bank, config: Config, buf: Buffer, opts: { top?: number }) => Promise<unknown>;

async function fn<T>(spec: string, name: string): Promise<T | null> {
  try {
    const mod = (await import(spec)) as Record<string, unknown>;
    return typeof mod[name] === 'function' ? (mod[name] as T) : null;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes(spec.replace(/^\.\.\//, '').replace(/\.js$/, ''))) return null;
    throw err;
  }
}

export const loadSearchImage = () => fn<SearchImage>('../lsh-index/stage.js', 'searchImage');
