import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { createWriter, mosesPaths, type ExportFormat } from '../src/stages/export/writers/index.js';
import { EXPORT_FIELDS, type ExportRecord } from '../src/stages/export/record.js';
import { AtomicWriter } from '../src/util/atomic.js';
import { tempDir } from './helpers.js';

const nasty: ExportRecord = {
  en: 'Fire & <smoke> over "Old Town"\tat\nnight\u0001',
  zh: '老城区上空的火\n与烟 <夜>',
  level: 'com', c: 0.61234567, fc: 0.7, fe: 0.25, fl: 0.95, fcov: 0.6, image_score: 0.82, inliers: 57,
  source_url: ['https://en.example/a?x=1&y=2', 'https://en2.example/b'],
  target_url: ['https://zh.example/a', 'https://zh.example/b'],
  source_image: ['https://en.example/a.jpg', 'https://en2.example/b.jpg'],
  target_image: ['https://zh.example/a.jpg', 'https://zh.example/b.jpg'],
  source_id: ['s1', 's2'], target_id: ['t1', 't2'], pair_id: ['7', '9'], en_sentences: ['0', '1-2'], zh_sentences: ['1', '0'],
  harvested_at: '2026-11-01T00:00:00.000Z',
  source_credit: ['REUTERS/Jane Doe', ''], target_credit: ['新华社记者 才扬 摄', ''],
};
const plain: ExportRecord = { ...nasty, en: 'A dog runs on the beach.', zh: '一只狗在海滩上奔跑。', level: 'par', source_url: ['u'], target_url: ['v'], source_image: ['i'], target_image: ['j'], source_id: ['s3'], target_id: ['t3'], pair_id: ['4'], en_sentences: ['0'], zh_sentences: ['0'], source_credit: [''], target_credit: [''] };

function write(format: ExportFormat, file: string, recs: ExportRecord[]): string[] {
  const w = createWriter(format, file);
  for (const r of recs) w.write(r);
  w.commit();
  return w.paths;
}

