import { realpathSync, statSync } from 'node:fs'
import { realpath, stat } from 'node:fs/promises'
import { isAbsolute, resolve } from 'node:path'

/** True when `real` is `root` itself or lies under it by whole path segments (`/a` does not contain `/ab`). */
export function isWithin(root: string, real: string): boolean {
  if (real === root) return true
  return real.startsWith(root === '/' ? '/' : `${root}/`)
}

/** The allowed root that contains `real`, or undefined when none does. */
export function rootOf(roots: readonly string[], real: string): string | undefined {
  for (const root of roots) if (isWithin(root, real)) return root
  return undefined
}

/** True when `real` is one of the roots. */
export function isRoot(roots: readonly string[], real: string): boolean {
  return roots.includes(real)
}

/** The roots strictly inside `real` (a delete or move of `real` would take them along). */
export function rootsUnder(roots: readonly string[], real: string): string[] {
  return roots.filter((root) => root !== real && isWithin(real, root))
}

function checkRootText(root: unknown, index: number): string {
  if (typeof root !== 'string' || root.length === 0) throw new TypeError(`roots[${index}] must be a non-empty string`)
  if (root.includes('\0')) throw new TypeError(`roots[${index}] contains a NUL byte`)
  return isAbsolute(root) ? root : resolve(root)
}

/**
 * Resolve host-given roots once: each must exist and be a directory; each becomes its real
 * path (symlinks resolved). Relative roots resolve against the process working directory.
 * Throws a TypeError naming the bad root (this is host configuration, not a tool error).
 */
export function realRootsSync(roots: readonly string[]): string[] {
  if (!Array.isArray(roots) || roots.length === 0) throw new TypeError('roots must list at least one directory')
  return roots.map((root, i) => {
    const abs = checkRootText(root, i)
    let real: string
    try {
      real = realpathSync.native(abs)
    } catch (cause) {
      throw new TypeError(`roots[${i}] (${abs}) must exist: ${(cause as Error).message}`, { cause })
    }
    if (!statSync(real).isDirectory()) throw new TypeError(`roots[${i}] (${abs}) must be a directory`)
    return real
  })
}

/** The asynchronous form of {@link realRootsSync}. */
export async function realRoots(roots: readonly string[]): Promise<string[]> {
  if (!Array.isArray(roots) || roots.length === 0) throw new TypeError('roots must list at least one directory')
  return Promise.all(
    roots.map(async (root, i) => {
      const abs = checkRootText(root, i)
      let real: string
      try {
        real = await realpath(abs)
      } catch (cause) {
        throw new TypeError(`roots[${i}] (${abs}) must exist: ${(cause as Error).message}`, { cause })
      }
      if (!(await stat(real)).isDirectory()) throw new TypeError(`roots[${i}] (${abs}) must be a directory`)
      return real
    }),
  )
}
