// A window's wide-baseline stages (run.ts calls them once the window's plain searches are stored): for the pictures
// whose plain search found nothing confident, first the synthesised views (match.views: a view search costs about
// fifteen plain ones, so a share of the window, the most evidence first), then archive matching (match.views.archive:
// dense views of both photos, seconds of CPU, so a share of the window too, the most promising first) for those still
// unconfident; match.views.archive.views orders them: by default (`none`) archive matching first, and a picture it
// takes gets no views search (it subsumes them; issue 33 round 5: the same pairs for less CPU). Every decision is taken over the window's own sources in id order, so one process and any number of
// workers (one job is one window) hand out the same stages and end with the same candidates. A sharded index decides
// once over every shard's plain search (decideWide, when the window's last shard is in), not per shard.
import type { CandidateInput, PartialWide } from '../../bank/index.js';
import { FeaturesRepo, isInfrastructureFailure } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import { errorMessage } from '../../util/errors.js';
import { archiveRank, candidatesOf, greyLoader, rankAgainstIndex, rescaleCandidate, unconfident } from './rank.js';
import { publishSourceRanking } from './rankings.js';
import { publishSourceCost, type MatchContext, type MatchWindow, type PictureEntry, type Unconfident } from './context.js';
import { chooseArchive, chooseViews } from './choice.js';

export class WideBaseline {
  /** The views search alone with the dense query and no tilted views (match.views.denseBudget's share). */
  private readonly denseOnly: Config;

  constructor(private readonly run: MatchContext) {
    const c = run.config;
    this.denseOnly = { ...c, match: { ...c.match, views: { ...c.match.views, tilts: [] } } };
  }

  /** Both stages over the window, in match.views.archive.views's order; false when the run was stopped meanwhile. */
  async spend(w: MatchWindow): Promise<boolean> {
    if (this.run.config.match.views.archive.views === 'before') {
      if (!(await this.viewsStage(w, w.unconfident))) return false;
      return this.archiveStage(w);
    }
    const archived = new Set<string>();
    if (!(await this.archiveStage(w, archived))) return false;
    return this.viewsStage(w, w.unconfident.filter((u) => !archived.has(u.picture) && w.pictures.has(u.picture) && unconfident(this.run.config, u.hits)));
  }

  /** The stages a sharded window's decision gave its pictures (decideWide), on this run's shard, in source id order;
   *  archive matching where the shard's search is still unconfident. False when the run was stopped meanwhile. */
  async spendChosen(w: MatchWindow, stages: Map<string, NonNullable<PartialWide['stages']>>): Promise<boolean> {
    const chosen = [...w.unconfident].sort((a, b) => a.id - b.id);
    const archived = new Set<string>();
    const first = this.run.config.match.views.archive.views !== 'before';
    if (first && !(await this.archiveChosen(w, chosen, stages, archived))) return false;
    for (const u of chosen) {
      const v = stages.get(u.picture)?.views;
      if (!v || !w.pictures.has(u.picture) || (first && archived.has(u.picture))) continue;
      if (this.stopped()) return false;
      await this.viewsOf(w, u, v === 'full' ? this.run.config : this.denseOnly);
    }
    return first || this.archiveChosen(w, chosen, stages, archived);
  }

  private async archiveChosen(w: MatchWindow, chosen: Unconfident[], stages: Map<string, NonNullable<PartialWide['stages']>>, archived: Set<string>): Promise<boolean> {
    for (const u of chosen) {
      if (!stages.get(u.picture)?.archive || !w.pictures.has(u.picture) || !unconfident(this.run.config, u.hits)) continue;
      if (this.stopped()) return false;
      archived.add(u.picture);
      await this.archiveOf(w, u);
    }
    return true;
  }

  private stopped(): boolean {
    if (!this.run.opts.signal?.aborted) return false;
    this.run.summary.aborted = true;
    return true;
  }

  /** The views (chooseViews) for `list`, the window's unconfident pictures (those archive matching left, archive first). */
  private async viewsStage(w: MatchWindow, list: Unconfident[]): Promise<boolean> {
    for (const { u, dense } of chooseViews(list, w.count, this.run.config.match.views)) {
      if (this.stopped()) return false;
      await this.viewsOf(w, u, dense ? this.denseOnly : this.run.config);
    }
    return true;
  }

