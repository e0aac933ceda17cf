import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, lstatSync, mkdirSync, readdirSync, readlinkSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ToolError } from '@hands/contracts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { setPinning } from '../../src/handle/dir.ts'
import { chunkCounts, configurePool } from '../../src/tree/pool.ts'
import { NATIVE_HELPER } from '../helpers/native.ts'
import { hashTree, listTree, present } from '../helpers/tree.ts'
import { makeWorld, type World } from '../helpers/world.ts'

/** coreutils' mkfifo: Node cannot make a FIFO. */
const MKFIFO = 'mkfifo'
const DIRS = 30
const FILES_PER_DIR = 100

let w: World
beforeEach(() => {
  w = makeWorld()
})
afterEach(() => {
  configurePool({ workers: 2, sliceMs: 2, handOverMs: 2, copyByHelperMin: 256 })
  setPinning(true)
  w.cleanup()
})

/** Descriptors this process has open on anything under `dir`. */
function openUnder(dir: string): string[] {
  const found: string[] = []
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const at = readlinkSync(`/proc/self/fd/${fd}`)
      if (at === dir || at.startsWith(`${dir}/`)) found.push(at)
    } catch {
      // Closed while listing (the listing's own descriptor).
    }
  }
  return found
}

/**
 * A tree large enough to go to the worker threads: DIRS directories (some nested) of
 * FILES_PER_DIR small files with assorted modes, symlinks, empty files and directories, one file
 * larger than the chunks copy themselves and one sparse file.
 */
function bigTree(top: string): void {
  for (let d = 0; d < DIRS; d++) {
    const dir = join(top, d % 3 === 0 ? `nest/n${d}/d${d}` : `d${d}`)
    mkdirSync(dir, { recursive: true })
    for (let f = 0; f < FILES_PER_DIR; f++) {
      const file = join(dir, `f${f}`)
      writeFileSync(file, `${d}/${f}`.repeat(f % 7))
      if (f % 10 === 1) chmodSync(file, 0o600)
      if (f % 10 === 2) chmodSync(file, 0o755)
      if (f % 10 === 3) chmodSync(file, 0o4755)
    }
    symlinkSync(`f${d % FILES_PER_DIR}`, join(dir, 'link'))
    symlinkSync('../nowhere', join(dir, 'dangling'))
    mkdirSync(join(dir, 'empty'))
  }
  writeFileSync(join(top, 'd1/large'), Buffer.alloc(3 * 1024 * 1024, 1))
  writeFileSync(join(top, 'd2/sparse'), 'head')
  truncateSync(join(top, 'd2/sparse'), 64 * 1024 * 1024)
}

/** Every entry's kind, content or link text, and mode bits. */
function describeTree(top: string): Record<string, string> {
  const listed = listTree(top)
  return Object.fromEntries(Object.entries(listed).map(([rel, what]) => [rel, `${what.slice(0, 64)} ${lstatSync(join(top, rel)).mode.toString(8)}`]))
}

