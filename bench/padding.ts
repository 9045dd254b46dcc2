// Padding targets for bench:index: SIFT features of real photos with generated variations, computed once and cached
// on disk outside the repository (default /work/cache/capbridge-padding, or CAPBRIDGE_PADDING_CACHE), so that an
// archive-sized target bank (10k, 100k images) can be built without photos we do not have.
//
// Base photos: every image of ../shared/data's sets except the images the index's P@1 is measured on (the sources
// with a counterpart and their counterparts in mining-flickr8k, retrieval-smvs, retrieval-scenes and
// retrieval-landmarks): a variation of a query's own photo would be a correct match, not a distractor. That leaves
// the sets' distractors and unmatched sources, retrieval-wxbs and the Oxford pairs (1,000 photos). The padding then
// leaves out every variation that holds a crop of a measured set's unmatched source (holdsSource: 14 % of them), so
// that a source without counterpart has none among the padding either (its null sample at 100k).
// Variation i is drawn from its own seed: 60 % one photo (a crop of 35-90 % of each side, turned by up to 25
// degrees or a quarter turn, sheared, mirrored one time in ten, resized to 400-900 px), 40 % a collage of 2-4 crops
// of different photos; brightness, contrast and saturation changed, sometimes blurred or sharpened, JPEG quality
// 55-95. A variation is then described by our SIFT at the config's sift settings (as the features stage would), on
// the sift worker pool. The features are real photo content at new crops, scales and angles; a base photo recurs in
// about a hundred variations at 100k, which crowds the index's buckets more than 100k distinct photos would.
//
// Cache: chunks of 1,000 variations (chunk-NNNNN.bin, written atomically), so an interrupted run resumes at the
// first missing chunk. Run alone (hours of CPU at 100k): `nice -n 10 npx tsx bench/padding.ts --count 100000`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { loadConfig } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import { SiftPool } from '../src/lib/sift/index.js';
import type { Features } from '../src/lib/sift/index.js';
import { mulberry32 } from '../src/util/random.js';
import { benchArgs, sharedDataDir } from './search-lib.js';

export const CHUNK = 1000;
const MAGIC = 0x43425044; // "CBPD"

/** One cached padding image: its variation's content hash (the image sha256 a bank would give it) and features. */
export interface PaddingImage {
  index: number;
  /** A noisy copy's number (absent: the cached photo itself). */
  copy?: number;
  sha256: string;
  features: Features;
}

/** The cache folder for the config's SIFT settings (another SIFT setting is another cache). */
export function paddingDir(config: Config): string {
  const root = process.env.CAPBRIDGE_PADDING_CACHE ?? '/work/cache/capbridge-padding';
  const s = config.sift;
  const key = createHash('sha256').update(JSON.stringify([s.maxSide, s.maxKeypoints, s.upsample, s.octaveLayers, s.sigma, s.contrastThreshold, s.edgeThreshold])).digest('hex').slice(0, 10);
  return path.join(root, `v1-${key}`);
}

const chunkFile = (dir: string, c: number) => path.join(dir, `chunk-${String(c).padStart(5, '0')}.bin`);

/** The image files of the shared sets a variation may start from (see the header: no query of a measured set that has
 *  a counterpart, nor its counterpart), in the cache generator's order; `source`: a measured set's source without
 *  counterpart. The cache's variations were drawn from this list, sources included; the padding leaves out every
 *  variation holding a crop of one (paddingRefs), since that crop is the source's own photo in the target bank: a
 *  true copy, which would give a source without counterpart one (issue 35 round 10: 78 of mining-flickr8k's 80 such
 *  sources were confident among 100,000 targets). */
export function baseList(data: string): { file: string; source: boolean }[] {
  const out: { file: string; source: boolean }[] = [];
  const read = (f: string) => {
    const lines = fs.readFileSync(f, 'utf8').split('\n').filter(Boolean);
    const head = lines[0]!.split('\t');
    return lines.slice(1).map((l) => Object.fromEntries(l.split('\t').map((v, i) => [head[i], v])) as Record<string, string>);
  };
  for (const set of ['mining-flickr8k', 'retrieval-smvs', 'retrieval-scenes', 'retrieval-landmarks', 'retrieval-wxbs']) {
    const dir = path.join(data, set);
    const truth = read(path.join(dir, 'truth.tsv'));
    const measured = set !== 'retrieval-wxbs';
    const skip = new Set(measured ? truth.flatMap((r) => [`s:${r.source_id}`, `t:${r.target_id}`]) : []);
    for (const [b, file] of [['s', 'source.tsv'], ['t', 'target.tsv']] as const)
      for (const r of read(path.join(dir, file))) if (!skip.has(`${b}:${r.id}`)) out.push({ file: path.join(dir, r.image!), source: measured && b === 's' });
  }
  for (const d of ['graf', 'bikes']) {
    const dir = path.join(data, 'image-pairs', 'images', d);
    if (fs.existsSync(dir)) for (const f of fs.readdirSync(dir).sort()) out.push({ file: path.join(dir, f), source: false });
  }
  return out;
}

