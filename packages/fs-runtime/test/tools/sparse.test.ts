import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statfsSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createFsRuntime } from '../../src/index.ts'
import { setPinning } from '../../src/handle/dir.ts'
import { setDirectReads } from '../../src/tree/sparse.ts'
import { otherDevice, present } from '../helpers/tree.ts'
import { makeWorld, type World } from '../helpers/world.ts'

const MiB = 1024 * 1024
const GiB = 1024 * MiB
/** Allocation the copy may have beyond the source's: block rounding and extent metadata. */
const SLACK_BYTES = 64 * 1024

let w: World
beforeEach(() => {
  w = makeWorld()
})
afterEach(() => w.cleanup())

/** Bytes allocated to a file on disk (`st_blocks` × 512, what `du` counts). */
function allocated(path: string): number {
  return statSync(path).blocks * 512
}

/** A file of `size` bytes that is all hole, allocating nothing (as `truncate -s` makes it). */
function holeFile(path: string, size: number): void {
  writeFileSync(path, '')
  truncateSync(path, size)
}

/**
 * Data islands inside holes: random bytes at the start, across a 1 MiB boundary, a larger
 * island spanning several MiB, one at an unaligned offset, explicit zeros written in the
 * middle of data, and a few bytes at the very end (the size is not block-aligned).
 */
function islandFile(path: string, size: number): void {
  holeFile(path, size)
  const fd = openSync(path, 'r+')
  try {
    const at = (offset: number, bytes: Buffer) => writeSync(fd, bytes, 0, bytes.length, offset)
    at(0, randomBytes(100))
    at(MiB - 10, randomBytes(30))
    at(5 * MiB, randomBytes(3 * MiB))
    at(6 * MiB, Buffer.alloc(64 * 1024))
    at(20 * MiB + 3 * 4096 + 17, randomBytes(5000))
    at(size - 50, randomBytes(50))
  } finally {
    closeSync(fd)
  }
}

/** True when both files hold the same bytes, read in chunks (never whole in memory). */
function sameBytes(a: string, b: string): boolean {
  const fa = openSync(a, 'r')
  const fb = openSync(b, 'r')
  try {
    if (fstatSync(fa).size !== fstatSync(fb).size) return false
    const ba = Buffer.alloc(4 * MiB)
    const bb = Buffer.alloc(4 * MiB)
    for (;;) {
      const na = readSync(fa, ba, 0, ba.length, null)
      const nb = readSync(fb, bb, 0, bb.length, null)
      if (na !== nb) return false
      if (na === 0) return true
      if (!ba.subarray(0, na).equals(bb.subarray(0, nb))) return false
    }
  } finally {
    closeSync(fa)
    closeSync(fb)
  }
}

/** The source keeps holes on this filesystem (else a sparse test says nothing). */
function keepsHoles(path: string): boolean {
  return allocated(path) < statSync(path).size
}

/** Bytes this process has read through read(2) and friends so far (`rchar` of /proc/self/io). */
function bytesRead(): number {
  return Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))?.[1])
}

/** True on tmpfs and ext4, where st_blocks counts every block holding data. */
function countsBlocks(path: string): boolean {
  const type = statfsSync(path).type
  return type === 0x01021994 || type === 0xef53
}

function expectSparseCopy(src: string, dest: string): void {
  expect(statSync(dest).size).toBe(statSync(src).size)
  expect(sameBytes(src, dest), 'content differs').toBe(true)
  expect(allocated(dest), `copy allocates ${allocated(dest)} bytes, the source ${allocated(src)}`).toBeLessThanOrEqual(allocated(src) + SLACK_BYTES)
}

