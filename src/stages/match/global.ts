// The sharded plain search in two steps (issue 35 round 5): a shard's job only votes (its shard's part of the index:
// the query's keypoints' collisions, its shortlist with each image's collisions, votes counted in the query's
// keypoints so that they compare across shards); the job that completes a window ranks each source's voted images of
// every shard into ONE shortlist (the lsh.shortlist most-voted, as one search of the whole index takes it) and
// verifies it once, reading the features from the bank (verification needs no index). So each image is verified once
// per source, not once per shard, and the candidates are those of one search wherever the shards' votes rank as the
// whole index's do (they do up to the votes' weights: a shard's buckets are its own, see shards.ts).
import type { BankScope, CandidateInput, MatchPartial, PartialVoted, VotedEntry } from '../../bank/index.js';
import { FeaturesRepo } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import { LshIndex, mergeHits, mirrorFeatures, prepare, tooFewCollisions, verifyShortlist, type Features, type Hit, type IndexHandle, type Prepared, type VotedPass } from '../../lib/image-index/index.js';
import { lshParams, searchParams } from '../../lib/image-index/index.js';
import { candidatesOf, rescaleCandidate, unconfident } from './rank.js';
import { viewEvidence, viewParams } from './views.js';
import { promiseOf } from './promise.js';

/** A shard's voted images as stored with its partial result: item, image, votes in the query's keypoints, and the
 *  collisions ((query kp, target kp) pairs, uint16 little-endian, base64). */
export function votedEntries(handle: IndexHandle, v: VotedPass): VotedEntry[] {
  const out: VotedEntry[] = [];
  v.shortlist.forEach((slot, i) => {
    const info = handle.slot(slot);
    if (!info) return;
    const votes = v.copy > 0 ? (v.votes[i]! * v.keypoints) / v.copy : 0;
    out.push([info.itemId, info.sha, Number(votes.toFixed(4)), Buffer.from(Uint16Array.from(v.coll[i]!).buffer).toString('base64')]);
  });
  return out;
}

const collisionsOf = (b64: string): number[] => {
  const b = Buffer.from(b64, 'base64');
  return Array.from(new Uint16Array(b.buffer, b.byteOffset, b.length >> 1));
};

/** The most-voted `n` of every shard's voted images together (votes, then item id: the index's tie order). */
function globalShortlist(lists: VotedEntry[][], n: number): VotedEntry[] {
  return lists.flat().sort((a, b) => b[2] - a[2] || a[0] - b[0]).slice(0, n);
}

/** What the window's wide-baseline decision and the merge read of a source's one verified search. */
export interface GlobalPlain {
  cand: CandidateInput[];
  sure: boolean;
  evidence: number | null;
  promise: number;
  /** The source searched its picture in the window (others showing it took its candidates). */
  searched: boolean;
  picture: string;
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
  private readonly slotOf = new Map<number, number>();

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

  private slot(e: VotedEntry): number {
    let s = this.slotOf.get(e[0]);
    if (s === undefined) {
      this.slotOf.set(e[0], (s = this.targets.length));
      this.targets.push({ itemId: e[0], sha: e[1] });
    }
    return s;
  }

  /** One pass's shortlist (of every shard's voted images) verified. */
  private async verifyPass(v: Prepared, entries: VotedEntry[], mirrored: boolean): Promise<Hit[]> {
    const p = searchParams(this.config);
    const keypoints = Math.min(v.f.count, 2048);
    const voted = {
      shortlist: entries.map((e) => this.slot(e)),
      votes: entries.map((e) => e[2]),
      coll: entries.map((e) => collisionsOf(e[3])),
      sketches: this.lsh.sketches(v.vecs, keypoints),
      keypoints,
    };
    // read one after the other (one transaction's connection runs one query at a time): the images with collisions
    // enough to be verified
    for (let i = 0; i < entries.length; i++) if (!tooFewCollisions(voted.coll[i]!, p)) await this.prepared(entries[i]![1]);
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
    const base = { searched: w.searched, picture: w.picture, promise: promiseOf(voted.flatMap((x) => x.direct.map((e) => e[2]))) };
    if (!w.searched && seen) {
      const cand = await this.inWindow(id, seen.cand.map((c) => rescaleCandidate(c, width / seen.width, 1)));
      return { ...base, cand, sure: true, evidence: null };
    }
    const hits = await this.searchOnce(q, voted);
    const cand = await candidatesOf(this.hitTargets(), this.config, q, hits, this.top);
    this.pictures.set(w.picture, { cand, width });
    return { ...base, cand: await this.inWindow(id, cand), sure: !unconfident(this.config, hits), evidence: viewEvidence({ hits }, viewParams(this.config)) };
  }

  /** The direct pass over the global shortlist; the mirror pass (its own global shortlist) when nothing is confident. */
  private async searchOnce(q: Features, voted: PartialVoted[]): Promise<Hit[]> {
    const p = searchParams(this.config);
    const direct = await this.verifyPass(prepare(q), globalShortlist(voted.map((x) => x.direct), p.shortlist), false);
    if (!p.mirror || direct.some((h) => h.score >= p.confidentScore)) return mergeHits(direct, [], false);
    const mirror = await this.verifyPass(prepare(mirrorFeatures(q)), globalShortlist(voted.map((x) => x.mirror), Math.min(p.shortlist, p.mirrorShortlist)), true);
    return mergeHits(direct, mirror, false);
  }

  private hitTargets() {
    return {
      slot: (s: number) => this.targets[s],
      load: async (s: number) => this.prepared(this.targets[s]!.sha),
      bank: this.tx,
    };
  }
}
