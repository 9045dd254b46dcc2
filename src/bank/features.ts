// SIFT features per image (migration 2). Stored as compact BLOBs; see migrations/002-features.ts for the layout.
import type Database from 'better-sqlite3';
import type { Features } from '../sift/types.js';
import { blobToFloat32, toBlob } from './blob.js';

export interface StoredFeatures extends Features {
  ms: number;
  createdAt: string;
  /** Set when these are the features of a near-identical picture (image_twins): its sha256. */
  twinOf?: string;
}

interface Row {
  width: number;
  height: number;
  scale: number;
  count: number;
  keypoints: Buffer;
  descriptors: Buffer;
  ms: number;
  created_at: string;
}

export class FeaturesRepo {
  private getStmt: Database.Statement;
  private hasStmt: Database.Statement;
  private putStmt: Database.Statement;
  private delStmt: Database.Statement;
  private twinStmt: Database.Statement;

  constructor(private db: Database.Database) {
    this.getStmt = db.prepare('SELECT width, height, scale, count, keypoints, descriptors, ms, created_at FROM features WHERE sha256 = ?');
    this.hasStmt = db.prepare('SELECT 1 FROM features WHERE sha256 = ? UNION ALL SELECT 1 FROM image_twins WHERE sha256 = ?');
    this.twinStmt = db.prepare(
      `SELECT t.of_sha256 AS ofSha, h.width AS width FROM image_twins t JOIN image_hashes h ON h.sha256 = t.sha256 WHERE t.sha256 = ?`,
    );
    this.putStmt = db.prepare(
      `INSERT INTO features (sha256, width, height, scale, count, keypoints, descriptors, ms, created_at)
       VALUES (@sha256, @width, @height, @scale, @count, @keypoints, @descriptors, @ms, @createdAt)
       ON CONFLICT(sha256) DO UPDATE SET width = excluded.width, height = excluded.height, scale = excluded.scale,
         count = excluded.count, keypoints = excluded.keypoints, descriptors = excluded.descriptors, ms = excluded.ms,
         created_at = excluded.created_at`,
    );
    this.delStmt = db.prepare('DELETE FROM features WHERE sha256 = ?');
  }

  /**
   * The features of an image; for a near-identical copy of another picture (image_twins), that picture's
   * features with the scale of this image (same detection frame: original px of this image = detection / scale).
   */
  get(sha256: string): StoredFeatures | undefined {
    const r = this.getStmt.get(sha256) as Row | undefined;
    if (!r) {
      const t = this.twinStmt.get(sha256) as { ofSha: string; width: number } | undefined;
      const f = t ? this.get(t.ofSha) : undefined;
      return f && t ? { ...f, scale: f.width / t.width, twinOf: t.ofSha } : undefined;
    }
    const d = r.descriptors;
    return {
      width: r.width,
      height: r.height,
      scale: r.scale,
      count: r.count,
      keypoints: blobToFloat32(r.keypoints),
      descriptors: new Uint8Array(d.buffer, d.byteOffset, d.byteLength),
      ms: r.ms,
      createdAt: r.created_at,
    };
  }

  /** Whether the image has features, its own or a near-identical picture's. */
  has(sha256: string): boolean {
    return this.hasStmt.get(sha256, sha256) !== undefined;
  }

  put(sha256: string, f: Features, ms: number): void {
    if (f.keypoints.length !== f.count * 6 || f.descriptors.length !== f.count * 128) {
      throw new Error(`features for ${sha256}: ${f.count} keypoints but ${f.keypoints.length} floats / ${f.descriptors.length} descriptor bytes`);
    }
    this.putStmt.run({
      sha256,
      width: f.width,
      height: f.height,
      scale: f.scale,
      count: f.count,
      keypoints: toBlob(f.keypoints),
      descriptors: Buffer.from(f.descriptors.buffer, f.descriptors.byteOffset, f.descriptors.byteLength),
      ms,
      createdAt: new Date().toISOString(),
    });
  }

  delete(sha256: string): boolean {
    return this.delStmt.run(sha256).changes > 0;
  }

  /** Bytes stored for one image (both BLOBs), for size checks. */
  storedBytes(sha256: string): number {
    const r = this.db.prepare('SELECT length(keypoints) + length(descriptors) AS n FROM features WHERE sha256 = ?').get(sha256) as { n: number } | undefined;
    return r?.n ?? 0;
  }

  count(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM features').get() as { n: number }).n;
  }
}
