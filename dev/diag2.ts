import { loadCv2Features } from '../bench/search-lib.js';
import { LshIndex } from '../src/lsh-index/lsh.js';
import { prepare } from '../src/lsh-index/searcher.js';
const feats = loadCv2Features('bench/.cache/cv2/mining-flickr8k');
const idx = new LshIndex({ tables: 8, bits: 14, probes: 4, maxBucket: 2000, seed: 1 });
const [sid, tid] = process.argv.slice(2);
const a = prepare(feats.get(sid!)!), b = prepare(feats.get(tid!)!);
const ca = idx.codes(a.vecs, a.f.count), cb = idx.codes(b.vecs, b.f.count);
let nn = 0, coll = 0; const ds: number[] = [];
for (let i = 0; i < a.f.count; i++) {
  let d1 = 9, d2 = 9, j1 = -1;
  for (let j = 0; j < b.f.count; j++) {
    let s = 0; for (let k = 0; k < 128; k++) s += a.vecs[i*128+k]! * b.vecs[j*128+k]!;
    const d = Math.sqrt(Math.max(0, 2 - 2*s));
    if (d < d1) { d2 = d1; d1 = d; j1 = j; } else if (d < d2) d2 = d;
  }
  if (d1 < 0.8 * d2) { nn++; ds.push(d1); let any = false; for (let t = 0; t < 8; t++) if (ca[i*8+t] === cb[j1*8+t]) any = true; if (any) coll++; }
}
ds.sort((x, y) => x - y);
console.log({ n: a.f.count, m: b.f.count, ratioMatches: nn, collide: coll, dmed: ds[ds.length>>1], d90: ds[Math.floor(ds.length*0.9)] });
