// HTTP fetching with the crawler's limits: every hop's resolved addresses are checked (private, loopback and
// link-local refused unless allowed), redirects followed by hand and counted, bodies read with a byte cap
// (Content-Length checked first), a timeout, and the caller's abort signal. Written on Node's fetch because the
// checks must run per redirect hop and per resolved IP, which neither crawlee's nor got's options expose.
import dns from 'node:dns/promises';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export class FetchRefused extends Error {
  constructor(readonly reason: 'private-address' | 'robots' | 'too-large' | 'too-many-redirects' | 'bad-url' | 'timeout' | 'network' | 'aborted', message: string) {
    super(message);
  }
}

export interface FetchOptions {
  userAgent: string;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  allowPrivate: boolean;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Called before each hop (robots and politeness of the redirect target). */
  beforeHop?: (url: string) => Promise<void>;
}

export interface FetchResult {
  url: string;
  status: number;
  headers: Headers;
  body: Buffer;
  redirects: number;
}

/** True for addresses a crawler must not reach unless told to: anything but public unicast. */
export function isPrivateAddress(ip: string): boolean {
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  return addr.range() !== 'unicast';
}

export async function checkHost(hostname: string, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  const host = hostname.replace(/^\[|\]$/g, '');
  const ips = net.isIP(host) ? [host] : (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  const bad = ips.find(isPrivateAddress);
  if (bad) throw new FetchRefused('private-address', `${hostname} resolves to ${bad}, a private/loopback/link-local address (crawler.allowPrivateAddresses is false)`);
}

export async function fetchLimited(startUrl: string, opts: FetchOptions): Promise<FetchResult> {
  let url = startUrl;
  for (let hop = 0; ; hop++) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new FetchRefused('bad-url', `not a URL: ${url}`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new FetchRefused('bad-url', `not http(s): ${url}`);
    try {
      await checkHost(u.hostname, opts.allowPrivate);
    } catch (err) {
      if (err instanceof FetchRefused) throw err;
      throw new FetchRefused('network', `${u.hostname}: ${(err as Error).message}`);
    }
    if (hop > 0) await opts.beforeHop?.(url);
    const timeout = AbortSignal.timeout(opts.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    let res: Response;
    try {
      res = await fetch(url, {
        redirect: 'manual',
        signal,
        headers: { 'user-agent': opts.userAgent, accept: '*/*', 'accept-encoding': 'gzip, deflate, br', ...opts.headers },
      });
    } catch (err) {
      if (opts.signal?.aborted) throw new FetchRefused('aborted', `aborted: ${url}`);
      if (timeout.aborted) throw new FetchRefused('timeout', `timed out after ${opts.timeoutMs} ms: ${url}`);
      throw new FetchRefused('network', `${url}: ${(err as Error).message}${(err as { cause?: Error }).cause ? ` (${(err as { cause?: Error }).cause!.message})` : ''}`);
    }
    if (res.status >= 300 && res.status < 400 && res.headers.get('location')) {
      await res.body?.cancel().catch(() => {});
      if (hop >= opts.maxRedirects) throw new FetchRefused('too-many-redirects', `more than ${opts.maxRedirects} redirects from ${startUrl}`);
      url = new URL(res.headers.get('location')!, url).href;
      continue;
    }
    const body = await readCapped(res, opts.maxBytes, url, opts.signal, timeout);
    return { url, status: res.status, headers: res.headers, body, redirects: hop };
  }
}

async function readCapped(res: Response, max: number, url: string, signal: AbortSignal | undefined, timeout: AbortSignal): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => {});
    throw new FetchRefused('too-large', `${url}: Content-Length ${declared} exceeds the limit of ${max} bytes`);
  }
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > max) {
        await reader.cancel().catch(() => {});
        throw new FetchRefused('too-large', `${url}: body exceeds the limit of ${max} bytes`);
      }
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof FetchRefused) throw err;
    if (signal?.aborted) throw new FetchRefused('aborted', `aborted: ${url}`);
    if (timeout.aborted) throw new FetchRefused('timeout', `timed out reading ${url}`);
    throw new FetchRefused('network', `${url}: ${(err as Error).message}`);
  }
  return Buffer.concat(chunks);
}
