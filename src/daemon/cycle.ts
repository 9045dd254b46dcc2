// One pipeline cycle of the daemon: crawl → features → match → pair, each a stage of src/stages/ (resumable runs over
// bank rows). A stage that fails is logged and counted, and the cycle goes on with what is in the bank. The abort
// signal is passed to every stage and checked between.
import path from 'node:path';
import type { Bank } from '../bank/index.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../util/log.js';
import { errorMessage } from '../util/errors.js';
import { STAGES, loadStage, type StageExtras, type StageName } from '../stages/index.js';
import type { ExportFormat, ExportSummary } from '../stages/export/index.js';
import type { DaemonMetrics } from './metrics.js';

export type { StageName };

export interface StageReport {
  stage: StageName;
  result: 'ok' | 'error' | 'aborted';
  ms: number;
  summary?: Record<string, unknown>;
  error?: string;
}

export interface CycleReport {
  startedAt: string;
  finishedAt: string;
  ok: boolean;
  aborted: boolean;
  stages: StageReport[];
}

export interface CycleOptions {
  logger: Logger;
  signal?: AbortSignal;
  metrics?: DaemonMetrics;
  /** Stages to run (default all); the crawl can be left out (import-only data dirs). */
  stages?: StageName[];
  /** Extra options for the crawl stage (e.g. { site }). */
  crawlOptions?: StageExtras['crawl'];
}

/** Scale-out mode (a PostgreSQL bank): the daemon exports, and only schedules the stages as jobs for `capbridge worker`
 *  processes (src/worker/): its crawl step queues one crawl job per host group (workers with `--stages crawl` run
 *  them), its features step is one scheduling round, match and pair are the workers'. */
async function queueCrawl(bank: Bank, config: Config, opts: CycleOptions): Promise<Record<string, unknown>> {
  const { queueCrawlJobs } = await import('../worker/crawl-jobs.js');
  return { ...(await queueCrawlJobs(bank, config, { sitesDir: opts.crawlOptions?.sitesDir })), scaleOut: true };
}

async function scheduleRound(bank: Bank, config: Config): Promise<Record<string, unknown>> {
  const { schedule } = await import('../worker/schedule.js');
  return { ...(await schedule(bank, config)), scaleOut: true };
}

/** One stage of the cycle: its own summary (what the cycle report and the metrics show). */
async function runStage(stage: StageName, bank: Bank, config: Config, opts: CycleOptions): Promise<Record<string, unknown>> {
  const { logger, signal } = opts;
  if (stage === 'crawl') return { ...(await (await loadStage('crawl'))(bank, config, { logger, signal, ...opts.crawlOptions })).detail };
  const s = await (await loadStage(stage))(bank, config, { logger, signal });
  return { ...s.detail };
}

export async function runCycle(bank: Bank, config: Config, opts: CycleOptions): Promise<CycleReport> {
  const { logger, signal, metrics } = opts;
  const report: CycleReport = { startedAt: new Date().toISOString(), finishedAt: '', ok: true, aborted: false, stages: [] };
  const scaleOut = bank.dialect === 'postgres';
  for (const stage of (opts.stages ?? [...STAGES]).filter((s) => !scaleOut || (s !== 'match' && s !== 'pair'))) {
    if (signal?.aborted) {
      report.aborted = true;
      break;
    }
    const t0 = performance.now();
    const rep: StageReport = { stage, result: 'ok', ms: 0 };
    logger.info(`${stage}: started`);
    try {
      const summary = !scaleOut
        ? await runStage(stage, bank, config, opts)
        : stage === 'crawl'
          ? await queueCrawl(bank, config, opts)
          : await scheduleRound(bank, config);
      rep.summary = summary;
      if (signal?.aborted || summary?.aborted === true) rep.result = 'aborted';
      metrics?.recordSummary(stage, summary ?? {});
      logger.info(`${stage}: ${rep.result}`, { summary });
    } catch (err) {
      if (signal?.aborted) rep.result = 'aborted';
      else {
        rep.result = 'error';
        rep.error = errorMessage(err);
        report.ok = false;
        metrics?.errors.inc({ stage });
        logger.error(`${stage}: failed — ${rep.error}`);
        if (process.env.CAPBRIDGE_DEBUG) logger.error((err as Error).stack ?? '');
      }
    }
    rep.ms = Math.round(performance.now() - t0);
    metrics?.stageDuration.observe({ stage }, rep.ms / 1000);
    metrics?.stageRuns.inc({ stage, result: rep.result });
    report.stages.push(rep);
    if (rep.result === 'aborted') {
      report.aborted = true;
      break;
    }
  }
  report.finishedAt = new Date().toISOString();
  if (report.aborted) report.ok = false;
  metrics?.cycles.inc({ result: report.aborted ? 'aborted' : report.ok ? 'ok' : 'error' });
  if (report.ok) {
    metrics?.lastSuccess.set(Date.parse(report.finishedAt) / 1000);
    await bank.meta.setJson('daemon.lastSuccessfulCycle', report);
  }
  await bank.meta.setJson('daemon.lastCycle', report);
  return report;
}

const EXT: Record<ExportFormat, string> = { tsv: 'tsv', jsonl: 'jsonl', tmx: 'tmx', moses: 'moses' };

/** The scheduled export: pairs never exported before, as dated files in <data>/<export.folder>/. */
export async function runScheduledExport(bank: Bank, config: Config, opts: { logger: Logger; now?: Date; metrics?: DaemonMetrics }): Promise<ExportSummary> {
  const now = opts.now ?? new Date();
  const stamp = now.toISOString().replace(/:/g, '').replace(/\.\d+Z$/, 'Z'); // 2026-11-23T031500Z
  const folder = path.resolve(bank.dataDir, config.export.folder);
  const outputs = config.export.nightlyFormats.map((format) => ({ format, out: path.join(folder, `pairs-${stamp}.${EXT[format]}`) }));
  const t0 = performance.now();
  try {
    const { detail: summary } = await (await loadStage('export'))(bank, config, { outputs, onlyNew: true, logger: opts.logger });
    opts.metrics?.stageRuns.inc({ stage: 'export', result: 'ok' });
    await bank.meta.setJson('daemon.lastExport', { at: now.toISOString(), files: summary.files, records: summary.records });
    return summary;
  } catch (err) {
    opts.metrics?.errors.inc({ stage: 'export' });
    opts.metrics?.stageRuns.inc({ stage: 'export', result: 'error' });
    throw err;
  } finally {
    opts.metrics?.stageDuration.observe({ stage: 'export' }, (performance.now() - t0) / 1000);
  }
}
