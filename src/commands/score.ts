// `capbridge score --en TEXT --zh TEXT [--json]` and `capbridge score --pairs FILE.tsv [--json]`:
// the C-measure of caption pairs, with the matched tokens and entities that explain it.
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { DB_FILE } from '../bank/index.js';
import { addCaptionsToIdf, createScorer, type Scorer, type ScoreResult } from '../lib/comparability/index.js';
import { MIN_DOCS_FOR_IDF } from '../lib/comparability/index.js';
import { readPairsFile } from '../lib/comparability/index.js';
import { UserError } from '../util/errors.js';
import { action, printJson, type Context } from './context.js';

/**
 * A scorer for a command: IDF and the null margin's reference captions from `reference` when given (captions of the
 * user's kind, e.g. a TSV of their own pairs), else from the bank when the data dir holds one with enough captions,
 * otherwise from the captions about to be scored (as the paper does); the lexicon cache in the data dir when it exists.
 */
export async function scorerForCommand(ctx: Context, captions: Array<{ en?: string; zh?: string }>, reference?: Array<{ en?: string; zh?: string }>): Promise<Scorer> {
  const hasBank = !reference && fs.existsSync(path.join(ctx.dataDir, DB_FILE));
  // The lexicon cache lives in the data dir when there is one; scoring alone never creates it.
  const dataDir = fs.existsSync(ctx.dataDir) ? ctx.dataDir : undefined;
  const scorer = hasBank ? await createScorer(ctx.config, { bank: await ctx.bank }) : createScorer(ctx.config, { dataDir });
  if (reference) addCaptionsToIdf(scorer, reference);
  const st = scorer.termStats;
  if (st.docs.en < MIN_DOCS_FOR_IDF || st.docs.zh < MIN_DOCS_FOR_IDF) addCaptionsToIdf(scorer, captions);
  if (!scorer.nullMargin.active) ctx.logger.debug('null margin off: fewer than 20 reference captions a side (give --reference FILE, or score in a bank)');
  const s = scorer.lexicon.stats;
  ctx.logger.debug(`lexicon ${s.fromCache ? 'loaded from' : 'built into'} ${s.file} in ${s.loadMs} ms`);
  return scorer;
}

const r4 = (x: number): number => Math.round(x * 10000) / 10000;

function jsonOf(res: ScoreResult, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...extra, fc: r4(res.fc), fe: r4(res.fe), fl: r4(res.fl), fcov: r4(res.fcov), c: r4(res.c), level: res.level, explain: res.explain };
}

function textOf(res: ScoreResult): string {
  const lines = [`C = ${res.c.toFixed(3)}  level ${res.level}  (fc ${res.fc.toFixed(3)}, fe ${res.fe.toFixed(3)}, fl ${res.fl.toFixed(3)}, fcov ${res.fcov.toFixed(3)})`];
  const mg = res.explain.margin;
  lines.push(`  scale of C: null margin ${mg.scale.toFixed(3)} (chance level ${mg.chance.toFixed(3)}, typical ${mg.typical.toFixed(3)}), specificity ${mg.specificity.toFixed(3)} (typical link specificity ${mg.specificityTypical.toFixed(3)})`);
  for (const m of res.explain.matches) lines.push(`  ${m.en} ↔ ${m.zh}  via "${m.gloss}"  ${m.weight.toFixed(3)}`);
  for (const e of res.explain.entities) lines.push(`  entity ${e.kind}: ${e.en} ↔ ${e.zh}`);
  return lines.join('\n') + '\n';
}

export function registerScore(program: Command): void {
  program
    .command('score')
    .description('score caption pairs with the C-measure (content, entities, length) and give their comparability level')
    .option('--en <text>', 'English caption')
    .option('--zh <text>', 'Chinese caption')
    .option('--pairs <file>', 'TSV with a header and columns en, zh (others ignored): one result per pair, in input order')
    .option('--reference <file>', 'TSV with a header and columns en, zh: captions of your own kind to take IDF and the null margin from (at least 20 a side for the margin) instead of the bank or the captions scored')
    .option('--sentences', 'split --en and --zh into sentences and align them, as the pairing stage does: one result per sentence pair')
    .option('--json', 'one JSON line per pair')
    .action(
      action(async (ctx, opts: { en?: string; zh?: string; pairs?: string; reference?: string; sentences?: boolean; json?: boolean }) => {
        const reference = opts.reference ? await readPairsFile(opts.reference) : undefined;
        if (opts.pairs) {
          if (opts.en || opts.zh) throw new UserError('give either --pairs FILE or --en and --zh, not both');
          const rows = await readPairsFile(opts.pairs);
          const scorer = await scorerForCommand(ctx, rows, reference);
          for (const row of rows) {
            const res = scorer.score(row.en, row.zh);
            if (opts.json) printJson(jsonOf(res, { line: row.line }));
            else process.stdout.write(`${row.line}\t${res.level}\t${res.c.toFixed(4)}\t${row.en}\t${row.zh}\n`);
          }
          return 0;
        }
        if (!opts.en?.trim() || !opts.zh?.trim()) throw new UserError('give --en TEXT and --zh TEXT (both non-empty), or --pairs FILE.tsv');
        const scorer = await scorerForCommand(ctx, [{ en: opts.en, zh: opts.zh }], reference);
        if (opts.sentences) {
          const al = scorer.align(opts.en, opts.zh);
          if (al.refused) throw new UserError(`--${al.refused}: no sentence ends within comparability.maxCaptionChars (${ctx.config.comparability.maxCaptionChars}) characters`);
          for (const p of al.pairs) {
            const spans = { enSentences: p.enSpan, zhSentences: p.zhSpan, en: p.en, zh: p.zh };
            if (opts.json) printJson(jsonOf(p, spans));
            else process.stdout.write(`en ${p.enSpan.join('-')} ↔ zh ${p.zhSpan.join('-')}: ${p.en} | ${p.zh}\n${textOf(p)}`);
          }
          return 0;
        }
        const res = scorer.score(opts.en, opts.zh);
        if (opts.json) printJson(jsonOf(res));
        else process.stdout.write(textOf(res));
        return 0;
      }),
    );
}
