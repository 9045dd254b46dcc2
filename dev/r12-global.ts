// Issue 35 round 12: a compact global descriptor per target (VLAD of RootSIFT over a small codebook, PCA-reduced) as a
// second shortlist for sources the plain search leaves unconfident. Measured in-process on the 100,000-target bank
// kept on disk by dev/r9-cli.ts (read-only; its sources must be retrieval-smvs's: checked by image hash).
//   --phase codebook  k-means (--k words) on RootSIFT of mining-flickr8k's targets (bench/.cache/ours, dev/r12-prep.ts),
//                     as mean-rootsift.ts was learned: r12/cb<k>.f32
//   --phase targets   every target of the bank (--part i --parts n: every n-th from i): VLAD (intra-normalised, L2),
//                     int8 per vector: r12/vlad<k>.p<i>.i8 + .json (item ids, ext ids); streamed, nothing held
//   --phase pca       PCA (randomised, --dims) learned on a sample of the target VLADs (every --every-th): r12/pca<k>.f32;
//                     then (--part/--parts) every target projected: r12/proj<k>.p<i>.f32 (dims floats each)
//   --phase rank      smvs's sources (from the bank), flickr8k's 80 sources without counterpart and scenes' sources
//                     (the project's SIFT of the set's images) ranked against all targets per variant (--variants):
//                     rank of the true target, and the null: how many of the top K verify (confident / storable) and
//                     the verification CPU. One JSON line per variant.
// Usage: npx tsx dev/r12-global.ts --phase codebook --k 64
//        npx tsx dev/r12-global.ts --phase targets --k 64 --part 0 --parts 2 --dir /work/tmp-35/bank11
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Matrix, QrDecomposition, EigenvalueDecomposition } from 'ml-matrix';
import { Bank, FeaturesRepo } from '../src/bank/index.js';
import { asStored } from '../src/bank/index.js';
import { LshIndex, lshParams, mulberry32, prepare, rootSift, searchParams, sketchCollisions, tooFewCollisions, verifyCandidate, type Features } from '../src/lib/image-index/index.js';
import { ourFeatures, readSet, scaleScript } from '../bench/search-lib.js';

const { repoRoot, shared, opt, config, log } = scaleScript(import.meta.url);
const OUT = opt('out', '/work/tmp-35/r12');
const K = Number(opt('k', '64'));
const DIMS = Number(opt('dims', '512'));
const D = K * 128;
const phase = opt('phase', 'rank');
const part = Number(opt('part', '0'));
const parts = Number(opt('parts', '1'));
const dir = opt('dir', '/work/tmp-35/bank11');
fs.mkdirSync(OUT, { recursive: true });
const f32 = (file: string) => {
  const b = fs.readFileSync(file);
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
};
const write = (file: string, a: Float32Array | Int8Array) => fs.writeFileSync(file, Buffer.from(a.buffer, a.byteOffset, a.byteLength));

// ---- VLAD
function vlad(f: Features, C: Float32Array, cn: Float32Array): Float32Array {
  const v = rootSift(f.descriptors, f.count);
  const out = new Float32Array(D);
  for (let i = 0; i < f.count; i++) {
    const o = i * 128;
    let best = -Infinity;
    let bk = 0;
    for (let k = 0; k < K; k++) {
      const co = k * 128;
      let s = 0;
      for (let j = 0; j < 128; j += 4) s += v[o + j]! * C[co + j]! + v[o + j + 1]! * C[co + j + 1]! + v[o + j + 2]! * C[co + j + 2]! + v[o + j + 3]! * C[co + j + 3]!;
      s -= cn[k]!;
      if (s > best) {
        best = s;
        bk = k;
      }
    }
    const co = bk * 128;
    for (let j = 0; j < 128; j++) out[co + j] += v[o + j]! - C[co + j]!;
  }
  // intra-normalisation (Arandjelović & Zisserman 2013: a burst of similar keypoints weighs one word), then L2
  let tot = 0;
  for (let k = 0; k < K; k++) {
    let s = 0;
    for (let j = 0; j < 128; j++) s += out[k * 128 + j]! ** 2;
    if (s > 0) {
      const inv = 1 / Math.sqrt(s);
      for (let j = 0; j < 128; j++) out[k * 128 + j] *= inv;
      tot += 1;
    }
  }
  if (tot > 0) {
    const inv = 1 / Math.sqrt(tot);
    for (let j = 0; j < D; j++) out[j] *= inv;
  }
  return out;
}
const codebook = () => {
  const C = f32(path.join(OUT, `cb${K}.f32`));
  const cn = new Float32Array(K);
  for (let k = 0; k < K; k++) {
    let s = 0;
    for (let j = 0; j < 128; j++) s += C[k * 128 + j]! ** 2;
    cn[k] = s / 2;
  }
  return { C, cn };
};
const toI8 = (v: Float32Array) => {
  let m = 0;
  for (const x of v) m = Math.max(m, Math.abs(x));
  const q = new Int8Array(v.length);
  const s = m > 0 ? 127 / m : 0;
  for (let j = 0; j < v.length; j++) q[j] = Math.round(v[j]! * s);
  return q;
};

