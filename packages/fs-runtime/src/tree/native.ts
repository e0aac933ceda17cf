import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import type { Readable, Writable } from 'node:stream'
import { getSystemErrorMap } from 'node:util'
import { errno } from '../util/fsio.ts'
import { closeRef, openChildSync, realOf, rmdirAt, selfAt, type DirRef } from '../sync/api.ts'
import type { TreeEntry } from './list.ts'
import { chunkCounts, treeHelpers } from './pool.ts'

/**
 * Tree work by the native helper (`hands-confine --remove-tree` / `--copy-tree`, built with
 * @hands/sandbox). Node has no *at calls, so the walks of remove.ts and copy.ts reach
 * each entry as `/proc/self/fd/N/name` through a Node call, two to three times the CPU per
 * entry of rm and cp; the helper opens, creates and unlinks with *at calls on descriptors it
 * opened itself with O_NOFOLLOW from the pinned directories (the same guarantee) at their
 * cost. Several run side by side, each on a share of the top directory's entries.
 */

/** A helper's outcome: done, failed with its report, or could not run here at all. */
type Outcome = { ok: true } | { ok: false; report: string | null; error: Error | null }

interface Running {
  outcome: Promise<Outcome>
  stop(): void
}

/**
 * The error of a helper's report ("ERRNO SYSCALL PATH", PATH relative to `top`), shaped as
 * Node's own filesystem errors so the tools explain it the same way; ERRNO 0 "changed" is a
 * source a copy found no longer a regular file (`changed`).
 */
function reported(line: string, top: DirRef, changed?: (real: string) => Error): Error {
  const m = /^(\d+) (\w+) (.*)$/s.exec(line)
  if (m === null) return new Error(`the tree helper failed: ${line}`)
  const path = m[3] === '' ? top.real : realOf(top, m[3] as string)
  if (m[1] === '0' && changed !== undefined) return changed(path)
  const n = Number(m[1])
  const [code, text] = getSystemErrorMap().get(-n) ?? [`E${n}`, `error ${n}`]
  return Object.assign(new Error(`${code}: ${text}, ${m[2]} '${path}'`), { errno: -n, code, syscall: m[2], path })
}

/** Start one helper with `args`, the directories `dirs` as descriptors 3, 4, ..., and `input` on stdin. */
function start(helper: string, args: string[], dirs: DirRef[], input: Buffer): Running {
  chunkCounts.helpers++
  const child = spawn(helper, args, { stdio: ['pipe', 'pipe', 'pipe', ...dirs.map((d) => d.fd as number)], env: {} })
  const [stdin, stdout, stderr] = [child.stdin, child.stdout, child.stderr] as [Writable, Readable, Readable]
  let out = ''
  let err = ''
  stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
  stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
  // A helper that stops early closes its stdin; that is reported by its exit, not here.
  stdin.on('error', () => undefined)
  stdin.end(input)
  const outcome = new Promise<Outcome>((resolve) => {
    child.on('error', () => resolve({ ok: false, report: null, error: null }))
    child.on('close', (code, signal) => {
      if (code === 0) resolve({ ok: true })
      else if (code === 1 && out !== '') resolve({ ok: false, report: out.replace(/\n$/, ''), error: null })
      else {
        const how = signal !== null ? `was ended by ${signal}` : `exited ${code}`
        resolve({ ok: false, report: null, error: new Error(`the tree helper ${how}${err.trim() ? `: ${err.trim()}` : ''}`) })
      }
    })
  })
  return { outcome, stop: () => child.kill('SIGKILL') }
}

/**
 * Run one helper per input side by side. The first failure stops the others (nothing goes on
 * after the call failed) and is what this reports: 'done', 'unavailable' when no helper could
 * start at all, or it rejects with the failure as an errno-style error.
 */
async function runShares(helper: string, args: string[], dirs: DirRef[], inputs: Buffer[], failed: (report: string) => Error): Promise<'done' | 'unavailable'> {
  const running = inputs.map((input) => start(helper, args, dirs, input))
  let first: Outcome | null = null
  let started = 0
  await Promise.all(
    running.map((r) =>
      r.outcome.then((o) => {
        if (o.ok || o.report !== null || o.error !== null) started++
        if (o.ok || first !== null) return
        first = o
        for (const x of running) x.stop()
      }),
    ),
  )
  const f = first as Outcome | null
  if (f === null || f.ok) return 'done'
  if (f.report !== null) throw failed(f.report)
  if (f.error !== null) throw f.error
  if (started === 0) return 'unavailable'
  throw new Error('the tree helper could not start beside the others')
}

