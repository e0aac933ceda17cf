import { lstatSync, realpathSync, type Stats } from 'node:fs'
import { errno, lstat, readlink, realpath } from '../util/fsio.ts'
import type { ToolError } from '@hands/contracts'
import { accessDenied, changedUnderfoot, invalidInput, ioError, notADirectory, notFound, nulByte, outsideRoots, type Named } from '../errors/refuse.ts'
import { consultGates, type PathAccess, type PathGate } from './gate.ts'
import { realRoots, rootOf } from './roots.ts'

/** Whether a symlink as the final component is followed ('follow') or named itself ('nofollow'). */
export type FinalMode = 'follow' | 'nofollow'

/** A path resolved through the real filesystem and found inside an allowed root. */
export interface Resolved extends Named {
  /** Real absolute path the input names (a final symlink is the link itself under 'nofollow'). */
  real: string
  /** Real path of the parent directory of `real` (it may not exist yet). */
  parent: string
  /** The last component of `real`. */
  name: string
  /** The deepest existing directory on the way: `parent` itself when the parent exists. */
  anchor: string
  /** Components from `anchor` down to `parent` that do not exist yet, in order. */
  missing: string[]
  /** `lstat` of `real` at resolution time, or null when nothing is there. */
  stats: Stats | null
  /** The input ends in `/`, `/.` or `/..`, so it must name a directory (and a final symlink is followed). */
  isDirForced: boolean
  /** The allowed root that contains `real`. */
  root: string
}

/** Linux's limit on symlinks followed in one resolution. */
const MAX_LINKS = 40

/** Thrown inside a walk when the tree changed under it; the walk starts over. */
const RESTART = Symbol('restart')
/** Walks started over at most, before the change is reported as an io_error. */
const MAX_RESTARTS = 3

function join(dir: string, name: string): string {
  return dir === '/' ? `/${name}` : `${dir}/${name}`
}

function dirnameOf(real: string): string {
  const i = real.lastIndexOf('/')
  return i <= 0 ? '/' : real.slice(0, i)
}

function basenameOf(real: string): string {
  return real.slice(real.lastIndexOf('/') + 1)
}

/** Check the raw text of a path: a non-empty string without NUL bytes. */
export function checkPathText(n: Named): void {
  if (typeof n.given !== 'string' || n.given.length === 0) {
    throw invalidInput(`${n.label} must be a non-empty string.`, `\`${n.label}\`: a non-empty path, relative to the workspace root or absolute.`)
  }
  if (n.given.includes('\0')) throw nulByte(n)
}

/** True when the text ends in `/`, `/.` or `/..` (or is `.`/`..`): it names a directory. */
function endsAsDirectory(text: string): boolean {
  const last = text.slice(text.lastIndexOf('/') + 1)
  return last === '' || last === '.' || last === '..'
}

interface Walked {
  /** Deepest existing real path reached (a directory, or the final non-directory). */
  at: string
  /** Components after `at` that do not exist. */
  missing: string[]
  stats: Stats | null
}

/**
 * Resolve `abs` one component at a time, as the kernel does: `..` after a symlink goes to the
 * parent of the link's target, a symlink's text is spliced in where it stands, and a final
 * symlink is followed only in 'follow' mode (or when a `/`, `.` or `..` follows it). The first
 * missing component switches to plain text for the rest, where `..` removes a missing component.
 */