describe('sparse files', () => {
  it('copies a 1 GiB file that is all hole without allocating it', async () => {
    const src = join(w.root, 'hole')
    holeFile(src, GiB)
    if (!keepsHoles(src)) return
    const t0 = performance.now()
    await w.fs.copy({ src: 'hole', dest: 'hole-copy' })
    const ms = performance.now() - t0
    expectSparseCopy(src, join(w.root, 'hole-copy'))
    expect(allocated(join(w.root, 'hole-copy'))).toBeLessThanOrEqual(SLACK_BYTES)
    console.info(`sparse: 1 GiB hole copied in ${ms.toFixed(0)} ms, ${allocated(join(w.root, 'hole-copy'))} bytes allocated`)
  }, 240_000)

  it('copies data islands in holes byte for byte, allocating no more than the source', async () => {
    const src = join(w.root, 'islands')
    islandFile(src, 64 * MiB + 123)
    chmodSync(src, 0o640)
    if (!keepsHoles(src)) return
    await w.fs.copy({ src: 'islands', dest: 'islands-copy' })
    expectSparseCopy(src, join(w.root, 'islands-copy'))
    expect(statSync(join(w.root, 'islands-copy')).mode & 0o7777).toBe(0o640)
  }, 120_000)

  it('keeps the holes of a sparse file inside a copied tree', async () => {
    const src = join(w.root, 'tree/deep/islands')
    await w.fs.create_directory({ paths: ['tree/deep'] })
    islandFile(src, 32 * MiB + 1)
    writeFileSync(join(w.root, 'tree/dense'), randomBytes(100_000))
    if (!keepsHoles(src)) return
    await w.fs.copy({ src: 'tree', dest: 'tree-copy' })
    expectSparseCopy(src, join(w.root, 'tree-copy/deep/islands'))
    expect(sameBytes(join(w.root, 'tree/dense'), join(w.root, 'tree-copy/dense'))).toBe(true)
  }, 120_000)

  it('keeps holes when replacing an existing dest', async () => {
    const src = join(w.root, 'islands')
    islandFile(src, 24 * MiB)
    writeFileSync(join(w.root, 'old'), 'old')
    if (!keepsHoles(src)) return
    await w.fs.copy({ src: 'islands', dest: 'old', is_overwrite: true })
    expectSparseCopy(src, join(w.root, 'old'))
  }, 120_000)

  it('reads a sparse file only up to its last block of data where the kernel counts its blocks', async () => {
    const src = join(w.root, 'head')
    holeFile(src, GiB)
    const fd = openSync(src, 'r+')
    writeSync(fd, randomBytes(300 * 1024), 0, 300 * 1024, 4096 + 7)
    closeSync(fd)
    if (!keepsHoles(src) || !countsBlocks(src)) return
    const before = bytesRead()
    await w.fs.copy({ src: 'head', dest: 'head-copy' })
    const read = bytesRead() - before
    expectSparseCopy(src, join(w.root, 'head-copy'))
    // The data ends in the first MiB; the next chunk may be in flight when that is known.
    expect(read, `read ${read} bytes of a file with 300 KiB of data`).toBeLessThan(4 * MiB)
  }, 120_000)

  it('keeps the holes and the bytes of data islands on tmpfs', async () => {
    const other = otherDevice(w.base)
    if (other === null) return
    try {
      const src = join(other, 'islands')
      islandFile(src, 40 * MiB + 9)
      if (!keepsHoles(src)) return
      const fs = createFsRuntime({ roots: [other] })
      await fs.copy({ src: 'islands', dest: 'islands-copy' })
      await fs.copy({ src: 'islands', dest: 'tree/islands-copy' })
      expectSparseCopy(src, join(other, 'islands-copy'))
      expectSparseCopy(src, join(other, 'tree/islands-copy'))
    } finally {
      rmSync(other, { recursive: true, force: true })
    }
  }, 120_000)

  it('keeps holes when the holes are read through the page cache (no direct reads)', async () => {
    const src = join(w.root, 'islands')
    islandFile(src, 48 * MiB + 5)
    if (!keepsHoles(src)) return
    setDirectReads(false)
    try {
      await w.fs.copy({ src: 'islands', dest: 'islands-copy' })
    } finally {
      setDirectReads(true)
    }
    expectSparseCopy(src, join(w.root, 'islands-copy'))
  }, 120_000)

  it('keeps holes without /proc pinning (the path-handle fallback)', async () => {
    const src = join(w.root, 'islands')
    islandFile(src, 40 * MiB)
    if (!keepsHoles(src)) return
    setPinning(false)
    try {
      await w.fs.copy({ src: 'islands', dest: 'islands-copy' })
    } finally {
      setPinning(true)
    }
    expectSparseCopy(src, join(w.root, 'islands-copy'))
  }, 120_000)

  it('keeps holes when moving a sparse file across filesystems', async () => {
    const other = otherDevice(w.base)
    if (other === null) return
    try {
      const src = join(w.root, 'islands')
      islandFile(src, 256 * MiB + 7)
      if (!keepsHoles(src)) return
      const keep = join(w.base, 'islands.orig')
      // The reference the moved file is compared with, its holes kept by the system tool.
      execFileSync('cp', ['--sparse=always', src, keep])
      const fs = createFsRuntime({ roots: [w.root, other] })
      await fs.move({ src: 'islands', dest: join(other, 'islands') })
      expect(present(src)).toBe(false)
      expectSparseCopy(keep, join(other, 'islands'))
    } finally {
      rmSync(other, { recursive: true, force: true })
    }
  }, 240_000)
})
