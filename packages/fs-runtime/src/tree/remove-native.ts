import { spawn } from 'node:child_process'
import { availableParallelism } from 'node:os'
import type { Readable, Writable } from 'node:stream'
import { getSystemErrorMap } from 'node:util'
import { errno } from '../util/fsio.ts'
import { closeRef, listSync, openChildSync, realOf, rmdirAt, type DirRef } from '../sync/api.ts'
import { chunkCounts } from './pool.ts'

/**
 * Tree removal by the native helper (`hands-confine --remove-tree`, built with
 * @hands/shell-runtime): Node has no unlinkat, so the walk of remove.ts reaches each entry as
 * `/proc/self/fd/N/name` through a Node call, about three times the CPU per entry of `rm -rf`;
 * the helper removes entries with unlinkat on descriptors it opened itself with O_NOFOLLOW
 * from the pinned directory, the same guarantee at rm's cost. Several run side by side, each on
 * a share of the top directory's entries.
 */

/** Helper processes on one tree at most (and never more than the cores). */
const MAX_HELPERS = 4

/** A helper's outcome: done, failed with an error, or could not run here at all. */
type Outcome = { ok: true } | { ok: false; error: Error } | { ok: false; error: null }

interface Running {
  outcome: Promise<Outcome>
  stop(): void
}

/**
 * The error the helper reported ("ERRNO SYSCALL PATH", PATH relative to `top`), shaped as Node's
 * own filesystem errors so the tools explain it the same way.
 */
function reported(line: string, top: DirRef): Error {
  const m = /^(\d+) (\w+) ([^]*)$/.exec(line)
  if (m === null) return new Error(`the tree helper failed: ${line}`)
  const n = Number(m[1])
  const [code, text] = getSystemErrorMap().get(-n) ?? [`E${n}`, `error ${n}`]
  const path = m[3] === '' ? top.real : realOf(top, m[3] as string)
  return Object.assign(new Error(`${code}: ${text}, ${m[2]} '${path}'`), { errno: -n, code, syscall: m[2], path })
}

/** Start one helper removing `names` of the pinned `top`. */
function start(helper: string, top: DirRef, names: string[]): Running {
  chunkCounts.helpers++
  const child = spawn(helper, ['--remove-tree', '3'], { stdio: ['pipe', 'pipe', 'pipe', top.fd as number], env: {} })
  const [stdin, stdout, stderr] = [child.stdin, child.stdout, child.stderr] as [Writable, Readable, Readable]
  let out = ''
  let err = ''
  stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
  stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
  // A helper that stops early closes its stdin; that is reported by its exit, not here.
  stdin.on('error', () => undefined)
  stdin.end(Buffer.from(names.map((n) => `${n}\0`).join('')))
  const outcome = new Promise<Outcome>((resolve) => {
    child.on('error', () => resolve({ ok: false, error: null }))
    child.on('close', (code, signal) => {
      if (code === 0) resolve({ ok: true })
      else if (code === 1 && out !== '') resolve({ ok: false, error: reported(out.replace(/\n$/, ''), top) })
      else
        resolve({
          ok: false,
          error: new Error(`the tree helper ${signal !== null ? `was ended by ${signal}` : `exited ${code}`}${err.trim() ? `: ${err.trim()}` : ''}`),
        })
    })
  })
  return { outcome, stop: () => child.kill('SIGKILL') }
}

/** The entries split into one share per helper: directories dealt in turn, the rest in runs. */
function shares(dirs: string[], others: string[]): string[][] {
  const k = Math.max(1, Math.min(MAX_HELPERS, availableParallelism(), dirs.length + others.length))
  const out: string[][] = Array.from({ length: k }, () => [])
  dirs.forEach((d, i) => (out[i % k] as string[]).push(d))
  const run = Math.ceil(others.length / k)
  for (let i = 0; i < k; i++) (out[i] as string[]).push(...others.slice(i * run, (i + 1) * run))
  return out.filter((s) => s.length > 0)
}

/**
 * Remove the directory `name` of the pinned `dir` with everything under it through `helper`:
 * its entries shared among the helpers, then the emptied directory removed by name (emptied
 * again if it refilled, a few times at most). Resolves false when the helper cannot run here or
 * `name` is no longer a directory, leaving the rest to the walk; the first failure stops every
 * helper and rejects with an errno-style error naming the entry.
 */
export async function removeByHelper(helper: string, dir: DirRef, name: string): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    let top: DirRef
    try {
      top = openChildSync(dir, name)
    } catch (cause) {
      const code = errno(cause)
      if (code === 'ENOENT') return true
      if (code === 'ENOTDIR' || code === 'ELOOP') return false
      throw cause
    }
    try {
      const { dirs, others } = listSync(top)
      const running = shares(dirs, others).map((names) => start(helper, top, names))
      // The first failure stops the others, so nothing goes on being removed after the call failed.
      let first: Outcome | null = null
      const watched = running.map((r) =>
        r.outcome.then((o) => {
          if (o.ok || first !== null) return
          first = o
          for (const x of running) x.stop()
        }),
      )
      await Promise.all(watched)
      const failure = first as Outcome | null
      if (failure !== null && !failure.ok) {
        if (failure.error === null) return false
        throw failure.error
      }
    } finally {
      closeRef(top)
    }
    try {
      rmdirAt(dir, name)
      return true
    } catch (cause) {
      const code = errno(cause)
      if (code === 'ENOENT') return true
      if (code === 'ENOTEMPTY' && attempt < 3) continue
      if (code === 'ENOTDIR') return false
      throw cause
    }
  }
}