/** The base photos' files (baseList). */
export const basePhotos = (data: string): string[] => baseList(data).map((b) => b.file);

/** Whether cached variation `index` holds a crop of a measured set's source (baseList): left out of the padding. */
export function holdsSource(data: string): (index: number) => boolean {
  const list = baseList(data);
  const bad = new Set(list.flatMap((b, k) => (b.source ? [k] : [])));
  return (index) => variationPlan(list.length, index).picks.some((k) => bad.has(k));
}

/** A crop of one base photo, transformed, as raw RGB at w x h. */
async function piece(file: string, r: () => number, w: number, h: number): Promise<Buffer> {
  const img = sharp(file, { failOn: 'none' }).rotate(); // EXIF orientation first
  const meta = await img.metadata();
  const W = meta.width ?? 640;
  const H = meta.height ?? 480;
  // Upscaled by at most ~1.6: a small photo gives larger crops.
  const fw = Math.min(1, Math.max(0.35 + 0.55 * r(), w / (1.6 * W)));
  const fh = Math.min(1, Math.max(0.35, h / (1.6 * H), fw * (0.75 + 0.5 * r())));
  const cw = Math.max(32, Math.round(W * fw));
  const ch = Math.max(32, Math.round(H * fh));
  let p = sharp(await img.extract({ left: Math.floor((W - cw) * r()), top: Math.floor((H - ch) * r()), width: cw, height: ch }).toBuffer());
  const turn = r();
  if (turn < 0.12) p = p.rotate([90, 180, 270][Math.floor(r() * 3)]!);
  else if (turn < 0.7) {
    const a = (r() * 2 - 1) * 25;
    const c = Math.cos((Math.abs(a) * Math.PI) / 180);
    const s = Math.sin((Math.abs(a) * Math.PI) / 180);
    const iw = Math.floor(cw * c - ch * s);
    const ih = Math.floor(ch * c - cw * s);
    if (iw > cw * 0.4 && ih > ch * 0.4) {
      const rot = await p.rotate(a, { background: '#808080' }).toBuffer({ resolveWithObject: true });
      const rw = rot.info.width;
      const rh = rot.info.height;
      p = sharp(rot.data).extract({ left: Math.floor((rw - iw) / 2), top: Math.floor((rh - ih) / 2), width: iw, height: ih });
    }
  }
  if (r() < 0.35) {
    // a shear, then the inner part (no fill at the borders)
    const sx = (r() - 0.5) * 0.3;
    const sy = (r() - 0.5) * 0.3;
    const sh = await p.affine([[1, sx], [sy, 1]], { background: '#808080' }).toBuffer({ resolveWithObject: true });
    const mw = Math.ceil(Math.abs(sx) * sh.info.height);
    const mh = Math.ceil(Math.abs(sy) * sh.info.width);
    if (sh.info.width - 2 * mw > 32 && sh.info.height - 2 * mh > 32)
      p = sharp(sh.data).extract({ left: mw, top: mh, width: sh.info.width - 2 * mw, height: sh.info.height - 2 * mh });
  }
  if (r() < 0.1) p = p.flop();
  p = p.resize(w, h, { fit: 'cover' }).modulate({ brightness: 0.7 + 0.6 * r(), saturation: 0.5 + r() });
  const look = r();
  if (look < 0.2) p = p.blur(0.4 + r());
  else if (look < 0.35) p = p.sharpen();
  if (r() < 0.3) p = p.linear(0.75 + 0.5 * r(), (r() - 0.5) * 40);
  return p.removeAlpha().raw().toBuffer();
}

const SIZES: Array<[number, number]> = [[640, 480], [640, 427], [480, 640], [800, 533], [600, 600], [427, 640], [900, 600], [400, 300]];

/** What variation i is made of: its size, JPEG quality, the frame's cells and the base photo of each (drawn from the
 *  variation's own seed; `r` goes on to draw each piece's crop and look, in cell order). */
export interface VariationPlan {
  r: () => number;
  w: number;
  h: number;
  q: number;
  cells: { left: number; top: number; width: number; height: number }[];
  /** Indices into the base photos, one per cell. */
  picks: number[];
}

