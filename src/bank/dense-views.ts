// Archive matching's dense views of target images (migration 33): ASIFT's views of an image described by SIFT and
// mapped back to its detection frame, computed the first time the image is an archive candidate and kept, so each
// target is described once whichever source, run or worker meets it. Compact: a keypoint's x, y, size and angle in
// 16-bit fixed point (8 bytes), its descriptor as SIFT's 128 bytes; the response and octave, which matching does
// not read, are not kept (read back as 0).
import type { Sql } from './sql.js';
import type { FeatureBlobsRow as Row, Features } from './features.js';
import { blobColumn, blobValue } from './blob.js';

/** Fixed-point steps: 1/16 px for positions and sizes (detection frames are at most a few thousand pixels), 2^16 per turn. */
const POS = 16;
const TURN = 65536 / 360;
const KP_STRIDE = 6;
const DESC_SIZE = 128;

/** Packs x, y, size, angle of each keypoint as 4 little-endian uint16. */
export function packKeypoints(f: Features): Buffer {
  const b = Buffer.alloc(f.count * 8);
  const clamp = (v: number) => Math.max(0, Math.min(65535, Math.round(v)));
  for (let i = 0; i < f.count; i++) {
    const k = f.keypoints.subarray(i * KP_STRIDE, i * KP_STRIDE + 4);
    b.writeUInt16LE(clamp(k[0]! * POS), i * 8);
    b.writeUInt16LE(clamp(k[1]! * POS), i * 8 + 2);
    b.writeUInt16LE(clamp(k[2]! * POS), i * 8 + 4);
    b.writeUInt16LE(Math.round((((k[3]! % 360) + 360) % 360) * TURN) & 0xffff, i * 8 + 6);
  }
  return b;
}

export function unpackKeypoints(b: Buffer, count: number): Float32Array {
  const kp = new Float32Array(count * KP_STRIDE);
  for (let i = 0; i < count; i++) {
    kp[i * KP_STRIDE] = b.readUInt16LE(i * 8) / POS;
    kp[i * KP_STRIDE + 1] = b.readUInt16LE(i * 8 + 2) / POS;
    kp[i * KP_STRIDE + 2] = b.readUInt16LE(i * 8 + 4) / POS;
    kp[i * KP_STRIDE + 3] = b.readUInt16LE(i * 8 + 6) / TURN;
  }
  return kp;
}

/** Features as the table gives them back (keypoints packed and unpacked): what an image's dense views are once
 *  stored, so that one computed here and one read from the bank (another process's, another shard's) are the same. */
export function asStored(f: Features): Features {
  return { ...f, keypoints: unpackKeypoints(packKeypoints(f), f.count) };
}

export class DenseViewsRepo {
  constructor(private db: Sql) {}

  /** The dense views of an image under `key`, or undefined. A damaged row (sizes that disagree) is an error naming it. */
  async get(sha256: string, key: string): Promise<Features | undefined> {
    const blob = (c: string) => blobColumn(this.db.dialect, c, c);
    const r = await this.db.get<Row>(`SELECT width, height, scale, count, ${blob('keypoints')}, ${blob('descriptors')} FROM dense_views WHERE sha256 = ? AND key = ?`, [sha256, key]);
    if (!r) return undefined;
    const k = blobValue(r.keypoints);
    const d = blobValue(r.descriptors);
    if (k.length !== r.count * 8 || d.length !== r.count * DESC_SIZE) {
      throw new Error(`dense views of image ${sha256.slice(0, 12)} are damaged: ${r.count} keypoints but ${k.length} keypoint bytes / ${d.length} descriptor bytes`);
    }
    return { width: r.width, height: r.height, scale: r.scale, count: r.count, keypoints: unpackKeypoints(k, r.count), descriptors: new Uint8Array(d.buffer, d.byteOffset, d.byteLength) };
  }

  /** Stores an image's dense views; a row another process wrote first is kept (the same image and code give the same views). */
  async put(sha256: string, key: string, f: Features, ms: number): Promise<void> {
    if (f.keypoints.length !== f.count * KP_STRIDE || f.descriptors.length !== f.count * DESC_SIZE) {
      throw new Error(`dense views for ${sha256}: ${f.count} keypoints but ${f.keypoints.length} floats / ${f.descriptors.length} descriptor bytes`);
    }
    await this.db.run(
      `INSERT INTO dense_views (sha256, key, width, height, scale, count, keypoints, descriptors, ms, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (sha256, key) DO NOTHING`,
      [sha256, key, f.width, f.height, f.scale, f.count, packKeypoints(f), Buffer.from(f.descriptors.buffer, f.descriptors.byteOffset, f.descriptors.byteLength), ms, new Date().toISOString()],
    );
  }

  /** Rows and bytes kept (stats). */
  async size(): Promise<{ images: number; bytes: number }> {
    const r = await this.db.get<{ n: number; b: number }>(`SELECT COUNT(*) AS n, COALESCE(SUM(count), 0) AS b FROM dense_views`);
    return { images: Number(r?.n ?? 0), bytes: Number(r?.b ?? 0) * (8 + DESC_SIZE) };
  }
}
