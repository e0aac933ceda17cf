import { constants, existsSync } from 'node:fs'
import { close, errno, lstat, mkdir, open, readlink, realpath, rmdir } from '../util/fsio.ts'
import { changedUnderfoot, ioError, type Named } from '../errors/refuse.ts'
import { entryAt, O_PATH, realOf, selfAt, type DirRef } from '../sync/api.ts'

export const openFd = open
export const closeFd = close

const PROC_FD = '/proc/self/fd'

/** The path that reopens an open descriptor's file. */
export function fdPath(fd: number): string {
  return `${PROC_FD}/${fd}`
}

/**
 * True when directories are pinned by open descriptors and entries are reached through
 * `/proc/self/fd/<fd>/<name>`, which the kernel resolves to the pinned directory whatever
 * happens to the path that led there. Without /proc (not Linux) handles fall back to real
 * path strings re-verified with realpath before each destructive step.
 */
let pinning = process.platform === 'linux' && existsSync(PROC_FD)

/** Switch pinning off (or back on where /proc is available); for tests of the fallback. */
export function setPinning(on: boolean): void {
  pinning = on && process.platform === 'linux' && existsSync(PROC_FD)
}

function dirFlags(): number {
  return (pinning ? O_PATH : constants.O_RDONLY) | constants.O_DIRECTORY | constants.O_NOFOLLOW
}

/**
 * A directory verified inside the roots. `at(name)` is a path that names the entry `name` in
 * THIS directory: through the pinned descriptor when pinning, else through the real path.
 */
export class DirHandle {
  readonly real: string
  #fd: number | null

  constructor(real: string, fd: number | null) {
    this.real = real
    this.#fd = fd
  }

  /** The directory as plain data (real path and descriptor), for the tree walks and their worker threads. */
  get ref(): DirRef {
    return { real: this.real, fd: this.#fd }
  }

  /** A path to the entry `name` inside this directory. */
  at(name: string): string {
    return entryAt(this.ref, name)
  }

  /** A path to this directory itself. */
  get self(): string {
    return selfAt(this.ref)
  }

  /** The real path of an entry, for messages and gates. */
  realOf(name: string): string {
    return realOf(this.ref, name)
  }

  /**
   * Re-check before a destructive step. Pinned handles need nothing (the descriptor holds the
   * directory); path handles confirm the real path still leads to a directory, not a link.
   */
  async verify(n: Named, preflight: boolean): Promise<void> {
    if (this.#fd !== null) return
    let now: string
    try {
      now = await realpath(this.real)
    } catch (cause) {
      throw changedUnderfoot(n, `${this.real}: ${errno(cause) ?? 'gone'}`, preflight)
    }
    if (now !== this.real) throw changedUnderfoot(n, `${this.real} no longer leads to the directory that was checked`, preflight)
  }

  async close(): Promise<void> {
    const fd = this.#fd
    if (fd === null) return
    this.#fd = null
    await closeFd(fd).catch(() => undefined)
  }
}

/**
 * Pin the directory at the real path `real` (already checked inside the roots): open it without
 * following a final symlink, then confirm the descriptor's own path is still `real`, so a
 * component swapped for a symlink since the check is caught.
 */
export async function pinDir(real: string, n: Named, preflight: boolean): Promise<DirHandle> {
  if (!pinning) {
    const handle = new DirHandle(real, null)
    await handle.verify(n, preflight)
    const st = await lstat(real).catch((cause) => {
      throw changedUnderfoot(n, `${real}: ${errno(cause) ?? 'gone'}`, preflight)
    })
    if (!st.isDirectory()) throw changedUnderfoot(n, `${real} is no longer a directory`, preflight)
    return handle
  }
  let fd: number
  try {
    fd = await openFd(real, dirFlags())
  } catch (cause) {
    const code = errno(cause)
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') throw changedUnderfoot(n, `${real}: ${code}`, preflight)
    throw ioError(n, cause, { preflight })
  }
  let now: string
  try {
    now = await readlink(`${PROC_FD}/${fd}`)
  } catch (cause) {
    await closeFd(fd).catch(() => undefined)
    throw ioError(n, cause, { preflight })
  }
  if (now !== real) {
    await closeFd(fd).catch(() => undefined)
    throw changedUnderfoot(n, `${real} no longer leads to the directory that was checked`, preflight)
  }
  return new DirHandle(real, fd)
}

/**
 * Open the child directory `name` of a handle without following a symlink. Rejects with the
 * raw errno error (ENOTDIR when the child is not a directory or is a symlink), for the caller
 * to word. `isParentVerified` skips re-verifying a path handle the caller has just verified.
 */
export async function openChild(parent: DirHandle, name: string, isParentVerified = false): Promise<DirHandle> {
  if (!pinning) {
    if (!isParentVerified) await parent.verify({ label: 'path', given: parent.realOf(name) }, false)
    const st = await lstat(parent.at(name))
    if (!st.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, open '${parent.realOf(name)}'`), { code: 'ENOTDIR' })
    return new DirHandle(parent.realOf(name), null)
  }
  const fd = await openFd(parent.at(name), dirFlags())
  return new DirHandle(parent.realOf(name), fd)
}

/**
 * Create each of `names` in turn under `anchor` (an existing one is fine when it is a real
 * directory) and return a handle to the last, with the real paths it created. The anchor stays
 * open; the caller closes both.
 */
export async function makeDirs(anchor: DirHandle, names: readonly string[], n: Named): Promise<{ dir: DirHandle; created: string[] }> {
  const created: string[] = []
  let dir = anchor
  try {
    for (const name of names) {
      try {
        await dir.verify(n, false)
        await mkdir(dir.at(name))
        created.push(dir.realOf(name))
      } catch (cause) {
        if (errno(cause) !== 'EEXIST') throw cause
      }
      // Path handles: `dir` was verified just above, so opening its child need not verify it again.
      const child = await openChild(dir, name, true)
      if (dir !== anchor) await dir.close()
      dir = child
    }
  } catch (cause) {
    if (dir !== anchor) await dir.close()
    const code = errno(cause)
    if (code === 'ENOTDIR' || code === 'ELOOP') throw changedUnderfoot(n, `a parent directory was replaced by something else`, created.length === 0)
    throw ioError(n, cause, { preflight: created.length === 0, state: created.length > 0 ? `Created before the failure: ${created.join(', ')}.` : undefined })
  }
  return { dir, created }
}

/**
 * Pin the existing ancestor of a destination and create its missing parents: the handle of the
 * directory the destination goes into, and the real paths created on the way (for rollback).
 */
export async function openDestParent(dest: Named & { anchor: string; missing: readonly string[] }): Promise<{ dir: DirHandle; created: string[] }> {
  const anchor = await pinDir(dest.anchor, dest, true)
  let made
  try {
    made = await makeDirs(anchor, dest.missing, dest)
  } catch (cause) {
    await anchor.close()
    throw cause
  }
  if (made.dir !== anchor) await anchor.close()
  return made
}

/**
 * Remove directories this call created (deepest first), each through a freshly pinned parent,
 * and only while empty. Best effort: anything that fails is left in place.
 */
export async function removeCreatedDirs(reals: readonly string[]): Promise<void> {
  for (const real of [...reals].reverse()) {
    const cut = real.lastIndexOf('/')
    const parentReal = cut <= 0 ? '/' : real.slice(0, cut)
    try {
      const parent = await pinDir(parentReal, { label: 'path', given: real }, false)
      try {
        await rmdir(parent.at(real.slice(cut + 1)))
      } finally {
        await parent.close()
      }
    } catch {
      return
    }
  }
}
