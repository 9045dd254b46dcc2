// Image bytes in an S3-compatible bucket (AWS S3, MinIO, Ceph RGW, R2, ...), through @aws-sdk/client-s3. Keys are
// the folder store's relative paths (images/ab/<sha>.<ext>) under an optional prefix, so an object's name is its
// content hash: a put of a key that exists writes the same bytes again (harmless), and ImageStore.prepare() asks
// HEAD first so it is rarely done. Credentials come from the AWS SDK's usual chain (AWS_ACCESS_KEY_ID /
// AWS_SECRET_ACCESS_KEY, AWS_PROFILE and ~/.aws, web identity, container or instance role): none in our config.
// Transient failures (connection errors, 5xx, throttling) are retried by the SDK's standard retry strategy
// (`maxAttempts`, exponential back-off); what still fails is an ImageStoreError naming the object and the reason.
// Loaded only when images.store selects S3, so the embedded default does not pay for importing the SDK.
import type { Readable } from 'node:stream';
import { S3Client, GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { ImageStoreError, type ImageBlobs, type StoreIdentity } from './image-store.js';

export type ChecksumMode = 'WHEN_REQUIRED' | 'WHEN_SUPPORTED';

export interface S3BlobsSettings {
  bucket: string;
  /** Key prefix inside the bucket ('' or 'a/b'); a trailing slash is added when missing. */
  prefix: string;
  /** An S3-compatible server's URL (http://127.0.0.1:9000); '' for AWS S3. */
  endpoint: string;
  /** '' : AWS_REGION, else us-east-1 (S3-compatible servers mostly ignore it, but requests are signed with it). */
  region: string;
  /** Path-style URLs (http://host/bucket/key), which most S3-compatible servers need. */
  forcePathStyle: boolean;
  requestChecksumCalculation: ChecksumMode;
  responseChecksumValidation: ChecksumMode;
  /** Tries per request (1 = no retry). */
  maxAttempts: number;
  /** Socket inactivity timeout of one request (ms). */
  timeoutMs: number;
}

const CONTENT_TYPES: Record<string, string> = {
  jpg: 'image/jpeg', png: 'image/png', webp: 'image/webp', gif: 'image/gif', tif: 'image/tiff', heif: 'image/heif',
  avif: 'image/avif', svg: 'image/svg+xml', jp2: 'image/jp2', jxl: 'image/jxl',
};

interface SdkError {
  name?: string;
  Code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number; attempts?: number };
}

export class S3Blobs implements ImageBlobs {
  readonly kind = 's3';
  private readonly client: S3Client;
  private readonly prefix: string;

  constructor(readonly settings: S3BlobsSettings) {
    if (!settings.bucket) throw new Error('S3 image store: no bucket (images.s3.bucket, or images.store: s3://bucket/prefix)');
    const prefix = settings.prefix.replace(/^\/+|\/+$/g, '');
    this.prefix = prefix ? `${prefix}/` : '';
    // This release runs on Node 20 (the project's engine), pinned; the SDK's notice that later releases will need
    // Node 22 says nothing to an operator of this one.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    this.client = new S3Client({
      region: settings.region || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1',
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      forcePathStyle: settings.forcePathStyle,
      requestChecksumCalculation: settings.requestChecksumCalculation,
      responseChecksumValidation: settings.responseChecksumValidation,
      maxAttempts: settings.maxAttempts,
      retryMode: 'standard',
      requestHandler: { requestTimeout: settings.timeoutMs, connectionTimeout: Math.min(settings.timeoutMs, 10_000) },
    });
  }

  get id(): string {
    return `s3://${this.settings.bucket}/${this.prefix}`.replace(/\/$/, '');
  }

  /** The bucket and prefix at the endpoint (scheme, host and port, lower-cased; "AWS S3" when none is set): the same
   *  bucket name on another server is another store. */
  async identity(): Promise<StoreIdentity> {
    let at = 'AWS S3';
    if (this.settings.endpoint) {
      try {
        const u = new URL(this.settings.endpoint);
        at = `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`.toLowerCase();
      } catch {
        at = this.settings.endpoint;
      }
    }
    const key = `${this.id} at ${at}`;
    return { key, describe: key };
  }

  get location(): string {
    return this.id + (this.settings.endpoint ? ` at ${this.settings.endpoint}` : '');
  }

  private objectKey(key: string): string {
    return this.prefix + key;
  }

  private url(key: string): string {
    return `s3://${this.settings.bucket}/${this.objectKey(key)}`;
  }

  /** The SDK's error as one ImageStoreError: the object, what the server said (or why it could not be asked), the tries. */
  private failed(op: 'get' | 'put' | 'head', key: string, err: unknown): ImageStoreError {
    const e = (err ?? {}) as SdkError;
    const status = e.$metadata?.httpStatusCode;
    const code = e.Code ?? e.name ?? 'Error';
    const missing = code === 'NoSuchKey' || (op !== 'put' && status === 404 && code !== 'NoSuchBucket');
    const parts = [`${code}: ${e.message || (missing ? 'no such object' : 'no message')}`.replace(/^(\w+): \1$/, '$1')];
    if (status) parts.push(`HTTP ${status}`);
    if (e.$metadata?.attempts) parts.push(`${e.$metadata.attempts} attempt(s) of ${this.settings.maxAttempts}`);
    if (this.settings.endpoint) parts.push(`endpoint ${this.settings.endpoint}`);
    let reason = parts.join(', ');
    if (code === 'CredentialsProviderError' || /credentials/i.test(e.message ?? '')) {
      reason += ' (credentials come from the AWS chain: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE and ~/.aws/credentials, or a container/instance role)';
    } else if (code === 'NoSuchBucket') reason += ` (create the bucket "${this.settings.bucket}" or fix images.s3.bucket)`;
    return new ImageStoreError(this.url(key), op, reason, missing, !missing);
  }

  async has(key: string, bytes: number): Promise<boolean> {
    try {
      const r = await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
      return r.ContentLength === bytes;
    } catch (err) {
      const f = this.failed('head', key, err);
      if (f.missing) return false;
      throw f;
    }
  }

  async put(key: string, buf: Uint8Array): Promise<void> {
    const ext = key.slice(key.lastIndexOf('.') + 1);
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.settings.bucket,
          Key: this.objectKey(key),
          Body: buf,
          ContentLength: buf.length,
          ContentType: CONTENT_TYPES[ext] ?? 'application/octet-stream',
        }),
      );
    } catch (err) {
      throw this.failed('put', key, err);
    }
  }

  private async open(key: string) {
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
      if (!r.Body) throw Object.assign(new Error('the server sent no body'), { name: 'EmptyBody' });
      return r.Body;
    } catch (err) {
      throw this.failed('get', key, err);
    }
  }

  async get(key: string): Promise<Buffer> {
    const body = await this.open(key);
    try {
      const bytes = await body.transformToByteArray();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } catch (err) {
      throw this.failed('get', key, err);
    }
  }

  async stream(key: string): Promise<Readable> {
    // In Node the body is the response's IncomingMessage (a Readable).
    return (await this.open(key)) as unknown as Readable;
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
