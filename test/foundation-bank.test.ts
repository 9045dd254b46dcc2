import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { Bank, FeaturesRepo, LATEST_SCHEMA_VERSION, LshRepo, StatsRepo } from '../src/bank/index.js';
import { applyMigrations } from '../src/bank/db.js';
import { SqliteBackend } from '../src/bank/sqlite.js';
import { tempDir, makeImage } from './helpers.js';
import { forEachBackend } from './helpers/backends.js';
import { PostgresBackend } from '../src/bank/postgres.js';
import { startPg, pgUnavailable } from './helpers/postgres.js';

const rejects = async (p: Promise<unknown>, re: RegExp) => {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  expect(err, 'expected a rejection').to.be.instanceOf(Error);
  expect((err as Error).message).to.match(re);
};

forEachBackend('bank', (be) => {
  it('creates the latest schema and reopens without migrating again', async () => {
    const dir = tempDir();
    const url = await be.url();
    const bank = await be.open(dir, { url });
    expect(await bank.schemaVersion()).to.equal(LATEST_SCHEMA_VERSION);
    expect(bank.dialect).to.equal(be.name);
    await bank.meta.set('probe', 'kept');
    await bank.close();
    const again = await be.open(dir, { url });
    expect(await again.meta.get('probe')).to.equal('kept');
    expect(await again.schemaVersion()).to.equal(LATEST_SCHEMA_VERSION);
    await again.close();
  });

  it("a statement outside a transaction is not part of it: another flow's write survives the rollback", async () => {
    const bank = await be.open(tempDir());
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const inside = new Promise<void>((r) => (started = r));
    const tx = bank.transaction(async (t) => {
      await t.meta.set('k', 'in-tx');
      started();
      await gate;
      throw new Error('rolled back');
    });
    await inside;
    const outside = bank.meta.set('other', 'kept');
    // PostgreSQL: another connection, so the write completes while the transaction is open; SQLite (one connection):
    // it waits for the transaction, and a turn of the event loop is when it would have run (statements are synchronous)
    if (bank.dialect === 'postgres') await outside;
    else await new Promise((r) => setImmediate(r));
    release();
    await rejects(tx, /rolled back/);
    await outside;
    expect(await bank.meta.get('k')).to.equal(undefined);
    expect(await bank.meta.get('other')).to.equal('kept');
    await bank.close();
  });

  it('streams a long result (iterate) while the same bank writes', async () => {
    const bank = await be.open(tempDir());
    await bank.transaction(async (tx) => {
      for (let i = 0; i < 1200; i++) await tx.meta.set(`k${String(i).padStart(4, '0')}`, String(i));
    });
    let n = 0;
    for await (const r of bank.sql.iterate<{ key: string }>('SELECT key FROM meta WHERE key LIKE ? ORDER BY key', ['k%'])) {
      n++;
      if (n % 300 === 0) await bank.meta.set(`w${r.key}`, 'x');
    }
    expect(n).to.equal(1200);
    expect(await bank.sql.get<{ n: number }>("SELECT COUNT(*) AS n FROM meta WHERE key LIKE 'w%'")).to.deep.equal({ n: 4 });
    await bank.close();
  });

  it('bulk rows (copyRows) land with every type intact: text with tabs and newlines, NULL, floats, BLOBs', async () => {
    const bank = await be.open(tempDir());
    const blob = Buffer.from([0, 1, 2, 255, 92, 9, 10]);
    await bank.sql.exec('CREATE TABLE t_copy (a TEXT, b INTEGER, c DOUBLE PRECISION, d BYTEA)'.replace('BYTEA', be.name === 'postgres' ? 'BYTEA' : 'BLOB'));
    await bank.sql.copyRows('t_copy', ['a', 'b', 'c', 'd'], [
      ['tab\there\nnew line \\ back', 7, 0.1 + 0.2, blob],
      [null, null, null, null],
      ['中文图片说明', -3, 1e-300, Buffer.alloc(0)],
    ]);
    const rows = await bank.sql.all<{ a: string | null; b: number | null; c: number | null; d: Buffer | null }>('SELECT a, b, c, d FROM t_copy ORDER BY b NULLS FIRST');
    expect(rows.map((r) => [r.a, r.b, r.c, r.d ? [...r.d] : null])).to.deep.equal([
      [null, null, null, null],
      ['中文图片说明', -3, 1e-300, []],
      ['tab\there\nnew line \\ back', 7, 0.1 + 0.2, [...blob]],
    ]);
    await bank.close();
  });

  it('stores identical image bytes once and keeps items pointing at them', async () => {
    const dir = tempDir();
    const bank = await be.open(dir);
    const file = await makeImage(path.join(dir, 'src', 'a.png'), 1);
    const buf = fs.readFileSync(file);
    const rec1 = await bank.images.prepare(buf);
    const rec2 = await bank.images.prepare(Buffer.from(buf));
    expect(rec1.sha256).to.equal(rec2.sha256);
    expect(rec1).to.include({ width: 96, height: 72, format: 'png' });
    await bank.transaction(async (tx) => {
      await tx.images.record(rec1);
      for (const extId of ['x1', 'x2']) {
        await tx.items.upsert({ bank: 'target', extId, caption: '一只狗在草地上奔跑', lang: 'cmn', captionStatus: 'ok', captionReason: null, imageSha256: rec1.sha256 });
      }
    });
    expect((await bank.images.totals()).files).to.equal(1);
    expect(fs.readdirSync(path.join(dir, 'images', rec1.sha256.slice(0, 2)))).to.have.length(1);
    expect(Buffer.compare(await bank.images.read(rec1.sha256), buf)).to.equal(0);
    const stats = await bank.repo(StatsRepo).all();
    expect(stats.banks.target.items).to.equal(2);
    expect(stats.banks.source.items).to.equal(0);
    await bank.close();
  });

  it('items.byIds reads many items in one go, keyed by id, as byId reads each; unknown ids absent', async () => {
    const dir = tempDir();
    const bank = await be.open(dir);
    const rec = await bank.images.prepare(fs.readFileSync(await makeImage(path.join(dir, 'a.png'), 4)));
    await bank.images.record(rec);
    const ids: number[] = [];
    for (let k = 0; k < 620; k++) {
      await bank.items.upsert({ bank: 'source', extId: `b${k}`, caption: `Item ${k}.`, lang: 'eng', captionStatus: 'ok', captionReason: null, imageSha256: rec.sha256 });
      ids.push((await bank.items.get('source', `b${k}`))!.id);
    }
    const asked = [...ids, ids[3]!, 999_999];
    const got = await bank.items.byIds(asked);
    expect(got.size).to.equal(620); // more than one chunk of 500, the repeat once, the unknown id absent
    expect(got.has(999_999)).to.equal(false);
    for (const id of [ids[0]!, ids[499]!, ids[500]!, ids[619]!]) expect(got.get(id)).to.deep.equal(await bank.items.byId(id));
    await bank.close();
  });

  it('enforces the foreign key from items to images', async () => {
    const bank = await be.open(tempDir());
    await rejects(
      bank.items.upsert({ bank: 'source', extId: 'a', caption: 'x', lang: null, captionStatus: 'ok', captionReason: null, imageSha256: 'f'.repeat(64) }),
      /FOREIGN KEY|foreign key/,
    );
    await bank.close();
  });

  it('upsert reports added / unchanged / updated, and a new image sends the item back to new', async () => {
    const dir = tempDir();
    const bank = await be.open(dir);
    const a = await bank.images.prepare(fs.readFileSync(await makeImage(path.join(dir, 'a.png'), 2)));
    const b = await bank.images.prepare(fs.readFileSync(await makeImage(path.join(dir, 'b.png'), 3)));
    await bank.images.record(a);
    await bank.images.record(b);
    const base = { bank: 'source' as const, extId: 'e1', caption: 'A dog runs.', lang: 'eng', captionStatus: 'ok' as const, captionReason: null, imageSha256: a.sha256 };
    expect((await bank.items.upsert(base)).outcome).to.equal('added');
    expect((await bank.items.upsert(base)).outcome).to.equal('unchanged');
    const id = (await bank.items.get('source', 'e1'))!.id;
    await bank.items.setStatus(id, 'featured');
    expect((await bank.items.upsert({ ...base, caption: 'A dog runs fast.' })).outcome).to.equal('updated');
    expect((await bank.items.byId(id))!.status).to.equal('featured');
    expect((await bank.items.upsert({ ...base, caption: 'A dog runs fast.', imageSha256: b.sha256 })).outcome).to.equal('updated');
    const item = (await bank.items.byId(id))!;
    expect(item.status).to.equal('new');
    expect(item.imageSha256).to.equal(b.sha256);
    expect((await bank.items.listByStatus('source', 'new', 10)).map((i) => i.extId)).to.deep.equal(['e1']);
    await bank.close();
  });

  it('features and LSH codes read back byte for byte (PostgreSQL: sent as base64, stored uncompressed)', async () => {
    const dir = tempDir();
    const bank = await be.open(dir);
    const img = await bank.images.prepare(fs.readFileSync(await makeImage(path.join(dir, 'a.png'), 4)));
    await bank.images.record(img);
    await bank.items.upsert({ bank: 'target', extId: 't1', caption: '一只狗。', lang: 'cmn', captionStatus: 'ok', captionReason: null, imageSha256: img.sha256 });
    const item = (await bank.items.get('target', 't1'))!;
    // 700 keypoints: 17 KB + 90 KB, far over PostgreSQL's 2 KB TOAST threshold; every byte value, and runs that
    // base64 splits across its 76-character lines
    const count = 700;
    const keypoints = new Float32Array(count * 6).map((_, i) => (i % 7 === 0 ? -0 : i * 0.37 - 500));
    const descriptors = new Uint8Array(count * 128).map((_, i) => (i * 131 + (i >> 9)) & 255);
    await bank.repo(FeaturesRepo).put(img.sha256, { width: 640, height: 480, scale: 0.5, count, keypoints, descriptors }, 12.5);
    const f = (await bank.repo(FeaturesRepo).get(img.sha256))!;
    expect(f.count).to.equal(count);
    expect(Buffer.from(f.keypoints.buffer, f.keypoints.byteOffset, f.keypoints.byteLength).equals(Buffer.from(keypoints.buffer))).to.equal(true);
    expect(Buffer.from(f.descriptors).equals(Buffer.from(descriptors))).to.equal(true);
    // several at once (one query): the same features, an image without any left out
    const many = await bank.repo(FeaturesRepo).getMany([img.sha256, 'ab'.repeat(32), img.sha256]);
    expect([...many.keys()]).to.deep.equal([img.sha256]);
    expect(many.get(img.sha256)).to.deep.equal(f);
    const codes = new Uint32Array(count * 10).map((_, i) => (i * 2654435761) >>> 0);
    await bank.transaction((tx) => tx.repo(LshRepo).putMany([{ itemId: item.id, imageSha256: img.sha256, count, codes }], 'p1'));
    const rows = [];
    for await (const r of bank.repo(LshRepo).rowsAfter(0)) rows.push(r);
    expect(rows.map((r) => [r.itemId, r.count])).to.deep.equal([[item.id, count]]);
    expect(Buffer.from(rows[0]!.codes.buffer).equals(Buffer.from(codes.buffer))).to.equal(true);
    if (be.name === 'postgres') {
      // migration 17: no compression is tried on these columns (pglz cost 6x the server CPU of a write, for 3 %)
      const storage = await bank.sql.all<{ col: string; s: string }>(
        `SELECT c.relname || '.' || a.attname AS col, a.attstorage AS s FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
         WHERE (c.relname, a.attname) IN (('features', 'keypoints'), ('features', 'descriptors'), ('lsh_codes', 'codes'), ('candidates', 'pairs')) ORDER BY 1`,
      );
      expect(storage).to.deep.equal(['candidates.pairs', 'features.descriptors', 'features.keypoints', 'lsh_codes.codes'].map((col) => ({ col, s: 'e' })));
      const stored = await bank.sql.get<{ d: string | null; toasted: boolean }>(
        'SELECT pg_column_compression(descriptors) AS d, pg_column_size(descriptors) >= octet_length(descriptors) AS toasted FROM features',
      );
      expect(stored).to.deep.equal({ d: null, toasted: true });
    }
    await bank.close();
  });

  it('commit when the unit of work resolves and roll back when it throws; a savepoint inside rolls back alone', async () => {
    const bank = await be.open(tempDir());
    await bank.transaction(async (tx) => {
      await tx.meta.set('a', '1');
      await tx.meta.set('b', '1');
    });
    await rejects(
      bank.transaction(async (tx) => {
        await tx.meta.set('a', '2');
        throw new Error('boom');
      }),
      /boom/,
    );
    expect(await bank.meta.get('a')).to.equal('1');
    await bank.transaction(async (tx) => {
      await tx.meta.set('b', '2');
      await rejects(
        tx.transaction(async (inner) => {
          await inner.meta.set('c', '3');
          throw new Error('inner');
        }),
        /inner/,
      );
    });
    expect(await bank.meta.get('b')).to.equal('2');
    expect(await bank.meta.get('c')).to.equal(undefined);
    await bank.close();
  });

  it('stores the credit apart from the caption; a new credit updates the item without re-scoring its caption', async () => {
    const dir = tempDir();
    const bank = await be.open(dir);
    const a = await bank.images.prepare(fs.readFileSync(await makeImage(path.join(dir, 'a.png'), 5)));
    await bank.images.record(a);
    const base = { bank: 'target' as const, extId: 'z1', caption: '市民在公园里赏花。', credit: '新华社记者 李明 摄', lang: 'cmn', captionStatus: 'ok' as const, captionReason: null, imageSha256: a.sha256 };
    expect((await bank.items.upsert(base)).outcome).to.equal('added');
    const first = (await bank.items.get('target', 'z1'))!;
    expect([first.caption, first.credit]).to.deep.equal(['市民在公园里赏花。', '新华社记者 李明 摄']);
    expect((await bank.items.upsert(base)).outcome).to.equal('unchanged');
    expect((await bank.items.upsert({ ...base, credit: '新华社记者 王芳 摄' }, '2099-01-01T00:00:00.000Z')).outcome).to.equal('updated');
    const second = (await bank.items.get('target', 'z1'))!;
    expect(second.credit).to.equal('新华社记者 王芳 摄');
    expect(second.captionUpdatedAt).to.equal(first.captionUpdatedAt);
    expect((await bank.items.upsert({ ...base, credit: '' })).outcome).to.equal('updated');
    expect((await bank.items.get('target', 'z1'))!.credit).to.equal(null);
    await bank.close();
  });
});

