// Sentence pairs end to end: the pairing stage with the real C-measure splits and aligns multi-sentence captions,
// stores each sentence pair with its caption pair's provenance, and the exports write sentence pairs; captions are
// bounded before scoring (issue 18: a 1 MB caption against an 8-character one); the seed paper's filters are
// options of the decision; a grown IDF table re-decides old pairs.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Bank, CandidatesRepo, PairsRepo, SentencePairsRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import { createScorer } from '../src/lib/comparability/index.js';
import { exportPairs } from '../src/stages/export/export.js';
import { runPairing } from '../src/stages/pair/pairing.js';
import { tempDir } from './helpers.js';
import { addItem } from './export-helpers.js';
import { testLexiconDir } from './helpers/comparability.js';

const base = loadConfig({ env: {} }).config;
const withConfig = (over: { export?: Partial<Config['export']>; comparability?: Partial<Config['comparability']> }): Config => ({
  ...base,
  export: { ...base.export, ...over.export },
  comparability: { ...base.comparability, ...over.comparability },
});

async function candidate(bank: Bank, s: number, t: number, rank = 0): Promise<void> {
  await bank.repo(CandidatesRepo).replaceFor(
    s,
    [{ targetItemId: t, rank, imageScore: 0.9, matches: 120, inliers: 80, homography: [1, 0, 0, 0, 1, 0, 0, 0, 1], mirrored: false, pairs: null }],
    new Date().toISOString(),
  );
}

function tsvRows(file: string): Array<Record<string, string>> {
  const [head, ...lines] = fs.readFileSync(file, 'utf8').trim().split('\n');
  const cols = head!.split('\t');
  return lines.map((l) => Object.fromEntries(l.split('\t').map((v, i) => [cols[i], v])));
}