/** The plan of variation i: 60 % one photo filling the frame, 40 % a collage of 2-4 crops of different photos. No
 *  image is read, so which base photos a cached variation holds is known without rendering it (paddingRefs). */
export function variationPlan(baseCount: number, i: number): VariationPlan {
  const r = mulberry32(0x9e3779b1 ^ (i * 2654435761));
  const [w, h] = SIZES[Math.floor(r() * SIZES.length)]!;
  const q = 55 + Math.floor(r() * 41);
  const pick = () => Math.floor(r() * baseCount);
  if (r() < 0.6) return { r, w, h, q, cells: [{ left: 0, top: 0, width: w, height: h }], picks: [pick()] };
  // A collage: the frame cut into 2-4 rectangles, each a crop of another photo.
  const n = 2 + Math.floor(r() * 3);
  const cells: VariationPlan['cells'] = [];
  const vertical = r() < 0.5;
  const cut = 0.3 + 0.4 * r();
  const a = vertical ? Math.round(w * cut) : Math.round(h * cut);
  const halves = vertical ? [{ left: 0, top: 0, width: a, height: h }, { left: a, top: 0, width: w - a, height: h }] : [{ left: 0, top: 0, width: w, height: a }, { left: 0, top: a, width: w, height: h - a }];
  // 2: the two halves; 3: the second half cut again; 4: both halves cut again (across the first cut).
  for (const [k, c] of halves.entries()) {
    if (n === 2 || (n === 3 && k === 0)) {
      cells.push(c);
      continue;
    }
    const split = 0.3 + 0.4 * r();
    if (vertical) {
      const b = Math.round(c.height * split);
      cells.push({ ...c, height: b }, { ...c, top: c.top + b, height: c.height - b });
    } else {
      const b = Math.round(c.width * split);
      cells.push({ ...c, width: b }, { ...c, left: c.left + b, width: c.width - b });
    }
  }
  return { r, w, h, q, cells, picks: cells.map(pick) };
}

/** Variation i as JPEG bytes (deterministic: the same i gives the same image). */
export async function variation(bases: readonly string[], i: number): Promise<Buffer> {
  const { r, w, h, q, cells, picks } = variationPlan(bases.length, i);
  if (cells.length === 1) return sharp(await piece(bases[picks[0]!]!, r, w, h), { raw: { width: w, height: h, channels: 3 } }).jpeg({ quality: q }).toBuffer();
  // One piece after the other: drawn concurrently (before issue 35 round 11), the pieces took their random numbers in
  // the order their files' metadata came back, so a cached collage cannot be made again byte for byte (its base
  // photos, drawn before any piece, can: variationPlan).
  const layers = [];
  for (const [k, c] of cells.entries()) layers.push({ input: await piece(bases[picks[k]!]!, r, c.width, c.height), raw: { width: c.width, height: c.height, channels: 3 as const }, left: c.left, top: c.top });
  return sharp({ create: { width: w, height: h, channels: 3, background: '#808080' } }).composite(layers).jpeg({ quality: q }).toBuffer();
}

function encodeChunk(images: PaddingImage[]): Buffer {
  const parts: Buffer[] = [];
  const head = Buffer.alloc(8);
  head.writeUInt32LE(MAGIC, 0);
  head.writeUInt32LE(images.length, 4);
  parts.push(head);
  for (const im of images) {
    const f = im.features;
    const h = Buffer.alloc(4 + 32 + 16);
    h.writeUInt32LE(im.index, 0);
    Buffer.from(im.sha256, 'hex').copy(h, 4);
    h.writeUInt32LE(f.width, 36);
    h.writeUInt32LE(f.height, 40);
    h.writeFloatLE(f.scale, 44);
    h.writeUInt32LE(f.count, 48);
    parts.push(h, Buffer.from(f.keypoints.buffer, f.keypoints.byteOffset, f.count * 24), Buffer.from(f.descriptors.buffer, f.descriptors.byteOffset, f.count * 128));
  }
  return Buffer.concat(parts);
}

/** The images of one cached chunk (copies: they outlive the file's buffer). */
export function readChunk(file: string): PaddingImage[] {
  const b = fs.readFileSync(file);
  if (b.readUInt32LE(0) !== MAGIC) throw new Error(`${file}: not a padding chunk`);
  const n = b.readUInt32LE(4);
  const out: PaddingImage[] = [];
  let o = 8;
  for (let k = 0; k < n; k++) {
    const index = b.readUInt32LE(o);
    const sha256 = b.subarray(o + 4, o + 36).toString('hex');
    const width = b.readUInt32LE(o + 36);
    const height = b.readUInt32LE(o + 40);
    const scale = b.readFloatLE(o + 44);
    const count = b.readUInt32LE(o + 48);
    o += 52;
    const keypoints = new Float32Array(count * 6);
    new Uint8Array(keypoints.buffer).set(b.subarray(o, o + count * 24));
    o += count * 24;
    const descriptors = new Uint8Array(b.subarray(o, o + count * 128));
    o += count * 128;
    out.push({ index, sha256, features: { width, height, scale, count, keypoints, descriptors } });
  }
  return out;
}

