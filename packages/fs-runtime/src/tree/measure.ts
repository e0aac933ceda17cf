import type { Stats } from 'node:fs'
import { lstat, readdirTyped } from '../util/fsio.ts'
import { openChild, pinDir, type DirHandle } from '../handle/dir.ts'
import type { ConfirmTarget } from '../runtime/context.ts'
import type { Resolved } from '../confine/resolve.ts'

function kindOfStats(st: Stats): ConfirmTarget['kind'] {
  if (st.isDirectory()) return 'directory'
  if (st.isSymbolicLink()) return 'symlink'
  if (st.isFile()) return 'file'
  return 'other'
}

/** Files (every entry that is not a directory) and bytes (of regular files) under a pinned directory, without following symlinks. */
async function sizeUnder(dir: DirHandle): Promise<{ files: number; bytes: number }> {
  let files = 0
  let bytes = 0
  for (const d of await readdirTyped(dir.self)) {
    if (d.isDirectory()) {
      let child: DirHandle
      try {
        child = await openChild(dir, d.name)
      } catch {
        continue
      }
      try {
        const sub = await sizeUnder(child)
        files += sub.files
        bytes += sub.bytes
      } finally {
        await child.close()
      }
      continue
    }
    files++
    if (d.isFile())
      bytes += await lstat(dir.at(d.name)).then(
        (st) => st.size,
        () => 0,
      )
  }
  return { files, bytes }
}

/**
 * What a person confirming a destructive act is shown about one path: what it is and how much
 * it holds. A directory is walked (symlinks are counted, never followed); a tree that cannot be
 * read whole reports what could be read.
 */
export async function measureTarget(r: Resolved): Promise<ConfirmTarget> {
  const st = r.stats as Stats
  const kind = kindOfStats(st)
  if (kind !== 'directory') return { path: r.real, kind, files: 1, bytes: kind === 'file' ? st.size : 0 }
  let dir: DirHandle
  try {
    dir = await pinDir(r.real, r, true)
  } catch {
    return { path: r.real, kind, files: 0, bytes: 0 }
  }
  try {
    return { path: r.real, kind, ...(await sizeUnder(dir).catch(() => ({ files: 0, bytes: 0 }))) }
  } finally {
    await dir.close()
  }
}