async function walk(abs: string, final: FinalMode, n: Named, roots: readonly string[]): Promise<Walked> {
  // An error met outside the roots is reported as outside_roots: nothing about outside paths leaks.
  const fail = (where: string, error: ToolError): never => {
    throw rootOf(roots, where) === undefined ? outsideRoots(n, roots) : error
  }
  const queue = abs.split('/')
  let at = '/'
  let atStats: Stats | null = null
  const missing: string[] = []
  let links = 0
  while (queue.length > 0) {
    const seg = queue.shift() as string
    if (seg === '' || seg === '.') continue
    if (seg === '..') {
      if (missing.length > 0) missing.pop()
      else {
        at = dirnameOf(at)
        atStats = null
      }
      continue
    }
    if (missing.length > 0) {
      missing.push(seg)
      continue
    }
    const isLast = queue.length === 0
    const candidate = join(at, seg)
    let st: Stats
    try {
      st = await lstat(candidate)
    } catch (cause) {
      const code = errno(cause)
      if (code === 'ENOENT') {
        missing.push(seg)
        continue
      }
      if (code === 'ENOTDIR') return fail(candidate, notADirectory(n, `${at} is not a directory`))
      return fail(candidate, ioError(n, cause, { preflight: true }))
    }
    if (st.isSymbolicLink() && (!isLast || final === 'follow')) {
      if (++links > MAX_LINKS) return fail(candidate, notFound(n, `too many levels of symbolic links at ${candidate}`))
      let text: string
      try {
        text = await readlink(candidate)
      } catch (cause) {
        // The link was removed or replaced since the lstat: resolve again from the start.
        if (errno(cause) === 'ENOENT' || errno(cause) === 'EINVAL') throw RESTART
        return fail(candidate, ioError(n, cause, { preflight: true }))
      }
      if (text.startsWith('/')) {
        at = '/'
        atStats = null
      }
      queue.unshift(...text.split('/'))
      continue
    }
    // Only a directory may have anything after it, even a trailing slash.
    if (!st.isDirectory() && !isLast) return fail(candidate, notADirectory(n, `${candidate} is not a directory`))
    at = candidate
    atStats = st
  }
  if (missing.length === 0 && atStats === null) {
    try {
      atStats = await lstat(at)
    } catch (cause) {
      return fail(at, ioError(n, cause, { preflight: true }))
    }
  }
  return { at, missing, stats: missing.length === 0 ? atStats : null }
}

function place(n: Named, w: Walked, isDirForced: boolean, roots: readonly string[]): Resolved {
  const real = w.missing.length > 0 ? join(w.at, w.missing.join('/')) : w.at
  const root = rootOf(roots, real)
  if (root === undefined) throw outsideRoots(n, roots)
  if (w.missing.length > 0) {
    const missing = w.missing.slice(0, -1)
    return {
      ...n,
      real,
      parent: missing.length > 0 ? join(w.at, missing.join('/')) : w.at,
      name: w.missing[w.missing.length - 1] as string,
      anchor: w.at,
      missing,
      stats: null,
      isDirForced,
      root,
    }
  }
  const parent = dirnameOf(real)
  return { ...n, real, parent, name: basenameOf(real), anchor: parent, missing: [], stats: w.stats, isDirForced, root }
}

/** A cache of real parent directories for one batch, so paths that share a parent resolve it once. */
export type ParentCache = Map<string, Promise<string | null>>

function realParent(parentText: string, cache: ParentCache | undefined): Promise<string | null> {
  const hit = cache?.get(parentText)
  if (hit !== undefined) return hit
  const p = realpath(parentText).then(
    (r) => r,
    () => null,
  )
  cache?.set(parentText, p)
  return p
}

/**
 * Resolve `given` through the real filesystem and require the result inside `roots` (real
 * paths; the first is the workspace root, where relative paths start). Rejects with a
 * ToolError: invalid_input (empty, NUL byte), outside_roots, not_a_directory (a file where a
 * directory must be), not_found (a symlink loop), io_error (any other failure: fail closed).
 */
export async function resolvePath(
  roots: readonly string[],
  given: string,
  options: { final: FinalMode; label: string; cache?: ParentCache },
): Promise<Resolved> {
  const n: Named = { label: options.label, given }
  checkPathText(n)
  const workspace = roots[0]
  if (workspace === undefined) throw new TypeError('resolvePath needs at least one root')
  const abs = given.startsWith('/') ? given : `${workspace}/${given}`
  const isDirForced = endsAsDirectory(given)
  // Fast path: the C library's realpath resolves as the kernel does, in one call. When any
  // part is missing or odd, the component walk gives the exact answer (or the exact error).
  if (!isDirForced && options.final === 'nofollow') {
    const cut = abs.lastIndexOf('/')
    const name = abs.slice(cut + 1)
    const parent = await realParent(abs.slice(0, cut) || '/', options.cache)
    if (parent !== null) {
      const real = join(parent, name)
      try {
        const stats = await lstat(real)
        return placeExisting(n, real, parent, stats, isDirForced, roots)
      } catch (cause) {
        const code = errno(cause)
        if (code === 'ENOENT') return place(n, { at: parent, missing: [name], stats: null }, isDirForced, roots)
        if (code === 'ENOTDIR') {
          place(n, { at: parent, missing: [name], stats: null }, isDirForced, roots)
          throw notADirectory(n, `${parent} is not a directory`)
        }
      }
    }
  } else if (options.final === 'follow') {
    try {
      const real = await realpath(abs)
      const stats = await lstat(real)
      if (!isDirForced || stats.isDirectory()) return placeExisting(n, real, dirnameOf(real), stats, isDirForced, roots)
    } catch {
      // fall through to the walk
    }
  }
  for (let attempt = 0; ; attempt++) {
    try {
      return place(n, await walk(abs, isDirForced ? 'follow' : options.final, n, roots), isDirForced, roots)
    } catch (cause) {
      if (cause !== RESTART) throw cause
      if (attempt >= MAX_RESTARTS) throw changedUnderfoot(n, 'a symlink on the way kept changing', true)
    }
  }
}

