// Issue 35 round 10: the promise (promise.ts shortlistPromise) of sources WITHOUT a counterpart among the CLI's
// 100,000-target index (a bank kept on disk by dev/r9-cli.ts), against the lost copies' (dev/r9-bank.ts): whether any
// gate could admit the lost ones without admitting sources that have nothing to find (only the unconfident ones count:
// the others never reach the gate). Read-only; one JSON line. Run it right after `eval --set` of that set (the bank's
// sources are then the set's; checked).
// Usage: npx tsx dev/r10-null-promise.ts --dir /work/tmp-35/bank10 [--set mining-flickr8k]
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Bank, FeaturesRepo } from '../src/bank/index.js';
import { search, searchParams, syncIndex } from '../src/lib/image-index/index.js';
import { shortlistPromise, unconfident, verifiedBelow } from '../src/stages/match/index.js';
import { readSet, scaleScript } from '../bench/search-lib.js';

const { shared, opt, config, log } = scaleScript(import.meta.url);
const bank = await Bank.open(opt('dir', '/work/tmp-35/bank10'));
const set = readSet(path.join(shared, opt('set', 'mining-flickr8k')));
const { handle } = await syncIndex(bank, config);
const feats = bank.repo(FeaturesRepo);
const p = searchParams(config);
const promises: number[] = [];
let verified = 0;
let confident = 0;
const confidentOn: string[] = [];
for (const s of set.sources) {
  if (set.truth.has(s.id)) continue;
  const item = await bank.items.get('source', s.id);
  // eval --set imports each set under its own ids: a later set's source of the same id replaces this one (round 10
  // counted smvs and scenes sources found among their own targets as flickr8k's, 78 'confident' of 80)
  if (item && item.imageSha256 !== createHash('sha256').update(fs.readFileSync(path.join(set.dir, s.image))).digest('hex'))
    throw new Error(`source ${s.id} in the bank is not ${set.name}'s (another set's eval replaced it): run this right after \`eval --set ${set.name}\``);
  const f = item && (await feats.get(item.imageSha256));
  if (!f) continue;
  const r = await search(handle.index, (x) => handle.load(x), f, p);
  if (!unconfident(config, r.hits)) {
    confident++;
    const h = r.hits[0]!;
    const info = handle.slot(h.slot);
    const ext = info ? (await bank.items.byId(info.itemId))?.extId : '?';
    confidentOn.push(`${s.id}→${ext} ${h.score.toFixed(2)}/${h.inliers}`);
    continue;
  }
  promises.push(Math.round(shortlistPromise(r.votes) * 10) / 10);
  if (verifiedBelow(r.hits)) verified++;
}
promises.sort((a, b) => a - b);
const q = (f: number) => promises[Math.min(promises.length - 1, Math.floor(f * promises.length))];
log(`${confident} sources without counterpart confident (a padding variation of their photo); ${promises.length} unconfident: promise min ${promises[0]} p10 ${q(0.1)} median ${q(0.5)} p90 ${q(0.9)} max ${promises.at(-1)}; ${promises.filter((x) => x >= 8.7).length} at 8.7 or more; verified below the score: ${verified}`);
process.stdout.write(JSON.stringify({ bench: 'r10-null-promise', set: set.name, date: new Date().toISOString(), confident, confidentOn, unconfident: promises.length, promises, verifiedBelow: verified }) + '\n');
await bank.close();
