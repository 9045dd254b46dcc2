// `capbridge extract [FILE] --url URL [--profile NAME] [--json] [--explain]`: the caption extractor alone, on a saved
// page (FILE) or on the page fetched from URL (the crawler's fetch: size bound, address checks, user agent; robots
// and politeness are the crawl's business, not a one-off look). The page is bounded as the crawler bounds it
// (crawler.maxPageBytes, maxPageElements, maxPageDepth) before it is parsed.
import fs from 'node:fs';
import type { Command } from 'commander';
import type { ExtractResult, ExplainedCandidate } from '../lib/extraction/index.js';
import type { SiteProfile } from '../stages/crawl/index.js';
import { UserError } from '../util/errors.js';
import { action, printJson, type Context } from './context.js';

interface ExtractOpts {
  url: string;
  lang?: string;
  json?: boolean;
  sites?: string;
  profile?: string;
  explain?: boolean;
}

async function readPage(ctx: Context, file: string | undefined, url: string): Promise<{ body: Buffer; contentType: string | null }> {
  const cc = ctx.config.crawler;
  if (file) {
    let st: fs.Stats;
    try {
      st = fs.statSync(file);
    } catch (err) {
      throw new UserError(`${file}: cannot read: ${(err as Error).message}`);
    }
    if (st.size > cc.maxPageBytes) throw new UserError(`${file}: ${st.size} bytes, more than crawler.maxPageBytes (${cc.maxPageBytes}): not parsed`);
    return { body: fs.readFileSync(file), contentType: null };
  }
  const { fetchLimited } = await import('../stages/crawl/index.js');
  try {
    const res = await fetchLimited(url, { userAgent: cc.userAgent, timeoutMs: cc.requestTimeoutSecs * 1000, maxBytes: cc.maxPageBytes, maxRedirects: cc.maxRedirects, allowPrivate: cc.allowPrivateAddresses });
    if (res.status >= 400) throw new UserError(`${url}: HTTP ${res.status}`);
    return { body: res.body, contentType: res.headers.get('content-type') };
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`${url}: cannot fetch: ${(err as Error).message}`);
  }
}

function chooseProfile(sites: SiteProfile[], opts: ExtractOpts, profileFor: (u: string, s: SiteProfile[]) => SiteProfile | undefined): SiteProfile | undefined {
  if (!opts.profile) return profileFor(opts.url, sites);
  const p = sites.find((s) => s.name === opts.profile);
  if (!p) throw new UserError(`--profile: no site profile named "${opts.profile}" (profiles: ${sites.map((s) => s.name).join(', ') || 'none'})`);
  return p;
}

function printText(res: ExtractResult, profile: SiteProfile | undefined, explain: boolean): void {
  const out = (s: string) => process.stdout.write(s);
  out(`${res.url} (${res.lang}, ${res.charset}): ${res.pairs.length} pairs${res.paths ? ` (from the ${res.paths.used} path)` : ''}\n`);
  for (const p of res.pairs) out(`${p.image_url}\n  ${p.caption}${p.credit ? `  [${p.credit}]` : ''}\n`);
  if (!explain) return;
  if (res.paths) {
    out(`profile ${profile?.name} selectors ${JSON.stringify(profile?.captions)} found ${res.paths.profile.length}:\n`);
    for (const p of res.paths.profile) out(`  ${p.image_url.slice(-60)}  ${p.caption.slice(0, 70)}\n`);
    out(`generic extractor found ${res.paths.generic.length}:\n`);
    for (const p of res.paths.generic) out(`  ${p.image_url.slice(-60)}  ${p.caption.slice(0, 70)}\n`);
  }
  out('generic candidates (probability, source, the features that weigh most):\n');
  const byScore = [...(res.explain ?? [])].sort((a: ExplainedCandidate, b: ExplainedCandidate) => b.total - a.total);
  for (const c of byScore) out(`  ${c.total.toFixed(3)} ${c.source.padEnd(10)} ${c.image_url.slice(-50)}  ${c.text.slice(0, 70)}\n      ${JSON.stringify(c.points)}\n`);
}

export function registerExtract(program: Command): void {
  program
    .command('extract')
    .description('extract (image URL, caption, credit) pairs from a news article page (a saved file, or fetched from --url)')
    .argument('[file]', 'the saved HTML page (any charset: decoded by its bytes); without it the page is fetched from --url')
    .requiredOption('--url <url>', "the page's URL (base for relative image URLs; fetched when no FILE is given)")
    .option('--lang <lang>', 'en or zh (default: detected from the page)')
    .option('--sites <dir>', 'site profiles folder (default: config/sites)')
    .option('--profile <name>', "use this site profile's caption selectors (default: the profile whose hosts match --url)")
    .option('--json', 'print {"url","lang","pairs":[{"image_url","caption","credit"?}]}')
    .option('--explain', "also show what each path found (the profile's selectors, the generic extractor) and every generic candidate with its probability")
    .action(
      action(async (ctx, file: string | undefined, opts: ExtractOpts) => {
        // Loaded on use: cheerio and the profiles are not needed by other commands' start-up.
        const { extractPairs, resolveUrl } = await import('../lib/extraction/index.js');
        const { loadSites, profileFor } = await import('../stages/crawl/index.js');
        if (!resolveUrl(opts.url, opts.url)) throw new UserError(`--url: not an http(s) URL: "${opts.url}"`);
        if (opts.lang && opts.lang !== 'en' && opts.lang !== 'zh') throw new UserError(`--lang: expected en or zh, got "${opts.lang}"`);
        const site = chooseProfile(loadSites(opts.sites), opts, profileFor);
        const page = await readPage(ctx, file, opts.url);
        const { scanPage } = await import('../stages/crawl/index.js');
        const cc = ctx.config.crawler;
        const scan = scanPage(page.body.toString('latin1'), opts.url, { maxElements: cc.maxPageElements, maxDepth: cc.maxPageDepth });
        if (scan.refused) throw new UserError(`${file ?? opts.url}: ${scan.refused.message}`);
        const lang = (opts.lang as 'en' | 'zh' | undefined) ?? (opts.profile ? site?.language : undefined);
        const res = extractPairs(page.body, { url: opts.url, contentType: page.contentType, lang, selectors: site?.captions, explain: opts.explain });
        if (opts.json) printJson(opts.explain ? { url: res.url, lang: res.lang, pairs: res.pairs, paths: res.paths, candidates: res.explain } : { url: res.url, lang: res.lang, pairs: res.pairs });
        else printText(res, site, !!opts.explain);
      }),
    );
}
