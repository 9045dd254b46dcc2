// Site profiles: config/sites/*.yaml, one site each, validated with zod (a bad profile names the file and key).
import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../config/load.js';
import YAML from 'yaml';
import { z } from 'zod';
import { UserError } from '../../util/errors.js';

// Start pages, feeds and sitemaps are fetched over http(s) only: a file:// or ftp:// URL names the profile file.
const url = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), { message: 'not an http(s) URL' });
export const siteSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lower-case letters, digits and dashes'),
    language: z.enum(['en', 'zh']),
    startUrls: z.array(url).default([]),
    sitemaps: z.array(url).default([]),
    feeds: z.array(url).default([]),
    allowedHosts: z.array(z.string().min(1)).min(1),
    articlePatterns: z.array(z.string().min(1)).min(1),
    captions: z
      .object({ image: z.string().optional(), container: z.string().optional(), caption: z.string().optional(), credit: z.string().optional(), altFallback: z.boolean().optional() })
      .strict()
      .optional(),
    limits: z
      .object({ maxPages: z.number().int().positive().optional(), delayMs: z.number().int().min(0).optional(), maxDepth: z.number().int().min(0).optional() })
      .strict()
      .default({}),
    enabled: z.boolean().default(true),
    /** This profile's allowedHosts may resolve to private or loopback addresses (an intranet or test site); every
     * other host keeps crawler.allowPrivateAddresses. */
    allowPrivateAddresses: z.boolean().default(false),
  })
  .strict()
  .refine((s) => s.startUrls.length + s.sitemaps.length + s.feeds.length > 0, { message: 'needs at least one of startUrls, sitemaps, feeds' })
  .superRefine((s, ctx) => {
    for (const p of s.articlePatterns) {
      try {
        new RegExp(p);
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['articlePatterns'], message: `bad regular expression "${p}": ${(err as Error).message}` });
      }
    }
  });

export type SiteProfile = z.infer<typeof siteSchema> & { /** the profile's file, for messages */ file?: string };

export function defaultSitesDir(): string {
  return path.join(PACKAGE_ROOT, 'config', 'sites');
}

export function parseSite(text: string, file: string): SiteProfile {
  let raw: unknown;
  try {
    raw = YAML.parse(text);
  } catch (err) {
    throw new UserError(`${file}: not valid YAML: ${(err as Error).message}`);
  }
  const r = siteSchema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const at = issue.path.reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string | number, unknown>)[k as string] : undefined), raw);
    const value = typeof at === 'string' ? ` "${at}"` : '';
    throw new UserError(`${file}: ${issue.path.join('.') || '(profile)'}${value}: ${issue.message}`);
  }
  return { ...r.data, file };
}

export interface SiteLoadError {
  file: string;
  /** The profile's name when it could be read. */
  site?: string;
  reason: string;
}

/** Every profile of a folder: the good ones, and each bad one with its reason (one bad file never hides the rest). */
export function loadSitesReport(dir: string = defaultSitesDir()): { sites: SiteProfile[]; errors: SiteLoadError[] } {
  let files: string[];
  try {
    files = fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort();
  } catch (err) {
    throw new UserError(`${dir}: cannot read site profiles: ${(err as Error).message}`);
  }
  const sites: SiteProfile[] = [];
  const errors: SiteLoadError[] = [];
  const seen = new Map<string, string>();
  for (const f of files) {
    const file = path.join(dir, f);
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
      const s = parseSite(text, file);
      const other = seen.get(s.name);
      if (other) throw new UserError(`${file}: name "${s.name}" is already used by ${other}`);
      seen.set(s.name, file);
      sites.push(s);
    } catch (err) {
      const name = /^name:\s*["']?([a-z0-9][a-z0-9-]*)/m.exec(text)?.[1];
      errors.push({ file, site: name, reason: (err as Error).message });
    }
  }
  return { sites, errors };
}

/** Every profile of a folder; the first bad one stops with its reason. */
export function loadSites(dir: string = defaultSitesDir()): SiteProfile[] {
  const { sites, errors } = loadSitesReport(dir);
  if (errors.length) throw new UserError(errors[0]!.reason);
  return sites;
}

export function hostAllowed(site: SiteProfile, u: string): boolean {
  let host: string;
  try {
    host = new URL(u).host.toLowerCase();
  } catch {
    return false;
  }
  return site.allowedHosts.some((h) => {
    const x = h.toLowerCase();
    return host === x || (x.startsWith('.') && (host.endsWith(x) || host === x.slice(1)));
  });
}

export function isArticle(site: SiteProfile, u: string): boolean {
  return site.articlePatterns.some((p) => new RegExp(p).test(u));
}

/** The profile a page URL belongs to: an allowed host whose article patterns match, else any allowed host. */
export function profileFor(u: string, sites: SiteProfile[]): SiteProfile | undefined {
  const hosted = sites.filter((s) => hostAllowed(s, u));
  return hosted.find((s) => isArticle(s, u)) ?? hosted[0];
}
