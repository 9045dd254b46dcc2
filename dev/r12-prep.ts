// Issue 35 round 12: the project's own SIFT features of mining-flickr8k and retrieval-scenes (sources and targets),
// cached in bench/.cache/ours by bench/search-lib.ts's ourFeatures, for dev/r12-global.ts (the codebook is learned on
// flickr8k's targets; flickr8k's sources without counterpart and scenes' sources are the queries the bank does not hold).
// Usage: npx tsx dev/r12-prep.ts
import path from 'node:path';
import { ourFeatures, readSet, scaleScript } from '../bench/search-lib.js';

const { repoRoot, shared, config, log } = scaleScript(import.meta.url);
for (const name of ['mining-flickr8k', 'retrieval-scenes']) {
  const f = await ourFeatures(repoRoot, readSet(path.join(shared, name)), config, log);
  log(`${name}: ${f.size} images`);
}
