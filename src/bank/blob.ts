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
