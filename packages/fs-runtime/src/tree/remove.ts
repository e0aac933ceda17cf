import { unlinkSync } from 'node:fs'
import { errno } from '../util/fsio.ts'
import { entryAt, listSync, openChildSync, rmdirAt, verifySync, type DirRef } from '../sync/api.ts'
import { CHUNK, Walk } from './pool.ts'
import { removeByHelper } from './native.ts'

/** A directory being removed. */
interface Doomed {
  parent: DirRef
  name: string
  /** The directory holding this one, told when this one is gone; null for the top. */
  up: Doomed | null
  ref: DirRef | null
  /** Chunks and subdirectories not yet removed. */
  holds: number
  /** Tries left when the entry turns out to be something else, or refills while emptied. */
  attempts: number
}

/**
 * Remove the directory `name` of `dir` and everything under it, descending without following
 * symlinks: each directory is opened with O_NOFOLLOW through its pinned parent, emptied through
 * its own descriptor (its other entries unlinked in chunks by the tree pool, pool.ts), then
 * removed by name. Something else found at a name (a symlink swapped in) is unlinked itself,
 * never followed. A directory that refills while being emptied is emptied again, a few times
 * at most; an entry already gone is fine.
 *
 * With the native `helper` (hands-confine) and a pinned `dir`, a tree the walk has not removed
 * within a few milliseconds is handed to the helper, which removes the rest the same way with
 * unlinkat on descriptors (remove-native.ts): a third of the CPU per entry.
 */
export async function removeTree(dir: DirRef, name: string, helper: string | null = null): Promise<void> {
  const isHandedOver = await walkRemove(dir, name, helper !== null && dir.fd !== null)
  if (isHandedOver && !(await removeByHelper(helper as string, dir, name))) await walkRemove(dir, name, false)
}

/** The walk of removeTree; true when it stopped early to hand the tree over (`handOver`). */
async function walkRemove(dir: DirRef, name: string, handOver: boolean): Promise<boolean> {
  const walk = new Walk({ handOver })
  const gone = (d: Doomed) => {
    if (d.up !== null) release(d.up)
  }
  const release = (d: Doomed) => {
    if (--d.holds === 0) rmdirOf(d)
  }
  const child = (d: Doomed, childName: string) => {
    d.holds++
    const c: Doomed = { parent: d.ref as DirRef, name: childName, up: d, ref: null, holds: 0, attempts: 3 }
    walk.push(() => empty(c))
  }
  // Something that is not a directory (or no longer one): unlink the name itself.
  const unlinkOf = (d: Doomed) => {
    try {
      verifySync(d.parent)
      unlinkSync(entryAt(d.parent, d.name))
    } catch (cause) {
      const code = errno(cause)
      if ((code === 'EISDIR' || code === 'EPERM') && --d.attempts > 0) return walk.push(() => empty(d))
      if (code !== 'ENOENT') throw cause
    }
    gone(d)
  }
  const rmdirOf = (d: Doomed) => {
    if (d.ref !== null) walk.close(d.ref)
    d.ref = null
    try {
      rmdirAt(d.parent, d.name)
    } catch (cause) {
      const code = errno(cause)
      if (code === 'ENOTEMPTY' && --d.attempts > 0) return walk.push(() => empty(d))
      if (code === 'ENOTDIR' && --d.attempts > 0) return unlinkOf(d)
      if (code !== 'ENOENT') throw cause
    }
    gone(d)
  }
  const empty = (d: Doomed) => {
    try {
      d.ref = walk.opened(openChildSync(d.parent, d.name))
    } catch (cause) {
      const code = errno(cause)
      if (code === 'ENOENT') return gone(d)
      if ((code === 'ENOTDIR' || code === 'ELOOP') && --d.attempts > 0) return unlinkOf(d)
      throw cause
    }
    const ref = d.ref
    let listed: { dirs: string[]; others: string[] }
    try {
      listed = listSync(ref)
    } catch (cause) {
      // Removed meanwhile by someone else: nothing left to empty.
      if (errno(cause) !== 'ENOENT') throw cause
      listed = { dirs: [], others: [] }
    }
    const { dirs, others } = listed
    d.holds = 1
    for (const n of dirs) child(d, n)
    // One directory's chunks go one after another (unlinks in one directory queue on its lock
    // in the kernel anyway); directories go side by side.
    const send = (at: number) => {
      if (at >= others.length) return
      d.holds++
      walk.unlink({ dir: ref, names: others.slice(at, at + CHUNK) }, (done) => {
        for (const n of done.dirs) child(d, n)
        send(at + CHUNK)
        release(d)
      })
    }
    send(0)
    release(d)
  }
  walk.push(() => empty({ parent: dir, name, up: null, ref: null, holds: 0, attempts: 3 }))
  return await walk.run()
}
