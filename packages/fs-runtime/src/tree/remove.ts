import type { Dirent } from 'node:fs'
import { errno, readdirTyped, rmdir, unlink } from '../util/fsio.ts'
import { openChild, type DirHandle } from '../handle/dir.ts'
import { TaskGroup, failFast, type Limiter } from '../util/limit.ts'

/** Shared state of one tree removal. */
export interface RemoveRun {
  files: Limiter
  slots: Limiter
  failed: boolean
}

/** Remove the non-directory `name` of `dir`; a directory found there instead is removed whole. */
export async function removeEntry(dir: DirHandle, name: string, run: RemoveRun, attempts = 3): Promise<void> {
  try {
    await unlink(dir.at(name))
  } catch (cause) {
    const code = errno(cause)
    if (code === 'ENOENT') return
    if ((code === 'EISDIR' || code === 'EPERM') && attempts > 1) return removeDirAt(dir, name, run, attempts - 1)
    throw cause
  }
}

/**
 * Remove the directory `name` of `dir` and everything under it, descending without following
 * symlinks: the child is opened with O_NOFOLLOW through its pinned parent, emptied through its
 * own descriptor, then removed by name. Something else found at the name (a symlink swapped in)
 * is unlinked itself, never followed. A directory that refills while being emptied is emptied
 * again, a few times at most.
 */
export async function removeDirAt(dir: DirHandle, name: string, run: RemoveRun, attempts = 3): Promise<void> {
  let child: DirHandle
  try {
    child = await openChild(dir, name)
  } catch (cause) {
    const code = errno(cause)
    if (code === 'ENOENT') return
    if ((code === 'ENOTDIR' || code === 'ELOOP') && attempts > 1) return removeEntry(dir, name, run, attempts - 1)
    throw cause
  }
  try {
    await removeContents(child, run)
  } finally {
    await child.close()
  }
  try {
    await rmdir(dir.at(name))
  } catch (cause) {
    const code = errno(cause)
    if (code === 'ENOENT') return
    if (code === 'ENOTDIR' && attempts > 1) return removeEntry(dir, name, run, attempts - 1)
    if (code === 'ENOTEMPTY' && attempts > 1) return removeDirAt(dir, name, run, attempts - 1)
    throw cause
  }
}

/** Remove everything inside the pinned directory `dir` (not `dir` itself). */
export async function removeContents(dir: DirHandle, run: RemoveRun): Promise<void> {
  await dir.verify({ label: 'path', given: dir.real }, false)
  let dirents: Dirent[]
  try {
    dirents = await readdirTyped(dir.self)
  } catch (cause) {
    if (errno(cause) === 'ENOENT') return
    throw cause
  }
  const group = new TaskGroup(run.slots)
  const guard = failFast(run)
  try {
    for (const d of dirents) {
      if (run.failed) break
      if (d.isDirectory()) await group.add(guard(() => removeDirAt(dir, d.name, run)))
      else group.push(run.files.run(guard(() => removeEntry(dir, d.name, run))))
    }
  } catch (cause) {
    run.failed = true
    await group.wait().catch(() => undefined)
    throw cause
  }
  await group.wait()
}
