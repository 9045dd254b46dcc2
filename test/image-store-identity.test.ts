// The store a bank uses is recorded in full at first use (issue 36, finding 5): the S3 endpoint with the bucket and
// prefix, or the folder's own id (kept in the folder, so another machine's folder is another store). A run pointed
// elsewhere is refused naming both stores; two first runs at once end with one store, the other refused.
import { expect } from 'chai';
import path from 'node:path';
import { openImageBlobs, type ImageBlobs } from '../src/bank/index.js';
import { tempDir } from './helpers.js';
import { forEachBackend } from './helpers/backends.js';
import { startLocalS3, s3ImageSettings, type LocalS3 } from './helpers/s3.js';

const refusal = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as Error);

forEachBackend('the image store a bank records', (b) => {
  let s3a: LocalS3;
  let s3b: LocalS3;
  before(async () => {
    s3a = await startLocalS3('same-bucket');
    s3b = await startLocalS3('same-bucket');
  });
  after(async () => {
    await s3b?.close();
    await s3a?.close();
  });

  const open = async (dir: string, blobs: ImageBlobs, url?: string) => b.open(dir, { blobs, url });

  it('a run on another S3 endpoint with the same bucket and prefix is refused naming both; the same store is accepted', async () => {
    const dir = tempDir('capbridge-storeid-');
    const url = await b.url();
    const first = await open(dir, await openImageBlobs(dir, s3ImageSettings(s3a, 'p')), url);
    await first.images.checkStore();
    await first.close();
    const again = await open(dir, await openImageBlobs(dir, s3ImageSettings(s3a, 'p/')), url);
    await again.images.checkStore(); // the same store (a trailing slash is the same prefix)
    await again.close();
    const other = await open(dir, await openImageBlobs(dir, s3ImageSettings(s3b, 'p')), url);
    const err = await refusal(other.images.checkStore());
    await other.close();
    expect(err?.message).to.equal(
      `this bank's images are in s3://same-bucket/p at ${s3a.endpoint}, but this run uses s3://same-bucket/p at ${s3b.endpoint} ` +
        '(--images / images.store, images.s3.*): point it at the bank\'s store, or copy them first with `capbridge images copy --to s3://same-bucket/p` (which records the new store)',
    );
  });

  it('a bank recorded by an older capbridge (folder, s3://bucket/prefix) is upgraded to the full identity by the first run on that store', async () => {
    const dir = tempDir('capbridge-storeold-');
    const url = await b.url();
    const bank = await open(dir, await openImageBlobs(dir, { store: 'folder', s3: s3ImageSettings(s3a, '').s3 }), url);
    try {
      await bank.meta.set('images.store', 'folder'); // what banks recorded before issue 36
      await bank.images.checkStore();
      expect(await bank.meta.get('images.store')).to.match(/^folder:[0-9a-f-]{36}$/);
      expect(await bank.meta.get('images.store.describe')).to.include(path.join(dir, 'images'));
    } finally {
      await bank.close();
    }
    const s3bank = await open(dir, await openImageBlobs(dir, s3ImageSettings(s3a, 'old')), url);
    try {
      await s3bank.meta.set('images.store', 's3://same-bucket/old');
      await s3bank.images.checkStore();
      expect(await s3bank.meta.get('images.store')).to.equal(`s3://same-bucket/old at ${s3a.endpoint}`);
    } finally {
      await s3bank.close();
    }
  });

  if (b.name === 'postgres') {
    it('another machine\'s folder is another store: refused naming both folders', async () => {
      const url = await b.url();
      const a = tempDir('capbridge-machine-a-');
      const c = tempDir('capbridge-machine-b-');
      const first = await open(a, await openImageBlobs(a, { store: 'folder', s3: s3ImageSettings(s3a, '').s3 }), url);
      await first.images.checkStore();
      await first.close();
      const other = await open(c, await openImageBlobs(c, { store: 'folder', s3: s3ImageSettings(s3a, '').s3 }), url);
      const err = await refusal(other.images.checkStore());
      await other.close();
      expect(err?.message).to.match(new RegExp(`^this bank's images are in the folder ${path.join(a, 'images')} on .* \\(store id [0-9a-f-]{36}\\), but this run uses the folder ${path.join(c, 'images')} on `));
    });

    it('two first runs at once with different stores: one store recorded, the other run refused', async () => {
      const url = await b.url();
      const dir = tempDir('capbridge-race-');
      const banks = [
        await open(dir, await openImageBlobs(dir, { store: 'folder', s3: s3ImageSettings(s3a, '').s3 }), url),
        await open(dir, await openImageBlobs(dir, s3ImageSettings(s3a, 'race')), url),
      ];
      try {
        const outcomes = await Promise.all(banks.map((x) => refusal(x.images.checkStore())));
        const refused = outcomes.filter((e) => e !== null);
        expect(refused, outcomes.map(String).join('; ')).to.have.length(1);
        expect(refused[0]!.message).to.match(/^this bank's images are in /);
        // and the next runs agree with the winner
        const winner = outcomes.findIndex((e) => e === null);
        await banks[winner]!.images.checkStore();
        expect(await refusal(banks[1 - winner]!.images.checkStore())).to.be.instanceOf(Error);
      } finally {
        for (const x of banks) await x.close();
      }
    });
  }
});

