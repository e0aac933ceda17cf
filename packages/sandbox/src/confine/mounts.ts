import { posix } from 'node:path'
import type { Mount } from '../tree/mountinfo.ts'

/** True when `path` is `dir` or lies under it by whole path segments. */
function within(dir: string, path: string): boolean {
  return path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`)
}

/** The mount that shows `path`: the one with the deepest mount point above it, the last listed where several share it (it is on top). */
function mountOf(mounts: readonly Mount[], path: string): Mount | undefined {
  let best: Mount | undefined
  for (const m of mounts) if (within(m.mountPoint, path) && (best === undefined || m.mountPoint.length >= best.mountPoint.length)) best = m
  return best
}

/**
 * Every other name the mount table gives each of `paths` (absolute, real): where the same
 * filesystem is mounted again (a bind mount of a home directory, of a hidden directory or of
 * anything above it), the place the path shows up there. A name hidden by a mount over it is left
 * out. Landlock's rules follow the file, not the name, so a hidden path must be hidden under each
 * of its names, and bubblewrap covers each of them; mounts made later are not seen (docs/confinement.md).
 */
export function mountAliases(paths: readonly string[], mounts: readonly Mount[]): string[] {
  const out = new Set<string>()
  for (const path of paths) {
    const home = mountOf(mounts, path)
    if (home === undefined) continue
    // The path inside its filesystem.
    const inFs = posix.join(home.root, posix.relative(home.mountPoint, path))
    for (const m of mounts) {
      if (m === home || m.dev !== home.dev || !within(m.root, inFs)) continue
      const alias = posix.join(m.mountPoint, posix.relative(m.root, inFs))
      if (alias !== path && !paths.includes(alias) && mountOf(mounts, alias) === m) out.add(alias)
    }
  }
  return [...out]
}
