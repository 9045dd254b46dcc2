import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Bank, PairsRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { exportPairs } from '../src/stages/export/export.js';
import { tempDir, runCli } from './helpers.js';
import { addItem, decision, storeDecisions } from './export-helpers.js';

const config = loadConfig({}).config;
const readJsonl = (f: string) => fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

describe('export: pairs, collapse, watermark', () => {
  let dir: string;
  let bank: Bank;
  beforeEach(async () => {
    dir = tempDir();
    bank = await Bank.open(path.join(dir, 'data'));
  });
  afterEach(() => bank.close());

  it('collapses pairs with identical caption texts into one record that keeps every provenance', async () => {
    const s1 = await addItem(bank, dir, 'source', 's1', 'Firefighters battle a blaze downtown.', 1);
    const s2 = await addItem(bank, dir, 'source', 's2', 'Firefighters battle a blaze downtown.', 2);
    const t1 = await addItem(bank, dir, 'target', 't1', '消防员在市中心扑救大火。', 3);
    const t2 = await addItem(bank, dir, 'target', 't2', '消防员在市中心扑救大火。', 4);
    const s3 = await addItem(bank, dir, 'source', 's3', 'A child flies a kite.', 5);
    const t3 = await addItem(bank, dir, 'target', 't3', '一个孩子在放风筝。', 6);
    await storeDecisions(bank, [
      decision(s1, t1, 'Firefighters battle a blaze downtown.', '消防员在市中心扑救大火。', 'par', 0.8),
      decision(s2, t2, 'Firefighters battle a blaze downtown.', '消防员在市中心扑救大火。', 'par', 0.7),
      decision(s1, t2, 'Firefighters battle a blaze downtown.', '消防员在市中心扑救大火。', 'par', 0.75),
      decision(s3, t3, 'A child flies a kite.', '一个孩子在放风筝。', 'com', 0.55),
    ]);
    const out = path.join(dir, 'out.jsonl');
    const sum = await exportPairs(bank, config, { format: 'jsonl', out });
    expect(sum.records).to.equal(2);
    expect(sum.pairs).to.equal(4);
    const recs = readJsonl(out);
    expect(recs.map((r) => r.level)).to.deep.equal(['par', 'com']); // best first
    const fire = recs.find((r) => r.en.startsWith('Firefighters'));
    expect(fire.source_id).to.have.members(['s1', 's2', 's1']);
    expect(fire.target_id).to.have.members(['t1', 't2', 't2']);
    expect(fire.source_url).to.include('https://source.example/s2');
    expect(fire.c).to.equal(0.8); // the best-scored member gives the scores
    // TSV: provenance joined with ' | '
    await exportPairs(bank, config, { format: 'tsv', out: path.join(dir, 'out.tsv') });
    const line = fs.readFileSync(path.join(dir, 'out.tsv'), 'utf8').split('\n').find((l) => l.startsWith('Firefighters'))!;
    expect(line.split('\t')[13]!.split(' | ')).to.have.length(3);
  });

  it('--min-level filters, not-emitted decisions never export', async () => {
    const s1 = await addItem(bank, dir, 'source', 's1', 'One.', 1);
    const t1 = await addItem(bank, dir, 'target', 't1', '一。', 2);
    const s2 = await addItem(bank, dir, 'source', 's2', 'Two.', 3);
    const t2 = await addItem(bank, dir, 'target', 't2', '二。', 4);
    const s3 = await addItem(bank, dir, 'source', 's3', 'Three.', 5);
    await storeDecisions(bank, [
      decision(s1, t1, 'One.', '一。', 'par', 0.9),
      decision(s2, t2, 'Two.', '二。', 'pse', 0.4),
      decision(s3, t2, 'Three.', '二。', 'inc', 0.1, false),
    ]);
    expect((await exportPairs(bank, config, { format: 'jsonl', out: path.join(dir, 'a.jsonl'), minLevel: 'par' })).records).to.equal(1);
    expect((await exportPairs(bank, config, { format: 'jsonl', out: path.join(dir, 'b.jsonl'), minLevel: 'pse' })).records).to.equal(2);
    expect((await bank.repo(PairsRepo).countByLevel())).to.deep.equal({ par: 1, com: 0, pse: 1, inc: 0 });
  });

  it('--new exports each pair once; a re-decided pair with a new caption is exported again; known texts are not repeated', async () => {
    const s1 = await addItem(bank, dir, 'source', 's1', 'A red tram.', 1);
    const t1 = await addItem(bank, dir, 'target', 't1', '一辆红色电车。', 2);
    const s2 = await addItem(bank, dir, 'source', 's2', 'A blue boat.', 3);
    const t2 = await addItem(bank, dir, 'target', 't2', '一艘蓝色的船。', 4);
    await storeDecisions(bank, [decision(s1, t1, 'A red tram.', '一辆红色电车。', 'com', 0.6)]);
    const first = await exportPairs(bank, config, { format: 'jsonl', out: path.join(dir, '1.jsonl'), onlyNew: true });
    expect(first.records).to.equal(1);
    // nothing new: a valid empty file
    const again = await exportPairs(bank, config, { format: 'jsonl', out: path.join(dir, '2.jsonl'), onlyNew: true });
    expect(again.records).to.equal(0);
    expect(fs.readFileSync(path.join(dir, '2.jsonl'), 'utf8')).to.equal('');
    // re-deciding the same pair on the same texts (a re-run) neither duplicates nor re-exports it
    await storeDecisions(bank, [decision(s1, t1, 'A red tram.', '一辆红色电车。', 'com', 0.62), decision(s2, t2, 'A blue boat.', '一艘蓝色的船。', 'par', 0.7)]);
    expect((await bank.repo(PairsRepo).count())).to.equal(2);
    const third = await exportPairs(bank, config, { format: 'jsonl', out: path.join(dir, '3.jsonl'), onlyNew: true });
    expect(readJsonl(path.join(dir, '3.jsonl')).map((r) => r.en)).to.deep.equal(['A blue boat.']);
    expect(third.records).to.equal(1);
    // the caption of s1 changes: the pair is re-decided on new text and is new again
    await storeDecisions(bank, [decision(s1, t1, 'A red tram in the rain.', '一辆红色电车。', 'com', 0.6)]);
    expect((await bank.repo(PairsRepo).count())).to.equal(2);
    expect(readJsonl(path.join(dir, '3.jsonl'))).to.have.length(1);
    await exportPairs(bank, config, { format: 'jsonl', out: path.join(dir, '4.jsonl'), onlyNew: true });
    expect(readJsonl(path.join(dir, '4.jsonl')).map((r) => r.en)).to.deep.equal(['A red tram in the rain.']);
    // a new item pair whose caption texts were already exported is marked, not written twice
    const s3 = await addItem(bank, dir, 'source', 's3', 'A blue boat.', 7);
    await storeDecisions(bank, [decision(s3, t2, 'A blue boat.', '一艘蓝色的船。', 'par', 0.7)]);
    const fifth = await exportPairs(bank, config, { format: 'jsonl', out: path.join(dir, '5.jsonl'), onlyNew: true });
    expect(fifth.records).to.equal(0);
    expect(fifth.skippedKnownTexts).to.equal(1);
    // a full export still holds everything, collapsed
    const all = await exportPairs(bank, config, { format: 'jsonl', out: path.join(dir, 'all.jsonl') });
    expect(all.records).to.equal(2);
    expect(all.pairs).to.equal(3);
  });

  it('lists pairs page by page by score and by date, each pair once, in order', async () => {
    const src: number[] = [];
    const tgt: number[] = [];
    for (let i = 0; i < 4; i++) src.push(await addItem(bank, dir, 'source', `s${i}`, `Caption ${i}.`, i + 1));
    for (let i = 0; i < 5; i++) tgt.push(await addItem(bank, dir, 'target', `t${i}`, `说明${i}。`, i + 11));
    const ds = [];
    for (let i = 0; i < 4; i++) for (let j = 0; j < 5; j++) ds.push(decision(src[i]!, tgt[j]!, `Caption ${i}.`, `说明${j}。`, (['par', 'com', 'pse'] as const)[(i + j) % 3], [0.5, 0.7, 0.5, 0.9][i]! - j * 0.01));
    await storeDecisions(bank, ds);
    const repo = bank.repo(PairsRepo);
    for (const order of ['score', 'date', 'id'] as const) {
      const seen: number[] = [];
      let page = await repo.list({ limit: 3, order });
      while (page.length) {
        seen.push(...page.map((p) => p.id));
        page = await repo.list({ limit: 3, order, after: page[page.length - 1] });
      }
      expect(seen, order).to.have.length(20);
      expect(new Set(seen).size, order).to.equal(20);
    }
    const byScore = (await repo.list({ limit: 100, order: 'score' })).map((p) => p.c!);
    expect(byScore).to.deep.equal([...byScore].sort((a, b) => b - a));
    expect((await repo.list({ limit: 100, level: 'par' })).every((p) => p.level === 'par')).to.equal(true);
  });

  it('the CLI writes valid empty files and exits 0 when there are no pairs', async () => {
    const data = path.join(dir, 'cli-data');
    const res = await runCli(['--data', data, 'export', '--format', 'tsv', '--out', path.join(dir, 'e.tsv'), '--json']);
    expect(res.code, res.stderr).to.equal(0);
    expect(JSON.parse(res.stdout).records).to.equal(0);
    expect(fs.readFileSync(path.join(dir, 'e.tsv'), 'utf8').split('\n')[0]).to.match(/^en\tzh\tlevel\t/);
    const bad = await runCli(['--data', data, 'export', '--format', 'csv', '--out', path.join(dir, 'e.csv')]);
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.match(/csv/);
  });
});
