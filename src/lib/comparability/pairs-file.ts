// Reading pairs files (TSV, header first; columns en, zh, and level for calibration; others ignored).
// Problems name FILE:LINE.
import { openTsv } from '../../util/tsv.js';
import { UserError } from '../../util/errors.js';
import { isLevel, type Level } from './levels.js';

export interface PairRow {
  line: number;
  en: string;
  zh: string;
  level?: Level;
  corpus?: string;
}

export async function readPairsFile(file: string, opts: { requireLevel?: boolean } = {}): Promise<PairRow[]> {
  const required = opts.requireLevel ? ['level', 'en', 'zh'] : ['en', 'zh'];
  const reader = await openTsv(file, required);
  const width = reader.header.length;
  const out: PairRow[] = [];
  try {
    for await (const row of reader.rows) {
      if (row.problem) throw new UserError(`${file}:${row.line}: ${row.problem}`);
      if (row.fields.length < width) {
        throw new UserError(`${file}:${row.line}: expected ${width} tab-separated fields (${reader.header.join(', ')}), found ${row.fields.length}`);
      }
      const en = (row.get('en') ?? '').trim();
      const zh = (row.get('zh') ?? '').trim();
      if (!en) throw new UserError(`${file}:${row.line}: empty "en" caption`);
      if (!zh) throw new UserError(`${file}:${row.line}: empty "zh" caption`);
      const pair: PairRow = { line: row.line, en, zh };
      const levelText = row.get('level');
      if (levelText !== undefined) {
        const l = levelText.trim().toLowerCase();
        if (!isLevel(l)) {
          if (opts.requireLevel) throw new UserError(`${file}:${row.line}: unknown level "${levelText}" (expected par, com, pse or inc)`);
        } else pair.level = l;
      }
      const corpus = row.get('corpus');
      if (corpus) pair.corpus = corpus;
      out.push(pair);
    }
  } finally {
    reader.close();
  }
  if (!out.length) throw new UserError(`${file}: no pairs after the header`);
  return out;
}
