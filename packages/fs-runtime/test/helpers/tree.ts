import { createHash } from 'node:crypto'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { ToolError } from '@hands/contracts'
import { expect } from 'vitest'

/** A temp directory removed by `cleanup()`; `path` is its real path. */
export interface Temp {
  path: string
  cleanup(): void
}

/** A fresh real temp directory for one test. */
export function tempDir(prefix = 'hands-fs-'): Temp {
  const path = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) }
}

/**
 * Lay out a tree under `base` from lines: `d/` a directory, `f` a file whose content is its
 * own name, `f ~N` the same file made N bytes long by a hole after the name (sparse), `a => b`
 * a symlink a with target text b. `$ABS` is replaced with `base`, `$OUT` with `out`. Parents
 * are created as needed.
 */
export function makeTree(base: string, lines: readonly string[], vars: Record<string, string> = {}): void {
  for (const raw of lines) {
    let line = raw
    for (const [k, v] of Object.entries(vars)) line = line.replaceAll(k, v)
    const [spec, link] = line.split(' => ') as [string, string | undefined]
    const [name, sparse] = spec.split(' ~') as [string, string | undefined]
    const full = join(base, name)
    mkdirSync(dirname(full), { recursive: true })
    if (link !== undefined) symlinkSync(link, full)
    else if (name.endsWith('/')) mkdirSync(full, { recursive: true })
    else {
      writeFileSync(full, name)
      if (sparse !== undefined) truncateSync(full, Number(sparse))
    }
  }
}

/**
 * A digest of everything under `dir`: names, kinds, link texts, file contents and modes.
 * Equal digests mean nothing was created, changed or removed.
 */
export function hashTree(dir: string): string {
  const h = createHash('sha256')
  const visit = (p: string, rel: string) => {
    const st = lstatSync(p)
    h.update(`${rel}\0${st.mode}\0`)
    if (st.isSymbolicLink()) h.update(`link:${readlinkSync(p)}\0`)
    else if (st.isDirectory()) for (const name of readdirSync(p).sort()) visit(join(p, name), `${rel}/${name}`)
    else if (st.isFile()) h.update(readFileSync(p))
  }
  visit(dir, '.')
  return h.digest('hex')
}

/** Listing of a tree for readable assertions: `rel` → 'dir' | 'file:<content>' | 'link:<text>'. */
export function listTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const visit = (p: string, rel: string) => {
    for (const name of readdirSync(p).sort()) {
      const full = join(p, name)
      const r = rel ? `${rel}/${name}` : name
      const st = lstatSync(full)
      if (st.isSymbolicLink()) out[r] = `link:${readlinkSync(full)}`
      else if (st.isDirectory()) {
        out[r] = 'dir'
        visit(full, r)
      } else out[r] = `file:${readFileSync(full, 'utf8')}`
    }
  }
  visit(dir, '')
  return out
}

/** True when something (even a dangling symlink) is at `p`. */
export function present(p: string): boolean {
  try {
    lstatSync(p)
    return true
  } catch {
    return false
  }
}

/** Await a rejection and return it as a ToolError (failing the test when it is anything else). */
export async function refusal(promise: Promise<unknown>): Promise<ToolError> {
  let thrown: unknown
  try {
    await promise
  } catch (e) {
    thrown = e
  }
  expect(thrown, 'expected a rejection').toBeInstanceOf(ToolError)
  return thrown as ToolError
}

/** A root on another filesystem (tmpfs) than the temp dir, when this machine has one. */
export function otherDevice(base: string): string | null {
  if (!existsSync('/dev/shm')) return null
  const dir = realpathSync(mkdtempSync('/dev/shm/hands-fs-'))
  if (statSync(dir).dev === statSync(base).dev) {
    rmSync(dir, { recursive: true, force: true })
    return null
  }
  return dir
}
