import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MAX_BYTES, simdScanner, TAB_BIT } from '../src/screen/simd-scan.ts'
import { everyChunk } from './helpers.ts'

/** What the fast path must answer, byte by byte: null when a byte needs the closer look, else the line feeds and whether a tab was seen. */
function reference(b: Uint8Array): { feeds: number[]; tab: boolean } | null {
  const feeds: number[] = []
  let tab = false
  for (let i = 0; i < b.length; i++) {
    const c = b[i] as number
    if ((c < 0x20 && c !== 0x07 && c !== 0x08 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || c === 0x7f || c === 0xc2) return null
    if (c === 0x0a) feeds.push(i)
    if (c === 0x09) tab = true
  }
  return { feeds, tab }
}

function answer(b: Uint8Array): { feeds: number[]; tab: boolean } | null {
  const scanner = simdScanner()
  if (scanner === null) throw new Error('no SIMD scanner')
  const found = scanner.scan(b)
  if (found < 0) return null
  const count = found & ~TAB_BIT
  return { feeds: [...scanner.feeds.subarray(0, count)], tab: (found & TAB_BIT) !== 0 }
}

describe('the SIMD plain-bytes scan', () => {
  it('is available on this Node (so the property tests of the screen run through it)', () => {
    expect(simdScanner()).not.toBeNull()
  })

  it('agrees with the byte-by-byte rule on any bytes, any length, any alignment', () => {
    const byte = fc.oneof(
      { arbitrary: fc.integer({ min: 0x20, max: 0x7e }), weight: 40 },
      { arbitrary: fc.constantFrom(0x07, 0x08, 0x09, 0x0a, 0x0d, 0x80, 0xa0, 0xc3, 0xe2, 0xff), weight: 4 },
      { arbitrary: fc.integer({ min: 0, max: 255 }), weight: 1 },
    )
    everyChunk(byte, 700, 15, (chunk) => expect(answer(chunk)).toEqual(reference(chunk)))
  })

  it('finds each rare byte in every lane, and takes every allowed one', () => {
    for (let c = 0; c < 256; c++) {
      for (const at of [0, 1, 7, 14, 15, 16, 17, 31, 32, 47]) {
        const b = Buffer.alloc(48, 'x')
        b[at] = c
        expect(answer(b), `byte ${c} at ${at}`).toEqual(reference(b))
      }
    }
  })

  it('reads no byte past the chunk, though it reads 16 at a time', () => {
    const scanner = simdScanner()
    // A long chunk full of rare bytes, then a short clean one over it: the rest of the first must not count.
    scanner?.scan(Buffer.alloc(1000, 0x1b))
    expect(answer(Buffer.from('ab\r\ncd'))).toEqual({ feeds: [3], tab: false })
    expect(answer(Buffer.alloc(0))).toEqual({ feeds: [], tab: false })
  })

  it('gives line feeds up to its limit, and leaves larger chunks to the JavaScript scan', () => {
    const full = Buffer.alloc(MAX_BYTES, 0x0a)
    expect(answer(full)?.feeds.length).toBe(MAX_BYTES)
    expect(answer(full)?.feeds.at(-1)).toBe(MAX_BYTES - 1)
    expect(answer(Buffer.alloc(MAX_BYTES + 1, 'x'))).toBeNull()
  })
})