describe.each([
  ['on worker threads', { workers: 2, sliceMs: 0 }, 'workers'],
  ['on the main thread', { workers: 0 }, 'here'],
  ['by the native helper', { workers: 0, handOverMs: 0, copyByHelperMin: 0 }, 'helpers'],
] as const)('tree work %s', (_where, pool, doer) => {
  /** Set by a test that turns pinning off: path handles go to no helper. */
  let isUnpinned = false
  beforeEach((ctx) => {
    isUnpinned = false
    if (doer === 'helpers') {
      if (NATIVE_HELPER === null) return ctx.skip()
      w.cleanup()
      w = makeWorld({ helper: NATIVE_HELPER })
    }
    configurePool(pool)
    chunkCounts.here = 0
    chunkCounts.workers = 0
    chunkCounts.helpers = 0
  })
  // Each test's tree work went where this block says (with path handles there is no helper).
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'skip') return
    if (doer === 'helpers' && isUnpinned) expect(chunkCounts.helpers).toBe(0)
    else expect(chunkCounts[doer]).toBeGreaterThan(0)
    if (doer !== 'helpers') expect(chunkCounts[doer === 'here' ? 'workers' : 'here']).toBe(0)
    expect(chunkCounts.workers).toBe(doer === 'workers' ? chunkCounts.workers : 0)
  })

  it('copies a tree of 3,000 files entry for entry (content, modes, links) and deletes it, leaving no descriptor open', async () => {
    bigTree(join(w.root, 'src'))
    await w.fs.copy({ src: 'src', dest: 'dest' })
    expect(describeTree(join(w.root, 'dest'))).toEqual(describeTree(join(w.root, 'src')))
    expect(statSync(join(w.root, 'dest/d2/sparse')).blocks * 512).toBeLessThan(1024 * 1024)
    expect(openUnder(w.base)).toEqual([])
    await w.fs.delete({ paths: ['dest'] })
    expect(present(join(w.root, 'dest'))).toBe(false)
    expect(openUnder(w.base)).toEqual([])
  }, 120_000)

  it('copies and deletes such a tree through path handles too (no /proc pinning)', async () => {
    bigTree(join(w.root, 'src'))
    setPinning(false)
    isUnpinned = true
    await w.fs.copy({ src: 'src', dest: 'dest' })
    expect(describeTree(join(w.root, 'dest'))).toEqual(describeTree(join(w.root, 'src')))
    await w.fs.delete({ paths: ['dest', 'src'] })
    expect(listTree(w.root)).toEqual({})
  }, 120_000)

  it('stops a tree copy at a file that changed kind after the listing, removes the partial copy and keeps dest', async () => {
    bigTree(join(w.root, 'src'))
    mkdirSync(join(w.root, 'dest'))
    writeFileSync(join(w.root, 'dest/old'), 'the old dest')
    const fs = w.with({
      // Asked after the source was listed and checked: turn a listed file into a FIFO.
      confirm: () => {
        rmSync(join(w.root, 'src/d29/f50'))
        execFileSync(MKFIFO, [join(w.root, 'src/d29/f50')])
        return true
      },
    })
    const e = await fs.copy({ src: 'src', dest: 'dest', is_overwrite: true }).catch((x: unknown) => x)
    expect(e).toBeInstanceOf(ToolError)
    expect((e as ToolError).code, (e as ToolError).message).toBe('io_error')
    expect((e as ToolError).is_preflight).toBe(false)
    expect(listTree(join(w.root, 'dest'))).toEqual({ old: 'file:the old dest' })
    expect(readdirSync(w.root).filter((n) => n.includes('hands-'))).toEqual([])
    expect(openUnder(w.base)).toEqual([])
  }, 120_000)

  it('deletes a tree while entries are swapped (a file for a directory, a directory for a file) as it goes', async () => {
    bigTree(join(w.root, 'doomed'))
    const fs = w.with({
      confirm: () => {
        rmSync(join(w.root, 'doomed/d4/f9'))
        mkdirSync(join(w.root, 'doomed/d4/f9/inner'), { recursive: true })
        writeFileSync(join(w.root, 'doomed/d4/f9/inner/x'), 'x')
        rmSync(join(w.root, 'doomed/d5'), { recursive: true })
        writeFileSync(join(w.root, 'doomed/d5'), 'now a file')
        return true
      },
    })
    const before = w.sentinel()
    await fs.delete({ paths: ['doomed'] })
    expect(present(join(w.root, 'doomed'))).toBe(false)
    expect(w.sentinel()).toBe(before)
  }, 120_000)
})

describe('tree pool lifetime', () => {
  it('lets a process that copied and deleted a large tree on worker threads exit on its own', () => {
    const script = fileURLToPath(new URL('../fixtures/copy-and-exit.ts', import.meta.url))
    bigTree(join(w.root, 'src'))
    const r = spawnSync(process.execPath, ['--conditions=hands-source', '--import', 'tsx', script, w.root], { encoding: 'utf8', timeout: 120_000 })
    expect(r.error, 'the process did not exit by itself').toBeUndefined()
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain('copied and deleted')
    expect(hashTree(join(w.root, 'copy'))).toBe(hashTree(join(w.root, 'src')))
  }, 180_000)
})
