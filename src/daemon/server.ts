// The daemon's HTTP listener: GET /healthz (JSON: alive, pid, the last cycle and the last successful one) and
// GET /metrics (Prometheus text exposition). /healthz answers 503 while the bank does not answer (status
// "bank-unavailable", with the bank's address and the reason). Loopback by default; port 0 picks a free port.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DaemonMetrics } from './metrics.js';

export interface HealthSource {
  health(): Promise<Record<string, unknown>>;
}

export async function startServer(host: string, port: number, metrics: Pick<DaemonMetrics, 'registry'>, health: HealthSource): Promise<{ server: http.Server; port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (url === '/healthz') {
      health
        .health()
        // 503 while the bank is down: a load balancer or a probe sees the outage from the status alone
        .then((h) => res.writeHead(h.status === 'bank-unavailable' ? 503 : 200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(h)))
        .catch((err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`health failed: ${err.message}\n`));
      return;
    }
    if (url === '/metrics') {
      metrics.registry
        .metrics()
        .then((text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text))
        .catch((err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${err.message}\n`));
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /healthz or /metrics\n');
  });
  // longer than scrapers' idle keep-alive, so the server does not close a socket a client is about to reuse
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    server,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}
