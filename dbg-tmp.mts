import path from 'node:path';
import { Bank } from './src/bank/index.js';
import { loadConfig } from './src/config/load.js';
import { runCrawl } from './src/crawler/stage.js';
import { fixturePages, startReplay } from './test/helpers/replay.js';
import { tempDir } from './test/helpers.js';
const replay = await startReplay(fixturePages('fixtures/crawler'), { share: 0.3, seed: 7, retryAfterSecs: 1, stallMs: 1500 });
const dir = tempDir();
replay.writeProfiles(path.join(dir, 'sites'));
const { config } = loadConfig();
const cfg = { ...config, crawler: { ...config.crawler, perHostDelayMs: 0, requestTimeoutSecs: 1, minImageSide: 100, retry: { triesPerCycle: 3, baseDelayMs: 20, maxDelayMs: 200, giveUpAfter: 3, maxRetryAfterSecs: 10 }, hosts: { errorDelayMs: 20, maxDelayMs: 500, recoverStepMs: 20, breakerErrors: 10 } } };
const bank = Bank.open(path.join(dir, 'data'));
const logger = { info: (m: string) => console.error(new Date().toISOString().slice(17, 23), m), warn: (m: string) => console.error('W', m), error: (m: string) => console.error('E', m), debug() {} } as any;
const t0=Date.now(); const t = setInterval(() => {}, 2000);
for (let c = 0; c < 3; c++) { const s = await runCrawl(bank, cfg as any, { sitesDir: path.join(dir, 'sites'), logger }); console.error('cycle done', Date.now()-t0); }
clearInterval(t);
for (const l of ['en','zh'] as const) for (const h of replay.sites[l].hits) console.error(l, h.at - t0, h.path, h.fault);
console.error(replay.expected.length, bank.items.count('source') + bank.items.count('target'));
await replay.close();
