// The demo's two news sites: static HTML pages with <figure><img><figcaption>, generated into a folder and
// served on 127.0.0.1 by a tiny static server (node:http; two routes' worth of logic, no framework needed).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { CHINESE, ENGLISH, type DemoStory } from './content.js';
import { retakeJpeg, sceneJpeg } from './scenes.js';

export interface DemoSite {
  name: 'en' | 'zh';
  title: string;
  dir: string;
  stories: DemoStory[];
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function page(lang: string, title: string, body: string): string {
  return `<!doctype html>\n<html lang="${lang}"><head><meta charset="utf-8"><title>${esc(title)}</title></head>\n<body>${body}</body></html>\n`;
}

/** Writes both sites (pages, photos, robots.txt) under dir; returns them. */
export async function generateSites(dir: string): Promise<DemoSite[]> {
  const sites: DemoSite[] = [
    { name: 'en', title: 'The Loopback Times', dir: path.join(dir, 'en'), stories: ENGLISH },
    { name: 'zh', title: '环回日报', dir: path.join(dir, 'zh'), stories: CHINESE },
  ];
  for (const site of sites) {
    fs.mkdirSync(path.join(site.dir, 'news'), { recursive: true });
    fs.mkdirSync(path.join(site.dir, 'images'), { recursive: true });
    const lang = site.name === 'en' ? 'en' : 'zh-CN';
    const links: string[] = [];
    for (const s of site.stories) {
      const jpeg = s.retake ? await retakeJpeg(s.scene, s.retake) : await sceneJpeg(s.scene);
      fs.writeFileSync(path.join(site.dir, 'images', `${s.slug}.jpg`), jpeg);
      const body =
        `<header><a href="/">${esc(site.title)}</a></header><article><h1>${esc(s.title)}</h1>` +
        `<figure><img src="/images/${s.slug}.jpg" alt=""><figcaption>${esc(s.caption)}</figcaption></figure>` +
        `<p>${site.name === 'en' ? 'Our reporter sends this story.' : '本报记者报道。'}</p></article>`;
      fs.writeFileSync(path.join(site.dir, 'news', `${s.slug}.html`), page(lang, s.title, body));
      links.push(`<li><a href="/news/${s.slug}.html">${esc(s.title)}</a></li>`);
    }
    fs.writeFileSync(path.join(site.dir, 'index.html'), page(lang, site.title, `<h1>${esc(site.title)}</h1><ul>${links.join('')}</ul>`));
    fs.writeFileSync(path.join(site.dir, 'robots.txt'), 'User-agent: *\nAllow: /\n');
  }
  return sites;
}

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.jpg': 'image/jpeg', '.txt': 'text/plain; charset=utf-8' };

/** Serves a folder on 127.0.0.1 (port 0 = any free port). */
export async function serveFolder(root: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let rel = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    if (rel.endsWith('/')) rel += 'index.html';
    const file = path.join(root, path.normalize(rel));
    if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A manifest of a site's stories (id, image, caption, url), for importing without the crawler. */
export function writeManifest(site: DemoSite, baseUrl: string): string {
  const file = path.join(site.dir, 'manifest.tsv');
  const rows = ['id\timage\tcaption\turl', ...site.stories.map((s) => `${site.name}-${s.slug}\timages/${s.slug}.jpg\t${s.caption}\t${baseUrl}/news/${s.slug}.html`)];
  fs.writeFileSync(file, rows.join('\n') + '\n');
  return file;
}