/** `items` dealt into at most `k` non-empty shares: `heavy` ones in turn, the rest in runs. */
function deal<T>(heavy: T[], light: T[]): T[][] {
  const k = Math.max(1, Math.min(treeHelpers.max, availableParallelism(), heavy.length + light.length))
  const out: T[][] = Array.from({ length: k }, () => [])
  heavy.forEach((d, i) => (out[i % k] as T[]).push(d))
  const run = Math.ceil(light.length / k)
  for (let i = 0; i < k; i++) (out[i] as T[]).push(...light.slice(i * run, (i + 1) * run))
  return out.filter((s) => s.length > 0)
}

const NUL = Buffer.from([0])

/**
 * Remove the directory `name` of the pinned `dir` with everything under it through `helper`:
 * its entries shared among the helpers (names as the directory holds them, bytes that need not
 * be UTF-8), then the emptied directory removed by name (emptied again if it refilled, a few
 * times at most). Resolves false when the helper cannot run here or `name` is no longer a
 * directory, leaving the rest to the walk; the first failure rejects with an errno-style error
 * naming the entry.
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
      const dirs: Buffer[] = []
      const others: Buffer[] = []
      for (const d of readdirSync(selfAt(top), { withFileTypes: true, encoding: 'buffer' })) (d.isDirectory() ? dirs : others).push(d.name)
      const inputs = deal(dirs, others).map((names) => Buffer.concat(names.flatMap((n) => [n, NUL])))
      const failed = (report: string) => reported(report, top)
      if ((await runShares(helper, ['--remove-tree', '3'], [top], inputs, failed)) === 'unavailable') return false
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

/** Entries of a listed tree, every level counted. */
export function countEntries(entries: readonly TreeEntry[]): number {
  let n = entries.length
  for (const e of entries) if (e.children !== undefined) n += countEntries(e.children)
  return n
}

/** The helper's listing of `entries` (see tree.c): "f" NAME, "l" NAME TEXT, "d" NAME ... "u". */
function listing(entries: readonly TreeEntry[], parts: Buffer[] = []): Buffer[] {
  for (const e of entries) {
    if (e.kind === 'dir') {
      parts.push(Buffer.from(`d${e.name}\0`))
      listing(e.children ?? [], parts)
      parts.push(Buffer.from('u\0'))
    } else if (e.kind === 'link') parts.push(Buffer.from(`l${e.name}\0${e.text ?? ''}\0`))
    else parts.push(Buffer.from(`f${e.name}\0`))
  }
  return parts
}

/**
 * Copy listed `entries` from the pinned `src` into the pinned `dest` through `helper`, the top
 * entries shared among the helpers. Resolves to the symlinks made (for the check after the
 * copy), or null when the helper cannot run here (nothing was copied; the caller walks). The
 * first failure rejects with an errno-style error; what was copied stays for the caller to remove.
 */
export async function copyByHelper(
  helper: string,
  src: DirRef,
  dest: DirRef,
  entries: readonly TreeEntry[],
  changed: (real: string) => Error,
): Promise<Array<{ real: string; text: string }> | null> {
  const shares = deal(
    entries.filter((e) => e.kind === 'dir'),
    entries.filter((e) => e.kind !== 'dir'),
  )
  const inputs = shares.map((share) => Buffer.concat(listing(share)))
  const failed = (report: string) => reported(report, src, changed)
  if ((await runShares(helper, ['--copy-tree', '3', '4'], [src, dest], inputs, failed)) === 'unavailable') return null
  const links: Array<{ real: string; text: string }> = []
  const collect = (list: readonly TreeEntry[], at: string) => {
    for (const e of list) {
      const rel = at === '' ? e.name : `${at}/${e.name}`
      if (e.kind === 'link') links.push({ real: realOf(dest, rel), text: e.text ?? '' })
      else if (e.kind === 'dir') collect(e.children ?? [], rel)
    }
  }
  collect(entries, '')
  return links
}
