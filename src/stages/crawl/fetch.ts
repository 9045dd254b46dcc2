// HTTP fetching with the crawler's limits: private, loopback and link-local addresses refused unless allowed,
// redirects followed by hand and counted, bodies read with a byte cap (Content-Length checked first, then the
// decoded bytes), a timeout, and the caller's abort signal.
// The address check runs inside the connection's own DNS lookup (the `lookup` option of node:http/https): every
// address the name resolves to is checked there and the socket connects to a checked address, so a name that
// answers with a public address to a first query and a private one to the next (DNS rebinding) cannot slip
// through between check and connect. Written on node:http/https rather than fetch/undici or got because Node's
// built-in fetch offers no lookup hook, and undici is only a transitive dependency here.
import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import ipaddr from 'ipaddr.js';

export type RefusalReason =
  | 'private-address' | 'robots' | 'robots-unavailable' | 'too-large' | 'too-many-redirects' | 'redirect-loop' | 'offsite-redirect' | 'bad-url'
  | 'timeout' | 'network' | 'reset' | 'dns' | 'truncated' | 'aborted';

export class FetchRefused extends Error {
  constructor(readonly reason: RefusalReason, message: string) {
    super(message);
  }
}

/** The refusal for a socket-level error: resets and DNS failures are told apart (both are transient). */
function networkRefusal(url: string, err: NodeJS.ErrnoException): FetchRefused {
  const code = err.code ?? (err.cause as NodeJS.ErrnoException | undefined)?.code;
  const reason = code === 'ECONNRESET' || code === 'EPIPE' || /socket hang up/i.test(err.message) ? 'reset' : code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'dns' : 'network';
  const cause = (err as { cause?: Error }).cause;
  return new FetchRefused(reason, `${url}: ${err.message}${cause ? ` (${cause.message})` : ''}`);
}

export interface FetchOptions {
  userAgent: string;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  /** Private, loopback and link-local addresses allowed: for every host, or for the hosts this says yes to. */
  allowPrivate: boolean | ((url: URL) => boolean);
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Called before each redirect hop (hosts allowed, robots and politeness of the target); throws to refuse it. */
  beforeHop?: (url: string) => Promise<void>;
  /** Name resolution used for the connection (tests substitute one); the system resolver by default. */
  resolve?: Resolver;
}

/** Every address a host name resolves to. */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemResolve: Resolver = async (hostname) => (await dns.lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family }));

export interface FetchResult {
  url: string;
  status: number;
  headers: Headers;
  body: Buffer;
  redirects: number;
}

const privateAllowed = (opts: FetchOptions, u: URL) => (typeof opts.allowPrivate === 'function' ? opts.allowPrivate(u) : opts.allowPrivate);

/** True for addresses a crawler must not reach unless told to: anything but public unicast. */
export function isPrivateAddress(ip: string): boolean {
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  return addr.range() !== 'unicast';
}

function refusePrivate(hostname: string, ip: string): FetchRefused {
  return new FetchRefused('private-address', `${hostname} resolves to ${ip}, a private/loopback/link-local address (crawler.allowPrivateAddresses is false)`);
}

/** Early check of a host (IP literals, and names by a first resolution); the binding check is in pinnedLookup. */
export async function checkHost(hostname: string, allowPrivate: boolean, resolve: Resolver = systemResolve): Promise<void> {
  if (allowPrivate) return;
  const host = hostname.replace(/^\[|\]$/g, '');
  const ips = net.isIP(host) ? [host] : (await resolve(host)).map((a) => a.address);
  const bad = ips.find(isPrivateAddress);
  if (bad) throw refusePrivate(hostname, bad);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | { address: string; family: number }[], family?: number) => void;

/**
 * A `lookup` for net/tls connections that resolves once, refuses the connection when any resolved address is
 * private (unless allowed), and hands the socket exactly the addresses it checked.
 */
