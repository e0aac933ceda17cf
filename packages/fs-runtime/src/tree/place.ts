import { errno, lstat, rename, unlink } from '../util/fsio.ts'
import type { DirHandle } from '../handle/dir.ts'
import { tempName } from '../runtime/guard.ts'
import { removeTree } from './remove.ts'

/** Remove whatever is at `name` in `dir` (a directory whole, through `helper` when given: remove.ts); nothing there is fine. */
export async function removeAt(dir: DirHandle, name: string, helper: string | null): Promise<void> {
  let st
  try {
    st = await lstat(dir.at(name))
  } catch (cause) {
    if (errno(cause) === 'ENOENT') return
    throw cause
  }
  if (st.isDirectory()) await removeTree(dir.ref, name, helper)
  else
    await unlink(dir.at(name)).catch((cause) => {
      if (errno(cause) !== 'ENOENT') throw cause
    })
}

/**
 * Replace the entry `destName` of `dir` with the entry `fromName` of `from` (the same
 * filesystem). Two non-directories swap atomically with one rename (a symlink at the
 * destination is replaced, never followed). Otherwise the old entry is first renamed aside,
 * the new one renamed in, and the old one removed; if the rename in fails, the old entry is
 * put back and the error rethrown.
 */
export async function replaceEntry(from: DirHandle, fromName: string, dir: DirHandle, destName: string, helper: string | null): Promise<void> {
  const [fresh, old] = await Promise.all([lstat(from.at(fromName)), lstat(dir.at(destName)).catch(() => null)])
  if (old === null || (!fresh.isDirectory() && !old.isDirectory())) {
    await rename(from.at(fromName), dir.at(destName))
    return
  }
  const aside = tempName(destName, 'old')
  await rename(dir.at(destName), dir.at(aside))
  try {
    await rename(from.at(fromName), dir.at(destName))
  } catch (cause) {
    await rename(dir.at(aside), dir.at(destName)).catch(() => undefined)
    throw cause
  }
  await removeAt(dir, aside, helper)
}
