/**
 * The plain-bytes check's fast path, in WebAssembly SIMD: 16 bytes per step instead of 4 in
 * JavaScript, so the check over a fast printer's output costs a fraction of what it did. It
 * answers only the common case: a chunk holding no byte the plain check must look closer at
 * (controls other than BEL, BS, TAB, LF and CR; DEL; the lead byte 0xC2), for which it gives
 * the offsets of the line feeds and whether a tab was seen. Any other chunk (escape sequences,
 * C2, bytes past MAX_BYTES) is left to the scan in JavaScript, which decides it exactly as before.
 *
 * The module is assembled here from its instructions (there is no toolchain at build time); a
 * test holds its answers against the JavaScript scan on random and edge-case bytes. Where
 * WebAssembly SIMD is unavailable (`--jitless`, an old engine), `simdScanner()` returns null.
 */

/** The largest chunk the fast path takes: node-pty reads at most 64 KiB at a time. */
export const MAX_BYTES = 64 * 1024
/** Where the line-feed offsets start in the module's memory: after the input and 16 bytes of padding. */
const OUT = MAX_BYTES + 64
/** Pages of 64 KiB: the input, its padding and one 32-bit offset per input byte. */
const PAGES = Math.ceil((OUT + 4 * MAX_BYTES) / 65536)
/** Bit of the result set when a tab was seen. */
export const TAB_BIT = 1 << 30

/** The fast path: `scan(bytes)` returns -1 when `bytes` need the JavaScript scan, else the count of line feeds (| TAB_BIT when a tab was seen); their offsets are `feeds[0..count)`. */
export interface SimdScanner {
  scan(bytes: Uint8Array): number
  /** The line-feed offsets of the last successful scan (a view of the module's memory; valid until the next scan). */
  readonly feeds: Int32Array
}

// Opcodes (WebAssembly core 2.0).
const BLOCK = 0x02
const LOOP = 0x03
const IF = 0x04
const ELSE = 0x05
const END = 0x0b
const BR = 0x0c
const BR_IF = 0x0d
const VOID = 0x40
const I32 = 0x7f
const V128 = 0x7b
const LOCAL_GET = 0x20
const LOCAL_SET = 0x21
const LOCAL_TEE = 0x22
const I32_STORE = 0x36
const I32_CONST = 0x41
const I32_EQZ = 0x45
const I32_GE_U = 0x4f
const I32_CTZ = 0x68
const I32_ADD = 0x6a
const I32_SUB = 0x6b
const I32_AND = 0x71
const I32_OR = 0x72
const I32_SHL = 0x74
const MEMORY_FILL = [0xfc, 0x0b, 0x00]
const SIMD = 0xfd
const V128_LOAD = [SIMD, 0x00]
const V128_CONST = [SIMD, 0x0c]
const I8X16_EQ = [SIMD, 0x23]
const I8X16_LT_U = [SIMD, 0x26]
const I8X16_GT_U = [SIMD, 0x28]
const V128_ANDNOT = [SIMD, 0x4f]
const V128_OR = [SIMD, 0x50]
const V128_ANY_TRUE = [SIMD, 0x53]
const I8X16_BITMASK = [SIMD, 0x64]
const I8X16_SUB = [SIMD, 0x71]

/** Unsigned LEB128. */
function uleb(n: number): number[] {
  const out: number[] = []
  do {
    let b = n & 0x7f
    n >>>= 7
    if (n !== 0) b |= 0x80
    out.push(b)
  } while (n !== 0)
  return out
}

/** A section: its id, then its contents prefixed by their length. */
function section(id: number, body: number[]): number[] {
  return [id, ...uleb(body.length), ...body]
}

/** A 16-byte vector of `byte` in every lane. */
const splat = (byte: number) => [...V128_CONST, ...new Array<number>(16).fill(byte)]

// Locals: 0 len (the parameter), 1 i, 2 mask, 3 count; 4 v, 5 rare, 6 tabs.
const [LEN, I, MASK, COUNT, V, RARE, TABS] = [0, 1, 2, 3, 4, 5, 6]

/**
 * scan(len): bytes [0, len) of memory. Pads them with 16 spaces, then for each 16 bytes: when any
 * lies outside printable ASCII, notes the rare ones (a control but BEL…LF and CR, DEL, 0xC2),
 * the tabs, and stores the offset of each line feed at OUT + 4 × count. Returns -1 when a rare
 * byte was seen, else count | TAB_BIT when a tab was.
 */
