// SIFT features per image (migration 2). Stored as compact BLOBs; see migrations/002-features.ts for the layout.
import type { Sql } from './sql.js';
import { blobColumn, blobToFloat32, blobValue, toBlob } from './blob.js';

/** Keypoints and descriptors of one image, in detection coordinates. */
export interface Features {
  /** Detection image size (after the maxSide downscale, before any internal x2 upsampling). */
  width: number;
  height: number;
  /** Detection pixels per original pixel (1 when the image was not downscaled; < 1 otherwise). */
  scale: number;
  count: number;
  /** count*6 floats: x, y, size, angle (degrees, OpenCV convention), response, octave (signed, -1 = upsampled). */
  keypoints: Float32Array;
  /** count*128 bytes, row-major, OpenCV's uint8 SIFT layout. */
  descriptors: Uint8Array;
}

export interface StoredFeatures extends Features {
  ms: number;
  createdAt: string;
  /** Set when these are the features of a near-identical picture (image_twins): its sha256. */
  twinOf?: string;
}

/** An image's features as a row holds them (the features table; dense_views the same way). */
export interface FeatureBlobsRow {
  width: number;
  height: number;
  scale: number;
  count: number;
  keypoints: Buffer | string;
  descriptors: Buffer | string;
}

interface Row extends FeatureBlobsRow {
  ms: number;
  created_at: string;
}

/** A features row decoded; a damaged row (disk, a hand edit) is this image's failure, said plainly, not an
 *  out-of-bounds read later. */
function decode(sha256: string, r: Row): StoredFeatures {
  const d = blobValue(r.descriptors);
  const k = blobValue(r.keypoints);
  if (k.length !== r.count * 24 || d.length !== r.count * 128) {
    throw new Error(`features of image ${sha256.slice(0, 12)} are damaged: ${r.count} keypoints but ${k.length} keypoint bytes / ${d.length} descriptor bytes`);
  }
  return {
    width: r.width,
    height: r.height,
    scale: r.scale,
    count: r.count,
    keypoints: blobToFloat32(k),
    descriptors: new Uint8Array(d.buffer, d.byteOffset, d.byteLength),
    ms: r.ms,
    createdAt: r.created_at,
  };
}

export class FeaturesRepo {
  constructor(private db: Sql) {}

  /**
   * The features of an image; for a near-identical copy of another picture (image_twins), that picture's
   * features with the scale of this image (same detection frame: original px of this image = detection / scale).
   */
  async get(sha256: string): Promise<StoredFeatures | undefined> {
    const r = await this.db.get<Row>(`SELECT ${this.columns()} FROM features WHERE sha256 = ?`, [sha256]);
    return r ? decode(sha256, r) : this.twin(sha256);
  }

  /**
   * The features of several images (as get gives each; an image without any is left out), read in one query for those
   * that have their own (a merge verifying a shortlist of 30 reads them at once instead of one round trip each).
   */
  async getMany(shas: readonly string[]): Promise<Map<string, StoredFeatures>> {
    const out = new Map<string, StoredFeatures>();
    const want = [...new Set(shas)];
    for (let i = 0; i < want.length; i += 100) {
      const chunk = want.slice(i, i + 100);
      const rows = await this.db.all<Row & { sha256: string }>(`SELECT sha256, ${this.columns()} FROM features WHERE sha256 IN (${chunk.map(() => '?').join(', ')})`, chunk);
      for (const r of rows) out.set(r.sha256, decode(r.sha256, r));
    }
    for (const sha of want) {
      if (out.has(sha)) continue;
      const f = await this.twin(sha); // a near-identical picture's (rare: one query more each)
      if (f) out.set(sha, f);
    }
    return out;
  }

  private columns(): string {
    const blob = (c: string) => blobColumn(this.db.dialect, c, c);
    return `width, height, scale, count, ${blob('keypoints')}, ${blob('descriptors')}, ms, created_at`;
  }

  /** The features of the picture an image is a near-identical copy of (image_twins), at this image's scale. */
  private async twin(sha256: string): Promise<StoredFeatures | undefined> {
    const t = await this.db.get<{ ofSha: string; width: number }>(
      `SELECT t.of_sha256 AS "ofSha", h.width AS width FROM image_twins t JOIN image_hashes h ON h.sha256 = t.sha256 WHERE t.sha256 = ?`,
      [sha256],
    );
    const f = t ? await this.get(t.ofSha) : undefined;
    return f && t ? { ...f, scale: f.width / t.width, twinOf: t.ofSha } : undefined;
  }

  /** Whether the image has features, its own or a near-identical picture's. */
  async has(sha256: string): Promise<boolean> {
    return (await this.db.get('SELECT 1 AS x FROM features WHERE sha256 = ? UNION ALL SELECT 1 AS x FROM image_twins WHERE sha256 = ?', [sha256, sha256])) !== undefined;
  }

  /** Which of these images have stored features. */
  async which(shas: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (const s of shas) if (await this.has(s)) out.add(s);
    return out;
  }

  async put(sha256: string, f: Features, ms: number): Promise<void> {
    if (f.keypoints.length !== f.count * 6 || f.descriptors.length !== f.count * 128) {
      throw new Error(`features for ${sha256}: ${f.count} keypoints but ${f.keypoints.length} floats / ${f.descriptors.length} descriptor bytes`);
    }
    await this.db.run(
      `INSERT INTO features (sha256, width, height, scale, count, keypoints, descriptors, ms, created_at)
       VALUES (@sha256, @width, @height, @scale, @count, @keypoints, @descriptors, @ms, @createdAt)
       ON CONFLICT(sha256) DO UPDATE SET width = excluded.width, height = excluded.height, scale = excluded.scale,
         count = excluded.count, keypoints = excluded.keypoints, descriptors = excluded.descriptors, ms = excluded.ms,
         created_at = excluded.created_at`,
      {
        sha256,
        width: f.width,
        height: f.height,
        scale: f.scale,
        count: f.count,
        keypoints: toBlob(f.keypoints),
        descriptors: Buffer.from(f.descriptors.buffer, f.descriptors.byteOffset, f.descriptors.byteLength),
        ms,
        createdAt: new Date().toISOString(),
      },
    );
  }

  async delete(sha256: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM features WHERE sha256 = ?', [sha256])) > 0;
  }

  /** Bytes stored for one image (both BLOBs), for size checks. */
  async storedBytes(sha256: string): Promise<number> {
    const r = await this.db.get<{ n: number }>('SELECT length(keypoints) + length(descriptors) AS n FROM features WHERE sha256 = ?', [sha256]);
    return Number(r?.n ?? 0);
  }

  async count(): Promise<number> {
    return Number((await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM features'))!.n);
  }
}