/** Chunks present in the cache, in order (runs computing chunks from several places leave gaps: every chunk there
 *  is read; each holds its own images, numbered by their variation). */
export function cachedChunks(config: Config): string[] {
  const dir = paddingDir(config);
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => /^chunk-\d+\.bin$/.test(f)).sort().map((f) => path.join(dir, f));
}

/** Where padding image i sits in the cache (chunk file, byte offset of its record): readPadding reads it alone. */
export interface PaddingRef {
  index: number;
  file: string;
  offset: number;
  count: number;
  /** 0: the cached photo; k > 0: its k-th noisy copy (paddingRefs with copies, past what the cache holds). */
  copy: number;
}

/** SIFT descriptor units (0..255 bytes) of the Gaussian noise added to each descriptor byte of a noisy copy. */
export const COPY_NOISE = 8;

/**
 * The place of padding images 0..count-1 in the cache, from the chunks' record headers (no descriptor is read). With
 * `copies`, a count past what the cache holds is made up by noisy copies of the cached photos, in turn (each
 * descriptor byte plus Gaussian noise of COPY_NOISE, seeded by the image and the copy: the same copy every time):
 * the index's entry count, bucket crowding and bytes are a real photo's; the copies are not new scenes.
 */
export function paddingRefs(config: Config, data: string, count: number, copies = false): PaddingRef[] {
  const out: PaddingRef[] = [];
  const excluded = holdsSource(data);
  for (const file of cachedChunks(config)) {
    if (out.length >= count) break;
    const fd = fs.openSync(file, 'r');
    try {
      const h = Buffer.alloc(52);
      fs.readSync(fd, h, 0, 8, 0);
      const n = h.readUInt32LE(4);
      let o = 8;
      for (let k = 0; k < n && out.length < count; k++) {
        fs.readSync(fd, h, 0, 52, o);
        const c = h.readUInt32LE(48);
        const index = h.readUInt32LE(0);
        if (!excluded(index)) out.push({ index, file, offset: o, count: c, copy: 0 });
        o += 52 + c * 152;
      }
    } finally {
      fs.closeSync(fd);
    }
  }
  const real = out.length;
  if (copies && real) for (let j = real; j < count; j++) out.push({ ...out[j % real]!, copy: Math.floor(j / real) });
  if (out.length < count) throw new Error(`padding cache ${paddingDir(config)} holds ${out.length} images, ${count} asked: run npx tsx bench/padding.ts --count ${count}`);
  return out;
}

/** A noisy copy's descriptors (see paddingRefs). */
function noisyCopy(descriptors: Uint8Array, index: number, copy: number): Uint8Array {
  const r = mulberry32((index * 7919 + copy * 104729) >>> 0);
  const out = new Uint8Array(descriptors.length);
  for (let i = 0; i < descriptors.length; i++) {
    const g = Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
    out[i] = Math.max(0, Math.min(255, Math.round(descriptors[i]! + COPY_NOISE * g)));
  }
  return out;
}

/** One padding image's record, read alone (verification of a shortlisted padding image). */
export function readPadding(ref: PaddingRef): PaddingImage {
  const fd = fs.openSync(ref.file, 'r');
  try {
    const b = Buffer.alloc(52 + ref.count * 152);
    fs.readSync(fd, b, 0, b.length, ref.offset);
    const keypoints = new Float32Array(ref.count * 6);
    new Uint8Array(keypoints.buffer).set(b.subarray(52, 52 + ref.count * 24));
    const stored = new Uint8Array(b.subarray(52 + ref.count * 24));
    const descriptors = ref.copy ? noisyCopy(stored, ref.index, ref.copy) : stored;
    return {
      index: b.readUInt32LE(0),
      sha256: b.subarray(4, 36).toString('hex') + (ref.copy ? `~${ref.copy}` : ''),
      features: { width: b.readUInt32LE(36), height: b.readUInt32LE(40), scale: b.readFloatLE(44), count: ref.count, keypoints, descriptors },
    };
  } finally {
    fs.closeSync(fd);
  }
}

