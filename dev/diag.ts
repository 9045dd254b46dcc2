import { loadCv2Features } from '../bench/search-lib.js';
import { LshIndex } from '../src/lsh-index/lsh.js';
import { prepare } from '../src/lsh-index/searcher.js';
const feats = loadCv2Features('bench/.cache/cv2/mining-flickr8k');
const idx = new LshIndex({ tables: 8, bits: 14, probes: 4, maxBucket: 2000, seed: 1 });
const hist = new Map<number, number>();
let t0 = performance.now();
let n = 0;
for (const [id, f] of feats) {
  if (n++ > 50) break;
  const p = prepare(f);
  const c = idx.codes(p.vecs, f.count);
  for (let i = 0; i < c.length; i += 8) hist.set(c[i]!, (hist.get(c[i]!) ?? 0) + 1);
}
console.log('ms/img', (performance.now() - t0) / 50);
const sizes = [...hist.values()].sort((a, b) => b - a);
console.log('buckets', hist.size, 'top', sizes.slice(0, 10), 'total', sizes.reduce((a, b) => a + b));
