import path from 'node:path';
import fs from 'node:fs';
import { expect } from 'chai';
import { evalMetrics } from '../src/eval/eval.js';
import { runCli, tempDir } from './helpers.js';

describe('eval metrics', () => {
  it('computes P@n, hit@k, precision, coverage and false emission rate as ../shared/data/README.md defines them', () => {
    const truth = new Map([
      ['s1', new Set(['t1'])],
      ['s2', new Set(['t2', 't3'])], // two counterparts
      ['s3', new Set(['t4'])],
    ]);
    const m = evalMetrics({
      sourceIds: ['s1', 's2', 's3', 's4', 's5'], // s4, s5: no counterpart
      truth,
      ranked: new Map([
        ['s1', ['t1', 't9']], // right at rank 1
        ['s2', ['t9', 't3', 't2']], // both right, at ranks 2 and 3
        ['s3', ['t8', 't7', 't6', 't5', 't9']], // never right
        ['s4', ['t9']],
      ]),
      emitted: [
        { source: 's1', target: 't1', level: 'par' }, // correct
        { source: 's2', target: 't3', level: 'com' }, // correct
        { source: 's2', target: 't9', level: 'com' }, // wrong
        { source: 's4', target: 't9', level: 'pse' }, // wrong, and s4 has no counterpart
      ],
    });
    expect(m.sources).to.equal(5);
    expect(m.sourcesWithCounterpart).to.equal(3);
    expect(m.truthPairs).to.equal(4);
    // P@1 = (1 + 0 + 0)/3; P@2 = (1/1 + 1/2 + 0)/3; P@3 = (1 + 2/2 + 0)/3
    expect(m.pAt['1']).to.equal(0.3333);
    expect(m.pAt['2']).to.equal(0.5);
    expect(m.pAt['3']).to.equal(0.6667);
    expect(m.pAt['5']).to.equal(0.6667);
    expect(m.hitAt1).to.equal(0.3333);
    expect(m.hitAt5).to.equal(0.6667);
    expect(m.emitted).to.equal(4);
    expect(m.emittedCorrect).to.equal(2);
    expect(m.emittedPrecision).to.equal(0.5);
    expect(m.coverage).to.equal(0.6667); // s1, s2 of s1..s3
    expect(m.falseEmissionRate).to.equal(0.5); // s4 of s4, s5
    expect(m.emittedByLevel).to.deep.equal({ par: 1, com: 2, pse: 1, inc: 0 });
  });

  it('the command names a missing file of the set', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'source.tsv'), 'id\timage\tcaption\n');
    const res = await runCli(['--data', path.join(dir, 'data'), 'eval', '--set', dir]);
    expect(res.code).to.not.equal(0);
    expect(res.stderr).to.match(/target\.tsv: missing/);
  });
});