/** Padding images 0..count-1 from the cache, chunk by chunk, without the variations holding a source (paddingRefs);
 *  with `copies`, past the cache, noisy copies of the cached photos in turn (as paddingRefs); else throws when the
 *  cache holds fewer. */
export function* paddingImages(config: Config, data: string, count: number, copies = false): Generator<PaddingImage> {
  const chunks = cachedChunks(config);
  const excluded = holdsSource(data);
  let n = 0;
  for (let copy = 0; n < count; copy++) {
    const before = n;
    for (const f of chunks)
      for (const im of readChunk(f)) {
        if (excluded(im.index)) continue;
        if (n++ >= count) return;
        yield copy ? { index: im.index, copy, sha256: createHash('sha256').update(`${im.sha256}~${copy}`).digest('hex'), features: { ...im.features, descriptors: noisyCopy(im.features.descriptors, im.index, copy) } } : im;
      }
    if (n < count && (!copies || n === before)) throw new Error(`padding cache ${paddingDir(config)} holds ${n - before} usable images, ${count} asked: run npx tsx bench/padding.ts --count ${count}`);
  }
}

/** Computes the missing chunks up to `count` images (resumable: chunk by chunk). */
export async function ensurePadding(config: Config, data: string, count: number, threads: number, log: (s: string) => void, fromChunk = 0): Promise<void> {
  const dir = paddingDir(config);
  fs.mkdirSync(dir, { recursive: true });
  const bases = basePhotos(data);
  const chunks = Math.ceil(count / CHUNK);
  const pool = new SiftPool(config.sift, threads);
  const t0 = performance.now();
  let done = 0;
  try {
    for (let c = fromChunk; c < chunks; c++) {
      if (fs.existsSync(chunkFile(dir, c))) continue;
      // another run (--from) working on it: its lock file (left behind by a killed run: remove it by hand)
      try {
        fs.closeSync(fs.openSync(chunkFile(dir, c) + '.lock', 'wx'));
      } catch {
        continue;
      }
      const images: PaddingImage[] = new Array(CHUNK);
      let next = 0;
      const lane = async () => {
        for (let k = next++; k < CHUNK; k = next++) {
          const i = c * CHUNK + k;
          const jpeg = await variation(bases, i);
          const { features } = await pool.extract(jpeg);
          images[k] = { index: i, sha256: createHash('sha256').update(jpeg).digest('hex'), features };
        }
      };
      await Promise.all(Array.from({ length: threads + 2 }, lane));
      const tmp = chunkFile(dir, c) + '.tmp';
      fs.writeFileSync(tmp, encodeChunk(images));
      fs.renameSync(tmp, chunkFile(dir, c));
      fs.rmSync(chunkFile(dir, c) + '.lock', { force: true });
      done++;
      const kp = images.reduce((s, im) => s + im.features.count, 0) / CHUNK;
      log(`chunk ${c + 1}/${chunks} (${Math.round(kp)} keypoints an image; ${((performance.now() - t0) / done / 1000).toFixed(0)} s a chunk)`);
    }
  } finally {
    await pool.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const data = sharedDataDir(repoRoot);
  const { opt } = benchArgs();
  const { config } = loadConfig({});
  const count = Number(opt('count', '10000'));
  const threads = Number(opt('threads', String(Math.min(2, os.cpus().length))));
  if (process.argv.includes('--show')) {
    // --show i,j,k: writes variations i, j, k as JPEG files into bench/out/padding (to look at a benchmark's hit)
    const out = path.join(repoRoot, 'bench', 'out', 'padding');
    fs.mkdirSync(out, { recursive: true });
    const bases = basePhotos(data);
    for (const i of opt('show', '').split(',').map(Number)) fs.writeFileSync(path.join(out, `v${i}.jpg`), await variation(bases, i));
  } else if (process.argv.includes('--sample')) {
    // --sample N: writes variations 0..N-1 as JPEG files into bench/out/padding (to look at them)
    const out = path.join(repoRoot, 'bench', 'out', 'padding');
    fs.mkdirSync(out, { recursive: true });
    const bases = basePhotos(data);
    for (let i = 0; i < Number(opt('sample', '20')); i++) fs.writeFileSync(path.join(out, `v${i}.jpg`), await variation(bases, i));
    process.stderr.write(`bench:padding: ${bases.length} base photos; samples in ${out}\n`);
  } else {
    process.stderr.write(`bench:padding: ${count} images into ${paddingDir(config)} (${basePhotos(data).length} base photos, ${threads} threads)\n`);
    // --from K: start at chunk K (a second run beside a first one that started at 0)
    await ensurePadding(config, data, count, threads, (s) => process.stderr.write(`bench:padding: ${s}\n`), Number(opt('from', '0')));
  }
}
