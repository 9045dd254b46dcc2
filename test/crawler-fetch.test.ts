// fetchLimited against a server on 127.0.0.1, with a substituted resolver standing in for DNS: the private-address
// check binds the connection (a name that resolves to a public address for the first query and to 127.0.0.1 for
// the next is refused, and nothing reaches the server), and bodies are decoded and capped.
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { FetchRefused, fetchLimited, pinnedLookup, type Resolver } from '../src/stages/crawl/fetch.js';

describe('crawler: fetch binds the address check to the connection', () => {
  let server: http.Server;
  let port = 0;
  let hits: string[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/gz') {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        return void res.end(zlib.gzipSync(Buffer.from('hello '.repeat(1000))));
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`ok ${req.headers.host}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => {
    hits = [];
  });

  const base = { userAgent: 'capbridge-test', timeoutMs: 5000, maxBytes: 1 << 20, maxRedirects: 3 };

  it('connects through the substituted resolver (a made-up name reaches 127.0.0.1 when private addresses are allowed)', async () => {
    const resolve: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const r = await fetchLimited(`http://news.example.test:${port}/a`, { ...base, allowPrivate: true, resolve });
    expect(r.status).to.equal(200);
    expect(r.body.toString()).to.equal(`ok news.example.test:${port}`);
    expect(hits).to.deep.equal(['/a']);
  });

  it('refuses a name that rebinds to 127.0.0.1 after a first public answer, before any byte is sent', async () => {
    let calls = 0;
    const rebinding: Resolver = async () => (calls++ === 0 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
    let err: unknown;
    try {
      await fetchLimited(`http://rebind.example.test:${port}/secret`, { ...base, allowPrivate: false, resolve: rebinding });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(FetchRefused);
    expect((err as FetchRefused).reason).to.equal('private-address');
    expect(calls).to.equal(2); // the early check saw the public address; the connection's own lookup saw 127.0.0.1
    expect(hits).to.deep.equal([]);
  });

  it('the lookup refuses when any resolved address is private, and hands the socket only checked addresses', async () => {
    const mixed: Resolver = async () => [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.7', family: 4 }];
    const lookup = pinnedLookup(false, mixed);
    const res = await new Promise<{ err: unknown; addr: unknown }>((r) => lookup('x.test', { all: true }, (err, addr) => r({ err, addr })));
    expect(res.err).to.be.instanceOf(FetchRefused);
    const ok = pinnedLookup(false, async () => [{ address: '93.184.216.34', family: 4 }]);
    const one = await new Promise<{ err: unknown; addr: unknown; fam: unknown }>((r) => ok('x.test', { family: 0 }, (err, addr, fam) => r({ err, addr, fam })));
    expect(one).to.deep.equal({ err: null, addr: '93.184.216.34', fam: 4 });
    const list = await new Promise<unknown>((r) => ok('x.test', { all: true }, (_e, addr) => r(addr)));
    expect(list).to.deep.equal([{ address: '93.184.216.34', family: 4 }]);
  });

  it('decodes gzip bodies and caps the decoded size', async () => {
    const resolve: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const r = await fetchLimited(`http://gz.example.test:${port}/gz`, { ...base, allowPrivate: true, resolve });
    expect(r.body.toString()).to.equal('hello '.repeat(1000));
    let err: unknown;
    try {
      await fetchLimited(`http://gz.example.test:${port}/gz`, { ...base, maxBytes: 1000, allowPrivate: true, resolve });
    } catch (e) {
      err = e;
    }
    expect((err as FetchRefused).reason).to.equal('too-large');
  });
});