const body = [
  ...[LOCAL_GET, LEN, I32_CONST, 0x20, I32_CONST, 16, ...MEMORY_FILL],
  ...[BLOCK, VOID, LOOP, VOID],
  ...[LOCAL_GET, I, LOCAL_GET, LEN, I32_GE_U, BR_IF, 1],
  ...[LOCAL_GET, I, ...V128_LOAD, 4, 0, LOCAL_TEE, V],
  // Anything outside 0x20–0x7E in these 16 bytes?
  ...[...splat(0x20), ...I8X16_LT_U, LOCAL_GET, V, ...splat(0x7e), ...I8X16_GT_U, ...V128_OR, ...V128_ANY_TRUE],
  ...[IF, VOID],
  // rare |= (v < 0x20 and not (v - 7 < 4 or v == CR)) or v == DEL or v == 0xC2
  ...[LOCAL_GET, RARE],
  ...[LOCAL_GET, V, ...splat(0x20), ...I8X16_LT_U],
  ...[LOCAL_GET, V, ...splat(7), ...I8X16_SUB, ...splat(4), ...I8X16_LT_U],
  ...[LOCAL_GET, V, ...splat(0x0d), ...I8X16_EQ, ...V128_OR, ...V128_ANDNOT],
  ...[LOCAL_GET, V, ...splat(0x7f), ...I8X16_EQ, ...V128_OR],
  ...[LOCAL_GET, V, ...splat(0xc2), ...I8X16_EQ, ...V128_OR, ...V128_OR, LOCAL_SET, RARE],
  // tabs |= v == TAB
  ...[LOCAL_GET, TABS, LOCAL_GET, V, ...splat(0x09), ...I8X16_EQ, ...V128_OR, LOCAL_SET, TABS],
  // Each line feed: out[count++] = i + its lane.
  ...[LOCAL_GET, V, ...splat(0x0a), ...I8X16_EQ, ...I8X16_BITMASK, LOCAL_SET, MASK],
  ...[BLOCK, VOID, LOOP, VOID],
  ...[LOCAL_GET, MASK, I32_EQZ, BR_IF, 1],
  ...[LOCAL_GET, COUNT, I32_CONST, 2, I32_SHL, LOCAL_GET, I, LOCAL_GET, MASK, I32_CTZ, I32_ADD, I32_STORE, 2, ...uleb(OUT)],
  ...[LOCAL_GET, COUNT, I32_CONST, 1, I32_ADD, LOCAL_SET, COUNT],
  ...[LOCAL_GET, MASK, LOCAL_GET, MASK, I32_CONST, 1, I32_SUB, I32_AND, LOCAL_SET, MASK],
  ...[BR, 0, END, END],
  END,
  ...[LOCAL_GET, I, I32_CONST, 16, I32_ADD, LOCAL_SET, I, BR, 0],
  ...[END, END],
  ...[LOCAL_GET, RARE, ...V128_ANY_TRUE, IF, I32, I32_CONST, 0x7f, ELSE],
  ...[LOCAL_GET, COUNT, LOCAL_GET, TABS, ...V128_ANY_TRUE, I32_CONST, 30, I32_SHL, I32_OR, END],
  END,
]
/** Locals after the parameter: 3 × i32, 3 × v128. */
const code = [...[2, 3, I32, 3, V128], ...body]

const MODULE = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  // (func (param i32) (result i32))
  ...section(1, [1, 0x60, 1, I32, 1, I32]),
  ...section(3, [1, 0]),
  // (memory PAGES)
  ...section(5, [1, 0x00, ...uleb(PAGES)]),
  // (export "scan" (func 0)) (export "memory" (memory 0))
  ...section(7, [2, 4, ...Buffer.from('scan'), 0x00, 0, 6, ...Buffer.from('memory'), 0x02, 0]),
  ...section(10, [1, ...uleb(code.length), ...code]),
])

/** The part of the WebAssembly API used here (the package's TypeScript libraries do not declare it). */
interface WebAssemblyApi {
  validate(bytes: Uint8Array): boolean
  Module: new (bytes: Uint8Array) => object
  Instance: new (module: object) => { exports: Record<string, unknown> }
}

let scanner: SimdScanner | null | undefined

/** The fast path, compiled on first use; null where WebAssembly SIMD is not available. */
export function simdScanner(): SimdScanner | null {
  if (scanner !== undefined) return scanner
  scanner = null
  try {
    const wasm = (globalThis as { WebAssembly?: WebAssemblyApi }).WebAssembly
    if (wasm === undefined || !wasm.validate(MODULE)) return null
    const { exports } = new wasm.Instance(new wasm.Module(MODULE))
    const memory = exports['memory'] as { buffer: ArrayBuffer }
    const run = exports['scan'] as (len: number) => number
    const input = new Uint8Array(memory.buffer, 0, MAX_BYTES)
    const feeds = new Int32Array(memory.buffer, OUT, MAX_BYTES)
    scanner = {
      feeds,
      scan(bytes: Uint8Array): number {
        if (bytes.length > MAX_BYTES) return -1
        input.set(bytes)
        return run(bytes.length)
      },
    }
  } catch {
    scanner = null
  }
  return scanner
}
