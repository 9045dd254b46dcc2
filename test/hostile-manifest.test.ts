// Hostile manifests (issue 18, finding 4 and the input bounds): /dev/zero, a directory, binary files, UTF-16, an
// endless pipe, huge lines, bytes that are not UTF-8, BOM and CRLF, and images out of bounds. Each case: a clear error
// naming the file (and line), the documented exit code (1), nothing already stored changed, the other rows imported.
// The line reader is also checked as a property (fast-check): any mix of good and bad lines gives exactly the good
// rows, and each bad line is named with its own line number.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import fc from 'fast-check';
import { Bank } from '../src/bank/index.js';
import { openTsv } from '../src/util/tsv.js';
import { makeImage, tempDir, writeManifest } from './helpers.js';
import { runInProcess } from './review-helpers.js';
import { FORMATS, bombs, degenerate, gifWithTinyFrame } from './helpers/hostile-images.js';

const EN = 'A brown dog runs across the green field near the river.';

describe('hostile input: manifests', function () {
  this.timeout(60000);
  let dir: string;
  let data: string;

  /** What the bank holds, to check that a refused import changed nothing. */
  const snapshot = async () => {
    const bank = await Bank.open(data);
    try {
      return (await bank.items.list('source', 1000)).map((i) => `${i.extId}|${i.caption}|${i.imageSha256}|${i.updatedAt}`);
    } finally {
      await bank.close();
    }
  };
  const cli = (manifest: string, extra: string[] = []) => runInProcess(['import', '--data', data, '--bank', 'source', '--manifest', manifest, '--json', ...extra]);

  before(async () => {
    dir = tempDir('capbridge-hostile-manifest-');
    data = path.join(dir, 'data');
    await makeImage(path.join(dir, 'ok.png'), 1);
    await makeImage(path.join(dir, 'ok2.png'), 2);
    writeManifest(path.join(dir, 'good.tsv'), [['g1', 'ok.png', EN, 'https://example.org/1']]);
    const res = await cli(path.join(dir, 'good.tsv'));
    expect(res.code, res.stderr).to.equal(0);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('/dev/zero is refused at its first line, at once, naming the file (not "Invalid string length" at 670 MB)', async () => {
    const before = await snapshot();
    const rss0 = process.memoryUsage().rss;
    // "At once" is counted in bytes read, not in time: every FileHandle read of this process is summed.
    const probe = await fs.promises.open(path.join(dir, 'good.tsv'), 'r');
    const proto = Object.getPrototypeOf(probe) as fs.promises.FileHandle;
    await probe.close();
    const read = proto.read;
    let bytesRead = 0;
    proto.read = async function (this: fs.promises.FileHandle, ...args: unknown[]) {
      const r = await (read as (...a: unknown[]) => Promise<{ bytesRead: number }>).apply(this, args);
      bytesRead += r.bytesRead;
      return r;
    } as typeof read;
    let res: Awaited<ReturnType<typeof cli>>;
    try {
      res = await cli('/dev/zero');
    } finally {
      proto.read = read;
    }
    expect(res.code).to.equal(1);
    expect(res.stderr).to.include('capbridge: /dev/zero:1: binary data (a NUL byte at byte 1 of the file): not a TSV file');
    expect(bytesRead, 'bytes read before the refusal').to.be.above(0).and.at.most(64 * 1024);
    expect(process.memoryUsage().rss - rss0).to.be.below(200 * 1024 * 1024);
    expect(await snapshot()).to.deep.equal(before);
  });

  it('a directory, a missing file, an empty file: each named with what it is', async () => {
    expect((await cli(dir)).stderr).to.include(`capbridge: ${dir}: is a directory, not a TSV file`);
    expect((await cli(path.join(dir, 'nope.tsv'))).stderr).to.include(`capbridge: ${path.join(dir, 'nope.tsv')}: no such file`);
    fs.writeFileSync(path.join(dir, 'empty.tsv'), '');
    expect((await cli(path.join(dir, 'empty.tsv'))).stderr).to.include('empty.tsv: empty file (a header line is required)');
  });

  it('binary files and UTF-16 text are refused at line 1 with the reason', async () => {
    const before = await snapshot();
    const cases: Array<[string, Buffer, string]> = [
      ['random.bin', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)), 'binary data (a NUL byte at byte 62 of the file): not a TSV file'],
      ['photo.png', fs.readFileSync(path.join(dir, 'ok.png')), 'binary data (a NUL byte at byte 9 of the file)'],
      ['utf16le-bom.tsv', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('id\timage\tcaption\r\n', 'utf16le')]), 'UTF-16 text (byte-order mark FF FE): save the file as UTF-8'],
      ['utf16be-bom.tsv', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('id\timage\tcaption\n', 'utf16le').swap16()]), 'UTF-16 text (byte-order mark FE FF)'],
      ['utf16le.tsv', Buffer.from('id\timage\tcaption\n', 'utf16le'), 'UTF-16 text without a byte-order mark'],
    ];
    for (const [name, bytes, reason] of cases) {
      const file = path.join(dir, name);
      fs.writeFileSync(file, bytes);
      const res = await cli(file);
      expect(res.code, name).to.equal(1);
      expect(res.stderr, name).to.include(`capbridge: ${file}:1: ${reason}`);
    }
    expect(await snapshot()).to.deep.equal(before);
  });

  it('an endless pipe stops at import.maxManifestBytes, naming the file and line; the rows read before are committed whole', async function () {
    if (process.platform === 'win32') this.skip();
    const fifo = path.join(dir, 'endless.fifo');
    execFileSync('mkfifo', [fifo]);
    const cfg = path.join(dir, 'small.yaml');
    fs.writeFileSync(cfg, 'import:\n  maxManifestBytes: 200000\n  batchSize: 50\n');
    let writing = true;
    const writer = (async () => {
      const fd = await fs.promises.open(fifo, 'w');
      await fd.write(`id\timage\tcaption\turl\n`);
      try {
        for (let i = 0; writing; i++) await fd.write(`e${i}\tok2.png\t${EN}\thttps://example.org/e${i}\n`);
      } catch {
        /* EPIPE: the reader stopped */
      } finally {
        await fd.close().catch(() => {});
      }
    })();
    const res = await runInProcess(['--config', cfg, 'import', '--data', data, '--bank', 'source', '--manifest', fifo, '--json']);
    writing = false;
    await writer;
    expect(res.code).to.equal(1);
    expect(res.stderr).to.match(new RegExp(`capbridge: ${fifo}:\\d+: over 200000 bytes read \\(import.maxManifestBytes\\): stopped`));
    const bank = await Bank.open(data);
    try {
      const endless = (await bank.items.list('source', 100_000)).filter((i) => i.extId.startsWith('e'));
      expect(endless.length % 50, 'whole batches only').to.equal(0);
      expect(endless.length).to.be.within(50, 200_000 / 60);
    } finally {
      await bank.close();
    }
  });

  it('a regular file over import.maxManifestBytes is refused before it is read', async () => {
    const cfg = path.join(dir, 'tiny.yaml');
    fs.writeFileSync(cfg, 'import:\n  maxManifestBytes: 100\n');
    const file = writeManifest(path.join(dir, 'big.tsv'), [['b1', 'ok.png', EN.repeat(3), 'https://example.org/b1']]);
    const before = await snapshot();
    const res = await runInProcess(['--config', cfg, 'import', '--data', data, '--bank', 'source', '--manifest', file]);
    expect(res.code).to.equal(1);
    expect(res.stderr).to.include(`capbridge: ${file}: ${fs.statSync(file).size} bytes, over the limit of 100 (import.maxManifestBytes)`);
    expect(await snapshot()).to.deep.equal(before);
  });

  it('a huge line, a NUL, bytes that are not UTF-8: that row is named and skipped, the others imported', async () => {
    const file = path.join(dir, 'mixed.tsv');
    const gbk = Buffer.from([0xd2, 0xbb, 0xd6, 0xbb, 0xb9, 0xb7, 0xd4, 0xda, 0xb2, 0xdd, 0xb5, 0xd8, 0xc9, 0xcf, 0xc5, 0xdc]); // 一只狗在草地上跑 in GBK
    fs.writeFileSync(file, Buffer.concat([
      Buffer.from('id\timage\tcaption\turl\n'),
      Buffer.from(`m1\tok.png\t${EN}\thttps://example.org/m1\n`), // 2
      Buffer.from(`m2\tok.png\t${'x'.repeat(2_000_000)}\thttps://example.org/m2\n`), // 3: over 1 MiB
      Buffer.from(`m3\tok.png\tA dog\u0000 runs\thttps://example.org/m3\n`), // 4
      Buffer.from('m4\tok.png\t'), gbk, Buffer.from('\thttps://example.org/m4\n'), // 5
      Buffer.from(`m5\tok2.png\t${EN}\thttps://example.org/m5\n`), // 6
    ]));
    const res = await cli(file);
    expect(res.code).to.equal(1);
    const summary = JSON.parse(res.stdout);
    expect(summary).to.include({ rows: 5, added: 2, failed: 3 });
    const problems = (summary.problems as Array<{ line: number; reason: string }>).map((p) => `${p.line}: ${p.reason}`);
    expect(problems.slice(0, 2)).to.deep.equal([
      '3: line longer than 1048576 bytes (import.maxLineBytes): skipped',
      '4: binary data (a NUL byte at byte 16 of the line)',
    ]);
    expect(summary.problems[2].line).to.equal(5);
    expect(summary.problems[2].reason).to.match(/^not UTF-8 text \(byte 0xb9 at byte 15 of the line( \(it looks like [\w-]+\))?\): save the file as UTF-8$/);
    expect(res.stderr).to.include(`${file}:3: line longer than 1048576 bytes`);
  });

  it('a BOM, CRLF and lone CR line ends are read as the same rows', async () => {
    const rows = [['c1', 'ok.png', EN, 'https://example.org/c1'], ['c2', 'ok2.png', EN, 'https://example.org/c2']];
    const text = ['id\timage\tcaption\turl', ...rows.map((r) => r.join('\t'))];
    const variants: Record<string, string> = {
      'bom-crlf.tsv': '\uFEFF' + text.join('\r\n') + '\r\n',
      'cr.tsv': text.join('\r'),
      'mixed-ends.tsv': text[0] + '\r\n' + text[1] + '\n\n' + text[2] + '\r',
    };
    for (const [name, body] of Object.entries(variants)) {
      const file = path.join(dir, name);
      fs.writeFileSync(file, body);
      const reader = await openTsv(file, ['id']);
      expect(reader.header, name).to.deep.equal(['id', 'image', 'caption', 'url']);
      const got: string[][] = [];
      for await (const r of reader.rows) got.push(r.fields);
      expect(got, name).to.deep.equal(rows);
    }
    const res = await cli(path.join(dir, 'bom-crlf.tsv'));
    expect(res.code, res.stderr).to.equal(0);
    expect(JSON.parse(res.stdout)).to.include({ rows: 2, failed: 0 });
  });

  it('images out of bounds (1 px sides of every decoder, a 1x1 GIF frame, bombs of every decoder) are refused by their header; the others imported', async () => {
    const imgs = path.join(dir, 'imgs');
    fs.mkdirSync(imgs, { recursive: true });
    const rows: string[][] = [['ok-a', 'ok.png', EN, 'https://example.org/ok-a']];
    const expected: Record<string, RegExp> = {};
    for (const f of FORMATS) {
      for (const [w, h] of [[1, 1], [1000, 1], [2000, 3]] as const) {
        const name = `${f}-${w}x${h}.${f}`;
        fs.writeFileSync(path.join(imgs, name), await degenerate(f, w, h));
        rows.push([`small-${name}`, `imgs/${name}`, EN, `https://example.org/${name}`]);
        expected[`small-${name}`] = new RegExp(`image too small: ${w}x${h}, a side under import.minImageSide 32$`);
      }
    }
    fs.writeFileSync(path.join(imgs, 'frame.gif'), await gifWithTinyFrame());
    rows.push(['small-frame', 'imgs/frame.gif', EN, 'https://example.org/frame']);
    expected['small-frame'] = /image too small: 1x1/;
    for (const b of await bombs()) {
      fs.writeFileSync(path.join(imgs, `bomb.${b.format}`), b.buf);
      rows.push([`bomb-${b.format}`, `imgs/bomb.${b.format}`, EN, `https://example.org/bomb-${b.format}`]);
      expected[`bomb-${b.format}`] = /image too large: \d+x\d+ = \d+ pixels, over sift.maxPixels 50000000$/;
    }
    rows.push(['ok-b', 'ok2.png', EN, 'https://example.org/ok-b']);
    const file = writeManifest(path.join(dir, 'images.tsv'), rows);
    const before = await snapshot();
    const res = await cli(file);
    expect(res.code).to.equal(1);
    const summary = JSON.parse(res.stdout);
    expect(summary).to.include({ rows: rows.length, added: 2, failed: rows.length - 2 });
    for (const p of summary.problems as Array<{ line: number; reason: string }>) {
      const id = rows[p.line - 2]![0]!;
      expect(p.reason, id).to.match(expected[id]!);
    }
    expect((await snapshot()).filter((s) => !/^ok-[ab]\|/.test(s))).to.deep.equal(before);
    // nothing of the refused images reached the store
    const bank = await Bank.open(data);
    try {
      for (const id of Object.keys(expected)) expect(await bank.items.get('source', id), id).to.equal(undefined);
    } finally {
      await bank.close();
    }
  });

  it('property: any mix of good and bad lines gives exactly the good rows, each bad line named by its number', async () => {
    const limits = { maxLineBytes: 600, maxBytes: 1 << 20, lineKey: 'import.maxLineBytes', bytesKey: 'import.maxManifestBytes' };
    const field = fc.string({ unit: fc.constantFrom('a', 'Z', '9', ' ', '狗', 'é', '"', '\\', '😀'), maxLength: 12 });
    type Kind = { kind: 'good'; fields: string[] } | { kind: 'long' } | { kind: 'nul' } | { kind: 'latin1' } | { kind: 'blank' };
    const line: fc.Arbitrary<Kind> = fc.oneof(
      { weight: 5, arbitrary: fc.array(field, { minLength: 1, maxLength: 4 }).filter((f) => f.join('\t').trim() !== '').map((fields) => ({ kind: 'good' as const, fields })) },
      fc.constant({ kind: 'long' as const }),
      fc.constant({ kind: 'nul' as const }),
      fc.constant({ kind: 'latin1' as const }),
      fc.constant({ kind: 'blank' as const }),
    );
    const end = fc.constantFrom('\n', '\r\n', '\r');
    const file = path.join(dir, 'prop.tsv');
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(line, end), { maxLength: 25 }), fc.boolean(), fc.boolean(), async (lines, bom, lastEnd) => {
        const parts: Buffer[] = [Buffer.from((bom ? '\uFEFF' : '') + 'a\tb\n')];
        lines.forEach(([l, e], i) => {
          const body = l.kind === 'good' ? Buffer.from(l.fields.join('\t')) : l.kind === 'long' ? Buffer.alloc(1000, 'x') : l.kind === 'nul' ? Buffer.from('x\u0000y') : l.kind === 'latin1' ? Buffer.from([0x63, 0x61, 0x66, 0xe9]) : Buffer.from('  ');
          parts.push(body, Buffer.from(i < lines.length - 1 || lastEnd ? e : ''));
        });
        const bytes = Buffer.concat(parts);
        fs.writeFileSync(file, bytes);
        const nul = bytes.indexOf(0);
        if (nul >= 0 && nul < 4096) {
          // a NUL byte near the start: a binary file, refused whole before any row
          let err: unknown;
          await openTsv(file, ['a'], limits).catch((e) => (err = e));
          expect(String(err)).to.include(`${file}:1: binary data (a NUL byte at byte ${nul + 1} of the file): not a TSV file`);
          return;
        }
        const reader = await openTsv(file, ['a'], limits);
        const got: string[] = [];
        for await (const r of reader.rows) got.push(r.problem ? `${r.line}!${r.problem.split(' ')[0]}` : `${r.line}:${r.fields.join('\t')}`);
        const want: string[] = [];
        lines.forEach(([l], i) => {
          const n = i + 2;
          if (l.kind === 'good') want.push(`${n}:${l.fields.join('\t')}`);
          else if (l.kind === 'long') want.push(`${n}!line`);
          else if (l.kind === 'nul') want.push(`${n}!binary`);
          else if (l.kind === 'latin1') want.push(`${n}!not`);
        });
        expect(got).to.deep.equal(want);
      }),
      { numRuns: 150, seed: 18 },
    );
  });
});
