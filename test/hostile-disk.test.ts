// A full disk during import (issue 36, finding 7): the image store's disk fills up (a real one: a small tmpfs mounted
// on the data dir's images/ folder). The import stops once, saying the disk is full and where; no image is blamed,
// and no temporary file is left behind (writeFileAtomic removes its own).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Bank } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { importManifest, type ImportProblem } from '../src/import/manifest.js';
import { writeFileAtomic } from '../src/util/atomic.js';
import sharp from 'sharp';
import { rng, tempDir, writeManifest } from './helpers.js';

/** Mounts a tmpfs of `kb` KiB on dir; null (with the reason) where mounting is not allowed. */
function mountSmallDisk(dir: string, kb: number): string | null {
  if (process.getuid?.() !== 0) return 'mounting a small disk needs root';
  fs.mkdirSync(dir, { recursive: true });
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${kb}k`, 'tmpfs', dir], { encoding: 'utf8' });
  return r.status === 0 ? null : `mount -t tmpfs failed: ${r.stderr.trim()}`;
}

const filesUnder = (dir: string): string[] => (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile());

describe('a full disk', function () {
  this.timeout(60_000);
  const dir = tempDir('capbridge-disk-');
  const disk = path.join(dir, 'data', 'images');
  let why: string | null = null;
  before(() => {
    why = mountSmallDisk(disk, 96);
  });
  after(() => {
    if (!why) spawnSync('umount', [disk]);
  });

  it('stops an import once, naming the full disk, blaming no image and leaving no temporary file', async function () {
    if (why) this.skip();
    const { config } = loadConfig({});
    const rows: string[][] = [];
    // noise images of ~60 KB each: the second or third fills the 96 KiB disk
    fs.mkdirSync(path.join(dir, 'img'), { recursive: true });
    for (let i = 0; i < 8; i++) {
      const rand = rng(7000 + i);
      const px = Buffer.from(Array.from({ length: 160 * 128 * 3 }, () => Math.floor(rand() * 256)));
      const file = path.join(dir, 'img', `p${i}.png`);
      await sharp(px, { raw: { width: 160, height: 128, channels: 3 } }).png().toFile(file);
      rows.push([`p${i}`, file, `A photo number ${i} of the flood.`]);
    }
    const manifest = writeManifest(path.join(dir, 'source.tsv'), rows, ['id', 'image', 'caption']);
    const bank = await Bank.open(path.join(dir, 'data'));
    const problems: ImportProblem[] = [];
    try {
      const err = await importManifest(bank, { bank: 'source', manifest, config, onProblem: (p) => problems.push(p) }).then(() => null, (e: unknown) => e as Error);
      expect(err, 'the import did not stop').to.be.instanceOf(Error);
      expect(err!.name).to.equal('ImageStoreError');
      expect(err!.message).to.match(/^image store: put .*\/images\/[0-9a-f]{2}\/[0-9a-f]{64}\.png: no space left on the disk \(ENOSPC\) under .*images: free space there, then run again$/);
      expect(problems, JSON.stringify(problems)).to.deep.equal([]);
      expect(filesUnder(disk).filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);
    } finally {
      await bank.close();
    }
  });

  it('writeFileAtomic removes its temporary file when the write fails', function () {
    if (why) this.skip();
    const big = Buffer.alloc(200 * 1024, 1);
    expect(() => writeFileAtomic(path.join(disk, 'big.bin'), big)).to.throw(/ENOSPC/);
    expect(filesUnder(disk).filter((f) => f.includes('big.bin'))).to.deep.equal([]);
  });
});
