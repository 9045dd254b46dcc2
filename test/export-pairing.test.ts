import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { XMLValidator } from 'fast-xml-parser';
import { Bank, type Item, type VerifiedBy } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { Daemon } from '../src/daemon/daemon.js';
import { decide } from '../src/stages/pair/pairing.js';
import type { CaptionScorer as Scorer } from '../src/lib/comparability/index.js';
import { createLogger } from '../src/util/log.js';
import { tempDir } from './helpers.js';
import { addItem, decision, storeDecisions, taggedScorer } from './export-helpers.js';

const config = loadConfig({}).config;
const thresholds = { minInliers: { search: 12, archive: 9 }, minImageScore: 0.2, minLevel: 'com' as const };

// A scorer for the decision rules only: the level is given by the test through the Chinese caption.
const scorer: Scorer = taggedScorer();

const item = (over: Partial<Item>): Item =>
  ({ id: 1, bank: 'source', extId: 'x', caption: 'A caption.', lang: 'eng', captionStatus: 'ok', captionReason: null, imageSha256: 'a',
    pageUrl: null, imageUrl: null, site: null, importedAt: null, fetchedAt: null, updatedAt: '', captionUpdatedAt: '', status: 'matched',
    statusReason: null, statusAt: '', ...over }) as Item;
const cand = (inliers: number, imageScore: number, verifiedBy: VerifiedBy = 'search') => ({ sourceItemId: 1, targetItemId: 2, rank: 0, imageScore, inliers, verifiedBy, matchedAt: 't' });

describe('pairing decision', () => {
  it('emits when the image verifies and the level is at least the floor', async () => {
    const src = item({});
    const d = await decide(src, item({ id: 2, bank: 'target', caption: '一句 [com]' }), cand(40, 0.5), scorer, thresholds);
    expect(d.emitted).to.equal(true);
    expect(d.level).to.equal('com');
    const par = await decide(src, item({ id: 2, bank: 'target', caption: '一句 [par]' }), cand(40, 0.5), scorer, thresholds);
    expect(par.emitted).to.equal(true);
  });

  it('does not emit below the level floor, below the image thresholds, or with an unusable caption', async () => {
    const src = item({});
    const tgt = (c: string, over: Partial<Item> = {}) => item({ id: 2, bank: 'target', caption: c, ...over });
    const pse = await decide(src, tgt('一句 [pse]'), cand(40, 0.5), scorer, thresholds);
    expect([pse.emitted, pse.reason]).to.deep.equal([false, 'level']);
    expect((await decide(src, tgt('一句 [pse]'), cand(40, 0.5), scorer, { ...thresholds, minLevel: 'pse' })).emitted).to.equal(true);
    const fewInliers = await decide(src, tgt('一句 [par]'), cand(11, 0.9), scorer, thresholds);
    expect([fewInliers.emitted, fewInliers.reason]).to.deep.equal([false, 'image']);
    // each verification's own floor: 11 inliers pass when archive matching's a-contrario test stored the candidate,
    // 8 do not; a search's candidate needs 12 whatever the archive floor is
    expect((await decide(src, tgt('一句 [par]'), cand(11, 0.9, 'archive'), scorer, thresholds)).emitted).to.equal(true);
    const fewArchive = await decide(src, tgt('一句 [par]'), cand(8, 0.9, 'archive'), scorer, thresholds);
    expect([fewArchive.emitted, fewArchive.reason]).to.deep.equal([false, 'image']);
    const lowScore = await decide(src, tgt('一句 [par]'), cand(80, 0.1), scorer, thresholds);
    expect([lowScore.emitted, lowScore.reason]).to.deep.equal([false, 'image']);
    for (const over of [{ captionStatus: 'lang-mismatch' as const }, { captionStatus: 'empty' as const, caption: '' }]) {
      const d = await decide(src, tgt('一句 [par]', over), cand(80, 0.9), scorer, thresholds);
      expect([d.emitted, d.reason, d.level]).to.deep.equal([false, 'caption-status', null]);
    }
    const emptySource = await decide(item({ caption: '', captionStatus: 'empty' }), tgt('一句 [par]'), cand(80, 0.9), scorer, thresholds);
    expect(emptySource.emitted).to.equal(false);
  });
});

describe('daemon --once --export: the scheduled export of new pairs', () => {
  it('writes dated files of pairs never exported before, then empty ones', async () => {
    const dir = tempDir();
    const bank = await Bank.open(path.join(dir, 'data'));
    try {
      const s = await addItem(bank, dir, 'source', 's1', 'A heron stands in the river.', 1);
      const t = await addItem(bank, dir, 'target', 't1', '一只鹭站在河里。', 2);
      await storeDecisions(bank, [decision(s, t, 'A heron stands in the river.', '一只鹭站在河里。', 'par', 0.7)]);
      const logger = createLogger('error');
      // no stages: the decisions above are the input; the clock names the dated files (second resolution)
      let now = new Date('2026-11-23T03:15:00Z');
      const run = () => new Daemon({ bank, config, logger, once: true, exportAfter: true, handleSignals: false, stages: [], now: () => now }).run();
      expect((await run()).exitCode).to.equal(0);
      const folder = path.join(bank.dataDir, config.export.folder);
      const first = fs.readdirSync(folder).sort();
      expect(first.filter((f) => f.endsWith('.tsv'))).to.deep.equal(['pairs-2026-11-23T031500Z.tsv']);
      expect(first.filter((f) => f.endsWith('.tmx'))).to.have.length(1);
      const tsv = fs.readFileSync(path.join(folder, first.find((f) => f.endsWith('.tsv'))!), 'utf8');
      expect(tsv).to.include('A heron stands in the river.\t一只鹭站在河里。\tpar');
      expect(XMLValidator.validate(fs.readFileSync(path.join(folder, first.find((f) => f.endsWith('.tmx'))!), 'utf8'))).to.equal(true);
      now = new Date('2026-11-24T03:15:00Z'); // the next night
      await run();
      const second = fs.readdirSync(folder).filter((f) => !first.includes(f) && f.endsWith('.tsv'));
      expect(second).to.deep.equal(['pairs-2026-11-24T031500Z.tsv']);
      expect(fs.readFileSync(path.join(folder, second[0]!), 'utf8').trim().split('\n')).to.have.length(1); // header only
      expect((await bank.meta.getJson<{ records: number }>('daemon.lastExport'))?.records).to.equal(0);
    } finally {
      await bank.close();
    }
  });
});
