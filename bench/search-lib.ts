// Shared pieces of bench/search.ts and bench/search-matching.ts: the shared data folder, our cached features, reading retrieval sets, the OpenCV feature dumps, and the metrics of
// ../shared/data/README.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.js';
import type { Features, Prepared } from '../src/lib/image-index/index.js';
import { prepare } from '../src/lib/image-index/index.js';
import type { Config } from '../src/config/schema.js';
import { SiftPool } from '../src/lib/sift/index.js';
import { decodeGrey } from '../src/lib/sift/index.js';
import { detectAndDescribe, siftParams } from '../src/lib/sift/index.js';
import type { ViewSpec } from '../src/lib/sift/index.js';
import { withOwnViews, type ViewRunner } from '../src/stages/match/index.js';

/**
 * ../shared/data beside the clone, or beside the folder of worktrees (a worktree at /work/wt/NAME).
 * CAPBRIDGE_SHARED_DATA is read here and removed before the config loads (it takes CAPBRIDGE_* as config keys).
 */
export function sharedDataDir(repoRoot: string): string {
  const dir =
    process.env.CAPBRIDGE_SHARED_DATA ??
    [path.resolve(repoRoot, '..', 'shared', 'data'), path.resolve(repoRoot, '..', '..', 'shared', 'data')].find((d) => fs.existsSync(d)) ??
    path.resolve(repoRoot, '..', 'shared', 'data');
  delete process.env.CAPBRIDGE_SHARED_DATA;
  return dir;
}

/** A bench script's flags: `opt('name', default)` for `--name VALUE`, `flag('name')` for a bare `--name`. */
export function benchArgs(args: string[] = process.argv.slice(2)): { args: string[]; opt: (name: string, d: string) => string; flag: (name: string) => boolean } {
  const opt = (name: string, d: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && args[i + 1] ? args[i + 1]! : d;
  };
  return { args, opt, flag: (name: string) => args.includes(`--${name}`) };
}

/**
 * What a diagnostic over the index at scale starts from: the repository root (from the script's import.meta.url), the
 * shared data folder, its flags, the shipped configuration (read after the data folder's variable is removed), a
 * stderr logger and `--n`, the number of targets (10,000 unless given).
 */
export function scaleScript(importMetaUrl: string): { repoRoot: string; shared: string; opt: (name: string, d: string) => string; config: Config; log: (m: string) => void; n: number } {
  const repoRoot = path.resolve(path.dirname(fileURLToPath(importMetaUrl)), '..');
  const shared = sharedDataDir(repoRoot);
  const { opt } = benchArgs();
  const { config } = loadConfig({});
  return { repoRoot, shared, opt, config, log: (m: string) => process.stderr.write(`${m}\n`), n: Number(opt('n', '10000')) };
}

/** Our SIFT features of every image of a set, extracted once on the sift pool and cached in bench/.cache/ours. */
export async function ourFeatures(repoRoot: string, set: RetrievalSet, config: Config, log: (s: string) => void): Promise<Map<string, Features>> {
  const dir = path.join(repoRoot, 'bench', '.cache', 'ours', set.name);
  if (fs.existsSync(path.join(dir, 'index.json'))) return loadCv2Features(dir);
  fs.mkdirSync(dir, { recursive: true });
  const pool = new SiftPool(config.sift, Math.max(1, Math.min(2, os.cpus().length)));
  const index: Record<string, unknown> = {};
  const all = [...set.sources, ...set.targets];
  let done = 0;
  await Promise.all(
    all.map(async (r) => {
      const { features: f } = await pool.extract(fs.readFileSync(path.join(set.dir, r.image)));
      fs.writeFileSync(path.join(dir, r.id + '.kp'), Buffer.from(f.keypoints.buffer, f.keypoints.byteOffset, f.keypoints.byteLength));
      fs.writeFileSync(path.join(dir, r.id + '.desc'), Buffer.from(f.descriptors.buffer, f.descriptors.byteOffset, f.descriptors.byteLength));
      index[r.id] = { width: f.width, height: f.height, scale: f.scale, count: f.count };
      if (++done % 100 === 0) log(`${set.name}: SIFT ${done}/${all.length}`);
    }),
  );
  await pool.close();
  fs.writeFileSync(path.join(dir, 'index.json'), JSON.stringify(index));
  return loadCv2Features(dir);
}

