import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/load.js';
import { testCacheRoot, testLexicon } from './helpers/comparability.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

/** Runs the CLI in this process (the lexicon is already loaded here), capturing stdout, stderr and the exit code. */
async function cliHere(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { buildProgram, commandNameIn } = await import('../src/cli.js');
  const out: string[] = [];
  const err: string[] = [];
  const saved = { out: process.stdout.write, err: process.stderr.write, code: process.exitCode, xdg: process.env.XDG_CACHE_HOME };
  process.stdout.write = ((chunk: string | Uint8Array) => (out.push(String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => (err.push(String(chunk)), true)) as typeof process.stderr.write;
  process.env.XDG_CACHE_HOME = testCacheRoot();
  process.exitCode = 0;
  let code: number | null = 0;
  try {
    const program = await buildProgram(commandNameIn(args));
    await program.exitOverride().parseAsync(['node', 'capbridge', ...args]);
    code = Number(process.exitCode ?? 0);
  } catch {
    code = Number(process.exitCode || 1);
  } finally {
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    process.exitCode = saved.code;
    if (saved.xdg === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved.xdg;
  }
  return { code, stdout: out.join(''), stderr: err.join('') };
}

function cli(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: testCacheRoot(), CAPBRIDGE_CONFIG: '', CAPBRIDGE_DATA: '' },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Our own small labelled pairs (not from any data set).
const LABELLED: Array<[string, string, string]> = [
  ['par', 'A black dog runs across the green field.', '一只黑狗跑过绿色的田野。'],
  ['par', 'Two children are eating ice cream on a bench.', '两个孩子坐在长椅上吃冰淇淋。'],
  ['par', 'A woman is riding a red bicycle down the street.', '一个女人骑着红色自行车沿街而行。'],
  ['par', 'An old man reads a newspaper in the park.', '一位老人在公园里看报纸。'],
  ['par', 'Three boats are floating on the calm lake.', '三条船漂浮在平静的湖面上。'],
  ['par', 'A cat sleeps on the windowsill in the sun.', '一只猫在阳光下的窗台上睡觉。'],
  ['com', 'A puppy plays with a ball in the garden.', '小狗在院子里玩球。'],
  ['com', 'Kids enjoy dessert outside.', '孩子们在户外吃冰淇淋。'],
  ['com', 'A cyclist on a city road.', '一个女人在街上骑车。'],
  ['com', 'A senior citizen relaxing with the morning paper.', '老人在公园看报。'],
  ['com', 'Boats on the water at dusk.', '傍晚湖上有几条小船。'],
  ['inc', 'A black dog runs across the green field.', '厨房里有一台冰箱和一个微波炉。'],
  ['inc', 'Two children are eating ice cream on a bench.', '一架飞机停在机场跑道上。'],
  ['inc', 'A woman is riding a red bicycle down the street.', '桌子上放着一盘水果。'],
  ['inc', 'An old man reads a newspaper in the park.', '海边有一座白色的灯塔。'],
  ['inc', 'Three boats are floating on the calm lake.', '一个男孩在卧室里玩电脑游戏。'],
  ['inc', 'A cat sleeps on the windowsill in the sun.', '几个工人在修路。'],
];

describe('comparability: score and calibrate commands', function () {
  this.timeout(90_000);
  let dir: string;
  before(() => {
    testLexicon(); // build the shared cache once, in-process, before the spawned commands read it
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-'));
  });

  it('score --pairs --json prints one line per pair, in input order, with features, level and explanation', () => {
    const file = path.join(dir, 'pairs.tsv');
    const rows = LABELLED.slice(0, 4).concat(LABELLED.slice(11, 13));
    fs.writeFileSync(file, 'id\ten\tzh\tnote\n' + rows.map(([, en, zh], i) => `${i}\t${en}\t${zh}\tx`).join('\n') + '\n');
    const r = cli(['--data', path.join(dir, 'nodata'), 'score', '--pairs', file, '--json']);
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).to.have.length(rows.length);
    expect(lines.map((l) => l.line)).to.deep.equal(rows.map((_, i) => i + 2));
    for (const l of lines) {
      expect(l).to.include.keys('fc', 'fe', 'fl', 'c', 'level', 'explain');
      expect(['par', 'com', 'pse', 'inc']).to.include(l.level);
      expect(l.explain).to.include.keys('matches', 'entities', 'enTokens', 'zhTokens');
    }
    expect(lines[0].explain.enTokens).to.include('dog');
    expect(lines[1].explain.enTokens).to.include('child');
    expect(lines[0].c).to.be.greaterThan(lines[4].c); // the translation beats the unrelated pair with the same English
    expect(fs.existsSync(path.join(dir, 'nodata'))).to.equal(false); // scoring creates no data dir
  });

  it('score --en --zh prints the explanation', async () => {
    const r = await cliHere(['--data', path.join(dir, 'nodata'), 'score', '--en', 'A dog on the beach.', '--zh', '海滩上的一只小狗。']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/C = 0\.\d+ +level (par|com|pse|inc)/);
    expect(r.stdout).to.contain('dog ↔ 小狗');
  });

  it('score --en --zh --reference takes the null margin from the reference captions (none without: scale 1)', async () => {
    const things = [['kite', '风筝'], ['violin', '小提琴'], ['tractor', '拖拉机'], ['lighthouse', '灯塔'], ['bicycle', '自行车'], ['piano', '钢琴'], ['castle', '城堡'], ['bridge', '桥'], ['windmill', '风车'], ['train', '火车']];
    const rows = Array.from({ length: 30 }, (_, i) => {
      const [en, zh] = things[i % things.length]!;
      return i % 2 ? `A man plays near the ${en}.\t一个男人在${zh}旁边玩。` : `The ${en} stands in the rain.\t${zh}在雨中。`;
    });
    const file = path.join(dir, 'reference.tsv');
    fs.writeFileSync(file, 'en\tzh\n' + rows.join('\n') + '\n');
    const margin = async (en: string, zh: string, ...more: string[]) => {
      const r = await cliHere(['--data', path.join(dir, 'nodata'), 'score', '--json', '--en', en, '--zh', zh, ...more]);
      expect(r.code, r.stderr).to.equal(0);
      return JSON.parse(r.stdout.trim()).explain.margin;
    };
    const alone = await margin('A man plays.', '一个男人在玩。');
    const generic = await margin('A man plays.', '一个男人在玩。', '--reference', file);
    const specific = await margin('A kite over the castle.', '城堡上空的风筝。', '--reference', file);
    expect(alone.scale).to.equal(1); // one pair, no bank: fewer than 20 reference captions, no margin
    expect(generic.typical).to.be.greaterThan(0);
    // "a man plays" meets half the reference captions by chance, kite and castle few: the specific pair's C gains more
    expect(generic.chance).to.be.greaterThan(specific.chance);
    expect(specific.scale).to.be.greaterThan(generic.scale);
    const text = await cliHere(['--data', path.join(dir, 'nodata'), 'score', '--en', 'A man plays.', '--zh', '一个男人在玩。', '--reference', file]);
    expect(text.stdout).to.match(/scale of C: null margin \d\.\d+ \(chance level 0\.\d+, typical 0\.\d+\), specificity \d\.\d+/);
  });

  it('score --sentences aligns the sentences of two captions as the pairing stage does', async () => {
    const r = await cliHere(['--data', path.join(dir, 'nodata'), 'score', '--json', '--sentences',
      '--en', 'A dog runs on the beach. The stock market fell sharply. Photo: Reuters/Jane Doe', '--zh', '一只小狗在海滩上奔跑。新华社记者 张三 摄']);
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    // two English sentences (the credit is none), one Chinese: the dog sentence pairs
    expect(lines.map((l) => [l.enSentences, l.zhSentences, l.en])).to.deep.include([[0, 0], [0, 0], 'A dog runs on the beach.']);
    expect(lines.every((l) => !l.en.includes('Reuters') && !l.zh.includes('摄'))).to.equal(true);
  });

  it('a malformed pairs file gives FILE:LINE errors', async () => {
    const file = path.join(dir, 'bad.tsv');
    fs.writeFileSync(file, 'level\ten\tzh\npar\tA dog.\t一只狗。\npar\tonly english\n');
    const r = await cliHere(['--data', path.join(dir, 'nodata'), 'score', '--pairs', file, '--json']);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.contain(`${file}:3:`);
  });

  it('calibrate fits weights and thresholds and writes a config file that loadConfig accepts', async () => {
    const file = path.join(dir, 'labelled.tsv');
    fs.writeFileSync(file, 'level\ten\tzh\n' + LABELLED.map((r) => r.join('\t')).join('\n') + '\n');
    const out = path.join(dir, 'calibrated.yaml');
    const r = await cliHere(['--data', path.join(dir, 'nodata'), 'calibrate', '--pairs', file, '--out', out, '--json']);
    expect(r.code, r.stderr).to.equal(0);
    const res = JSON.parse(r.stdout.trim());
    expect(res.pairs).to.equal(LABELLED.length);
    expect(res.before).to.include.keys('aucParCom', 'aucComInc', 'levelAccuracy', 'parPrecision', 'parRecall', 'comOrBetterPrecision');
    expect(res.heldOut).to.equal(null);
    const { config } = loadConfig({ configFile: out, env: {} });
    const w = config.comparability.weights;
    expect(w.alpha + w.beta + w.gamma + w.delta).to.be.closeTo(1, 1e-9);
    expect(config.comparability).to.deep.include({ hanziPerWord: res.values.hanziPerWord, parMinLengthRatio: res.values.parMinLengthRatio });
    expect(config.comparability.thresholds).to.deep.equal(res.values.thresholds);
    const t = config.comparability.thresholds;
    expect(t.par).to.be.at.least(t.com);
    expect(t.com).to.be.at.least(t.pse);
  });

  it('calibrate --holdout keeps a seeded, stratified part out of the fit and scores it after', async () => {
    const file = path.join(dir, 'labelled.tsv');
    const out = path.join(dir, 'calibrated-holdout.yaml');
    const run = () => cliHere(['--data', path.join(dir, 'nodata'), 'calibrate', '--pairs', file, '--out', out, '--holdout', '0.34', '--seed', '7', '--json']);
    const r = await run();
    expect(r.code, r.stderr).to.equal(0);
    const res = JSON.parse(r.stdout.trim());
    const byLevel = (l: string) => LABELLED.filter((x) => x[0] === l).length;
    // each level loses about a third to the held-out part
    expect(res.heldOutPairs).to.equal(['par', 'com', 'pse', 'inc'].reduce((n, l) => n + Math.round(byLevel(l) * 0.34), 0));
    expect(res.pairs + res.heldOutPairs).to.equal(LABELLED.length);
    expect(res.heldOut.pairs).to.equal(res.heldOutPairs);
    expect(res.seed).to.equal(7);
    // the same seed draws the same part
    expect(JSON.parse((await run()).stdout.trim()).heldOut).to.deep.equal(res.heldOut);
  });
});
