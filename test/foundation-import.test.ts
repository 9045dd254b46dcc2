import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { tempDir, makeImage, runCli, writeManifest, REPO_ROOT } from './helpers.js';

const EN = ['A brown dog runs across the green field.', 'Two children play football on the beach at sunset.', 'A man rides a bicycle down a busy city street.', 'Firefighters spray water on a burning warehouse.'];
const ZH = ['一只棕色的狗在绿色的草地上奔跑。', '两个孩子在日落时分的海滩上踢足球。', '一名男子在繁忙的城市街道上骑自行车。', '消防员向一座燃烧的仓库喷水。'];

async function makeSet(dir: string, n: number, lang: 'en' | 'zh', seed = 0): Promise<string> {
  const rows: string[][] = [];
  for (let i = 0; i < n; i++) {
    await makeImage(path.join(dir, 'images', `${i}.png`), seed + i);
    rows.push([`id${i}`, `images/${i}.png`, (lang === 'en' ? EN : ZH)[i % 4]!, `https://example.org/${i}`]);
  }
  return writeManifest(path.join(dir, 'manifest.tsv'), rows);
}

async function statsJson(data: string) {
  const res = await runCli(['stats', '--json', '--data', data]);
  expect(res.code, res.stderr).to.equal(0);
  return JSON.parse(res.stdout);
}

