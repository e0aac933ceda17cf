import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { ToolError } from '@hands/contracts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { chunkCounts, configurePool } from '../../src/tree/pool.ts'
import { NATIVE_HELPER } from '../helpers/native.ts'
import { makeTree } from '../helpers/tree.ts'
import { makeWorld, type World } from '../helpers/world.ts'

let w: World
beforeEach(() => {
  w = makeWorld()
  // Every tree goes to the helper at once, however small.
  configurePool({ handOverMs: 0 })
  chunkCounts.helpers = 0
})
afterEach(() => {
  configurePool({ handOverMs: 2 })
  w.cleanup()
})

/** Child processes of this process still running the helper. */
function helpersAlive(): number[] {
  const alive: number[] = []
  for (const task of readdirSync('/proc/self/task')) {
    const children = readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim()
    for (const pid of children === '' ? [] : children.split(' ')) {
      try {
        if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'hands-confine') alive.push(Number(pid))
      } catch {
        // Gone meanwhile.
      }
    }
  }
  return alive
}

describe.skipIf(NATIVE_HELPER === null)('delete through the native helper', () => {
  it('removes a wide and deep tree with every kind of entry, and nothing outside the roots', async () => {
    const lines: string[] = []
    for (let d = 0; d < 12; d++) for (let f = 0; f < 40; f++) lines.push(`big/d${d}/f${f}`)
    // 300 levels deep, a symlink to a directory outside, one to a file outside, a link back in.
    lines.push(`big/${Array.from({ length: 300 }, (_, i) => `n${i}`).join('/')}/leaf`)
    lines.push('big/d3/out-dir => $OUT/dir', 'big/d4/out-file => $OUT/secret', 'big/d5/in => ../d6', 'big/top-link => $OUT')
    makeTree(w.root, lines, { OUT: w.out })
    const big = join(w.root, 'big')
    // A FIFO, a hard link to a file outside, entries without permissions, names that are not UTF-8.
    spawnSync('mkfifo', [join(big, 'd7', 'fifo')])
    linkSync(join(w.out, 'dir', 'inner'), join(big, 'd8', 'hard'))
    mkdirSync(join(big, 'locked'))
    writeFileSync(join(big, 'locked', 'x'), 'x')
    chmodSync(join(big, 'locked'), 0o500)
    chmodSync(join(big, 'd9', 'f1'), 0)
    const odd = Buffer.from([0xff, 0xfe, 0x41])
    writeFileSync(Buffer.concat([Buffer.from(`${big}/`), odd]), 'x')
    mkdirSync(Buffer.concat([Buffer.from(`${big}/d10/`), odd]))
    writeFileSync(Buffer.concat([Buffer.from(`${big}/d10/`), odd, Buffer.from('/'), odd]), 'x')
    const before = w.sentinel()

    const result = await w.with({ helper: NATIVE_HELPER }).delete({ paths: ['big'] })

    expect(result.paths).toEqual([{ path: 'big', is_deleted: true }])
    expect(existsSync(big)).toBe(false)
    expect(readdirSync(w.root)).toEqual([])
    expect(w.sentinel()).toBe(before)
    expect(readFileSync(join(w.out, 'dir', 'inner'), 'utf8')).toBe('dir/inner')
    // The work was shared among one helper per core (up to 4), and none is left running.
    expect(chunkCounts.helpers).toBe(Math.min(4, availableParallelism()))
    expect(helpersAlive()).toEqual([])
  })

  it('a failure inside the tree stops the removal and names the entry, as the walk does', async (ctx) => {
    if (process.getuid?.() !== 0) return ctx.skip()
    const failures: string[] = []
    for (const helper of [NATIVE_HELPER, null]) {
      makeTree(w.root, ['big/a/f', 'big/b/f', 'big/c/m/', 'big/d/f'])
      const mount = join(w.root, 'big', 'c', 'm')
      // A read-only filesystem mounted inside the tree: its mount point cannot be removed (EBUSY).
      if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'hands-test', mount]).status !== 0) return ctx.skip()
      try {
        const error = await w
          .with({ helper })
          .delete({ paths: ['big'] })
          .then(
            () => null,
            (e: unknown) => e,
          )
        expect(error).toBeInstanceOf(ToolError)
        const e = error as ToolError
        expect(e.code).toBe('io_error')
        expect(e.is_preflight).toBe(false)
        expect(e.message).toContain(`EBUSY in rmdir: resource busy or locked`)
        expect(e.message).toContain('Part of')
        failures.push(e.message)
      } finally {
        spawnSync('umount', [mount])
      }
      expect(existsSync(mount)).toBe(true)
      expect(helpersAlive()).toEqual([])
      await w.fs.delete({ paths: ['big'] })
    }
    // The helper names the same entry in the same words as the walk.
    expect(failures[0]).toBe(failures[1])
    expect(chunkCounts.helpers).toBeGreaterThan(0)
  })

  it('falls back to the walk where the helper cannot run', async () => {
    makeTree(w.root, ['big/a/f', 'big/b/c/d', 'big/e'])
    const notRunnable = join(w.base, 'not-a-helper')
    writeFileSync(notRunnable, 'not a program')
    const result = await w.with({ helper: notRunnable }).delete({ paths: ['big'] })
    expect(result.paths).toEqual([{ path: 'big', is_deleted: true }])
    expect(existsSync(join(w.root, 'big'))).toBe(false)
    expect(chunkCounts.helpers).toBeGreaterThan(0)
  })
})
