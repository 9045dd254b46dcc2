// The resumable walk every stage makes over bank rows (DEVELOPERS.md, "Rules of the house"): rows in id order, a batch
// at a time, each batch read after the last id of the one before (keyset pagination, so a killed run resumes where
// its last committed batch ended), bounded by a worker job's id range, stopped between batches by an abort signal.
import type { IdRange } from './jobs.js';

export interface WalkOptions {
  /** Only ids in this range (a worker's job); default all. */
  idRange?: IdRange;
  /** Checked before each batch: the walk ends (the caller's summary says it stopped early). */
  signal?: AbortSignal;
}

/**
 * Yields batches of rows: `fetch(afterId)` returns the next rows with ids above `afterId` in id order (its own limit;
 * an empty list ends the walk); rows past the range's end are dropped and end the walk. `idOf` reads a row's id (ids
 * themselves by default).
 */
export async function* walkIds<T>(fetch: (afterId: number) => Promise<T[]>, opts: WalkOptions = {}, idOf: (row: T) => number = (r) => r as unknown as number): AsyncGenerator<T[]> {
  const range = opts.idRange;
  let afterId = range ? range.first - 1 : 0;
  while (!opts.signal?.aborted) {
    const rows = await fetch(afterId);
    const inRange = range ? rows.filter((r) => idOf(r) <= range.last) : rows;
    if (!inRange.length) return;
    afterId = idOf(inRange[inRange.length - 1]!);
    yield inRange;
    if (inRange.length < rows.length) return;
  }
}