describe('import', () => {
  it('imports a manifest, and a second import changes nothing', async () => {
    const set = tempDir();
    const data = tempDir();
    const manifest = await makeSet(set, 6, 'zh');
    const first = await runCli(['import', '--bank', 'target', '--manifest', manifest, '--data', data, '--json']);
    expect(first.code, first.stderr).to.equal(0);
    expect(JSON.parse(first.stdout)).to.include({ rows: 6, added: 6, unchanged: 0, updated: 0, failed: 0 });
    const before = await statsJson(data);
    expect(before.banks.target.items).to.equal(6);
    expect(before.banks.target.byStatus).to.deep.equal({ new: 6 });
    expect(before.banks.target.captions).to.deep.equal({ ok: 6 });
    // --data before the command works too
    const second = await runCli(['--data', data, 'import', '--bank', 'target', '--manifest', manifest, '--json']);
    expect(JSON.parse(second.stdout)).to.include({ added: 0, unchanged: 6, updated: 0, failed: 0 });
    const after = await statsJson(data);
    expect(after.banks).to.deep.equal(before.banks);
    expect(after.images).to.deep.equal(before.images);
  });

  it('reads an optional credit column into the items\' credit', async () => {
    const set = tempDir();
    const data = tempDir();
    await makeImage(path.join(set, 'images', '0.png'), 40);
    await makeImage(path.join(set, 'images', '1.png'), 41);
    const manifest = writeManifest(
      path.join(set, 'manifest.tsv'),
      [
        ['c0', 'images/0.png', ZH[0]!, '新华社记者 李明 摄'],
        ['c1', 'images/1.png', ZH[1]!, ''],
      ],
      ['id', 'image', 'caption', 'credit'],
    );
    const res = await runCli(['import', '--bank', 'target', '--manifest', manifest, '--data', data, '--json']);
    expect(res.code, res.stderr).to.equal(0);
    const db = new Database(path.join(data, 'capbridge.db'), { readonly: true });
    const rows = db.prepare('SELECT ext_id, caption, credit FROM items ORDER BY ext_id').all();
    db.close();
    expect(rows).to.deep.equal([
      { ext_id: 'c0', caption: ZH[0], credit: '新华社记者 李明 摄' },
      { ext_id: 'c1', caption: ZH[1], credit: null },
    ]);
  });

  it('updates an item whose caption or image changed', async () => {
    const set = tempDir();
    const data = tempDir();
    const manifest = await makeSet(set, 3, 'en');
    await runCli(['import', '--bank', 'source', '--manifest', manifest, '--data', data]);
    const lines = fs.readFileSync(manifest, 'utf8').trim().split('\n');
    lines[1] = lines[1]!.replace('A brown dog', 'A black dog');
    await makeImage(path.join(set, 'images', 'new.png'), 99);
    lines[2] = lines[2]!.replace('images/1.png', 'images/new.png');
    fs.writeFileSync(manifest, lines.join('\n') + '\n');
    const res = await runCli(['import', '--bank', 'source', '--manifest', manifest, '--data', data, '--json']);
    expect(JSON.parse(res.stdout)).to.include({ added: 0, unchanged: 1, updated: 2, failed: 0 });
    const db = new Database(path.join(data, 'capbridge.db'), { readonly: true });
    expect(db.prepare("SELECT caption FROM items WHERE ext_id = 'id0'").pluck().get()).to.equal('A black dog runs across the green field.');
    expect(db.prepare('SELECT COUNT(*) FROM images').pluck().get()).to.equal(4);
    db.close();
  });

  it('names each bad line, keeps the good row, and exits non-zero', async () => {
    const set = tempDir();
    const data = tempDir();
    await makeImage(path.join(set, 'ok.png'), 7);
    await makeImage(path.join(set, 'ok2.png'), 8);
    fs.writeFileSync(path.join(set, 'broken.png'), 'this is not an image');
    const manifest = writeManifest(path.join(set, 'bad.tsv'), [
      ['good', 'ok.png', EN[0]!, 'https://example.org/good'],
      ['missing', 'nope.png', EN[1]!, 'https://example.org/m'], // line 3
      ['cols', 'ok2.png', EN[2]!], // line 4: wrong number of columns
      ['', 'ok2.png', EN[3]!, 'https://example.org/e'], // line 5: empty id
      ['good', 'ok2.png', EN[1]!, 'https://example.org/dup'], // line 6: repeated id
      ['broken', 'broken.png', EN[2]!, 'https://example.org/b'], // line 7: unreadable image
    ]);
    const res = await runCli(['import', '--bank', 'source', '--manifest', manifest, '--data', data, '--json']);
    expect(res.code).to.not.equal(0);
    const summary = JSON.parse(res.stdout);
    expect(summary).to.include({ added: 1, failed: 5 });
    expect(res.stderr).to.include(`${manifest}:3: image not found: nope.png`);
    expect(res.stderr).to.match(new RegExp(`bad\\.tsv:4: expected 4 columns`));
    expect(res.stderr).to.include(`${manifest}:5: empty id`);
    expect(res.stderr).to.include(`${manifest}:6: id "good" repeated (first on line 2)`);
    expect(res.stderr).to.match(/bad\.tsv:7: .*not a readable image/);
    const stats = await statsJson(data);
    expect(stats.banks.source.items).to.equal(1);
  });

  it('stores a caption in the wrong language with the reason, and allows empty captions', async () => {
    const set = tempDir();
    const data = tempDir();
    await makeImage(path.join(set, 'a.png'), 11);
    await makeImage(path.join(set, 'b.png'), 12);
    await makeImage(path.join(set, 'c.png'), 13);
    const manifest = writeManifest(path.join(set, 'm.tsv'), [
      ['fr', 'a.png', 'Le président français a visité une usine de voitures à Paris mardi.'],
      ['zh', 'b.png', '一只狗在草地上奔跑。'],
      ['empty', 'c.png', ''],
    ], ['id', 'image', 'caption']);
    const res = await runCli(['import', '--bank', 'source', '--manifest', manifest, '--data', data, '--json']);
    expect(res.code, res.stderr).to.equal(0);
    expect(JSON.parse(res.stdout)).to.include({ added: 3, languageMismatches: 2, emptyCaptions: 1 });
    const stats = await statsJson(data);
    expect(stats.banks.source.captions).to.deep.equal({ empty: 1, 'lang-mismatch': 2 });
    expect(Object.keys(stats.banks.source.captionProblems)).to.include.members(['language: detected fra, expected eng', 'language: detected cmn, expected eng']);
    const text = await runCli(['stats', '--data', data]);
    expect(text.stdout).to.match(/caption 1: language: detected fra, expected eng/);
  });

  it('an import killed midway leaves a consistent database, and a rerun completes it', async function () {
    this.timeout(120000);
    const set = tempDir();
    const data = tempDir();
    const n = 400;
    const manifest = await makeSet(set, n, 'zh', 1000);
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'src', 'cli.ts'), 'import', '--bank', 'target', '--manifest', manifest, '--data', data], {
      env: { ...process.env, CAPBRIDGE_IMPORT__BATCH_SIZE: '10' },
      stdio: 'ignore',
    });
    const dbFile = path.join(data, 'capbridge.db');
    // Kill it as soon as some batches are committed but not all.
    let killedAt = -1;
    for (let i = 0; i < 600 && killedAt < 0; i++) {
      await new Promise((r) => setTimeout(r, 25));
      if (!fs.existsSync(dbFile)) continue;
      try {
        const db = new Database(dbFile, { readonly: true, fileMustExist: true });
        const count = db.prepare('SELECT COUNT(*) FROM items').pluck().get() as number;
        db.close();
        if (count > 0) {
          child.kill('SIGKILL');
          killedAt = count;
        }
      } catch {
        /* schema not there yet */
      }
    }
    await new Promise((r) => child.on('close', r));
    expect(killedAt).to.be.greaterThan(0);
    const db = new Database(dbFile);
    expect(db.pragma('integrity_check', { simple: true })).to.equal('ok');
    const partial = db.prepare('SELECT COUNT(*) FROM items').pluck().get() as number;
    expect(partial % 10, 'whole batches only').to.equal(0);
    expect(partial).to.be.lessThan(n);
    expect(db.prepare('SELECT COUNT(*) FROM items i LEFT JOIN images m ON m.sha256 = i.image_sha256 WHERE m.sha256 IS NULL').pluck().get()).to.equal(0);
    db.close();
    const res = await runCli(['import', '--bank', 'target', '--manifest', manifest, '--data', data, '--json']);
    expect(res.code, res.stderr).to.equal(0);
    const summary = JSON.parse(res.stdout);
    expect(summary.added + summary.unchanged).to.equal(n);
    expect(summary.unchanged).to.equal(partial);
    expect((await statsJson(data)).banks.target.items).to.equal(n);
  });
});
