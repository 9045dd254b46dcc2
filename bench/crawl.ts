// bench:crawl — the crawler against a replay of real news pages behind a fault injector.
//
// The 197 saved pages of ../shared/data/extraction-news are served on 127.0.0.1 as two sites (en, zh) with a home
// page, an RSS feed, a sitemap and robots.txt (test/helpers/replay.ts), every image URL answered by an image
// generated from the URL, plus 4 links per site to pages that answer 404/410 and one page robots.txt
// disallows. `capbridge crawl` (dist/, one process per cycle, allowPrivateAddresses for these loopback sites
// only, through their profiles) then runs:
//   1. clean: one cycle, no faults: pages/s, and every expected item found (the harness's own check);
//   2. faults: N cycles (--cycles, default 3) with --faults of the requests (default 0.2) failing transiently
//      (503, 429 + Retry-After, reset, a body stalled past the timeout, a truncated body, a redirect loop):
//      expected items harvested after each cycle, lost, duplicated, retries, permanent URLs asked again;
//   3. kill: the same faults (same seed) with --kills (default 3) kill -9 at random moments inside cycles, then
//      cycles until nothing is pending: the final bank compared with run 2's (items and image hashes).
// Expected items are what the extractor finds on the served pages (this measures the crawl, not extraction).
// Time is compressed: no per-host delay, 2 s timeouts, back-off from 100 ms (the bench config below).
// Prints ONE JSON line. Options: --cycles N --faults SHARE --kills N --seed N --pages N (first N pages per language).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bank } from '../src/bank/index.js';
import { mulberry32 } from '../src/util/random.js';
import { startReplay, type FaultOptions, type Replay, type ReplayPage } from '../test/helpers/replay.js';
import { requireBuiltCli } from './built-cli.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shared = process.env.CAPBRIDGE_SHARED_DATA ?? path.resolve(repoRoot, '..', 'shared', 'data');
const setDir = path.join(shared, 'extraction-news');
const arg = (name: string, dflt: number) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`)) ?? (process.argv.includes(`--${name}`) ? `--${name}=${process.argv[process.argv.indexOf(`--${name}`) + 1]}` : undefined);
  return a ? Number(a.split('=')[1]) : dflt;
};
const CYCLES = arg('cycles', 3);
const SHARE = arg('faults', 0.2);
const KILLS = arg('kills', 3);
const SEED = arg('seed', 1);
const PAGES = arg('pages', 1000);
const log = (m: string) => process.stderr.write(`bench:crawl ${m}\n`);

const CONFIG = {
  crawler: {
    perHostDelayMs: 0,
    perHostConcurrency: 2,
    maxConcurrency: 8,
    requestTimeoutSecs: 2,
    minImageSide: 100,
    maxPagesPerSite: 10000,
    retry: { triesPerCycle: 3, baseDelayMs: 100, maxDelayMs: 1000, giveUpAfter: 5, maxRetryAfterSecs: 30 },
    hosts: { errorDelayMs: 50, maxDelayMs: 1000, recoverRate: 5, breakerErrors: 25 },
  },
};
const FAULTS: FaultOptions = { share: SHARE, seed: SEED, retryAfterSecs: 1, stallMs: 3000 };

function loadPages(): ReplayPage[] {
  const truth = fs.readFileSync(path.join(setDir, 'truth.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: string; file: string; lang: 'en' | 'zh' });
  const count = { en: 0, zh: 0 };
  return truth
    .filter((t) => count[t.lang]++ < PAGES)
    .map((t) => ({ id: t.id, lang: t.lang, body: fs.readFileSync(path.join(setDir, t.file)) }));
}

interface CycleRun {
  code: number | null;
  signal: string | null;
  ms: number;
  peakRssKb: number;
  summary?: Record<string, any>;
}

/** One `capbridge crawl` process; killed with SIGKILL killAfterMs after its first request when asked. */
function crawl(dir: string, replay: Replay, killAfterMs?: number): Promise<CycleRun> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, [requireBuiltCli(repoRoot), '--data', path.join(dir, 'data'), '--config', path.join(dir, 'config.json'), 'crawl', '--json', '--sites', path.join(dir, 'sites')], {
      cwd: repoRoot,
      // The bench's own variable is not a config key: the CLI would refuse it (unknown CAPBRIDGE_* key).
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'CAPBRIDGE_SHARED_DATA')),
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    let peak = 0;
    child.stdout!.on('data', (d) => (out += d));
    const hits = () => replay.sites.en.hits.length + replay.sites.zh.hits.length;
    const start = hits();
    let killTimer: NodeJS.Timeout | undefined;
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) peak = Math.max(peak, Number(m[1]));
      } catch {
        /* exited */
      }
      if (killAfterMs !== undefined && !killTimer && hits() > start) killTimer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    }, 20);
    child.on('close', (code, signal) => {
      clearInterval(poll);
      if (killTimer) clearTimeout(killTimer);
      let summary: Record<string, any> | undefined;
      try {
        summary = JSON.parse(out);
      } catch {
        /* killed */
      }
      resolve({ code, signal, ms: Date.now() - t0, peakRssKb: peak, summary });
    });
  });
}

function setup(name: string, replay: Replay): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `capbridge-bench-crawl-${name}-`));
  replay.writeProfiles(path.join(dir, 'sites'));
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(CONFIG));
  return dir;
}

const strip = (u: string) => u.replace(/^http:\/\/127\.0\.0\.1:\d+/, '');

/** Expected items found, duplicates, unexpected items; and the bank's items without ports, for comparing runs. */
async function measure(dir: string, replay: Replay) {
  const bank = await Bank.open(path.join(dir, 'data'));
  try {
    const items = [...(await bank.items.list('source', 1e6)), ...(await bank.items.list('target', 1e6))];
    const key = (p: string, i: string) => `${strip(p)}\n${strip(i)}`;
    const want = new Set(replay.expected.map((e) => key(e.pageUrl, e.imageUrl)));
    const have = new Map<string, number>();
    for (const i of items) have.set(key(i.pageUrl!, i.imageUrl!), (have.get(key(i.pageUrl!, i.imageUrl!)) ?? 0) + 1);
    return {
      found: [...want].filter((k) => have.has(k)).length,
      duplicated: [...have.values()].reduce((a, n) => a + n - 1, 0),
      unexpected: [...have.keys()].filter((k) => !want.has(k)).length,
      images: new Set(items.map((i) => i.imageSha256)).size,
      snapshot: items.map((i) => `${key(i.pageUrl!, i.imageUrl!)}\n${i.caption}\n${i.imageSha256}`).sort(),
    };
  } finally {
    await bank.close();
  }
}

const done = (r: CycleRun) => r.code === 0 && r.summary && r.summary.pendingRetries === 0 && r.summary.queued === 0;

async function main(): Promise<void> {
  log('building dist/ (the bench runs the built CLI)');
  await new Promise<void>((resolve, reject) => spawn('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: repoRoot, stdio: 'inherit' }).on('close', (c) => (c === 0 ? resolve() : reject(new Error(`tsc exited ${c}`)))));
  const pages = loadPages();
  const load0 = os.loadavg();

  // 1. clean
  let replay = await startReplay(pages, null);
  const expected = replay.expected.length;
  const byLang = { en: replay.expected.filter((e) => e.lang === 'en').length, zh: replay.expected.filter((e) => e.lang === 'zh').length };
  log(`${replay.pages} pages, ${expected} expected items (en ${byLang.en}, zh ${byLang.zh}); clean cycle`);
  let dir = setup('clean', replay);
  const clean = await crawl(dir, replay);
  const cleanFound = (await measure(dir, replay)).found;
  const cleanArticles = clean.summary?.articles ?? 0;
  await replay.close();

  // 2. faults
  replay = await startReplay(pages, { ...FAULTS });
  const faultDir = setup('faults', replay);
  const cycles: { found: number; requests: number; retries: number; articles: number; ms: number; peakRssMb: number; givenUp: number; pendingRetries: number }[] = [];
  for (let c = 1; c <= CYCLES; c++) {
    const r = await crawl(faultDir, replay);
    const m = await measure(faultDir, replay);
    const s = r.summary ?? {};
    cycles.push({ found: m.found, requests: s.requests, retries: s.retries, articles: s.articles, ms: r.ms, peakRssMb: Math.round(r.peakRssKb / 1024), givenUp: s.givenUpTotal, pendingRetries: s.pendingRetries });
    log(`faults cycle ${c}: ${m.found}/${expected} items, ${s.requests} requests, ${s.retries} retries, ${(r.ms / 1000).toFixed(1)} s`);
  }
  const faulted = await measure(faultDir, replay);
  const faultsInjected = { ...replay.faultsInjected };
  const serverRequests = replay.sites.en.hits.length + replay.sites.zh.hits.length;
  const permanentRetried = replay.permanentRetried;
  const disallowedRequested = replay.disallowedRequested;
  await replay.close();

  // 3. kill -9
  replay = await startReplay(pages, { ...FAULTS });
  dir = setup('kill', replay);
  const rand = mulberry32(SEED * 7919);
  const typical = cycles[0]!.ms;
  let kills = 0, runs = 0, killPeak = 0;
  while (kills < KILLS && runs < KILLS * 3) {
    runs++;
    // A random moment within the first part of a cycle's work (a resumed cycle has less left to do).
    const r = await crawl(dir, replay, Math.round(300 + rand() * Math.min(20_000, typical * 0.3)));
    killPeak = Math.max(killPeak, r.peakRssKb);
    if (r.signal === 'SIGKILL') kills++;
    log(`kill run ${runs}: ${r.signal ?? `exit ${r.code}`} after ${(r.ms / 1000).toFixed(1)} s`);
  }
  let finishing = 0;
  for (; finishing < CYCLES + 3; finishing++) {
    const r = await crawl(dir, replay);
    killPeak = Math.max(killPeak, r.peakRssKb);
    if (done(r)) break;
  }
  const killed = await measure(dir, replay);
  await replay.close();
  const same = JSON.stringify(killed.snapshot) === JSON.stringify(faulted.snapshot);

  const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
  process.stdout.write(
    JSON.stringify({
      bench: 'crawl',
      pages: replay.pages,
      expected: { items: expected, images: new Set(replay.expected.map((e) => strip(e.imageUrl))).size, byLang },
      clean: { found: cleanFound, pagesPerSec: round(cleanArticles / (clean.ms / 1000)), seconds: round(clean.ms / 1000, 1), peakRssMb: Math.round(clean.peakRssKb / 1024) },
      faults: {
        share: SHARE,
        seed: SEED,
        injected: faultsInjected,
        serverRequests,
        realizedShare: round(Object.values(faultsInjected).reduce((a, b) => a + b, 0) / Math.max(1, serverRequests), 3),
        harvestedAfterCycle: cycles.map((c) => c.found),
        lost: expected - faulted.found,
        duplicated: faulted.duplicated,
        unexpected: faulted.unexpected,
        requests: cycles.reduce((a, c) => a + (c.requests ?? 0), 0),
        retries: cycles.reduce((a, c) => a + (c.retries ?? 0), 0),
        givenUp: cycles[cycles.length - 1]!.givenUp,
        permanentRetried,
        disallowedRequested,
        pagesPerSec: round(cycles[0]!.articles / (cycles[0]!.ms / 1000)),
        secondsPerCycle: cycles.map((c) => round(c.ms / 1000, 1)),
        peakRssMb: Math.max(...cycles.map((c) => c.peakRssMb)),
      },
      kill: { kills, runsKilledOrNot: runs, finishingCycles: finishing + 1, found: killed.found, duplicated: killed.duplicated, imageHashes: killed.images, sameFinalBankAsUninterrupted: same, peakRssMb: Math.round(killPeak / 1024) },
      machine: { nproc: os.cpus().length, cpu: os.cpus()[0]?.model, loadavg: [load0, os.loadavg()].map((l) => l.map((x) => round(x, 1))) },
      date: new Date().toISOString(),
    }) + '\n',
  );
}

await main();
