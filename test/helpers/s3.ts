// A real S3-compatible server for the tests: s3rver (the maintained @20minutes fork, Node >= 20) on 127.0.0.1 with a
// free port and its objects in a temp folder, behind a small front that can fail the next requests (an HTTP
// status such as 503, or a connection reset) to show that the SDK's retries carry the store through them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import S3rver from '@20minutes/s3rver';
import { tempDir } from '../helpers.js';
import type { ImageStoreSettings } from '../../src/bank/index.js';

export interface LocalS3 {
  endpoint: string;
  bucket: string;
  /** Every request that reached the front: method and path (with the bucket, path-style). */
  requests: Array<{ method: string; path: string; failed: boolean }>;
  /** The next n requests fail: answered with this HTTP status (an S3 error body), or their connection reset. */
  failNext(n: number, how: number | 'reset'): void;
  /** The keys stored in the bucket under a prefix, sorted (read from the server's own store). */
  keys(prefix?: string): Promise<string[]>;
  /** Deletes an object behind the client's back (a lost object). */
  remove(key: string): Promise<void>;
  close(): Promise<void>;
}

/** The tests' credentials: s3rver's fixed key pair, given to the SDK the usual way (environment variables). */
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };

export async function startLocalS3(bucket = 'capbridge-test'): Promise<LocalS3> {
  const saved = Object.fromEntries(Object.keys(CREDENTIALS).map((k) => [k, process.env[k]]));
  Object.assign(process.env, CREDENTIALS);
  const s3rver = new S3rver({ silent: true, directory: tempDir('capbridge-s3rver-'), configureBuckets: [{ name: bucket }] });
  await s3rver.configureBuckets();
  const handle = s3rver.getMiddleware() as (req: http.IncomingMessage, res: http.ServerResponse) => void;
  const requests: LocalS3['requests'] = [];
  let failures: Array<number | 'reset'> = [];
  const server = http.createServer((req, res) => {
    const how = failures.shift();
    requests.push({ method: req.method ?? '', path: decodeURIComponent((req.url ?? '').split('?')[0]!), failed: how !== undefined });
    if (how === 'reset') return req.socket.destroy();
    if (how !== undefined) {
      req.resume();
      res.writeHead(how, { 'content-type': 'application/xml' });
      return res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>ServiceUnavailable</Code><Message>injected failure</Message></Error>`);
    }
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    requests,
    failNext(n, how) {
      failures = Array.from({ length: n }, () => how);
    },
    async keys(prefix = '') {
      const r = (await s3rver.store.listObjects(bucket, { prefix })) as { objects: Array<{ key: string }> };
      return r.objects.map((o) => o.key).sort();
    },
    async remove(key) {
      await s3rver.store.deleteObject(bucket, key);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    },
  };
}

/** images.* settings for the local server: S3 with path-style URLs, the given prefix and tries per request. */
export function s3ImageSettings(s3: LocalS3, prefix: string, over: Partial<ImageStoreSettings['s3']> = {}): ImageStoreSettings {
  return {
    store: 's3',
    s3: {
      bucket: s3.bucket,
      prefix,
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
      timeoutMs: 10_000,
      ...over,
    },
  };
}
