// A tiny WebAssembly assembler: modules written as readable lists of operations, assembled at load time (no
// toolchain, no binary blob in the repo). Used by the SIFT kernels (src/lib/sift/wasm.ts) and the image index's
// sketch comparisons (src/lib/image-index/wasm.ts).

// The WebAssembly global (Node has it; the ES lib typings do not declare it).
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
export const WebAssembly = (globalThis as unknown as {
  WebAssembly: {
    Memory: new (d: { initial: number }) => WasmMemory;
    Module: new (bytes: Uint8Array) => object;
    Instance: new (m: object, imports: object) => { exports: Record<string, unknown> };
  };
}).WebAssembly;

export const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
export const sleb = (n: number): number[] => {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(b & 0x40)) || (n === -1 && b & 0x40)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
};
export const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
export const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
export const str = (s: string): number[] => [...uleb(s.length), ...Buffer.from(s, 'utf8')];

export const I32 = 0x7f;
export const V128 = 0x7b;
export const op = {
  get: (i: number) => [0x20, ...uleb(i)],
  set: (i: number) => [0x21, ...uleb(i)],
  tee: (i: number) => [0x22, ...uleb(i)],
  i32: (v: number) => [0x41, ...sleb(v)],
  add: [0x6a],
  sub: [0x6b],
  mul: [0x6c],
  geS: [0x4e],
  gtS: [0x4a],
  load32: [0x28, 2, 0],
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  br: (d: number) => [0x0c, ...uleb(d)],
  brIf: (d: number) => [0x0d, ...uleb(d)],
  end: [0x0b],
  vload: [0xfd, ...uleb(0), 0, 0],
  vloadAt: (offset: number) => [0xfd, ...uleb(0), 0, ...uleb(offset)],
  load32At: (offset: number) => [0x28, 2, ...uleb(offset)],
  vconst: (v: number) => {
    const b = Buffer.alloc(16);
    for (let i = 0; i < 4; i++) b.writeFloatLE(v, i * 4);
    return [0xfd, ...uleb(12), ...b];
  },
  vstore: [0xfd, ...uleb(11), 0, 0],
  fadd: [0xfd, ...uleb(228)],
  fsub: [0xfd, ...uleb(229)],
  fmul: [0xfd, ...uleb(230)],
  fdiv: [0xfd, ...uleb(231)],
  fmin: [0xfd, ...uleb(232)],
  fmax: [0xfd, ...uleb(233)],
  // pmin/pmax (b < a ? b : a, a < b ? b : a): one minps/maxps on x64, where min/max cost a NaN-exact sequence.
  fpmin: [0xfd, ...uleb(234)],
  fpmax: [0xfd, ...uleb(235)],
  fabs: [0xfd, ...uleb(224)],
  fsqrt: [0xfd, ...uleb(227)],
  flt: [0xfd, ...uleb(67)],
  fgt: [0xfd, ...uleb(68)],
  fle: [0xfd, ...uleb(69)],
  fge: [0xfd, ...uleb(70)],
  vand: [0xfd, ...uleb(78)],
  vor: [0xfd, ...uleb(80)],
  i32ToF32: [0xb2], // f32.convert_i32_s
  f32load: (offset: number) => [0x2a, 2, ...uleb(offset)],
  f32store: (offset: number) => [0x38, 2, ...uleb(offset)],
  f32add: [0x92],
  i32and: [0x71],
  ltS: [0x48],
  vconstI: (lanes: number[]) => {
    const b = Buffer.alloc(16);
    for (let i = 0; i < 4; i++) b.writeInt32LE(lanes[i]!, i * 4);
    return [0xfd, ...uleb(12), ...b];
  },
  vconstF: (lanes: number[]) => {
    const b = Buffer.alloc(16);
    for (let i = 0; i < 4; i++) b.writeFloatLE(lanes[i]!, i * 4);
    return [0xfd, ...uleb(12), ...b];
  },
  i32splat: [0xfd, ...uleb(17)],
  i32lane: (l: number) => [0xfd, ...uleb(27), l],
  f32lane: (l: number) => [0xfd, ...uleb(31), l],
  ffloor: [0xfd, ...uleb(104)],
  fnearest: [0xfd, ...uleb(106)],
  iltS: [0xfd, ...uleb(57)], // i32x4.lt_s
  igeS: [0xfd, ...uleb(63)], // i32x4.ge_s
  iadd: [0xfd, ...uleb(174)],
  isub: [0xfd, ...uleb(177)],
  ishl: [0xfd, 0xab, 0x01], // i32x4.shl (lane-shift count from the i32 on the stack)
  imul: [0xfd, ...uleb(181)],
  truncSat: [0xfd, ...uleb(248)], // i32x4.trunc_sat_f32x4_s
  shuffle32: (lanes: number[]) => [0xfd, ...uleb(13), ...lanes.flatMap((l) => [4 * l, 4 * l + 1, 4 * l + 2, 4 * l + 3])],
  load64splat: (offset: number) => [0xfd, ...uleb(10), 2, ...uleb(offset)],
  store64lane: (offset: number, lane: number) => [0xfd, ...uleb(91), 2, ...uleb(offset), lane],
  f32splat: [0xfd, ...uleb(19)],
  bitselect: [0xfd, ...uleb(82)],
  f32const: (v: number) => {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    return [0x43, ...b];
  },
  f32sqrt: [0x91],
  f32max: [0x97],
  vstoreAt: (offset: number) => [0xfd, ...uleb(11), 0, ...uleb(offset)],
  narrow32to16u: [0xfd, ...uleb(134)], // i16x8.narrow_i32x4_u
  narrow16to8u: [0xfd, ...uleb(102)], // i8x16.narrow_i16x8_u
  fsplat: (v: number) => {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    return [0x43, ...b, 0xfd, ...uleb(19)]; // f32.const v; f32x4.splat
  },
};
export const code = (...parts: number[][]): number[] => parts.flat();

/** `for (v = from; v < limit; v += step) body` with limit in a local; label depth: body is inside block+loop. */
export function forLoop(v: number, from: number[], limitLocal: number, step: number, body: number[]): number[] {
  return code(
    from, op.set(v),
    op.block, op.loop,
    op.get(v), op.get(limitLocal), op.geS, op.brIf(1),
    body,
    op.get(v), op.i32(step), op.add, op.set(v),
    op.br(0),
    op.end, op.end,
  );
}


/** A function type: its parameters' and results' value types (I32, V128, 0x7c f64, ...). */
export const funcType = (params: number[], results: number[] = []): number[] => [0x60, ...vec(params.map((t) => [t])), ...vec(results.map((t) => [t]))];

/** `n` i32 parameters and at most one i32 result: the type of most kernels. */
export const i32Func = (n: number, result = false): number[] => funcType(Array.from({ length: n }, () => I32), result ? [I32] : []);

/** A module of functions over one imported memory (env.memory): [export name, function type, body]. */
export function assemble(funcs: Array<[string, number[], number[]]>): Uint8Array {
  const types = section(1, vec(funcs.map((f) => f[1])));
  const imports = section(2, vec([[...str('env'), ...str('memory'), 0x02, 0x00, ...uleb(1)]]));
  const fsec = section(3, vec(funcs.map((_, i) => uleb(i))));
  const exports = section(7, vec(funcs.map((f, i) => [...str(f[0]), 0x00, ...uleb(i)])));
  const codeSec = section(10, vec(funcs.map((f) => [...uleb(f[2].length), ...f[2]])));
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...types, ...imports, ...fsec, ...exports, ...codeSec]);
}