export function pinnedLookup(allowPrivate: boolean, resolve: Resolver = systemResolve) {
  return (hostname: string, options: { all?: boolean; family?: number | string } | number, callback: LookupCallback): void => {
    const all = typeof options === 'object' && options !== null && options.all === true;
    const fam = typeof options === 'number' ? options : Number(typeof options === 'object' && options ? (options.family ?? 0) : 0) || 0;
    resolve(hostname).then(
      (found) => {
        const addrs = fam === 4 || fam === 6 ? found.filter((a) => a.family === fam) : found;
        if (!addrs.length) {
          const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
          err.code = 'ENOTFOUND';
          return callback(err, '');
        }
        if (!allowPrivate) {
          const bad = addrs.find((a) => isPrivateAddress(a.address));
          if (bad) return callback(refusePrivate(hostname, bad.address) as unknown as NodeJS.ErrnoException, '');
        }
        if (all) callback(null, addrs);
        else callback(null, addrs[0]!.address, addrs[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

interface RawResponse {
  status: number;
  headers: Headers;
  body: Readable;
  /** True once the whole message arrived (false for a body cut short by a closed connection). */
  complete: () => boolean;
  /** Drops the response: the socket and the decoder. */
  discard: () => void;
}

/** One GET on node:http/https through the pinned lookup; the body is decoded (gzip, deflate, br). */
function get(url: URL, opts: FetchOptions, signal: AbortSignal): Promise<RawResponse> {
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(url, {
      method: 'GET',
      signal,
      agent: false, // a fresh connection per request: no pooled socket escapes the lookup of this request
      lookup: pinnedLookup(privateAllowed(opts, url), opts.resolve) as unknown as net.LookupFunction,
      headers: { 'user-agent': opts.userAgent, accept: '*/*', 'accept-encoding': 'gzip, deflate, br', ...opts.headers },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(res.headers)) {
        if (v === undefined) continue;
        for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
      }
      const enc = (res.headers['content-encoding'] ?? '').toLowerCase().trim();
      const decoder = enc === 'gzip' || enc === 'x-gzip' ? zlib.createGunzip() : enc === 'deflate' ? zlib.createInflate() : enc === 'br' ? zlib.createBrotliDecompress() : null;
      let body: Readable = res;
      if (decoder) {
        res.on('error', (e) => decoder.destroy(e));
        body = res.pipe(decoder);
      }
      resolve({
        status: res.statusCode ?? 0,
        headers,
        body,
        complete: () => res.complete,
        discard: () => {
          res.destroy();
          decoder?.destroy();
        },
      });
    });
    req.end();
  });
}

export async function fetchLimited(startUrl: string, opts: FetchOptions): Promise<FetchResult> {
  let url = startUrl;
  const seen = new Set<string>();
  for (let hop = 0; ; hop++) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new FetchRefused('bad-url', `not a URL: ${url}`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new FetchRefused('bad-url', `not http(s): ${url}`);
    seen.add(u.href);
    try {
      await checkHost(u.hostname, privateAllowed(opts, u), opts.resolve);
    } catch (err) {
      if (err instanceof FetchRefused) throw err;
      throw networkRefusal(url, err as NodeJS.ErrnoException);
    }
    if (hop > 0) await opts.beforeHop?.(url);
    const timeout = AbortSignal.timeout(opts.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    let res: RawResponse;
    try {
      res = await get(u, opts, signal);
    } catch (err) {
      if (err instanceof FetchRefused) throw err;
      if (opts.signal?.aborted) throw new FetchRefused('aborted', `aborted: ${url}`);
      if (timeout.aborted) throw new FetchRefused('timeout', `${url}: no answer within ${opts.timeoutMs} ms`);
      throw networkRefusal(url, err as NodeJS.ErrnoException);
    }
    if (res.status >= 300 && res.status < 400 && res.headers.get('location')) {
      res.discard();
      let next: string;
      try {
        next = new URL(res.headers.get('location')!, url).href;
      } catch {
        throw new FetchRefused('bad-url', `${url}: redirect to a bad URL "${res.headers.get('location')}"`);
      }
      if (seen.has(next)) throw new FetchRefused('redirect-loop', `${startUrl}: redirect loop (${url} -> ${next})`);
      if (hop >= opts.maxRedirects) throw new FetchRefused('too-many-redirects', `${startUrl}: more than ${opts.maxRedirects} redirects`);
      url = next;
      continue;
    }
    const body = await readCapped(res, opts.maxBytes, url, opts.signal, timeout, opts.timeoutMs);
    return { url, status: res.status, headers: res.headers, body, redirects: hop };
  }
}

async function readCapped(res: RawResponse, max: number, url: string, signal: AbortSignal | undefined, timeout: AbortSignal, timeoutMs: number): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > max) {
    res.discard();
    throw new FetchRefused('too-large', `${url}: Content-Length ${declared} exceeds the limit of ${max} bytes`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of res.body) {
      const b = chunk as Buffer;
      total += b.byteLength;
      if (total > max) {
        res.discard();
        throw new FetchRefused('too-large', `${url}: body exceeds the limit of ${max} bytes`);
      }
      chunks.push(b);
    }
  } catch (err) {
    if (err instanceof FetchRefused) throw err;
    if (signal?.aborted) throw new FetchRefused('aborted', `aborted: ${url}`);
    if (timeout.aborted) throw new FetchRefused('timeout', `${url}: body not complete within ${timeoutMs} ms (${total} bytes read)`);
    if ((err as NodeJS.ErrnoException).code === 'ECONNRESET' || /aborted/i.test((err as Error).message)) {
      throw new FetchRefused('truncated', `${url}: connection closed after ${total} bytes of the body`);
    }
    throw networkRefusal(url, err as NodeJS.ErrnoException);
  }
  // A connection closed early can also end the stream quietly: the message is then not complete.
  if (!res.complete()) throw new FetchRefused('truncated', `${url}: connection closed after ${total} bytes of the body`);
  return Buffer.concat(chunks);
}
