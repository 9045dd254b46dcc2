// The sharded plain search in two steps (issue 35 round 5): a shard's job only votes (its shard's part of the index:
// the query's keypoints' collisions, its shortlist with each image's collisions, votes counted in the query's
// keypoints so that they compare across shards); the job that completes a window ranks each source's voted images of
// every shard into ONE shortlist (the lsh.shortlist most-voted, as one search of the whole index takes it) and
// verifies it once, reading the features from the bank (verification needs no index). So each image is verified once
// per source, not once per shard, and the candidates are those of one search wherever the shards' votes rank as the
// whole index's do (they do up to the votes' weights: a shard's buckets are its own, see shards.ts).
import type { BankScope, CandidateInput, MatchPartial, PartialVoted, PassKeypoints, VotedEntry } from '../../bank/index.js';
import { FeaturesRepo } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import { LshIndex, dropSeen, exactVotes, mergeHits, mirrorFeatures, prepare, reprobeParams, tooFewCollisions, verifyShortlist, type Features, type Hit, type IndexHandle, type KeypointVotes, type Prepared, type SearchParams, type ShardVotedPass, type VotedPass } from '../../lib/image-index/index.js';
import { lshParams, searchParams } from '../../lib/image-index/index.js';
import { candidatesOf, rescaleCandidate, unconfident, type HitTargets } from './rank.js';
import { viewEvidence, viewParams } from './views.js';
import { promiseOf, shortlistPromise, verifiedBelow } from './promise.js';
import { publishSourceRanking } from './rankings.js';

const b64 = (a: ArrayBufferView): string => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
const bytesOf = (s: string): Buffer => Buffer.from(s, 'base64');
/** A base64 array back (copied: a Buffer's bytes need not be aligned for the typed array). */
const u32 = (s: string): Uint32Array => {
  const b = bytesOf(s);
  const out = new Uint32Array(b.length >> 2);
  new Uint8Array(out.buffer).set(b);
  return out;
};
const u16 = (s: string): Uint16Array => {
  const b = bytesOf(s);
  const out = new Uint16Array(b.length >> 1);
  new Uint8Array(out.buffer).set(b.subarray(0, out.length * 2));
  return out;
};
const f64 = (s: string): Float64Array => {
  const b = bytesOf(s);
  const out = new Float64Array(b.length >> 3);
  new Uint8Array(out.buffer).set(b);
  return out;
};

/** A shard's voted images as stored with its partial result: item, image, votes in the query's keypoints, the
 *  collisions ((query kp, target kp) pairs, uint16 little-endian, base64), and, from a shard's exact pass, the query
 *  keypoints that voted for it (uint32, base64). */
export function votedEntries(handle: IndexHandle, v: VotedPass | ShardVotedPass, collisions = true): VotedEntry[] {
  const out: VotedEntry[] = [];
  v.shortlist.forEach((slot, i) => {
    const info = handle.slot(slot);
    if (!info) return;
    const votes = v.copy > 0 ? (v.votes[i]! * v.keypoints) / v.copy : 0;
    const e: VotedEntry = [info.itemId, info.sha, Number(votes.toFixed(4)), collisions ? b64(Uint16Array.from(v.coll[i]!)) : ''];
    if ('voters' in v) e.push(b64(Uint32Array.from(v.voters[i]!)));
    out.push(e);
  });
  return out;
}

/** What a shard's exact pass's keypoints did, as stored (PassKeypoints). */
export function passKeypoints(v: ShardVotedPass): PassKeypoints {
  const k = v.keypointVotes;
  return { weight: b64(k.weight), hist: b64(k.hist), bins: k.bins, copy: v.copy, keypoints: v.keypoints, ...(k.burst ? { burst: b64(k.burst) } : {}) };
}

const collisionsOf = (s: string): number[] => {
  const b = bytesOf(s);
  return Array.from(new Uint16Array(b.buffer.slice(b.byteOffset, b.byteOffset + (b.length & ~1))));
};

/** One pass's shortlist of every shard's voted images: entries and their votes, most-voted first. */
export interface RankedPass {
  entries: VotedEntry[];
  votes: number[];
  /** Their burst-discounted votes (DirectVotes.burst), when every shard recorded its keypoints' bursts. */
  burst?: number[];
  /** The copy's votes and keypoints searched (exact ranking only: the promise reads them). */
  copy: number;
  keypoints: number;
  exact: boolean;
}

/**
 * The most-voted `n` of every shard's voted images together (votes, then item id: the index's tie order; `sigma`:
 * lsh.voteSigma). With every
 * shard's keypoint record (round 6), by the exact votes one index of every target gives them (exactVotes: the shares
 * of a keypoint that voted on several shards summed over them); else (a partial of before) by votes counted in
 * keypoints, about the whole index's.
 */
