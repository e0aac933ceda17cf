import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { copyFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Worker } from 'node:worker_threads'
import { ToolError } from '@hands/contracts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { resolveInside } from '../../src/index.ts'
import { chunkCounts, configurePool } from '../../src/tree/pool.ts'
import { makeTree } from '../helpers/tree.ts'
import { NATIVE_HELPER } from '../helpers/native.ts'
import { makeWorld, type World } from '../helpers/world.ts'

const ITERATIONS = 150

let w: World
beforeEach(() => {
  w = makeWorld()
})
afterEach(() => {
  configurePool({ workers: 2, sliceMs: 2, handOverMs: 2, copyByHelperMin: 256 })
  w.cleanup()
})

/** A sparse file in the sentinel tree at the name the swapped-in link offers for `work/sub/sparse`. */
const OUTSIDE_SPARSE = 'sparse ~2097152'
const SPARSE_SIZE = 2 * 1024 * 1024

/** Every file under `dir` whose content is one of the sentinel's (outside content read in). */
function leakedIn(dir: string): string[] {
  const found: string[] = []
  const visit = (p: string) => {
    for (const e of readdirSync(p, { withFileTypes: true })) {
      const full = join(p, e.name)
      if (e.isDirectory()) visit(full)
      else if (e.isFile()) {
        const content = readFileSync(full)
        if (['secret', 'dir/inner', 'dir/sub/deep'].includes(content.toString('utf8')) || content.subarray(0, 7).toString('latin1') === 'sparse\0')
          found.push(full)
      }
    }
  }
  visit(dir)
  return found
}

/**
 * Run `round(i)` for each iteration while a worker thread swaps ROOT/`swapped` (work/sub unless
 * given) for a symlink to the sentinel tree outside, and back, as fast as it can. Before each
 * round the swapper is paused and the tree rebuilt. Returns the number of swaps done.
 */
async function underSwapping(
  layout: readonly string[],
  iterations: number,
  round: (i: number) => Promise<boolean | void>,
  swapped = 'work/sub',
): Promise<number> {
  const work = join(w.root, 'work')
  const dir = join(w.root, swapped)
  // Aside and link wait in work/, outside a tree under work/ that a round copies whole.
  const aside = join(work, `${basename(dir)}.aside`)
  const link = join(work, `${basename(dir)}.link`)
  const shared = new SharedArrayBuffer(8)
  const control = new Int32Array(shared)
  Atomics.store(control, 0, 1)
  const worker = new Worker(new URL('../fixtures/swapper.mjs', import.meta.url), { workerData: { shared, dir, aside, link } })
  try {
    for (let i = 0; i < iterations; i++) {
      Atomics.store(control, 0, 1)
      while (Atomics.load(control, 0) !== 2) await sleep(1)
      rmSync(work, { recursive: true, force: true })
      makeTree(w.root, layout)
      symlinkSync(w.out, link)
      Atomics.store(control, 0, 0)
      Atomics.notify(control, 0)
      if ((await round(i)) === true) break
    }
  } finally {
    Atomics.store(control, 0, 3)
    Atomics.notify(control, 0)
    await worker.terminate()
  }
  return Atomics.load(control, 1)
}

/** Where the tree work runs in each case: the pool's settings, and the chunkCounts key that must grow. */
const MODES = [
  ['on the main thread', { workers: 0 }, 'here'],
  ['on worker threads', { workers: 2, sliceMs: 0 }, 'workers'],
  ['by the native helper', { workers: 0, handOverMs: 0, copyByHelperMin: 0 }, 'helpers'],
] as const

/** Set the pool up for one case, counts zeroed; false (and said) where the helper is not built. */
function workIn(pool: Parameters<typeof configurePool>[0], doer: keyof typeof chunkCounts): boolean {
  if (doer === 'helpers' && NATIVE_HELPER === null) {
    console.info('race: no native helper built here; its case is left out')
    return false
  }
  configurePool(pool)
  chunkCounts.here = 0
  chunkCounts.workers = 0
  chunkCounts.helpers = 0
  return true
}

