// A window's wide-baseline stages (run.ts calls them once the window's plain searches are stored): for the pictures
// whose plain search found nothing confident, first the synthesised views (match.views: a view search costs about
// fifteen plain ones, so a share of the window, the most evidence first), then archive matching (match.views.archive:
// dense views of both photos, seconds of CPU, so a share of the window too, the most promising first) for those still
// unconfident. Every decision is taken over the window's own sources in id order, so one process and any number of
// workers (one job is one window) hand out the same stages and end with the same candidates.
import type { CandidateInput } from '../../bank/index.js';
import { FeaturesRepo, isInfrastructureFailure } from '../../bank/index.js';
import type { Config } from '../../config/schema.js';
import { errorMessage } from '../../util/errors.js';
import { archiveRank, candidatesOf, greyLoader, rankAgainstIndex, rescaleCandidate, unconfident } from './rank.js';
import { publishSourceCost, type MatchContext, type MatchWindow, type PictureEntry, type Unconfident } from './context.js';

/** The most promising shortlist first; equal promise by source id (the window's order, the same in every process). */
const byPromise = (a: Unconfident, b: Unconfident) => b.promise - a.promise || a.id - b.id;

export class WideBaseline {
  /** The views search alone with the dense query and no tilted views (match.views.denseBudget's share). */
  private readonly denseOnly: Config;

  constructor(private readonly run: MatchContext) {
    const c = run.config;
    this.denseOnly = { ...c, match: { ...c.match, views: { ...c.match.views, tilts: [] } } };
  }

  /** Both stages over the window; false when the run was stopped meanwhile. */
  async spend(w: MatchWindow): Promise<boolean> {
    if (!(await this.viewsStage(w))) return false;
    return this.archiveStage(w);
  }

  private stopped(): boolean {
    if (!this.run.opts.signal?.aborted) return false;
    this.run.summary.aborted = true;
    return true;
  }

  /**
   * Views only where they can pay: of the pictures whose plain search was not confident, found a plausible candidate
   * (viewEvidence) and a promising shortlist (promise.ts: at least match.views.minVotingKeypoints), match.views.budget of the window (at
   * least one) get the views search, the most promising first; the next match.views.denseBudget get the dense query
   * alone (about two plain searches, not fifteen).
   */
  private async viewsStage(w: MatchWindow): Promise<boolean> {
    const v = this.run.config.match.views;
    const hopeful = w.unconfident.filter((u) => u.evidence !== null && u.promise >= v.minVotingKeypoints).sort(byPromise);
    const budget = hopeful.length ? Math.max(1, Math.floor(v.budget * w.count)) : 0;
    const denseBudget = hopeful.length && v.denseKeypoints ? Math.floor(v.denseBudget * w.count) : 0;
    for (const [k, u] of hopeful.slice(0, Math.max(budget, denseBudget)).entries()) {
      if (this.stopped()) return false;
      await this.viewsOf(w, u, k < budget ? this.run.config : this.denseOnly);
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

  /**
   * Archive matching where it can pay: of the pictures still unconfident whose shortlist was promising (at least
   * match.views.minVotingKeypoints), match.views.archive.budget of the window (at least one) get it, the most promising first.
   */
  private async archiveStage(w: MatchWindow): Promise<boolean> {
    const c = this.run.config;
    const a = c.match.views.archive;
    if (!a.candidates) return true;
    const left = w.unconfident.filter((u) => w.pictures.has(u.picture) && u.promise >= c.match.views.minVotingKeypoints && unconfident(c, u.hits)).sort(byPromise);
    const budget = left.length ? Math.max(1, Math.floor(a.budget * w.count)) : 0;
    for (const u of left.slice(0, budget)) {
      if (this.stopped()) return false;
      await this.archiveOf(w, u);
    }
    return true;
  }

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
      const r = await archiveRank(run.handle, run.config, q, g, u.hits, u.ranking, run.views.run, run.dense, u.at);
      run.summary.archived++;
      u.hits = r.hits;
      const cand = await candidatesOf(run.handle, run.config, q, r.hits, run.top);
      publishSourceCost(u.id, 'archive', c0, w0, cand.length);
      if (r.archive.hits.length) await this.replace(entry, cand);
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