describe('export: sentence pairs from multi-sentence captions', function () {
  this.timeout(120_000);
  let dir: string;
  let bank: Bank;
  beforeEach(async () => {
    dir = tempDir();
    bank = await Bank.open(path.join(dir, 'data'));
  });
  afterEach(() => bank.close());
  const pair = async (config: Config) => runPairing(bank, config, { scorer: await createScorer(config, { bank, cacheDir: testLexiconDir() }) });

  it('aligns the sentences of a caption pair, emits the ones with a counterpart, exports them with the caption pair\'s ids', async () => {
    const s = await addItem(bank, dir, 'source', 'story-1',
      'Firefighters battle a blaze in a warehouse in Sydney on Monday. The stock market fell sharply in New York. Photo: Reuters/Jane Doe', 1);
    const t = await addItem(bank, dir, 'target', 'story-1-zh', '周一，消防员在悉尼一座仓库扑灭大火。新华社记者 张三 摄', 2);
    await candidate(bank, s, t);
    const summary = await pair(base);
    expect(summary.emitted).to.equal(1);
    expect(summary.sentencePairs).to.equal(1);
    const p = (await bank.repo(PairsRepo).get(s, t))!;
    const sp = await bank.repo(SentencePairsRepo).ofPair(p.id);
    // two English sentences (the credit is not one), one Chinese: the fire sentence pairs, the market one does not
    const emitted = sp.filter((x) => x.emitted);
    expect(emitted.map((x) => [x.en, x.zh, x.enFirst, x.zhFirst])).to.deep.equal([
      ['Firefighters battle a blaze in a warehouse in Sydney on Monday.', '周一，消防员在悉尼一座仓库扑灭大火。', 0, 0],
    ]);
    expect(sp.every((x) => !x.en.includes('Reuters') && !x.zh.includes('摄'))).to.equal(true);
    expect(p.c).to.equal(emitted[0]!.c); // the caption pair carries its best sentence pair's scores
    const out = path.join(dir, 'corpus.tsv');
    await exportPairs(bank, base, { format: 'tsv', out });
    const rows = tsvRows(out);
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ en: emitted[0]!.en, zh: emitted[0]!.zh, pair_id: String(p.id), en_sentences: '0', zh_sentences: '0', source_id: 'story-1', target_id: 'story-1-zh' });
    // JSONL and the Moses provenance file carry the same ids
    await exportPairs(bank, base, { format: 'jsonl', out: path.join(dir, 'corpus.jsonl') });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'corpus.jsonl'), 'utf8'))).to.include.keys('pair_id', 'en_sentences', 'zh_sentences');
    await exportPairs(bank, base, { format: 'moses', out: path.join(dir, 'corpus') });
    expect(fs.readFileSync(path.join(dir, 'corpus.ids'), 'utf8').split('\t')[1]).to.equal(String(p.id));
  });

  it('bounds a 1 MB caption before scoring: nothing past maxCaptionChars is read, the blob is never emitted as par', async () => {
    // issue 18, finding 3: a 1 MB caption took 51 s to pair and was emitted as par against an 8-character caption
    const t = await addItem(bank, dir, 'target', 'short', '一只狗在海滩上跑', 3);
    const noStop = await addItem(bank, dir, 'source', 'blob', 'dog beach run '.repeat(75_000), 4); // 1 MB, no sentence end
    const repeated = await addItem(bank, dir, 'source', 'repeated', 'A dog runs on the beach. '.repeat(42_000), 5); // 1 MB of sentences
    await candidate(bank, noStop, t);
    await candidate(bank, repeated, t);
    const summary = await pair(base);
    expect(summary.decided).to.equal(2);
    const repo = bank.repo(PairsRepo);
    const blob = (await repo.get(noStop, t))!;
    expect([blob.emitted, blob.reason, blob.level]).to.deep.equal([0, 'caption-too-long', null]);
    const rep = (await repo.get(repeated, t))!;
    const sentences = await bank.repo(SentencePairsRepo).ofPair(rep.id);
    // at most maxSentences sentences were read from it, each a real sentence
    expect(sentences.length).to.be.at.most(base.comparability.maxSentences);
    // each stored pair holds real sentences (one, or the caption pair whole when no sentence is clear of the others)
    for (const x of sentences) for (const e of x.en.split(/(?<=\.) /)) expect(e).to.equal('A dog runs on the beach.');
    const out = path.join(dir, 'bounded.tsv');
    await exportPairs(bank, base, { format: 'tsv', out, minLevel: 'pse' });
    for (const r of tsvRows(out)) expect(r.en!.length).to.be.at.most(base.comparability.maxCaptionChars);
  });

  it('applies the seed paper\'s filters at pairing time when asked, never at harvest time', async () => {
    const s = await addItem(bank, dir, 'source', 'two', 'A black dog runs across the green field. The dog is chasing a red ball.', 6);
    const t = await addItem(bank, dir, 'target', 'two-zh', '一只黑狗跑过绿色的田野。', 7);
    await candidate(bank, s, t);
    expect((await pair(base)).emitted).to.equal(1);
    const strict = withConfig({ export: { maxSentences: 1 } });
    const r = await runPairing(bank, strict, { all: true, scorer: await createScorer(strict, { bank, cacheDir: testLexiconDir() }) });
    expect([r.emitted, r.notEmitted.filter]).to.deep.equal([0, 1]);
    expect((await bank.repo(PairsRepo).get(s, t))!.reason).to.equal('filter:sentences');
    const words = withConfig({ export: { maxChineseWords: 3 } });
    await runPairing(bank, words, { all: true, scorer: await createScorer(words, { bank, cacheDir: testLexiconDir() }) });
    expect((await bank.repo(PairsRepo).get(s, t))!.reason).to.equal('filter:chinese-words');
    // the caption was stored whole: turning the filters off again needs no re-crawl
    expect((await bank.items.byId(s))!.caption).to.contain('red ball');
  });

  it('a bank from before sentence pairs: its pairs are re-decided once, and what was exported is not exported again', async () => {
    const s = await addItem(bank, dir, 'source', 'old', 'A black dog runs across the green field.', 10);
    const t = await addItem(bank, dir, 'target', 'old-zh', '一只黑狗跑过绿色的田野。', 11);
    await candidate(bank, s, t);
    await pair(base);
    await exportPairs(bank, base, { format: 'tsv', out: path.join(dir, 'first.tsv'), onlyNew: true });
    expect(tsvRows(path.join(dir, 'first.tsv'))).to.have.length(1);
    // what migration 11 finds in an older bank: decided and exported caption pairs, no sentence pairs, no idf_docs
    await bank.sql.exec('DELETE FROM sentence_pairs; UPDATE pairs SET idf_docs = NULL');
    const again = await pair(base);
    expect([again.decided, again.sentencePairs]).to.deep.equal([1, 1]);
    await exportPairs(bank, base, { format: 'tsv', out: path.join(dir, 'second.tsv'), onlyNew: true });
    expect(tsvRows(path.join(dir, 'second.tsv'))).to.have.length(0);
  });

  it('re-decides pairs scored with an IDF table that has since grown by more than export.rescoreDrift', async () => {
    const s = await addItem(bank, dir, 'source', 'idf', 'A black dog runs across the green field.', 8);
    const t = await addItem(bank, dir, 'target', 'idf-zh', '一只黑狗跑过绿色的田野。', 9);
    await candidate(bank, s, t);
    await pair(base);
    const before = (await bank.repo(PairsRepo).get(s, t))!;
    expect((await pair(base)).decided).to.equal(0); // nothing changed
    // 30 more captions on each side: the IDF table grows from 2 to 62 documents
    for (let i = 0; i < 30; i++) {
      await addItem(bank, dir, 'source', `more-${i}`, `A man rides a bicycle down street number ${i}.`, 100 + i);
      await addItem(bank, dir, 'target', `more-zh-${i}`, `一个男人在第${i}号街上骑自行车。`, 200 + i);
    }
    const again = await pair(base);
    expect(again.decided).to.equal(1);
    const after = (await bank.repo(PairsRepo).get(s, t))!;
    expect(after.decidedAt > before.decidedAt || after.c !== before.c).to.equal(true);
    expect((await pair(base)).decided).to.equal(0); // and once only
  });
});
