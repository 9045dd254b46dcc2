// Who may use the review server. Loopback clients naming a loopback host (localhost, 127.0.0.1, [::1]) always may;
// when the server is bound to loopback, any other Host header is refused (403: a DNS-rebinding page cannot reach
// the API), and on another binding it needs the token. Any other client must present the
// token: `Authorization: Bearer TOKEN`, or the HttpOnly cookie that `?token=TOKEN` sets once (then redirects to
// the same URL without the token). Without it: 401. Tokens are compared in constant time on their sha256.
import crypto from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const COOKIE = 'capbridge_review';

export function isLoopbackAddress(addr: string | undefined): boolean {
  if (!addr) return false;
  try {
    let ip = ipaddr.parse(addr);
    if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
    return ip.range() === 'loopback';
  } catch {
    return false;
  }
}

/** A host to bind to that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || isLoopbackAddress(host);
}

const digest = (s: string): Buffer => crypto.createHash('sha256').update(s).digest();
const same = (a: string, b: string): boolean => crypto.timingSafeEqual(digest(a), digest(b));

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

function hostAllowed(hostHeader: string | undefined): boolean {
  if (!hostHeader) return false;
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:]+)(?::\d+)?$/.exec(hostHeader);
  if (!m) return false;
  const h = m[1]!.replace(/^\[|\]$/g, '');
  return h === 'localhost' || isLoopbackAddress(h);
}

export interface AuthOptions {
  token: string;
  /** The server is bound to loopback: check the Host header of every request. */
  loopbackBound: boolean;
}

export function authHook(opts: AuthOptions) {
  const cookieToken = opts.token ? digest(`cookie:${opts.token}`).toString('hex') : '';
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (opts.loopbackBound && !hostAllowed(req.headers.host)) {
      reply.code(403).type('text/plain; charset=utf-8').send('capbridge review: this server answers only to localhost / 127.0.0.1 host names\n');
      return reply;
    }
    // a loopback client naming a loopback host is this machine's own browser; one naming another host may be a
    // page that rebound its DNS name to 127.0.0.1, so it needs the token like any other client
    if (isLoopbackAddress(req.socket.remoteAddress ?? req.ip) && hostAllowed(req.headers.host)) return;
    const deny = (msg: string) => {
      reply.code(401).header('WWW-Authenticate', 'Bearer realm="capbridge review"').type('application/json; charset=utf-8').send({ statusCode: 401, error: 'Unauthorized', message: msg });
      return reply;
    };
    if (!opts.token) return deny('remote access needs a token, and none is configured');
    const auth = req.headers.authorization;
    if (typeof auth === 'string' && auth.startsWith('Bearer ') && same(auth.slice(7).trim(), opts.token)) return;
    const c = cookieValue(req.headers.cookie, COOKIE);
    if (c && same(c, cookieToken)) return;
    const url = new URL(req.url, 'http://x');
    const q = url.searchParams.get('token');
    if (q !== null && same(q, opts.token)) {
      url.searchParams.delete('token');
      reply
        .header('Set-Cookie', `${COOKIE}=${cookieToken}; HttpOnly; SameSite=Strict; Path=/`)
        .redirect(url.pathname + (url.search || ''), 303);
      return reply;
    }
    return deny('a token is required: Authorization: Bearer TOKEN, or open the page once with ?token=TOKEN');
  };
}