export function globalShortlist(lists: VotedEntry[][], stats: (PassKeypoints | undefined)[], n: number, sigma = 0): RankedPass {
  const all = lists.flat();
  const exact = stats.length === lists.length && stats.every((s) => s !== undefined) && all.every((e) => e[4] !== undefined);
  if (!exact) {
    const entries = all.sort((a, b) => b[2] - a[2] || a[0] - b[0]).slice(0, n);
    return { entries, votes: entries.map((e) => e[2]), copy: 0, keypoints: 0, exact };
  }
  const kv: KeypointVotes[] = stats.map((s) => ({ weight: f64(s!.weight), hist: u16(s!.hist), bins: s!.bins, ...(s!.burst ? { burst: u16(s!.burst) } : {}) }));
  const voters = all.map((e) => u32(e[4]!));
  const votes = exactVotes(kv, voters, sigma);
  const order = all.map((e, i) => ({ e, i, v: votes[i]! })).filter((x) => x.v > 0).sort((a, b) => b.v - a.v || a.e[0] - b.e[0]).slice(0, n);
  const burst = kv[0]!.burst ? exactVotes(kv, order.map((x) => voters[x.i]!), sigma, true) : undefined;
  return { entries: order.map((x) => x.e), votes: order.map((x) => x.v), ...(burst ? { burst } : {}), copy: stats[0]!.copy, keypoints: stats[0]!.keypoints, exact };
}

/** What the window's wide-baseline decision and the merge read of a source's one verified search. */
export interface GlobalPlain {
  cand: CandidateInput[];
  sure: boolean;
  evidence: number | null;
  promise: number;
  /** Its search verified a target without being confident (promise.ts verifiedBelow). */
  verified?: boolean;
  /** The source searched its picture in the window (others showing it took its candidates). */
  searched: boolean;
  picture: string;
  /** The search's hits and its direct pass's shortlist (slots of the verifier's targets, most-voted first): archive
   *  matching starts from them (absent for a source that took another's candidates). */
  hits?: Hit[];
  ranking?: number[];
  /** The picture's candidates before lsh.window (`cand` is the source's, within it). */
  raw?: CandidateInput[];
}

/**
 * The second step for the sources of one window, in source id order (a source showing a picture searched before it
 * in the window takes that picture's candidates, in its own pixels, as one process does).
 */
export class GlobalVerifier {
  private readonly lsh: LshIndex;
  private readonly features = new Map<string, Prepared | null>();
  private readonly pictures = new Map<string, { cand: CandidateInput[]; width: number }>();
  /** The targets met so far (a slot per image, as one index gives each image one slot over both passes). */
  private readonly targets: { itemId: number; sha: string }[] = [];
  private readonly slots = new Map<number, number>();

  constructor(private readonly tx: BankScope, private readonly config: Config, private readonly top: number, private readonly inWindow: (id: number, cand: CandidateInput[]) => Promise<CandidateInput[]>) {
    // the projections only (the sketches of a target for the re-collision): no entries
    this.lsh = new LshIndex(lshParams(config));
  }

  private async prepared(sha: string): Promise<Prepared | undefined> {
    if (!this.features.has(sha)) {
      const f = await this.tx.repo(FeaturesRepo).get(sha);
      this.features.set(sha, f ? prepare(f) : null);
    }
    return this.features.get(sha) ?? undefined;
  }

  /** Reads the features of the images not read yet, at once. */
  private async readAll(shas: string[]): Promise<void> {
    const want = shas.filter((sha) => !this.features.has(sha));
    if (!want.length) return;
    const got = await this.tx.repo(FeaturesRepo).getMany(want);
    for (const sha of want) {
      const f = got.get(sha);
      this.features.set(sha, f ? prepare(f) : null);
    }
  }

  /** A target's slot among those met so far (one per image). */
  slotOf(e: VotedEntry): number {
    let s = this.slots.get(e[0]);
    if (s === undefined) {
      this.slots.set(e[0], (s = this.targets.length));
      this.targets.push({ itemId: e[0], sha: e[1] });
    }
    return s;
  }

  /** One pass's shortlist (of every shard's voted images) verified (`maxQuery`: the query keypoints its votes took). */
  async verifyPass(v: Prepared, pass: RankedPass, mirrored: boolean, p: SearchParams = searchParams(this.config), maxQuery = 2048): Promise<Hit[]> {
    const keypoints = Math.min(v.f.count, maxQuery);
    const entries = pass.entries;
    const voted = {
      shortlist: entries.map((e) => this.slotOf(e)),
      votes: pass.votes,
      coll: entries.map((e) => collisionsOf(e[3])),
      // the query keypoints that voted for each (an image is on one shard: its voters there are all of them)
      voting: entries.map((e) => (e[4] ? u32(e[4]).length : 0)),
      sketches: this.lsh.sketches(v.vecs, keypoints),
      keypoints,
    };
    // the images with collisions enough to be verified, read in one query (FeaturesRepo.getMany)
    await this.readAll(entries.filter((_, i) => !tooFewCollisions(voted.coll[i]!, p)).map((e) => e[1]));
    const src = { load: (s: number) => this.prepared(this.targets[s]!.sha), isAlive: () => true, sketchesOf: (t: Prepared) => this.lsh.sketches(t.vecs, t.f.count) };
    return verifyShortlist(src, v, voted, p, mirrored);
  }

