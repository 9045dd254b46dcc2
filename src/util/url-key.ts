// The identity of a crawled page: one page reached under several spellings of its URL is one page.
// Folded: the scheme (http and https serve the same article on news sites), the host's case, a trailing dot and
// a leading "www." (a site and its www alias), default ports, and percent-encoding (RFC 3986 6.2.2: hex digits
// upper-cased, unreserved characters decoded). Path, query (already stripped of tracking parameters and sorted
// by the crawler's normalisation) and their case are kept: servers may tell them apart.
// In src/util because the bank's migration re-keys stored page URLs with it.

const UNRESERVED = /[A-Za-z0-9\-._~]/;

function foldPercent(s: string): string {
  return s.replace(/%([0-9a-fA-F]{2})/g, (_m, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

/** "//host[:port]/path?query" for an http(s) URL; null when it is not one. */
export function urlKey(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  let host = u.hostname.toLowerCase().replace(/\.$/, '');
  if (host.startsWith('www.') && host.split('.').length > 2) host = host.slice(4);
  const defaultPort = u.port === '' || u.port === '80' || u.port === '443';
  let rest = foldPercent(u.pathname || '/') + foldPercent(u.search);
  if (rest.endsWith('?')) rest = rest.slice(0, -1);
  return `//${host}${defaultPort ? '' : `:${u.port}`}${rest}`;
}