/** The P@1 sets of bench:index (issue 35) and every target of them, prepared, keyed `set:target` (the index's real
 *  targets; padding follows them). */
export const P1_SETS = ['mining-flickr8k', 'retrieval-smvs', 'retrieval-scenes'];
export async function p1Targets(repoRoot: string, shared: string, config: Config, log: (s: string) => void) {
  const sets = P1_SETS.map((n) => readSet(path.join(shared, n)));
  const feats = new Map<string, Map<string, Features>>();
  const real: { key: string; p: Prepared }[] = [];
  for (const s of sets) {
    const f = await ourFeatures(repoRoot, s, config, log);
    feats.set(s.name, f);
    for (const t of s.targets) real.push({ key: `${s.name}:${t.id}`, p: prepare(f.get(t.id)!) });
  }
  return { sets, feats, real };
}

export interface RetrievalSet {
  name: string;
  dir: string;
  sources: { id: string; image: string }[];
  targets: { id: string; image: string }[];
  truth: Map<string, Set<string>>;
  /** Scene of each id where the set has an origin.tsv with a scene column (retrieval-scenes); '-' for distractors. */
  scenes: Map<string, string>;
}

function readTsv(file: string): Record<string, string>[] {
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.length);
  const head = lines[0]!.split('\t');
  return lines.slice(1).map((l) => {
    const cells = l.split('\t');
    return Object.fromEntries(head.map((h, i) => [h, cells[i] ?? '']));
  });
}

export function readSet(dir: string): RetrievalSet {
  const truth = new Map<string, Set<string>>();
  for (const r of readTsv(path.join(dir, 'truth.tsv'))) {
    if (!truth.has(r.source_id!)) truth.set(r.source_id!, new Set());
    truth.get(r.source_id!)!.add(r.target_id!);
  }
  const rows = (f: string) => readTsv(path.join(dir, f)).map((r) => ({ id: r.id!, image: r.image! }));
  const scenes = new Map<string, string>();
  if (fs.existsSync(path.join(dir, 'origin.tsv'))) for (const r of readTsv(path.join(dir, 'origin.tsv'))) if (r.scene) scenes.set(r.id!, r.scene);
  return { name: path.basename(dir), dir, sources: rows('source.tsv'), targets: rows('target.tsv'), truth, scenes };
}

/**
 * The held-out scenes of a set with scene labels: chosen before any run on the set, as the two scenes whose
 * names have the smallest SHA-1 (retrieval-scenes: lund_door, sceaux_castle: 6 of 29 queries), so the
 * choice depends on no result. Their queries are scored only at the end (`--split holdout|all`); their
 * targets stay in the index as for every other query.
 */
export function holdoutScenes(set: RetrievalSet, count = 2): Set<string> {
  const names = [...new Set([...set.scenes.values()].filter((s) => s !== '-'))];
  const sha = (s: string) => createHash('sha1').update(s).digest('hex');
  return new Set(names.sort((a, b) => (sha(a) < sha(b) ? -1 : 1)).slice(0, count));
}

/**
 * The held-out queries of a set (bench:search scores them only with --split all): the queries of holdoutScenes where
 * the set names its scenes (retrieval-scenes), otherwise of a fifth of its truth's scenes (at least one), a scene
 * being a connected group of queries and targets in truth.tsv named by its smallest target id, chosen by the SHA-1
 * of that name. Nothing here looks at a result.
 */
