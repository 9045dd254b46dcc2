// Export per-record isolation: one record that cannot be written (a row a writer throws on, a text a format cannot
// encode) is left out of every file with an error naming its pairs and items, counted in the summary and not marked
// exported; the rest of the export is written (atomically) as usual.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { Bank } from '../src/bank/index.js';
import { DB_FILE } from '../src/bank/bank.js';
import { loadConfig } from '../src/config/load.js';
import { exportPairs } from '../src/stages/export/export.js';
import { collapseGroup } from '../src/stages/export/export.js';
import { ExportRecordError } from '../src/stages/export/record.js';
import { JsonlWriter, MosesWriter, TmxWriter, TsvWriter } from '../src/stages/export/writers/index.js';
import { runCli, tempDir } from './helpers.js';
import { addItem, decision, storeDecisions } from './export-helpers.js';

const config = loadConfig({}).config;
const lines = (f: string) => fs.readFileSync(f, 'utf8').split('\n').filter(Boolean);

describe('export: one bad record does not abort the export', function () {
  this.timeout(30_000);
  let dir: string;
  let bank: Bank;
  beforeEach(async () => {
    dir = tempDir();
    bank = await Bank.open(path.join(dir, 'data'));
  });
  afterEach(() => bank.close());

  it('a row the writers throw on is left out of every file, named in the summary and the log, and retried by the next --new export', async () => {
    const s = [];
    const t = [];
    for (let i = 0; i < 3; i++) {
      s.push(await addItem(bank, dir, 'source', `s${i}`, `Caption number ${i}.`, 1 + 2 * i));
      t.push(await addItem(bank, dir, 'target', `t${i}`, `第${i}个说明。`, 2 + 2 * i));
    }
    await storeDecisions(bank, [
      decision(s[0]!, t[0]!, 'A dog runs on the beach.', '一只狗在海滩上奔跑。', 'par', 0.9),
      decision(s[1]!, t[1]!, 'Firefighters battle a blaze.', '消防员扑救大火。', 'par', 0.8),
      decision(s[2]!, t[2]!, 'A child flies a kite.', '一个孩子在放风筝。', 'com', 0.5),
    ]);
    // a foreign write left a blob where the English text belongs (SQLite's dynamic typing lets it in)
    const raw = new Database(path.join(dir, 'data', DB_FILE));
    const bad = raw.prepare("SELECT id, pair_id AS pairId FROM sentence_pairs WHERE en = 'Firefighters battle a blaze.'").get() as { id: number; pairId: number };
    raw.prepare("UPDATE sentence_pairs SET en = x'00ff10' WHERE id = ?").run(bad.id);

    const errors: string[] = [];
    const logger = { error: (m: string) => errors.push(m), info: () => {}, warn: () => {}, debug: () => {} } as never;
    const out = path.join(dir, 'out');
    const sum = await exportPairs(bank, config, {
      outputs: [
        { format: 'tsv', out: `${out}.tsv` },
        { format: 'moses', out: `${out}.moses` },
        { format: 'tmx', out: `${out}.tmx` },
      ],
      onlyNew: true,
      logger,
    });
    expect(sum.records).to.equal(2);
    expect(sum.skipped).to.equal(1);
    expect(sum.skippedRecords).to.have.length(1);
    expect(sum.skippedRecords[0]).to.deep.include({ sentencePairIds: [bad.id], pairIds: [bad.pairId], sourceIds: ['s1'], targetIds: ['t1'] });
    expect(sum.skippedRecords[0]!.reason).to.equal('en text is binary data, not text');
    expect(errors).to.have.length(1);
    expect(errors[0]).to.include(`sentence pair ${bad.id} `).and.include(`caption pair ${bad.pairId}`).and.include('s1 / t1');
    // every file was written, none holds the bad record, the Moses files stay line-aligned
    expect(lines(`${out}.tsv`).slice(1).map((l) => l.split('\t')[0])).to.deep.equal(['A dog runs on the beach.', 'A child flies a kite.']);
    expect(lines(`${out}.moses.en`)).to.deep.equal(['A dog runs on the beach.', 'A child flies a kite.']);
    expect(lines(`${out}.moses.zh`)).to.deep.equal(['一只狗在海滩上奔跑。', '一个孩子在放风筝。']);
    expect(lines(`${out}.moses.ids`)).to.have.length(2);
    const tmx = fs.readFileSync(`${out}.tmx`, 'utf8');
    expect(tmx.match(/<tu>/g)).to.have.length(2);
    expect(tmx).to.not.include('消防员');
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('out') && !/\.(tsv|tmx|moses\.(en|zh|ids))$/.test(f))).to.deep.equal([]); // no temp files left

    // the command says so on stderr and still succeeds
    const cli = await runCli(['--data', path.join(dir, 'data'), 'export', '--format', 'tsv', '--out', path.join(dir, 'cli.tsv')]);
    expect(cli.code).to.equal(0);
    expect(cli.stdout).to.include('2 sentence pairs');
    expect(cli.stderr).to.include('1 record could not be written').and.include(`sentence pairs ${bad.id} (caption pair ${bad.pairId}; items s1 / t1): en text is binary data`);
    expect(lines(path.join(dir, 'cli.tsv'))).to.have.length(3);

    // not marked exported: the next --new export tries it again (and, once the row is repaired, writes it)
    const again = await exportPairs(bank, config, { format: 'jsonl', out: `${out}-2.jsonl`, onlyNew: true });
    expect(again).to.deep.include({ records: 0, skipped: 1 });
    raw.prepare("UPDATE sentence_pairs SET en = 'Firefighters battle a blaze.' WHERE id = ?").run(bad.id);
    raw.close();
    const fixed = await exportPairs(bank, config, { format: 'jsonl', out: `${out}-3.jsonl`, onlyNew: true });
    expect(fixed).to.deep.include({ records: 1, skipped: 0 });
    expect(JSON.parse(lines(`${out}-3.jsonl`)[0]!)).to.deep.include({ en: 'Firefighters battle a blaze.', pair_id: [String(bad.pairId)] });
  });

  it('a text UTF-8 cannot encode (an unpaired surrogate) is refused by the UTF-8 writers with the reason, and no file takes a part of it', () => {
    const good = collapseGroup([
      {
        id: 1, pairId: 7, en: 'A dog.', zh: '一只狗。', level: 'par', c: 0.9, fc: 0.9, fe: 0, fl: 1, fcov: 0.9, enFirst: 0, enLast: 0, zhFirst: 0, zhLast: 0,
        sourceExtId: 's7', targetExtId: 't7', textKey: 'k', textExported: 0,
      } as never,
    ]);
    const bad = { ...good, zh: '一只\ud800狗。' };
    const dir2 = tempDir();
    const writers = [new TsvWriter(path.join(dir2, 'a.tsv')), new JsonlWriter(path.join(dir2, 'a.jsonl')), new MosesWriter(path.join(dir2, 'a'))];
    for (const w of writers) {
      expect(() => w.render(bad)).to.throw(ExportRecordError, /unpaired surrogate U\+D800 at character \d+ cannot be encoded as UTF-8/);
      w.write(good);
      w.commit();
    }
    expect(lines(path.join(dir2, 'a.tsv'))).to.have.length(2);
    expect(lines(path.join(dir2, 'a.jsonl'))).to.have.length(1);
    expect(lines(path.join(dir2, 'a.zh'))).to.deep.equal(['一只狗。']);
    // TMX drops what XML 1.0 forbids (its documented behaviour): the record is written without the stray surrogate
    const tmx = new TmxWriter(path.join(dir2, 'a.tmx'));
    expect(tmx.render(bad)[0]).to.include('<seg>一只狗。</seg>');
    tmx.abort();
  });
});
