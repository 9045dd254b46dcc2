// `npm run bench:twins`: how many SIFT runs "work once per picture" saves (sift.twins), and whether the features
// it reuses are right. Each shared retrieval set goes into ONE bank (its sources and targets together, so the
// set's own transformed copies meet their originals in the same bank), plus, for mining-flickr8k, every source
// republished the way the set made its counterparts' final step (longest side drawn from 300-500 px, JPEG
// quality 55-85, seeded): the wire-photo case. The real features stage runs; then each reused copy is also
// described on its own (bench only) and its own keypoints are matched (ratio test) to the features it reused:
// a right reuse puts them on the same spots (within 3 px of the copy's pixels). Prints ONE JSON line.
// Env: CAPBRIDGE_SHARED_DATA is not read (config variables share the prefix); data from ../shared/data.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { Bank, FeaturesRepo, TwinsRepo } from '../src/bank/index.js';
import { loadConfig } from '../src/config/load.js';
import { importManifest } from '../src/import/manifest.js';
import { extractFeatures } from '../src/lib/sift/index.js';
import { computeMissingFeatures } from '../src/stages/features/index.js';
import type { Features } from '../src/lib/sift/index.js';
import { mulberry32 } from '../src/util/random.js';
import { readSet } from './search-lib.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const data = path.resolve(repoRoot, '..', 'shared', 'data');
const { config } = loadConfig({});
config.captions.checkLanguage = false;
const threads = Number(process.env.BENCH_THREADS ?? 2);

/** Share of a's keypoints whose ratio-test match in b lies within tol original px (both mapped to original px). */
function agreement(a: Features, b: Features, tol = 3): { matched: number; within: number } {
  let matched = 0;
  let within = 0;
  for (let i = 0; i < a.count; i++) {
    let d1 = Infinity, d2 = Infinity, j1 = -1;
    for (let j = 0; j < b.count; j++) {
      let d = 0;
      for (let k = 0; k < 128; k++) {
        const t = a.descriptors[i * 128 + k]! - b.descriptors[j * 128 + k]!;
        d += t * t;
      }
      if (d < d1) {
        d2 = d1;
        d1 = d;
        j1 = j;
      } else if (d < d2) d2 = d;
    }
    if (j1 < 0 || d1 > 0.64 * d2) continue;
    matched++;
    const dx = a.keypoints[i * 6]! / a.scale - b.keypoints[j1 * 6]! / b.scale;
    const dy = a.keypoints[i * 6 + 1]! / a.scale - b.keypoints[j1 * 6 + 1]! / b.scale;
    if (Math.hypot(dx, dy) <= tol / a.scale) within++;
  }
  return { matched, within };
}