describe('export writers', () => {
  let dir: string;
  beforeEach(() => (dir = tempDir()));

  it('TSV: header, one line per record, tabs/newlines collapsed, provenance joined with " | "', () => {
    const [file] = write('tsv', path.join(dir, 'out.tsv'), [nasty, plain]);
    const lines = fs.readFileSync(file!, 'utf8').split('\n');
    expect(lines[0]).to.equal(EXPORT_FIELDS.join('\t'));
    expect(lines).to.have.length(4); // header, 2 records, trailing ''
    const cells = lines[1]!.split('\t');
    expect(cells).to.have.length(EXPORT_FIELDS.length);
    expect(cells[0]).to.equal('Fire & <smoke> over "Old Town" at night');
    const cell = (f: (typeof EXPORT_FIELDS)[number]) => cells[EXPORT_FIELDS.indexOf(f)];
    expect(cell('level')).to.equal('com');
    expect(cell('c')).to.equal('0.6123');
    expect(cell('inliers')).to.equal('57');
    expect(cell('source_url')).to.equal('https://en.example/a?x=1&y=2 | https://en2.example/b');
    expect(cell('source_id')).to.equal('s1 | s2');
    // the sentence pair's caption pairs and where the sentences sit in them
    expect([cell('pair_id'), cell('en_sentences'), cell('zh_sentences')]).to.deep.equal(['7 | 9', '0 | 1-2', '1 | 0']);
    expect(cell('source_credit')).to.equal('REUTERS/Jane Doe | ');
    expect(cell('target_credit')).to.equal('新华社记者 才扬 摄 | ');
  });

  it('JSONL: the same fields, provenance as arrays', () => {
    const [file] = write('jsonl', path.join(dir, 'out.jsonl'), [nasty, plain]);
    const recs = fs.readFileSync(file!, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(recs).to.have.length(2);
    expect(Object.keys(recs[0])).to.deep.equal([...EXPORT_FIELDS]);
    expect(recs[0].en).to.equal(nasty.en);
    expect(recs[0].source_url).to.deep.equal(nasty.source_url);
    expect(recs[0].target_credit).to.deep.equal(['新华社记者 才扬 摄', '']);
  });

  it('TMX 1.4b: well-formed, en + zh-CN tuv, props, escaped text', () => {
    const [file] = write('tmx', path.join(dir, 'out.tmx'), [nasty, plain]);
    const xml = fs.readFileSync(file!, 'utf8');
    expect(XMLValidator.validate(xml)).to.equal(true);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', isArray: (n) => ['tu', 'tuv', 'prop'].includes(n) }).parse(xml);
    expect(doc.tmx['@version']).to.equal('1.4');
    expect(doc.tmx.header['@srclang']).to.equal('en');
    const tus = doc.tmx.body.tu;
    expect(tus).to.have.length(2);
    const tuv = tus[0].tuv;
    expect(tuv.map((t: Record<string, string>) => t['@xml:lang'])).to.deep.equal(['en', 'zh-CN']);
    expect(xml).to.include('Fire &amp; &lt;smoke&gt; over &quot;Old Town&quot; at night</seg>');
    expect(tuv[0].seg).to.equal('Fire & <smoke> over "Old Town" at night');
    expect(tuv[1].seg).to.equal('老城区上空的火 与烟 <夜>');
    const props = Object.fromEntries(tus[0].prop.map((p: Record<string, string>) => [p['@type'], String(p['#text'])]));
    expect(props['x-level']).to.equal('com');
    expect(props['x-inliers']).to.equal('57');
    expect(props['x-source-url']).to.equal('https://en.example/a?x=1&y=2 | https://en2.example/b');
    expect([props['x-pair-id'], props['x-en-sentences'], props['x-zh-sentences']]).to.deep.equal(['7 | 9', '0 | 1-2', '1 | 0']);
    expect(props['x-source-credit']).to.equal('REUTERS/Jane Doe |');
    expect(props['x-target-credit']).to.equal('新华社记者 才扬 摄 |');
    // No credit anywhere: no credit prop.
    const plainProps = tus[1].prop.map((p: Record<string, string>) => p['@type']);
    expect(plainProps).to.not.include('x-source-credit');
  });

  it('Moses: two line-aligned files, one sentence per line, and their provenance in a third', () => {
    const paths = write('moses', path.join(dir, 'corpus'), [nasty, plain]);
    const mp = mosesPaths(path.join(dir, 'corpus'));
    expect(paths).to.deep.equal([mp.en, mp.zh, mp.ids]);
    expect(fs.readFileSync(mp.ids, 'utf8').split('\n')).to.deep.equal(['com\t7 | 9\ts1 | s2\tt1 | t2\t0 | 1-2\t1 | 0', 'par\t4\ts3\tt3\t0\t0', '']);
    const en = fs.readFileSync(paths[0]!, 'utf8').split('\n');
    const zh = fs.readFileSync(paths[1]!, 'utf8').split('\n');
    expect(en).to.have.length(3);
    expect(zh).to.have.length(en.length);
    expect(en[1]).to.equal('A dog runs on the beach.');
    expect(zh[1]).to.equal('一只狗在海滩上奔跑。');
    expect(zh[0]).to.equal('老城区上空的火 与烟 <夜>');
  });

  it('no records: valid empty files in every format', () => {
    for (const f of ['tsv', 'jsonl', 'tmx', 'moses'] as ExportFormat[]) {
      const paths = write(f, path.join(dir, `empty-${f}`), []);
      for (const p of paths) expect(fs.existsSync(p)).to.equal(true);
      if (f === 'tsv') expect(fs.readFileSync(paths[0]!, 'utf8')).to.equal(EXPORT_FIELDS.join('\t') + '\n');
      if (f === 'tmx') {
        const xml = fs.readFileSync(paths[0]!, 'utf8');
        expect(XMLValidator.validate(xml)).to.equal(true);
        expect(xml).to.include('<body>');
      }
      if (f === 'jsonl' || f === 'moses') for (const p of paths) expect(fs.readFileSync(p, 'utf8')).to.equal('');
    }
  });

  it('atomic: an aborted or unfinished write leaves neither a partial target nor a temp file', () => {
    const target = path.join(dir, 'out.tsv');
    fs.writeFileSync(target, 'previous export\n');
    const w = createWriter('tsv', target);
    w.write(plain);
    // before commit the target still holds the previous complete file
    expect(fs.readFileSync(target, 'utf8')).to.equal('previous export\n');
    w.abort();
    expect(fs.readFileSync(target, 'utf8')).to.equal('previous export\n');
    expect(fs.readdirSync(dir)).to.deep.equal(['out.tsv']);
    const a = new AtomicWriter(path.join(dir, 'new.tsv'));
    a.write('half');
    expect(fs.existsSync(path.join(dir, 'new.tsv'))).to.equal(false);
    a.commit();
    expect(fs.readFileSync(path.join(dir, 'new.tsv'), 'utf8')).to.equal('half');
  });
});
