// `capbridge extract FILE.html --url URL [--json] [--explain]`: the caption extractor alone, on a saved page.
import fs from 'node:fs';
import type { Command } from 'commander';
import { UserError } from '../util/errors.js';
import { printJson } from './context.js';

export function registerExtract(program: Command): void {
  program
    .command('extract')
    .description('extract (image URL, caption, credit) pairs from a saved news article page')
    .argument('<file>', 'the saved HTML page (any charset: decoded by its bytes)')
    .requiredOption('--url <url>', "the page's original URL (base for relative image URLs)")
    .option('--lang <lang>', 'en or zh (default: detected from the page)')
    .option('--sites <dir>', 'site profiles folder (default: config/sites); the profile whose hosts match --url gives caption selectors')
    .option('--json', 'print {"url","lang","pairs":[{"image_url","caption","credit"?}]}')
    .option('--explain', 'also list every candidate caption with its source and the points each rule gave it')
    .action(async (file: string, opts: { url: string; lang?: string; json?: boolean; sites?: string; explain?: boolean }) => {
      try {
        // Loaded on use: cheerio and the profiles are not needed by other commands' start-up.
        const { extractPairs, resolveUrl } = await import('../lib/extraction/index.js');
        const { loadSites, profileFor } = await import('../stages/crawl/sites.js');
        if (!resolveUrl(opts.url, opts.url)) throw new UserError(`--url: not an http(s) URL: "${opts.url}"`);
        if (opts.lang && opts.lang !== 'en' && opts.lang !== 'zh') throw new UserError(`--lang: expected en or zh, got "${opts.lang}"`);
        let buf: Buffer;
        try {
          buf = fs.readFileSync(file);
        } catch (err) {
          throw new UserError(`${file}: cannot read: ${(err as Error).message}`);
        }
        const site = profileFor(opts.url, loadSites(opts.sites));
        const res = extractPairs(buf, { url: opts.url, lang: opts.lang as 'en' | 'zh' | undefined, selectors: site?.captions, explain: opts.explain });
        if (opts.json) printJson(opts.explain ? { url: res.url, lang: res.lang, pairs: res.pairs, candidates: res.explain } : { url: res.url, lang: res.lang, pairs: res.pairs });
        else {
          process.stdout.write(`${res.url} (${res.lang}, ${res.charset}): ${res.pairs.length} pairs\n`);
          for (const p of res.pairs) process.stdout.write(`${p.image_url}\n  ${p.caption}${p.credit ? `  [${p.credit}]` : ''}\n`);
          if (opts.explain) {
            process.stdout.write('candidates (points by rule):\n');
            for (const c of res.explain ?? []) process.stdout.write(`  ${c.total.toFixed(1).padStart(6)} ${c.source.padEnd(10)} ${c.image_url.slice(-50)}  ${c.text.slice(0, 70)}\n      ${JSON.stringify(c.points)}\n`);
          }
        }
      } catch (err) {
        process.stderr.write(`capbridge: ${(err as Error).message}\n`);
        process.exitCode = 1;
      }
    });
}