  /** One picture's views search: its candidates (and every source's showing it) replaced by the views search's. */
  private async viewsOf(w: MatchWindow, u: Unconfident, config: Config): Promise<void> {
    const run = this.run;
    const q = await run.bank.repo(FeaturesRepo).get(u.sha);
    const entry = w.pictures.get(u.picture);
    if (!q || !entry) return;
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    try {
      const r = await rankAgainstIndex(run.handle, config, q, run.top, greyLoader(run.config, () => run.bank.images.read(u.sha)), run.views.run, () => true, u.at);
      publishSourceCost(u.id, 'views', c0, w0, r.cand.length);
      if (!r.usedViews) return;
      run.summary.viewed++;
      u.hits = r.hits;
      await this.replace(entry, r.cand);
    } catch (err) {
      await this.failed(entry, u, 'views', err);
    }
  }

  /** Archive matching (chooseArchive) for the pictures still unconfident (after the views, or first); the pictures it
   *  took, in `archived`. */
  private async archiveStage(w: MatchWindow, archived?: Set<string>): Promise<boolean> {
    const c = this.run.config;
    for (const u of chooseArchive(w.unconfident.filter((u) => w.pictures.has(u.picture) && unconfident(c, u.hits)), w.count, c)) {
      if (this.stopped()) return false;
      archived?.add(u.picture);
      await this.archiveOf(w, u);
    }
    return true;
  }

  /** One picture's archive matching: its candidates (and every source's showing it) replaced by what it found. */
  private async archiveOf(w: MatchWindow, u: Unconfident): Promise<void> {
    const run = this.run;
    const q = await run.bank.repo(FeaturesRepo).get(u.sha);
    const entry = w.pictures.get(u.picture);
    if (!q || !entry || !u.hits.length) return;
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    try {
      const g = await greyLoader(run.config, () => run.bank.images.read(u.sha))();
      if (!g || g.width !== q.width || g.height !== q.height) return;
      const shared = run.sharded ? () => run.dense.query(u.sha, q, g) : undefined;
      const r = await archiveRank(run.handle, run.config, q, g, u.hits, u.ranking, run.views.run, run.dense, u.at, shared);
      publishSourceRanking(u.id, 'archive', () => r.compared.map((c) => [run.handle.slot(c.slot)?.itemId ?? -1, c.votes]));
      run.summary.archived++;
      u.hits = r.hits;
      const cand = await candidatesOf(run.handle, run.config, q, r.hits, run.top);
      publishSourceCost(u.id, 'archive', c0, w0, cand.length);
      if (!r.archive.hits.length) return;
      await this.replace(entry, cand);
    } catch (err) {
      await this.failed(entry, u, 'archive', err);
    }
  }

  /** A picture's new candidates for every source showing it (in its own pixels, within its lsh.window). */
  private async replace(entry: PictureEntry, cand: CandidateInput[]): Promise<void> {
    const run = this.run;
    const now = new Date().toISOString();
    const perMember = new Map<number, CandidateInput[]>();
    for (const m of entry.members) perMember.set(m.id, await run.inWindow(m.id, cand.map((c) => rescaleCandidate(c, m.width / entry.width, 1))));
    const before = entry.cand.length;
    await run.bank.transaction(async (tx) => {
      for (const m of entry.members) await run.sink.put(tx, m, perMember.get(m.id)!, now);
    });
    for (const m of entry.members) {
      const n = perMember.get(m.id)!.length;
      if (!before && n) run.summary.withCandidates++;
      run.summary.candidates += n - before;
    }
    entry.cand = cand;
  }

  /** A stage that threw for one picture: its sources keep their candidates so far, marked failed with the reason. */
  private async failed(entry: PictureEntry, u: Unconfident, stage: string, err: unknown): Promise<void> {
    if (isInfrastructureFailure(err)) throw err;
    const reason = `${stage}: ${errorMessage(err)}`;
    this.run.opts.logger?.warn(`match: source item ${u.id} failed: ${reason}`);
    await this.run.bank.transaction(async (tx) => {
      for (const m of entry.members) await tx.items.setStatus(m.id, 'failed', reason);
    });
    this.run.summary.failed += entry.members.length;
    this.run.window.pictures.delete(u.picture);
  }
}