if (phase === 'codebook') {
  const set = readSet(path.join(shared, 'mining-flickr8k'));
  const feats = await ourFeatures(repoRoot, set, config, log);
  const rnd = mulberry32(12);
  const per = Number(opt('per', '200'));
  const xs: Float32Array[] = [];
  for (const t of set.targets) {
    const f = feats.get(t.id)!;
    const v = rootSift(f.descriptors, f.count);
    for (let i = 0; i < f.count; i++) if (rnd() < per / f.count) xs.push(v.subarray(i * 128, i * 128 + 128));
  }
  log(`codebook: ${xs.length} descriptors of ${set.targets.length} flickr8k targets, k ${K}`);
  const C = new Float32Array(K * 128);
  for (let k = 0; k < K; k++) C.set(xs[Math.floor(rnd() * xs.length)]!, k * 128);
  const assign = new Int32Array(xs.length);
  for (let it = 0; it < 20; it++) {
    const cn = new Float32Array(K);
    for (let k = 0; k < K; k++) for (let j = 0; j < 128; j++) cn[k] += C[k * 128 + j]! ** 2 / 2;
    let changed = 0;
    xs.forEach((x, i) => {
      let best = -Infinity;
      let bk = 0;
      for (let k = 0; k < K; k++) {
        let s = -cn[k]!;
        for (let j = 0; j < 128; j++) s += x[j]! * C[k * 128 + j]!;
        if (s > best) [best, bk] = [s, k];
      }
      if (assign[i] !== bk) changed++;
      assign[i] = bk;
    });
    const sum = new Float64Array(K * 128);
    const n = new Int32Array(K);
    xs.forEach((x, i) => {
      n[assign[i]!]++;
      for (let j = 0; j < 128; j++) sum[assign[i]! * 128 + j] += x[j]!;
    });
    for (let k = 0; k < K; k++) {
      if (!n[k]) {
        C.set(xs[Math.floor(rnd() * xs.length)]!, k * 128);
        continue;
      }
      for (let j = 0; j < 128; j++) C[k * 128 + j] = sum[k * 128 + j]! / n[k]!;
    }
    log(`iteration ${it}: ${changed} changed`);
  }
  write(path.join(OUT, `cb${K}.f32`), C);
}