const sets = process.env.BENCH_SETS ? process.env.BENCH_SETS.split(',') : ['mining-flickr8k', 'retrieval-smvs', 'retrieval-wxbs', 'retrieval-scenes'];
const out: Record<string, unknown> = {};
const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-twins-'));
try {
  for (const name of sets) {
    const set = readSet(path.join(data, name));
    const dir = path.join(tmpRoot, name);
    fs.mkdirSync(dir, { recursive: true });
    const rows: string[][] = [];
    const kind = new Map<string, string>(); // ext id -> 'source' | 'target' | 'republished'
    for (const s of set.sources) {
      rows.push([`s:${s.id}`, path.join(set.dir, s.image), 'x']);
      kind.set(`s:${s.id}`, 'source');
    }
    for (const t of set.targets) {
      rows.push([`t:${t.id}`, path.join(set.dir, t.image), 'x']);
      kind.set(`t:${t.id}`, 'target');
    }
    if (name === 'mining-flickr8k') {
      const rnd = mulberry32(20261123);
      for (const s of set.sources) {
        const side = 300 + Math.floor(rnd() * 201);
        const q = 55 + Math.floor(rnd() * 31);
        const buf = await sharp(path.join(set.dir, s.image)).resize(side, side, { fit: 'inside' }).jpeg({ quality: q }).toBuffer();
        const f = path.join(dir, `r-${s.id}.jpg`);
        fs.writeFileSync(f, buf);
        rows.push([`r:${s.id}`, f, 'x']);
        kind.set(`r:${s.id}`, 'republished');
      }
    }
    const manifest = path.join(dir, 'bank.tsv');
    fs.writeFileSync(manifest, ['id\timage\tcaption', ...rows.map((r) => r.join('\t'))].join('\n') + '\n');
    const bank = await Bank.open(path.join(dir, 'data'));
    try {
      await importManifest(bank, { bank: 'target', manifest, config });
      const t0 = performance.now();
      const st = await computeMissingFeatures(bank, config, { threads });
      const ms = performance.now() - t0;
      // Each twin: which items, whether it is a known copy (truth pair or republished source), and the check.
      const twins = bank.repo(TwinsRepo);
      const feats = bank.repo(FeaturesRepo);
      const extsOf = new Map<string, string[]>();
      for (const r of rows) {
        const it = (await bank.items.get('target', r[0]!));
        if (!it) continue;
        extsOf.set(it.imageSha256, [...(extsOf.get(it.imageSha256) ?? []), r[0]!]);
      }
      const isCopy = (a: string, b: string): boolean => {
        const [ka, ia] = a.split(':') as [string, string];
        const [kb, ib] = b.split(':') as [string, string];
        if (ia === ib && (ka === 'r' || kb === 'r')) return true; // a republished source and its source
        const src = ka === 's' ? ia : kb === 's' ? ib : null;
        const tgt = ka === 't' ? ia : kb === 't' ? ib : null;
        return !!src && !!tgt && !!set.truth.get(src)?.has(tgt);
      };
      const details: Array<{ copy: string; of: string; distance: number; known: boolean; matched: number; within: number }> = [];
      for (const [sha, exts] of extsOf) {
        const t = await twins.twinOf(sha);
        if (!t) continue;
        const of = extsOf.get(t.ofSha256)?.[0] ?? '?';
        const reused = (await feats.get(sha))!;
        const own = await extractFeatures((await bank.images.read(sha)), config);
        const a = agreement(own, reused);
        details.push({ copy: exts[0]!, of, distance: t.distance, known: isCopy(exts[0]!, of), ...a });
      }
      const byKind = (k: string) => details.filter((d) => kind.get(d.copy) === k || kind.get(d.of) === k).length;
      const share = (d: { matched: number; within: number }) => (d.matched ? d.within / d.matched : 0);
      const shares = details.map(share).sort((x, y) => x - y);
      out[name] = {
        images: extsOf.size,
        siftRuns: st.images,
        saved: st.twins,
        savedShare: Math.round((st.twins / Math.max(1, extsOf.size)) * 1000) / 1000,
        knownCopies: details.filter((d) => d.known).length,
        otherPairs: details.filter((d) => !d.known).map((d) => `${d.copy}~${d.of}`),
        republishedFound: byKind('republished'),
        republished: rows.filter((r) => kind.get(r[0]!) === 'republished').length,
        reuseAgreement: { min: Math.round((shares[0] ?? 0) * 1000) / 1000, median: Math.round((shares[shares.length >> 1] ?? 0) * 1000) / 1000 },
        wrongReuse: details.filter((d) => share(d) < 0.8).map((d) => `${d.copy}~${d.of}`),
        stageSeconds: Math.round(ms / 100) / 10,
      };
      process.stderr.write(`bench:twins: ${name}: ${JSON.stringify(out[name])}\n`);
    } finally {
      await bank.close();
    }
  }
} finally {
  fs.rmSync(tmpRoot, { recursive: true, force: true });
}
process.stdout.write(
  JSON.stringify({ bench: 'twins', date: new Date().toISOString(), machine: { nproc: os.cpus().length, load1: Math.round(os.loadavg()[0]! * 10) / 10 }, params: config.sift.twins, sets: out }) + '\n',
);