describe('race: a directory swapped for a symlink to outside while tools run', () => {
  it.each(MODES)(
    `never creates, changes or removes anything outside the roots (${ITERATIONS} iterations of copy, move, delete, create_directory; tree work %s)`,
    async (_where, pool, doer) => {
      if (!workIn(pool, doer)) return
      makeTree(w.out, [OUTSIDE_SPARSE])
      const before = w.sentinel()
      const codes = new Map<string, number>()
      let done = 0
      const layout = [
        'work/sub/file',
        `work/sub/sparse ~${SPARSE_SIZE}`,
        'work/sub/d/x',
        'work/sub/d/y',
        'work/sub/e/z',
        'work/src-file',
        `work/src-sparse ~${SPARSE_SIZE}`,
        'work/src-dir/a',
        'work/src-dir/b/c',
      ]
      const swaps = await underSwapping(layout, ITERATIONS, async (i) => {
        const fs = doer === 'helpers' ? w.with({ helper: NATIVE_HELPER }) : w.fs
        const calls = [
          fs.copy({ src: 'work/sub', dest: `work/copy-${i}` }),
          fs.copy({ src: 'work/sub/d', dest: `work/copy-d-${i}` }),
          fs.copy({ src: 'work/sub/file', dest: `work/copy-f-${i}` }),
          fs.copy({ src: 'work/sub/sparse', dest: `work/copy-s-${i}` }),
          fs.copy({ src: 'work/src-sparse', dest: `work/sub/planted-s-${i}` }),
          fs.copy({ src: 'work/src-file', dest: `work/sub/planted-${i}` }),
          fs.copy({ src: 'work/src-dir', dest: `work/sub/planted-dir-${i}` }),
          fs.copy({ src: 'work/src-file', dest: 'work/sub/file', is_overwrite: true }),
          fs.move({ src: 'work/sub/file', dest: `work/moved-${i}` }),
          fs.move({ src: 'work/src-dir', dest: `work/sub/moved-in-${i}` }),
          fs.create_directory({ paths: [`work/sub/new-${i}/deeper`, `work/sub/d/new-${i}`] }),
          fs.delete({ paths: ['work/sub/d', 'work/sub/e/z'] }),
          fs.delete({ paths: ['work/sub'] }),
        ]
        for (const r of await Promise.allSettled(calls)) {
          if (r.status === 'fulfilled') {
            done++
            continue
          }
          expect(r.reason, String(r.reason)).toBeInstanceOf(ToolError)
          const code = (r.reason as ToolError).code
          codes.set(code, (codes.get(code) ?? 0) + 1)
        }
        expect(w.sentinel(), `iteration ${i} touched the outside`).toBe(before)
      })
      expect(w.sentinel()).toBe(before)
      expect(leakedIn(w.root), 'outside content was copied in').toEqual([])
      // The race was real: the swapper ran throughout, and calls both succeeded and were refused.
      expect(swaps).toBeGreaterThan(ITERATIONS)
      expect(done).toBeGreaterThan(0)
      expect([...codes.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(0)
      // The tree work ran where this case says.
      expect(chunkCounts[doer]).toBeGreaterThan(0)
      if (doer !== 'helpers') expect(chunkCounts[doer === 'here' ? 'workers' : 'here']).toBe(0)
      else expect(chunkCounts.workers).toBe(0)
      console.info(`race: ${ITERATIONS} iterations x 13 calls, ${swaps} swaps, ${done} calls done, refusals ${JSON.stringify(Object.fromEntries(codes))}`)
    },
    120_000,
  )

  it.each(MODES)(
    `a directory deep in a tree being copied or deleted, swapped for a symlink to outside, is never followed (${ITERATIONS} copies and deletes, done %s)`,
    async (_where, pool, doer) => {
      if (!workIn(pool, doer)) return
      const before = w.sentinel()
      const fs = w.with({ helper: doer === 'helpers' ? NATIVE_HELPER : null })
      let done = 0
      // `mid` holds the names the outside holds: a copy that followed the swapped-in link would
      // find them there and read outside content in.
      const layout = ['work/top/a', 'work/top/mid/secret', 'work/top/mid/dir/inner', 'work/top/mid/dir/sub/deep', 'work/top/b/c']
      const swaps = await underSwapping(
        layout,
        ITERATIONS,
        async (i) => {
          for (const call of [() => fs.copy({ src: 'work/top', dest: `work/copy-${i}` }), () => fs.delete({ paths: ['work/top'] })]) {
            const r = await call().catch((e: unknown) => e)
            if (!(r instanceof Error)) done++
            else expect(r, String(r)).toBeInstanceOf(ToolError)
          }
          expect(w.sentinel(), `iteration ${i} touched the outside`).toBe(before)
          // The copy is not under the swapped directory: it can be walked while the swapper runs.
          const copy = join(w.root, `work/copy-${i}`)
          if (existsSync(copy)) expect(leakedIn(copy), `iteration ${i} copied outside content in`).toEqual([])
        },
        'work/top/mid',
      )
      expect(w.sentinel()).toBe(before)
      expect(swaps).toBeGreaterThan(ITERATIONS)
      expect(done).toBeGreaterThan(0)
      expect(chunkCounts[doer]).toBeGreaterThan(0)
    },
    120_000,
  )

  it('catches a naive check-then-act copy (the control: this harness can fail)', async () => {
    const before = w.sentinel()
    let hitAt = -1
    await underSwapping(['work/sub/file', 'work/src-file'], ITERATIONS, async (i) => {
      // Check with resolveInside, then act on the checked real path: the classic TOCTOU.
      await Promise.allSettled(
        [0, 1, 2, 3, 4].map(async (k) => copyFile(join(w.root, 'work/src-file'), await resolveInside([w.root], `work/sub/planted-${i}-${k}`))),
      )
      if (w.sentinel() !== before) {
        hitAt = i
        return true
      }
    })
    expect(hitAt, 'the naive copy never wrote outside: the race harness is too weak').toBeGreaterThanOrEqual(0)
  }, 240_000)
})
