import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { Bank, LATEST_SCHEMA_VERSION, StatsRepo } from '../src/bank/index.js';
import { applyMigrations } from '../src/bank/db.js';
import { tempDir, makeImage } from './helpers.js';

describe('bank', () => {
  it('creates the database with WAL, foreign keys and the latest schema, and reopens without migrating again', () => {
    const dir = tempDir();
    const bank = Bank.open(dir);
    expect(bank.schemaVersion).to.equal(LATEST_SCHEMA_VERSION);
    expect(bank.sql.pragma('journal_mode', { simple: true })).to.equal('wal');
    expect(bank.sql.pragma('foreign_keys', { simple: true })).to.equal(1);
    bank.meta.set('probe', 'kept');
    bank.close();
    const again = Bank.open(dir);
    expect(again.meta.get('probe')).to.equal('kept');
    expect(again.schemaVersion).to.equal(LATEST_SCHEMA_VERSION);
    again.close();
  });

  it('refuses a database from a newer capbridge', () => {
    const dir = tempDir();
    Bank.open(dir).close();
    const db = new Database(path.join(dir, 'capbridge.db'));
    db.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 5}`);
    db.close();
    expect(() => Bank.open(dir)).to.throw(/newer than this capbridge knows/);
  });

  it('stores identical image bytes once and keeps items pointing at them', async () => {
    const dir = tempDir();
    const bank = Bank.open(dir);
    const file = await makeImage(path.join(dir, 'src', 'a.png'), 1);
    const buf = fs.readFileSync(file);
    const rec1 = await bank.images.prepare(buf);
    const rec2 = await bank.images.prepare(Buffer.from(buf));
    expect(rec1.sha256).to.equal(rec2.sha256);
    expect(rec1).to.include({ width: 96, height: 72, format: 'png' });
    bank.transaction(() => {
      bank.images.record(rec1);
      for (const extId of ['x1', 'x2']) {
        bank.items.upsert({ bank: 'target', extId, caption: '一只狗在草地上奔跑', lang: 'cmn', captionStatus: 'ok', captionReason: null, imageSha256: rec1.sha256 });
      }
    });
    expect(bank.images.totals().files).to.equal(1);
    expect(fs.readdirSync(path.join(dir, 'images', rec1.sha256.slice(0, 2)))).to.have.length(1);
    const stats = bank.repo(StatsRepo).all();
    expect(stats.banks.target.items).to.equal(2);
    expect(stats.banks.source.items).to.equal(0);
    bank.close();
  });

  it('enforces the foreign key from items to images', () => {
    const bank = Bank.open(tempDir());
    expect(() =>
      bank.items.upsert({ bank: 'source', extId: 'a', caption: 'x', lang: null, captionStatus: 'ok', captionReason: null, imageSha256: 'f'.repeat(64) }),
    ).to.throw(/FOREIGN KEY/);
    bank.close();
  });

  it('upsert reports added / unchanged / updated, and a new image sends the item back to new', async () => {
    const dir = tempDir();
    const bank = Bank.open(dir);
    const a = await bank.images.prepare(fs.readFileSync(await makeImage(path.join(dir, 'a.png'), 2)));
    const b = await bank.images.prepare(fs.readFileSync(await makeImage(path.join(dir, 'b.png'), 3)));
    bank.images.record(a);
    bank.images.record(b);
    const base = { bank: 'source' as const, extId: 'e1', caption: 'A dog runs.', lang: 'eng', captionStatus: 'ok' as const, captionReason: null, imageSha256: a.sha256 };
    expect(bank.items.upsert(base).outcome).to.equal('added');
    expect(bank.items.upsert(base).outcome).to.equal('unchanged');
    const id = bank.items.get('source', 'e1')!.id;
    bank.items.setStatus(id, 'featured');
    expect(bank.items.upsert({ ...base, caption: 'A dog runs fast.' }).outcome).to.equal('updated');
    expect(bank.items.byId(id)!.status).to.equal('featured');
    expect(bank.items.upsert({ ...base, caption: 'A dog runs fast.', imageSha256: b.sha256 }).outcome).to.equal('updated');
    const item = bank.items.byId(id)!;
    expect(item.status).to.equal('new');
    expect(item.imageSha256).to.equal(b.sha256);
    expect(bank.items.listByStatus('source', 'new', 10).map((i) => i.extId)).to.deep.equal(['e1']);
    bank.close();
  });
});

describe('bank: item credits (migration 10)', () => {
  it('stores the credit apart from the caption; a new credit updates the item without re-scoring its caption', async () => {
    const dir = tempDir();
    const bank = Bank.open(dir);
    const a = await bank.images.prepare(fs.readFileSync(await makeImage(path.join(dir, 'a.png'), 5)));
    bank.images.record(a);
    const base = { bank: 'target' as const, extId: 'z1', caption: '市民在公园里赏花。', credit: '新华社记者 李明 摄', lang: 'cmn', captionStatus: 'ok' as const, captionReason: null, imageSha256: a.sha256 };
    expect(bank.items.upsert(base).outcome).to.equal('added');
    const first = bank.items.get('target', 'z1')!;
    expect([first.caption, first.credit]).to.deep.equal(['市民在公园里赏花。', '新华社记者 李明 摄']);
    expect(bank.items.upsert(base).outcome).to.equal('unchanged');
    expect(bank.items.upsert({ ...base, credit: '新华社记者 王芳 摄' }, '2099-01-01T00:00:00.000Z').outcome).to.equal('updated');
    const second = bank.items.get('target', 'z1')!;
    expect(second.credit).to.equal('新华社记者 王芳 摄');
    expect(second.captionUpdatedAt).to.equal(first.captionUpdatedAt);
    expect(bank.items.upsert({ ...base, credit: '' }).outcome).to.equal('updated');
    expect(bank.items.get('target', 'z1')!.credit).to.equal(null);
    bank.close();
  });
});

describe('migrations', () => {
  it('applies a migration numbered below one already applied (layers land in any order), once', () => {
    const file = path.join(tempDir(), 'm.db');
    const db = new Database(file);
    const m1 = { version: 1, name: 'one', up: 'CREATE TABLE a (x INTEGER)' };
    const m2 = { version: 2, name: 'two', up: 'CREATE TABLE b (x INTEGER)' };
    const m6 = { version: 6, name: 'six', up: 'CREATE TABLE f (x INTEGER)' };
    applyMigrations(db, file, [m1, m6]);
    expect(db.pragma('user_version', { simple: true })).to.equal(6);
    applyMigrations(db, file, [m1, m2, m6]);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    expect(tables).to.include.members(['a', 'b', 'f']);
    expect(db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all()).to.deep.equal([1, 2, 6]);
    applyMigrations(db, file, [m1, m2, m6]); // nothing left to apply: CREATE TABLE would throw if re-run
    expect(() => applyMigrations(db, file, [m1])).to.throw(/newer than this capbridge knows \(1\)/);
    db.close();
  });
});