function placeExisting(n: Named, real: string, parent: string, stats: Stats, isDirForced: boolean, roots: readonly string[]): Resolved {
  const root = rootOf(roots, real)
  if (root === undefined) throw outsideRoots(n, roots)
  return { ...n, real, parent, name: basenameOf(real), anchor: parent, missing: [], stats, isDirForced, root }
}

/** Real parents already resolved synchronously in one batch (null: could not, use the walk). */
export type SyncParentCache = Map<string, string | null>

/**
 * The fast path of {@link resolvePath} for a 'nofollow' path, done with synchronous calls (two
 * at most: realpath of the parent, lstat of the entry). Returns null whenever anything is
 * unusual — a missing parent, a trailing slash, any error — and the caller then uses
 * resolvePath, which gives the exact answer or error. Throws only outside_roots and
 * invalid_input, as resolvePath would.
 */
export function resolveNamedSync(roots: readonly string[], given: string, label: string, cache: SyncParentCache): Resolved | null {
  const n: Named = { label, given }
  checkPathText(n)
  const workspace = roots[0]
  if (workspace === undefined || endsAsDirectory(given)) return null
  const abs = given.startsWith('/') ? given : `${workspace}/${given}`
  const cut = abs.lastIndexOf('/')
  const parentText = abs.slice(0, cut) || '/'
  let parent = cache.get(parentText)
  if (parent === undefined) {
    try {
      parent = realpathSync.native(parentText)
    } catch {
      parent = null
    }
    cache.set(parentText, parent)
  }
  if (parent === null) return null
  const name = abs.slice(cut + 1)
  const real = join(parent, name)
  let stats: Stats | undefined
  try {
    stats = lstatSync(real, { throwIfNoEntry: false })
  } catch {
    return null
  }
  if (stats === undefined) return place(n, { at: parent, missing: [name], stats: null }, false, roots)
  return placeExisting(n, real, parent, stats, false, roots)
}

/** Options of {@link resolveInside}. */
export interface ResolveInsideOptions {
  /** Host access gates to consult on the resolved path. */
  gates?: readonly PathGate[]
  /** The access asked of the gates; default 'read'. */
  access?: PathAccess
  /** The tool name passed to the gates; default 'resolveInside'. */
  tool?: string
  /** How the path is named in error messages; default 'path'. */
  label?: string
}

const resolvedRoots = new WeakMap<readonly string[], { key: string; real: Promise<string[]> }>()

function rootsOnce(roots: readonly string[]): Promise<string[]> {
  const key = roots.join('\0')
  const hit = resolvedRoots.get(roots)
  if (hit !== undefined && hit.key === key) return hit.real
  const real = realRoots(roots)
  real.catch(() => resolvedRoots.delete(roots))
  resolvedRoots.set(roots, { key, real })
  return real
}

/**
 * The confinement layer: resolve `path` (relative to `roots[0]`, or absolute) through the real
 * filesystem — symlinks of every existing component followed, the not-yet-existing rest
 * appended — and return the real absolute path when it lies inside an allowed root by whole
 * path segments. Rejects with a ToolError: outside_roots (is_preflight, hint naming the roots),
 * access_denied (a gate answered 'hide' or 'deny'), invalid_input (empty or NUL byte),
 * not_a_directory (a file where a directory must be), not_found (a symlink loop), io_error
 * (any other failure; it fails closed). Roots are resolved with realpath once per array.
 */
export async function resolveInside(roots: readonly string[], path: string, options: ResolveInsideOptions = {}): Promise<string> {
  const real = await rootsOnce(roots)
  const label = options.label ?? 'path'
  const resolved = await resolvePath(real, path, { final: 'follow', label })
  const verdict = await consultGates(options.gates, resolved.real, options.access ?? 'read', options.tool ?? 'resolveInside')
  if (verdict !== 'allow') throw gateRefusal(resolved, verdict)
  return resolved.real
}

/** The error for a path a gate hid or denied, as a write sees it. */
export function gateRefusal(n: Named, verdict: 'hide' | 'deny'): ToolError {
  return accessDenied(n, verdict === 'hide' ? 'the host hides it' : 'the host refuses it')
}