if (phase === 'targets') {
  const { C, cn } = codebook();
  const bank = await Bank.open(dir);
  const feats = bank.repo(FeaturesRepo);
  const fd = fs.openSync(path.join(OUT, `vlad${K}.p${part}.i8`), 'w');
  const ids: { id: number; ext: string; n: number }[] = [];
  let after = 0;
  let seen = 0;
  const limit = Number(opt('limit', 'Infinity'));
  const t0 = performance.now();
  for (;;) {
    const items = await bank.items.list('target', 2000, after);
    if (!items.length || ids.length >= limit) break;
    after = items.at(-1)!.id;
    const mine = items.filter(() => seen++ % parts === part);
    const fm = await feats.getMany(mine.map((x) => x.imageSha256));
    for (const it of mine) {
      const f = fm.get(it.imageSha256);
      if (!f) continue;
      fs.writeSync(fd, Buffer.from(toI8(vlad(f, C, cn)).buffer));
      ids.push({ id: it.id, ext: it.extId, n: f.count });
    }
    if (ids.length % 10000 < 1000) log(`${ids.length} targets, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
  fs.closeSync(fd);
  fs.writeFileSync(path.join(OUT, `vlad${K}.p${part}.json`), JSON.stringify(ids));
  log(`done: ${ids.length} targets in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  await bank.close();
}

/** The int8 VLADs of one part, as a view per target. */
const partVlads = (p: number) => {
  const b = fs.readFileSync(path.join(OUT, `vlad${K}.p${p}.i8`));
  const ids = JSON.parse(fs.readFileSync(path.join(OUT, `vlad${K}.p${p}.json`), 'utf8')) as { id: number; ext: string; n: number }[];
  return { a: new Int8Array(b.buffer, b.byteOffset, b.byteLength), ids };
};
const i8ToF = (a: Int8Array, o: number) => {
  const v = new Float32Array(D);
  let s = 0;
  for (let j = 0; j < D; j++) s += a[o + j]! ** 2;
  const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
  for (let j = 0; j < D; j++) v[j] = a[o + j]! * inv;
  return v;
};

if (phase === 'pca') {
  const pcaFile = path.join(OUT, `pca${K}.f32`);
  if (!fs.existsSync(pcaFile)) {
    // sample: every `every`-th target of every part
    const every = Number(opt('every', '40'));
    const X: Float32Array[] = [];
    for (let p = 0; p < parts; p++) {
      const { a, ids } = partVlads(p);
      for (let i = 0; i < ids.length; i += every) X.push(i8ToF(a, i * D));
    }
    const N = X.length;
    const mean = new Float32Array(D);
    for (const x of X) for (let j = 0; j < D; j++) mean[j] += x[j]! / N;
    for (const x of X) for (let j = 0; j < D; j++) x[j] -= mean[j]!;
    const L = DIMS + 32;
    log(`pca: ${N} vectors, ${D} -> ${DIMS} (randomised, ${L} columns, one power iteration)`);
    const rnd = mulberry32(7);
    const gauss = () => Math.sqrt(-2 * Math.log(rnd() + 1e-12)) * Math.cos(2 * Math.PI * rnd());
    // Y = X Om (N x L), Om: D x L stored column-major rows: om[j*L + l]
    let om = new Float32Array(D * L);
    for (let i = 0; i < om.length; i++) om[i] = gauss();
    const XtimesOm = (om: Float32Array) => {
      const Y = new Float64Array(N * L);
      for (let i = 0; i < N; i++) {
        const x = X[i]!;
        const y = new Float64Array(L);
        for (let j = 0; j < D; j++) {
          const xv = x[j]!;
          if (xv === 0) continue;
          const o = j * L;
          for (let l = 0; l < L; l++) y[l] += xv * om[o + l]!;
        }
        Y.set(y, i * L);
      }
      return Y;
    };
    const orth = (Y: Float64Array) => {
      const M = new Matrix(N, L);
      for (let i = 0; i < N; i++) for (let l = 0; l < L; l++) M.set(i, l, Y[i * L + l]!);
      return new QrDecomposition(M).orthogonalMatrix.subMatrix(0, N - 1, 0, L - 1); // N x L
    };
    // Xt Q: D x L
    const XtQ = (Q: Matrix) => {
      const out = new Float32Array(D * L);
      for (let i = 0; i < N; i++) {
        const x = X[i]!;
        const q = Q.getRow(i);
        for (let j = 0; j < D; j++) {
          const xv = x[j]!;
          if (xv === 0) continue;
          const o = j * L;
          for (let l = 0; l < L; l++) out[o + l] += xv * q[l]!;
        }
      }
      return out;
    };
    let Q = orth(XtimesOm(om));
    log('pca: range found; one power iteration');
    om = XtQ(Q);
    Q = orth(XtimesOm(om));
    const Bt = XtQ(Q); // D x L = X^T Q, B = Q^T X
    // B B^T (L x L)
    const G = new Matrix(L, L);
    for (let a = 0; a < L; a++)
      for (let b = a; b < L; b++) {
        let s = 0;
        for (let j = 0; j < D; j++) s += Bt[j * L + a]! * Bt[j * L + b]!;
        G.set(a, b, s);
        G.set(b, a, s);
      }
    const e = new EigenvalueDecomposition(G, { assumeSymmetric: true });
    const order = e.realEigenvalues.map((v, i) => [v, i] as const).sort((x, y) => y[0] - x[0]);
    // component c: V = B^T u / sigma (D), eigenvalue of the covariance: sigma^2 / N
    const P = new Float32Array(DIMS * D + DIMS + D);
    for (let c = 0; c < DIMS; c++) {
      const [lam, idx] = order[c]!;
      const u = e.eigenvectorMatrix.getColumn(idx);
      const sg = Math.sqrt(Math.max(lam, 1e-20));
      for (let j = 0; j < D; j++) {
        let s = 0;
        for (let l = 0; l < L; l++) s += Bt[j * L + l]! * u[l]!;
        P[c * D + j] = s / sg;
      }
      P[DIMS * D + c] = lam / N;
    }
    P.set(mean, DIMS * D + DIMS);
    write(pcaFile, P);
    log(`pca: variances ${[0, 1, 10, 100, 255, DIMS - 1].map((c) => P[DIMS * D + c]!.toExponential(2)).join(' ')}`);
  }
  if (opt('project', '1') === '1') {
    const P = f32(pcaFile);
    const mean = P.subarray(DIMS * D + DIMS);
    for (let p = part; p < Number(opt('vparts', '2')); p += parts) {
      const { a, ids } = partVlads(p);
      const out = new Float32Array(ids.length * DIMS);
      const t0 = performance.now();
      for (let i = 0; i < ids.length; i++) {
        const x = i8ToF(a, i * D);
        for (let j = 0; j < D; j++) x[j] -= mean[j]!;
        for (let c = 0; c < DIMS; c++) {
          let s = 0;
          const o = c * D;
          for (let j = 0; j < D; j += 4) s += x[j]! * P[o + j]! + x[j + 1]! * P[o + j + 1]! + x[j + 2]! * P[o + j + 2]! + x[j + 3]! * P[o + j + 3]!;
          out[i * DIMS + c] = s;
        }
        if (i % 10000 === 0) log(`project part ${p}: ${i}/${ids.length} ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      }
      write(path.join(OUT, `proj${K}.p${p}.f32`), out);
    }
  }
}

if (phase === 'rank') {
  const { C, cn } = codebook();
  const P = f32(path.join(OUT, `pca${K}.f32`));
  const varOf = P.subarray(DIMS * D, DIMS * D + DIMS);
  const mean = P.subarray(DIMS * D + DIMS);
  const projectQ = (f: Features) => {
    const x = vlad(f, C, cn);
    for (let j = 0; j < D; j++) x[j] -= mean[j]!;
    const out = new Float32Array(DIMS);
    for (let c = 0; c < DIMS; c++) {
      let s = 0;
      for (let j = 0; j < D; j++) s += x[j]! * P[c * D + j]!;
      out[c] = s;
    }
    return out;
  };
  // targets
  const vparts = Number(opt('vparts', '2'));
  const tIds: { id: number; ext: string; n: number }[] = [];
  const chunks: Float32Array[] = [];
  for (let p = 0; p < vparts; p++) {
    tIds.push(...(JSON.parse(fs.readFileSync(path.join(OUT, `vlad${K}.p${p}.json`), 'utf8')) as typeof tIds));
    chunks.push(f32(path.join(OUT, `proj${K}.p${p}.f32`)));
  }
  const T = new Float32Array(tIds.length * DIMS);
  let o = 0;
  for (const c of chunks) {
    T.set(c, o);
    o += c.length;
  }
  const NT = tIds.length;
  log(`rank: ${NT} targets`);
  const bank = await Bank.open(dir);
  const feats = bank.repo(FeaturesRepo);
  const hashOf = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

  // variants: dims d, whitening w (0: none, 1: full), code: f (float), i8 (int8), b (binary: sign bits, Hamming)
  interface Variant { name: string; d: number; w: number; code: 'f' | 'i8' | 'b' }
  const variants: Variant[] = opt('variants', 'd256w1i8,d512w1b,d128w1i8,d256w0i8')
    .split(',')
    .map((s) => {
      const m = /^d(\d+)w(\d)(f|i8|b)$/.exec(s)!;
      return { name: s, d: Number(m[1]), w: Number(m[2]), code: m[3] as Variant['code'] };
    });
  const encodeV = (x: Float32Array, v: Variant): Float32Array => {
    const y = new Float32Array(v.d);
    for (let c = 0; c < v.d; c++) y[c] = v.w ? x[c]! / Math.sqrt(varOf[c]! + 1e-9) : x[c]!;
    if (v.code === 'b') {
      for (let c = 0; c < v.d; c++) y[c] = y[c]! > 0 ? 1 : -1;
      return y;
    }
    let s = 0;
    for (const t of y) s += t * t;
    const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
    for (let c = 0; c < v.d; c++) y[c] *= inv;
    if (v.code === 'i8') {
      let m = 0;
      for (const t of y) m = Math.max(m, Math.abs(t));
      for (let c = 0; c < v.d; c++) y[c] = Math.round((y[c]! * 127) / m);
    }
    return y;
  };
  const bytesOf = (v: Variant) => (v.code === 'b' ? v.d / 8 : v.code === 'i8' ? v.d : 4 * v.d);

  // queries
  const smvs = readSet(path.join(shared, 'retrieval-smvs'));
  const flickr = readSet(path.join(shared, 'mining-flickr8k'));
  const scenes = readSet(path.join(shared, 'retrieval-scenes'));
  const fl = await ourFeatures(repoRoot, flickr, config, log);
  const sc = await ourFeatures(repoRoot, scenes, config, log);
  const extIdx = new Map<string, number>();
  tIds.forEach((t, i) => extIdx.set(t.ext, i));
  const smvsQ: { id: string; f: Features; truth: number[] }[] = [];
  for (const [sid, rel] of smvs.truth) {
    const item = await bank.items.get('source', sid);
    const row = smvs.sources.find((s) => s.id === sid)!;
    if (!item || item.imageSha256 !== hashOf(path.join(smvs.dir, row.image))) throw new Error(`source ${sid} in the bank is not retrieval-smvs's`);
    const f = await feats.get(item.imageSha256);
    const truth: number[] = [];
    for (const tid of rel) {
      const trow = smvs.targets.find((t) => t.id === tid)!;
      const t = await bank.items.get('target', tid);
      if (!t || t.imageSha256 !== hashOf(path.join(smvs.dir, trow.image))) throw new Error(`target ${tid} in the bank is not retrieval-smvs's`);
      if (extIdx.has(tid)) truth.push(extIdx.get(tid)!);
    }
    if (f && truth.length) smvsQ.push({ id: sid, f, truth });
  }
  const nullQ = flickr.sources.filter((s) => !flickr.truth.has(s.id)).map((s) => ({ id: s.id, f: asStored(fl.get(s.id)!) }));
  // scenes: its targets take the places of the bank's targets of the same ids (smvs's, imported last)
  const scenesT = new Map<number, Features>();
  for (const t of scenes.targets) {
    const i = extIdx.get(t.id);
    if (i === undefined) continue;
    scenesT.set(i, sc.get(t.id)!);
  }
  const scenesQ = [...scenes.truth].map(([sid, rel]) => ({ id: sid, f: sc.get(sid)!, truth: [...rel].filter((t) => extIdx.has(t)).map((t) => extIdx.get(t)!) })).filter((q) => q.truth.length);
  const LOST = ['s0007', 's0038', 's0039', 's0046', 's0118'];
  const projOf = new Map<string, Float32Array>();
  const t0 = performance.now();
  for (const q of [...smvsQ.map((x) => ['smvs', x] as const), ...nullQ.map((x) => ['null', x] as const), ...scenesQ.map((x) => ['scenes', x] as const)]) projOf.set(`${q[0]}:${q[1].id}`, projectQ(q[1].f));
  const scenesProj = new Map([...scenesT].map(([i, f]) => [i, projectQ(f)]));
  log(`queries projected in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // verification as lsh.recollideVoters' re-match: all query keypoints against all the target's by sketch, frame check, verify
  const p = searchParams(config);
  const lsh = new LshIndex(lshParams(config, 100_000_000));
  const verifyPair = (qf: Features, tf: Features) => {
    const q = prepare(qf);
    const t = prepare(tf);
    const nq = Math.min(q.f.count, 2048);
    const c = sketchCollisions(lsh.sketches(q.vecs, q.f.count), nq, lsh.sketches(t.vecs, t.f.count), p.recollideHamming);
    if (tooFewCollisions(c, p)) return { score: 0, inliers: 0 };
    const r = verifyCandidate(q, t, c, { ...p, poseCheck: p.recollidePoseCheck });
    return { score: r.score, inliers: r.inliers };
  };
  const featsOfTarget = async (i: number, scenesMode: boolean) => {
    if (scenesMode && scenesT.has(i)) return scenesT.get(i)!;
    const it = await bank.items.byId(tIds[i]!.id);
    return it ? await feats.get(it.imageSha256) : undefined;
  };
  const KS = [1, 8, 16, 32, 64];
  const KV = Number(opt('kv', '16'));
  for (const v of variants) {
    const Tv = new Float32Array(NT * v.d);
    const tv = new Float32Array(DIMS);
    for (let i = 0; i < NT; i++) {
      tv.set(T.subarray(i * DIMS, (i + 1) * DIMS));
      Tv.set(encodeV(tv, v), i * v.d);
    }
    const scenesTv = new Map([...scenesProj].map(([i, x]) => [i, encodeV(x, v)]));
    const scoreAll = (q: Float32Array, scenesMode: boolean) => {
      const s = new Float32Array(NT);
      for (let i = 0; i < NT; i++) {
        const src = scenesMode && scenesTv.has(i) ? scenesTv.get(i)! : Tv.subarray(i * v.d, (i + 1) * v.d);
        let d = 0;
        for (let c = 0; c < v.d; c++) d += q[c]! * src[c]!;
        s[i] = d;
      }
      return s;
    };
    const rankOf = (s: Float32Array, truth: number[]) => {
      const best = Math.max(...truth.map((t) => s[t]!));
      let r = 0;
      for (let i = 0; i < NT; i++) if (s[i]! > best) r++;
      return r; // 0 = first
    };
    const topK = (s: Float32Array, k: number) => [...s.keys()].sort((a, b) => s[b]! - s[a]!).slice(0, k);
    const dist = (ranks: number[]) => Object.fromEntries(KS.map((k) => [`top${k}`, ranks.filter((r) => r < k).length]));
    const smvsRanks: number[] = [];
    const lost: Record<string, unknown> = {};
    for (const q of smvsQ) {
      const s = scoreAll(encodeV(projOf.get(`smvs:${q.id}`)!, v), false);
      const r = rankOf(s, q.truth);
      smvsRanks.push(r);
      if (LOST.includes(q.id)) {
        const tf = await featsOfTarget(q.truth[0]!, false);
        const ver = r < 64 && tf ? verifyPair(asStored(q.f), tf) : undefined;
        lost[q.id] = { rank: r + 1, keypoints: q.f.count, verifies: ver ? `${ver.score.toFixed(3)}/${ver.inliers}` : null };
      }
    }
    const scenesRanks = scenesQ.map((q) => rankOf(scoreAll(encodeV(projOf.get(`scenes:${q.id}`)!, v), true), q.truth));
    // the null: top KV of each source without counterpart, each verified
    let confident = 0;
    let storable = 0;
    const confidentOn: string[] = [];
    const cpu: number[] = [];
    if (opt('null', '1') === '1')
      for (const q of nullQ) {
        const s = scoreAll(encodeV(projOf.get(`null:${q.id}`)!, v), false);
        const c0 = process.cpuUsage();
        let conf = false;
        for (const i of topK(s, KV)) {
          const tf = await featsOfTarget(i, false);
          if (!tf) continue;
          const r = verifyPair(q.f, tf);
          if (r.score >= p.confidentScore) {
            conf = true;
            confidentOn.push(`${q.id}->${tIds[i]!.ext} ${r.score.toFixed(2)}/${r.inliers}`);
          }
          if (r.score >= config.match.minScore && r.inliers >= config.match.minInliers) storable++;
        }
        const c = process.cpuUsage(c0);
        cpu.push((c.user + c.system) / 1000);
        confident += Number(conf);
      }
    const pct = (xs: number[], f: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(f * xs.length))] ?? null;
    const line = {
      bench: 'r12-global',
      variant: v.name,
      date: new Date().toISOString(),
      machine: { nproc: os.cpus().length, loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10) },
      descriptor: `VLAD k=${K} RootSIFT (flickr8k codebook), intra+L2, PCA ${v.d}${v.w ? ' whitened' : ''}, ${v.code}`,
      bytesPerTarget: bytesOf(v),
      targets: NT,
      smvs: { sources: smvsQ.length, ...dist(smvsRanks), medianRank: pct(smvsRanks, 0.5)! + 1, lost },
      scenes: { sources: scenesQ.length, ...dist(scenesRanks), medianRank: pct(scenesRanks, 0.5)! + 1 },
      null: { sources: nullQ.length, k: KV, confidentSources: confident, storableHits: storable, confidentOn, verifyCpuMs: { p50: pct(cpu, 0.5), p95: pct(cpu, 0.95), mean: cpu.length ? Math.round(cpu.reduce((a, b) => a + b, 0) / cpu.length) : null } },
    };
    process.stdout.write(JSON.stringify(line) + '\n');
    log(`${v.name}: smvs ${JSON.stringify(line.smvs)} scenes ${JSON.stringify(line.scenes)} null ${JSON.stringify(line.null)}`);
  }
  await bank.close();
}

// --phase full: the same ranks by the whole VLAD (8192 dimensions, int8 as cached, no reduction): the bound any
// reduction of this aggregation can reach. smvs's sources only.
if (phase === 'full') {
  const { C, cn } = codebook();
  const vparts = Number(opt('vparts', '2'));
  const tIds: { id: number; ext: string; n: number }[] = [];
  const arrs: Int8Array[] = [];
  for (let p = 0; p < vparts; p++) {
    const { a, ids } = partVlads(p);
    tIds.push(...ids);
    arrs.push(a);
  }
  const NT = tIds.length;
  const norms = new Float32Array(NT);
  const at = (i: number): [Int8Array, number] => (i < arrs[0]!.length / D ? [arrs[0]!, i * D] : [arrs[1]!, (i - arrs[0]!.length / D) * D]);
  for (let i = 0; i < NT; i++) {
    const [a, o] = at(i);
    let s = 0;
    for (let j = 0; j < D; j++) s += a[o + j]! ** 2;
    norms[i] = Math.sqrt(s) || 1;
  }
  const extIdx = new Map<string, number>();
  tIds.forEach((t, i) => extIdx.set(t.ext, i));
  const bank = await Bank.open(dir);
  const feats = bank.repo(FeaturesRepo);
  const smvs = readSet(path.join(shared, 'retrieval-smvs'));
  const LOST = ['s0007', 's0038', 's0039', 's0046', 's0118'];
  const ranks: number[] = [];
  const lost: Record<string, number> = {};
  for (const [sid, rel] of smvs.truth) {
    const item = await bank.items.get('source', sid);
    const f = item && (await feats.get(item.imageSha256));
    if (!f) continue;
    const q = vlad(f, C, cn);
    const s = new Float32Array(NT);
    for (let i = 0; i < NT; i++) {
      const [a, o] = at(i);
      let d = 0;
      for (let j = 0; j < D; j++) d += q[j]! * a[o + j]!;
      s[i] = d / norms[i]!;
    }
    const best = Math.max(...[...rel].map((t) => s[extIdx.get(t)!]!));
    let r = 0;
    for (let i = 0; i < NT; i++) if (s[i]! > best) r++;
    ranks.push(r);
    if (LOST.includes(sid)) lost[sid] = r + 1;
  }
  const dist = Object.fromEntries([1, 8, 16, 32, 64].map((k) => [`top${k}`, ranks.filter((r) => r < k).length]));
  process.stdout.write(JSON.stringify({ bench: 'r12-global', variant: `full${K}`, date: new Date().toISOString(), machine: { nproc: os.cpus().length, loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10) }, descriptor: `VLAD k=${K} RootSIFT, intra+L2, all ${D} dimensions (int8 targets)`, bytesPerTarget: D, targets: NT, smvs: { sources: ranks.length, ...dist, medianRank: [...ranks].sort((a, b) => a - b)[ranks.length >> 1]! + 1, lost } }) + '\n');
  await bank.close();
}
