// Where image bytes live, as the config and the command line name it: 'folder', 's3' or s3://bucket/prefix.
// Apart from the image store (src/bank/image-store.ts) so that loading the config does not import sharp.

/** The store a setting names, or an error message saying what is expected. */
export function parseImageStore(store: string): { kind: 'folder' } | { kind: 's3'; bucket?: string; prefix?: string } | { error: string } {
  if (store === 'folder') return { kind: 'folder' };
  if (store === 's3') return { kind: 's3' };
  const m = /^s3:\/\/([^/?#]+)(?:\/([^?#]*))?$/.exec(store);
  if (!m) return { error: `expected folder, s3, or s3://bucket/prefix, got "${store}"` };
  // S3 bucket names: 3-63 characters, lower case letters, digits, dots and hyphens
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(m[1]!)) return { error: `"${store}": "${m[1]}" is not a valid bucket name (3-63 of a-z 0-9 . -)` };
  return { kind: 's3', bucket: m[1]!, prefix: (m[2] ?? '').replace(/\/+$/, '') };
}