describe('bank on SQLite', () => {
  it('creates the database file in WAL mode', async () => {
    const dir = tempDir();
    const bank = await Bank.open(dir);
    expect(await bank.schemaVersion()).to.equal(LATEST_SCHEMA_VERSION);
    await bank.meta.set('probe', 'kept');
    await bank.close();
    const raw = new Database(path.join(dir, 'capbridge.db'), { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).to.equal('wal');
    raw.close();
    const again = await Bank.open(dir);
    expect(await again.meta.get('probe')).to.equal('kept');
    expect(await again.schemaVersion()).to.equal(LATEST_SCHEMA_VERSION);
    await again.close();
  });

  it('refuses a database from a newer capbridge', async () => {
    const dir = tempDir();
    await (await Bank.open(dir)).close();
    const db = new Database(path.join(dir, 'capbridge.db'));
    db.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 5}`);
    db.close();
    await rejects(Bank.open(dir), /newer than this capbridge knows/);
  });

  it("another flow's statements wait for an open transaction instead of joining it, and a finished transaction refuses statements", async () => {
    const bank = await Bank.open(tempDir());
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let kept: typeof bank | undefined;
    let started!: () => void;
    const inside = new Promise<void>((r) => (started = r));
    const tx = bank.transaction(async (t) => {
      kept = t as typeof bank;
      await t.meta.set('k', 'in-tx');
      started();
      await gate; // the unit of work awaits something else (as a stage awaits a worker thread)
      throw new Error('rolled back');
    });
    await inside;
    // issued while the transaction is open: must not be written inside it (it would be rolled back with it)
    let outsideDone = false;
    const outside = bank.meta.set('other', 'kept').then(() => (outsideDone = true));
    // SQLite statements run synchronously: after a turn of the event loop a statement that did not wait has run
    await new Promise((r) => setImmediate(r));
    expect(outsideDone, 'the statement waits for the transaction').to.equal(false);
    release();
    await rejects(tx, /rolled back/);
    await outside;
    expect(await bank.meta.get('k')).to.equal(undefined);
    expect(await bank.meta.get('other')).to.equal('kept');
    await rejects(kept!.meta.get('k'), /already ended/);
    await bank.close();
  });

  it('transactions queued behind an open one run one after another (none starts inside another)', async () => {
    const bank = await Bank.open(tempDir());
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = bank.transaction(async (tx) => {
      await tx.meta.set('n', '0');
      await gate;
    });
    const later = Array.from({ length: 5 }, (_, i) =>
      bank.transaction(async (tx) => {
        const n = Number(await tx.meta.get('n'));
        await new Promise((r) => setImmediate(r)); // another flow could run here: it must not see or join this unit
        await tx.meta.set('n', String(n + 1));
        await tx.meta.set(`t${i}`, 'done');
      }),
    );
    const reads = Array.from({ length: 5 }, () => bank.meta.get('n'));
    release();
    await Promise.all([first, ...later]);
    expect(await bank.meta.get('n')).to.equal('5');
    for (const r of await Promise.all(reads)) expect(r).to.be.a('string');
    await bank.close();
  });

  it('iterates a large result through a snapshot while the same bank writes', async () => {
    const dir = tempDir();
    const bank = await Bank.open(dir);
    await bank.transaction(async (tx) => {
      for (let i = 0; i < 500; i++) await tx.meta.set(`k${String(i).padStart(3, '0')}`, String(i));
    });
    const db = SqliteBackend.open(path.join(dir, 'capbridge.db'));
    let n = 0;
    for await (const r of db.iterate<{ key: string }>('SELECT key FROM meta WHERE key LIKE ? ORDER BY key', ['k%'])) {
      n++;
      if (n % 100 === 0) await db.run('INSERT INTO meta (key, value) VALUES (?, ?)', [`w${r.key}`, 'x']);
    }
    expect(n).to.equal(500);
    expect((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM meta WHERE key LIKE 'w%'"))!.n).to.equal(5);
    await db.close();
    await bank.close();
  });
});

describe('migrations', () => {
  it('applies a migration numbered below one already applied (layers land in any order), once', async () => {
    const file = path.join(tempDir(), 'm.db');
    const db = SqliteBackend.open(file);
    const m1 = { version: 1, name: 'one', up: 'CREATE TABLE a (x INTEGER)' };
    const m2 = { version: 2, name: 'two', up: 'CREATE TABLE b (x INTEGER)' };
    const m6 = { version: 6, name: 'six', up: 'CREATE TABLE f (x INTEGER)' };
    await applyMigrations(db, [m1, m6]);
    expect(await db.schemaVersion()).to.equal(6);
    await applyMigrations(db, [m1, m2, m6]);
    const tables = (await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")).map((r) => r.name);
    expect(tables).to.include.members(['a', 'b', 'f']);
    expect((await db.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).map((r) => r.version)).to.deep.equal([1, 2, 6]);
    await applyMigrations(db, [m1, m2, m6]); // nothing left to apply: CREATE TABLE would throw if re-run
    await rejects(applyMigrations(db, [m1]), /newer than this capbridge knows \(1\)/);
    await db.close();
  });
});

describe('migrations on PostgreSQL', function () {
  const why = pgUnavailable();
  if (why) {
    it(`skipped: ${why}`, function () {
      this.skip();
    });
    return;
  }
  it('applies each migration once, records it, refuses a newer database and one without a PostgreSQL form', async () => {
    const url = await (await startPg()).createDatabase();
    const db = await PostgresBackend.connect(url);
    try {
      const m1 = { version: 1, name: 'one', up: 'CREATE TABLE a (x INTEGER)', pg: 'CREATE TABLE a (x BIGINT)' };
      const m2 = { version: 2, name: 'two', up: 'CREATE TABLE b (x INTEGER)', pg: 'CREATE TABLE b (x BIGINT)' };
      const m6 = { version: 6, name: 'six', up: 'CREATE TABLE f (x INTEGER)', pg: async (sql: import('../src/bank/sql.js').Sql) => sql.exec('CREATE TABLE f (x BIGINT)') };
      await applyMigrations(db, [m1, m6]);
      expect(await db.schemaVersion()).to.equal(6);
      await applyMigrations(db, [m1, m2, m6]);
      expect((await db.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).map((r) => r.version)).to.deep.equal([1, 2, 6]);
      await applyMigrations(db, [m1, m2, m6]); // nothing left to apply: CREATE TABLE would throw if re-run
      await rejects(applyMigrations(db, [m1]), /newer than this capbridge knows \(1\)/);
      await rejects(applyMigrations(db, [m1, m2, m6, { version: 7, name: 'sqlite only', up: 'CREATE TABLE g (x INTEGER)' }]), /migration 7 \(sqlite only\) has no PostgreSQL form/);
    } finally {
      await db.close();
    }
  });
});
