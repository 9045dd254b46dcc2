// 32-bit typed arrays to and from SQLite BLOBs, always little-endian on disk (a bank file moves between
// machines). On little-endian hosts the bytes are used as they are.
const LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function toBlob(a: Float32Array | Uint32Array): Buffer {
  if (LE) return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  const b = Buffer.alloc(a.length * 4);
  if (a instanceof Float32Array) for (let i = 0; i < a.length; i++) b.writeFloatLE(a[i]!, i * 4);
  else for (let i = 0; i < a.length; i++) b.writeUInt32LE(a[i]!, i * 4);
  return b;
}

export function blobToFloat32(b: Buffer): Float32Array {
  const out = new Float32Array(b.length >> 2);
  if (LE) new Uint8Array(out.buffer).set(b); // copy: the Buffer may be unaligned
  else for (let i = 0; i < out.length; i++) out[i] = b.readFloatLE(i * 4);
  return out;
}

export function blobToUint32(b: Buffer): Uint32Array {
  const out = new Uint32Array(b.length >> 2);
  if (LE) new Uint8Array(out.buffer).set(b);
  else for (let i = 0; i < out.length; i++) out[i] = b.readUInt32LE(i * 4);
  return out;
}

/**
 * A BLOB column in a SELECT list, as `alias`. PostgreSQL sends it as base64 text: node-postgres reads results in
 * the text protocol only, where a BYTEA arrives as hex (two characters a byte, decoded by the client); base64 is
 * 1.33 characters a byte and Node decodes it natively (features of 130 KB: 0.67 ms of client CPU against 1.11 ms,
 * the same server CPU, measured). Read the value with blobValue.
 */
export function blobColumn(dialect: 'sqlite' | 'postgres', column: string, alias: string): string {
  return dialect === 'postgres' ? `encode(${column}, 'base64') AS "${alias}"` : `${column} AS "${alias}"`;
}

/** The bytes of a column selected with blobColumn (base64 text from PostgreSQL, newlines and all; a Buffer from SQLite). */
export function blobValue(v: Buffer | string): Buffer {
  return typeof v === 'string' ? Buffer.from(v, 'base64') : v;
}