export function heldOut(set: RetrievalSet): Set<string> {
  if (set.scenes.size) {
    const held = holdoutScenes(set);
    return new Set(set.sources.map((s) => s.id).filter((s) => held.has(set.scenes.get(s) ?? '')));
  }
  // union-find over the truth pairs
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    while (parent.get(x) !== x) x = parent.get(x) ?? (parent.set(x, x), x);
    return x;
  };
  for (const [s, ts] of set.truth) for (const t of ts) {
    const a = find(`s:${s}`), b = find(`t:${t}`);
    if (a !== b) parent.set(a, b);
  }
  const name = new Map<string, string>(); // root -> smallest target id
  for (const ts of set.truth.values()) for (const t of ts) {
    const r = find(`t:${t}`);
    if (!name.has(r) || t < name.get(r)!) name.set(r, t);
  }
  const sha = (s: string) => createHash('sha1').update(s).digest('hex');
  const scenes = [...new Set(name.values())].sort((a, b) => (sha(a) < sha(b) ? -1 : 1));
  const held = new Set(scenes.slice(0, Math.max(1, Math.round(scenes.length / 5))));
  return new Set([...set.truth.keys()].filter((s) => held.has(name.get(find(`s:${s}`))!)));
}

/** Features dumped by bench/cv2_features.py. */
export function loadCv2Features(cacheDir: string): Map<string, Features> {
  const index = JSON.parse(fs.readFileSync(path.join(cacheDir, 'index.json'), 'utf8')) as Record<
    string,
    { width: number; height: number; scale: number; count: number }
  >;
  const out = new Map<string, Features>();
  for (const [id, m] of Object.entries(index)) {
    const kb = fs.readFileSync(path.join(cacheDir, id + '.kp'));
    const db = fs.readFileSync(path.join(cacheDir, id + '.desc'));
    out.set(id, {
      width: m.width,
      height: m.height,
      scale: m.scale,
      count: m.count,
      keypoints: new Float32Array(kb.buffer.slice(kb.byteOffset, kb.byteOffset + kb.byteLength)),
      descriptors: new Uint8Array(db.buffer.slice(db.byteOffset, db.byteOffset + db.byteLength)),
    });
  }
  return out;
}

/** P@1..5 and hit@1/5 over sources with a counterpart. ranked: source id -> target ids best first. */
export function metrics(set: RetrievalSet, ranked: Map<string, string[]>): { p: number[]; hit1: number; hit5: number } {
  const p = [0, 0, 0, 0, 0];
  let hit1 = 0;
  let hit5 = 0;
  let n = 0;
  for (const [s, rel] of set.truth) {
    n++;
    const list = ranked.get(s) ?? [];
    for (let k = 1; k <= 5; k++) {
      const top = list.slice(0, k);
      p[k - 1]! += top.filter((t) => rel.has(t)).length / Math.min(k, rel.size);
    }
    if (list.slice(0, 1).some((t) => rel.has(t))) hit1++;
    if (list.slice(0, 5).some((t) => rel.has(t))) hit5++;
  }
  return { p: p.map((x) => round(x / n)), hit1: round(hit1 / n), hit5: round(hit5 / n) };
}

export const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

export function percentile(xs: number[], q: number): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

/** An image file's plain features as `match` describes a source (config.sift's decoding and SIFT, in this thread). */
export async function plainFeatures(file: string, config: Config): Promise<Features> {
  const c = config.sift;
  const g = await decodeGrey(fs.readFileSync(file), { maxSide: c.maxSide, maxPixels: c.maxPixels, minSide: c.minSide });
  const f = detectAndDescribe(g.grey, g.width, g.height, siftParams(c));
  f.scale = g.scale;
  return f;
}

/** An image file's plain features with its own views appended (the pooled features of two-sided views). */
export async function pooledFromFile(file: string, plain: Features, config: Config, specs: ViewSpec[], keypointsPerView: number, maxSide: number, runViews?: ViewRunner): Promise<Features> {
  const g = await decodeGrey(fs.readFileSync(file), { maxSide: config.sift.maxSide, maxPixels: config.sift.maxPixels });
  return withOwnViews(plain, g, specs, siftParams(config.sift), keypointsPerView, maxSide, runViews);
}
