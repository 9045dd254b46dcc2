// `npm run demo`: the whole product on a laptop, in well under two minutes, with nothing downloaded.
//  1. generates two small news sites (English and Chinese) whose photos are synthesised scenes; the Chinese
//     outlet's copies are cropped, rescaled, rotated, warped or recompressed, captioned at every level;
//  2. serves them on 127.0.0.1;
//  3. runs one full daemon cycle (`daemon --once`: crawl → features → match → pair) into a fresh data dir;
//  4. exports TSV and TMX, and prints the pairs found with their levels and where the files are.
// Options: --data DIR (use DIR as the data dir; it must be empty or absent). Everything else goes to a new
// folder under the system temp dir, kept so the files can be opened (its path is printed).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { Bank, PairsRepo, type PairRow } from '../bank/index.js';
import { loadConfig } from '../config/load.js';
import { Daemon } from '../daemon/daemon.js';
import { hasStage, loadStage, type StageName } from '../stages/index.js';
import { importManifest } from '../import/manifest.js';
import { createLogger } from '../util/log.js';
import { CHINESE, ENGLISH } from './content.js';
import { generateSites, serveFolder, writeManifest } from './sites.js';

const out = (s = '') => process.stdout.write(s + '\n');

export async function runDemo(argv: string[] = process.argv.slice(2)): Promise<number> {
  const t0 = performance.now();
  const dataArg = argv.includes('--data') ? argv[argv.indexOf('--data') + 1] : undefined;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'capbridge-demo-'));
  const dataDir = path.resolve(dataArg ?? path.join(work, 'data'));
  if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length) {
    process.stderr.write(`demo: ${dataDir} is not empty; the demo needs a fresh data dir\n`);
    return 1;
  }
  out('capbridge demo: two generated news sites on 127.0.0.1, one daemon cycle, a TSV and a TMX\n');
  const sites = await generateSites(path.join(work, 'sites'));
  const servers = await Promise.all(sites.map((s) => serveFolder(s.dir)));
  try {
    out(`  English site  ${servers[0]!.url}/   (${ENGLISH.length} stories)`);
    out(`  Chinese site  ${servers[1]!.url}/   (${CHINESE.length} stories)`);
    out(`  data dir      ${dataDir}`);

    const override = {
      log: { level: 'warn' },
      crawler: { allowPrivateAddresses: true, perHostDelayMs: 0, sitesDir: path.join(work, 'site-profiles') },
    };
    const configFile = path.join(work, 'demo-config.yaml');
    fs.writeFileSync(configFile, YAML.stringify(override));
    const { config } = loadConfig({ configFile });
    const logger = createLogger(process.env.CAPBRIDGE_LOG_LEVEL ?? 'error');
    const bank = await Bank.open(dataDir);
    try {
      let stages: StageName[] | undefined;
      if (await hasStage('crawl')) {
        // the crawler is in this build: give it the two sites as profiles
        fs.mkdirSync(override.crawler.sitesDir, { recursive: true });
        for (const [i, s] of sites.entries()) {
          fs.writeFileSync(
            path.join(override.crawler.sitesDir, `demo-${s.name}.yaml`),
            YAML.stringify({
              name: `demo-${s.name}`,
              language: s.name,
              startUrls: [`${servers[i]!.url}/`],
              allowedHosts: [new URL(servers[i]!.url).host],
              articlePatterns: ['/news/[^/]+\\.html$'],
              captions: { container: 'figure', caption: 'figcaption' },
            }),
          );
        }
        out('\n1. crawl: the daemon crawls both sites');
      } else {
        // no crawler in this build: import what a crawl would store (same pages, photos and captions)
        out('\n1. the crawler layer is not in this build: importing the two sites\' stories through manifests instead');
        for (const [i, s] of sites.entries()) {
          const sum = await importManifest(bank, { bank: s.name === 'en' ? 'source' : 'target', manifest: writeManifest(s, servers[i]!.url), config });
          out(`   ${s.name === 'en' ? 'source' : 'target'} bank: ${sum.added} items`);
        }
        stages = ['features', 'match', 'pair'];
      }
      out('2. one daemon cycle (daemon --once)');
      const daemon = new Daemon({ bank, config, logger, once: true, handleSignals: false, stages });
      const res = await daemon.run();
      for (const s of res.lastCycle?.stages ?? []) {
        out(`   ${s.stage.padEnd(8)} ${s.result.padEnd(7)} ${(s.ms / 1000).toFixed(1)}s${s.error ? ` — ${s.error}` : ''}`);
      }

      out(`   banks: ${await bank.items.count('source')} English items, ${await bank.items.count('target')} Chinese items`);
      out('3. export');
      const folder = path.join(dataDir, config.export.folder);
      const exportStage = await loadStage('export');
      const { detail: tsv } = await exportStage(bank, config, { format: 'tsv', out: path.join(folder, 'demo-pairs.tsv') });
      const { detail: tmx } = await exportStage(bank, config, { format: 'tmx', out: path.join(folder, 'demo-pairs.tmx') });
      out(`   ${tsv.records} caption pairs (${tsv.pairs} item pairs) at level ${config.export.minLevel} or better`);

      out('\n4. what was found (image match → caption level; * = emitted into the corpus)\n');
      const repo = bank.repo(PairsRepo);
      const rows: PairRow[] = [...(await repo.list({ limit: 1000, order: 'score' })), ...(await repo.list({ emitted: false, limit: 1000, order: 'score' }))];
      // the story a crawled or imported item came from: its page's slug
      const slugOf = (url: string | null) => /\/news\/([^/]+)\.html$/.exec(url ?? '')?.[1] ?? '?';
      const intended = new Map(CHINESE.map((s) => [s.slug, s.intended]));
      if (!rows.length) out('   no image matches were decided (see the stages above for what is missing in this build)');
      for (const p of rows) {
        const src = (await bank.items.byId(p.sourceItemId))!;
        const tgt = (await bank.items.byId(p.targetItemId))!;
        const mark = p.emitted ? '*' : ' ';
        const lvl = p.level ?? '-';
        const want = intended.get(slugOf(tgt.pageUrl)) ?? 'none (photo not shared)';
        out(`${mark} ${lvl.padEnd(3)} C=${(p.c ?? 0).toFixed(2)}  inliers ${String(p.inliers).padEnd(4)} (caption written as ${want})${p.emitted ? '' : `; not emitted: ${p.reason}`}`);
        out(`      en ${slugOf(src.pageUrl).padEnd(16)} ${src.caption}`);
        out(`      zh ${slugOf(tgt.pageUrl).padEnd(16)} ${tgt.caption}`);
      }
      out(refusalSummary(rows, config.comparability.thresholds.com));
      out(`\nfiles:\n  ${tsv.files[0]}\n  ${tmx.files[0]}`);
      out(`  (the generated sites: ${path.join(work, 'sites')}; remove everything with: rm -rf ${work}${dataArg ? ` ${dataDir}` : ''})`);
      out(`\ndone in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      return res.exitCode;
    } finally {
      await bank.close();
    }
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
}

/** Why a pair was not emitted, in words (the pairing stage's reason and the scores it stored). */
export function refusalWhy(p: Pick<PairRow, 'reason' | 'level' | 'c' | 'explain'>, comThreshold: number): string {
  const chance = (() => {
    try {
      const e = JSON.parse(p.explain ?? 'null') as { chance?: { en: number; zh: number; s: number }; matches?: Array<{ en: string; zh: string }> } | null;
      const shared = (e?.matches ?? []).map((m) => `${m.en}~${m.zh}`).join(', ') || 'no word';
      return e?.chance ? `shares ${shared}; chance of sharing that much at random: ${e.chance.en} (English side), ${e.chance.zh} (Chinese side)` : `shares ${shared}`;
    } catch {
      return '';
    }
  })();
  switch (p.reason) {
    case 'image':
      return 'the images did not verify well enough';
    case 'level:margin':
      return `no sentence pair stands clear of the others and the captions whole are not comparable (${chance})`;
    case 'level':
      return `captions not comparable: level ${p.level ?? '-'}, C ${(p.c ?? 0).toFixed(2)} (com needs ${comThreshold.toFixed(2)} and content beyond chance); ${chance}`;
    default:
      return p.reason ?? 'not emitted';
  }
}

function refusalSummary(rows: PairRow[], comThreshold: number): string {
  const refused = rows.filter((p) => !p.emitted);
  if (!refused.length) return '\nrefused: none';
  return [`\nrefused: ${refused.length} image match(es) not emitted into the corpus, and why:`, ...refused.map((p) => `  pair ${p.id}: ${refusalWhy(p, comThreshold)}`)].join('\n');
}

const self = path.resolve(process.argv[1] ?? '');
if (/run-demo\.(js|ts)$/.test(self)) {
  runDemo().then(
    (code) => (process.exitCode = code),
    (err: Error) => {
      process.stderr.write(`demo failed: ${err.stack ?? err.message}\n`);
      process.exitCode = 1;
    },
  );
}
