// Input bounds before the database (issue 36, finding 6): an item id longer than MAX_ID_BYTES is refused for its own
// row as `FILE:LINE: id longer than N bytes`; the good rows of the batch are stored, on PostgreSQL as on SQLite, and no
// PostgreSQL error text reaches the user.
import { expect } from 'chai';
import path from 'node:path';
import { loadConfig } from '../src/config/load.js';
import { importManifest } from '../src/import/manifest.js';
import { makeImage, runCli, tempDir, writeManifest } from './helpers.js';
import { forEachBackend } from './helpers/backends.js';

forEachBackend('item ids over the documented limit', (b) => {
  const { config } = loadConfig({});

  async function manifest(dir: string): Promise<string> {
    const rows: string[][] = [];
    const ids = ['ok-1', 'x'.repeat(6000), 'ok-2', '图'.repeat(341) + 'a', '图'.repeat(342)]; // 1024 bytes, then 1026
    for (const [i, id] of ids.entries()) rows.push([id, await makeImage(path.join(dir, 'img', `i${i}.png`), 4100 + i), `A caption number ${i} about the floods.`]);
    return writeManifest(path.join(dir, 'source.tsv'), rows, ['id', 'image', 'caption']);
  }

  it('are refused per row naming the line; the other rows of the batch are stored', async () => {
    const dir = tempDir('capbridge-ids-');
    const file = await manifest(dir);
    const bank = await b.open(path.join(dir, 'data'));
    try {
      const s = await importManifest(bank, { bank: 'source', manifest: file, config });
      expect(s).to.include({ rows: 5, added: 3, failed: 2 });
      expect(s.problems.map((p) => `${path.basename(p.file)}:${p.line}: ${p.reason}`)).to.deep.equal([
        'source.tsv:3: id longer than 1024 bytes',
        'source.tsv:6: id longer than 1024 bytes',
      ]);
      expect(await bank.items.get('source', '图'.repeat(341) + 'a')).to.not.equal(undefined);
      expect(await bank.items.count('source')).to.equal(3);
    } finally {
      await bank.close();
    }
  });

  if (b.name === 'postgres') {
    it('capbridge import on PostgreSQL says FILE:LINE and nothing of the server\'s internals', async function () {
      this.timeout(60_000);
      const dir = tempDir('capbridge-ids-cli-');
      const file = await manifest(dir);
      const url = (await b.url())!;
      const r = await runCli(['--data', path.join(dir, 'data'), '--bank', url, 'import', '--bank', 'source', '--manifest', file]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include(`${file}:3: id longer than 1024 bytes\n`);
      expect(r.stderr).to.not.match(/btree|index row|SQLSTATE|items_bank_ext_id_key/);
      expect(r.stdout).to.match(/added 3, unchanged 0, updated 0, failed 2/);
    });
  }
});
