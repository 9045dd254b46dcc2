import { loadCv2Features } from '../bench/search-lib.js';
import fs from 'node:fs';
const feats = loadCv2Features('bench/.cache/cv2/mining-flickr8k');
const truth = fs.readFileSync('/work/shared/data/mining-flickr8k/truth.tsv', 'utf8').trim().split('\n').slice(1, 13).map((l) => l.split('\t'));
for (const [s, t] of truth) {
  const a = feats.get(s!)!, b = feats.get(t!)!;
  // brute NN on descriptors, ratio
  const m: [number, number][] = [];
  for (let i = 0; i < a.count; i += 2) {
    let d1 = 1e18, d2 = 1e18, j1 = -1;
    for (let j = 0; j < b.count; j++) { let d = 0; for (let k = 0; k < 128; k++) { const x = a.descriptors[i*128+k]! - b.descriptors[j*128+k]!; d += x*x; } if (d < d1) { d2 = d1; d1 = d; j1 = j; } else if (d < d2) d2 = d; }
    if (d1 < 0.64 * d2) m.push([i, j1]);
  }
  const res = [1, -1].map((sign) => {
    let bestN = 0;
    for (const [i, j] of m) {
      const sc = b.keypoints[j*6+2]! / a.keypoints[i*6+2]!; const th = sign * (a.keypoints[i*6+3]! - b.keypoints[j*6+3]!) * Math.PI / 180;
      const c = Math.cos(th) * sc, sn = Math.sin(th) * sc; let n = 0;
      for (const [i2, j2] of m) { const dx = a.keypoints[i2*6]! - a.keypoints[i*6]!, dy = a.keypoints[i2*6+1]! - a.keypoints[i*6+1]!; const u = b.keypoints[j*6]! + c*dx - sn*dy - b.keypoints[j2*6]!, v = b.keypoints[j*6+1]! + sn*dx + c*dy - b.keypoints[j2*6+1]!; if (u*u+v*v < 400) n++; }
      bestN = Math.max(bestN, n);
    }
    return bestN;
  });
  console.log(s, t, m.length, res);
}