  /** A source's search over every shard's votes (`parts`: its partial result on each shard). */
  async verify(id: number, sha: string, parts: MatchPartial[]): Promise<GlobalPlain | null> {
    const w = parts[0]?.wide;
    const voted = parts.map((x) => x.wide?.voted).filter((x): x is PartialVoted => !!x);
    if (!w || voted.length < parts.length) return null;
    const q = await this.tx.repo(FeaturesRepo).get(sha);
    if (!q) return null;
    const width = q.width / q.scale;
    const seen = this.pictures.get(w.picture);
    const base = { searched: w.searched, picture: w.picture };
    if (!w.searched && seen) {
      const cand = await this.inWindow(id, seen.cand.map((c) => rescaleCandidate(c, width / seen.width, 1)));
      return { ...base, promise: 0, cand, sure: true, evidence: null };
    }
    const p = searchParams(this.config);
    const direct = globalShortlist(voted.map((x) => x.direct), voted.map((x) => x.keypoints?.direct), p.shortlist, p.voteSigma);
    // the promise of the shortlist's votes counted in keypoints (promise.ts), as one index's search gives it when the
    // votes are exact; else of the shards' votes in keypoints (about it)
    const promise = direct.exact ? shortlistPromise({ slots: [], votes: direct.votes, burst: direct.burst, keypoints: direct.keypoints, copy: direct.copy }) : promiseOf(voted.flatMap((x) => x.direct.map((e) => e[2])));
    publishSourceRanking(id, 'plain', () => direct.entries.map((e, i) => [e[0], direct.votes[i]!]), promise);
    const hits = await this.searchOnce(q, voted, direct);
    const cand = await candidatesOf(this.hitTargets(), this.config, q, hits, this.top);
    this.pictures.set(w.picture, { cand, width });
    const ranking = direct.entries.map((e) => this.slotOf(e));
    return { ...base, promise, verified: verifiedBelow(hits), hits, ranking, raw: cand, cand: await this.inWindow(id, cand), sure: !unconfident(this.config, hits), evidence: viewEvidence({ hits }, viewParams(this.config)) };
  }

  /** The direct pass over the global shortlist; the mirror pass (its own global shortlist) when nothing is confident. */
  private async searchOnce(q: Features, voted: PartialVoted[], ranked: RankedPass): Promise<Hit[]> {
    const p = searchParams(this.config);
    const v = prepare(q);
    const direct = await this.verifyPass(v, ranked, false);
    let hits = mergeHits(direct, [], false);
    if (p.mirror && !direct.some((h) => h.score >= p.confidentScore)) {
      const mirror = globalShortlist(voted.map((x) => x.mirror), voted.map((x) => x.keypoints?.mirror), Math.min(p.shortlist, p.mirrorShortlist), p.voteSigma);
      hits = mergeHits(direct, await this.verifyPass(prepare(mirrorFeatures(q)), mirror, true), false);
    }
    // the reprobe pass (lsh.reprobe), as one index's search runs it: its shortlist less the direct pass's images
    if (!voted.every((x) => x.reprobe) || hits.some((h) => h.score >= p.confidentScore)) return hits;
    const again = globalShortlist(voted.map((x) => x.reprobe!), voted.map((x) => x.keypoints?.reprobe), p.shortlist, p.voteSigma);
    const fresh = dropSeen(again, again.entries.map((e) => e[0]), ranked.entries.map((e) => e[0]), ['entries', 'votes', 'burst']);
    return mergeHits(hits, await this.verifyPass(v, fresh, false, reprobeParams(p)), false);
  }

  /** A slot's target item and image. */
  target(s: number): { itemId: number; sha: string } | undefined {
    return this.targets[s];
  }

  /** A slot's prepared features (read from the bank once). */
  load(s: number): Promise<Prepared | undefined> {
    const t = this.targets[s];
    return t ? this.prepared(t.sha) : Promise.resolve(undefined);
  }

  /** The targets as candidatesOf reads them. */
  hitTargets(): HitTargets {
    return { slot: (s) => this.target(s), load: (s) => this.load(s), bank: this.tx };
  }
}
