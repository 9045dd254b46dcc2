// What a source's search ranked, published for tests and benchmarks (node:diagnostics_channel; nothing is published
// while nobody listens): one process and a sharded index must rank alike (issue 35).
import { diagnostics } from '../../util/diagnostics.js';

/**
 * What a source's search ranked, as the wide-baseline stages read it: its plain search's shortlist (target item ids
 * with their votes, most-voted first) and promise ('plain'), or archive matching's candidates in the order compared
 * ('archive'). One process and a sharded index publish the same for the same source (issue 35: the shards' votes add up
 * to one index's); tests compare them.
 */
export interface SourceRanking {
  itemId: number;
  kind: 'plain' | 'archive';
  ranked: [number, number][];
  promise?: number;
}

const sourceRankings = diagnostics<SourceRanking>('capbridge:match:source-ranking');

/** Calls `fn` with every SourceRanking any match run of this process publishes, until the returned function is called. */
export const observeSourceRankings = sourceRankings.observe;

/** Publishes a SourceRanking (`ranked` called only while somebody listens). */
export function publishSourceRanking(itemId: number, kind: SourceRanking['kind'], ranked: () => [number, number][], promise?: number): void {
  if (sourceRankings.listening) sourceRankings.publish({ itemId, kind, ranked: ranked(), promise });
}
