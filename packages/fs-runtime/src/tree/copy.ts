import { closeSync, constants, fstatSync, mkdirSync, openSync } from 'node:fs'
import { close, copyFile, fstat, lstat, open, symlink } from '../util/fsio.ts'
import { fdPath } from '../handle/dir.ts'
import { createLimiter } from '../util/limit.ts'
import { entryAt, openChildSync, readUmask, realOf, type ChunkEntry, type DirRef } from '../sync/api.ts'
import { firstOther, type TreeEntry } from './list.ts'
import { CHUNK, treeHelpers, Walk } from './pool.ts'
import { copyByHelper, countEntries } from './native.ts'
import { copySparse, isSparse } from './sparse.ts'

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, COPYFILE_EXCL, COPYFILE_FICLONE } = constants

/** Large files of one tree copied side by side (each is one kernel copy on the libuv pool). */
const LARGE_FILES = 4

/** A symlink a copy created: its real path and text, for the check once the copy is placed. */
export interface MadeLink {
  real: string
  text: string
}

function changed(what: string): Error {
  return Object.assign(new Error(`${what} changed while being copied`), { code: 'ECHANGED' })
}

/**
 * Copy the regular file `name` of `src` to the new entry `destName` of `dest`. The source is
 * opened without following a symlink and must be a regular file; the copy goes through the
 * open descriptor into a destination created exclusively (so a symlink planted at the
 * destination is never written through), with a reflink where the filesystem offers one. A
 * sparse source keeps its holes (see copySparse); any other file is copied by the kernel.
 */
export async function copyFileBetween(src: DirRef, name: string, dest: DirRef, destName: string): Promise<void> {
  if (src.fd === null) {
    const st = await lstat(entryAt(src, name))
    if (!st.isFile()) throw changed(realOf(src, name))
    if (!isSparse(st)) {
      await copyFile(entryAt(src, name), entryAt(dest, destName), COPYFILE_EXCL | COPYFILE_FICLONE)
      return
    }
    const fd = await open(entryAt(src, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
    try {
      const now = await fstat(fd)
      if (!now.isFile()) throw changed(realOf(src, name))
      await copySparse(entryAt(src, name), fd, now, entryAt(dest, destName))
    } finally {
      await close(fd)
    }
    return
  }
  // open and fstat are quick local calls: done synchronously they cost less than a trip
  // through the libuv pool, which stays busy with the copies themselves.
  const fd = openSync(entryAt(src, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw changed(realOf(src, name))
    if (isSparse(st)) await copySparse(fdPath(fd), fd, st, entryAt(dest, destName))
    else await copyFile(fdPath(fd), entryAt(dest, destName), COPYFILE_EXCL | COPYFILE_FICLONE)
  } finally {
    closeSync(fd)
  }
}

/** Create the symlink `destName` in `dest` with exactly `text`. */
export async function copyLinkTo(text: string, dest: DirRef, destName: string): Promise<void> {
  await symlink(text, entryAt(dest, destName))
}

/** A directory being copied: both sides, and what still needs their descriptors. */
interface Pair {
  src: DirRef
  dest: DirRef
  /** Chunks, large files and subdirectories not yet done with this pair's descriptors. */
  holds: number
}

/**
 * Copy listed entries from `src` into `dest` (both pinned): files by content, symlinks as
 * symlinks with their text unchanged, directories recursively (each opened with O_NOFOLLOW
 * through its pinned parent). Every creation is exclusive. Files and symlinks go in chunks to
 * the tree pool (pool.ts); files over SMALL_FILE and sparse ones come back and take
 * copyFileBetween. Resolves to every symlink created, for the check after the copy.
 *
 * With the native `helper` and a tree of at least 256 entries, the helpers copy it the same
 * way with *at calls on descriptors (native.ts), at cp's cost per entry.
 */
export async function copyTree(src: DirRef, dest: DirRef, entries: readonly TreeEntry[], helper: string | null = null): Promise<MadeLink[]> {
  // A FIFO, socket or device (refused by the tools before they copy) is left to the walk, which never opens one.
  if (helper !== null && src.fd !== null && dest.fd !== null && countEntries(entries) >= treeHelpers.copyMin && firstOther(entries) === undefined) {
    const links = await copyByHelper(helper, src, dest, entries, changed)
    if (links !== null) return links
  }
  const walk = new Walk()
  const links: MadeLink[] = []
  const umask = readUmask()
  const large = createLimiter(LARGE_FILES)
  const release = (pair: Pair) => {
    if (--pair.holds > 0) return
    walk.close(pair.src)
    walk.close(pair.dest)
  }
  // One directory's chunks go one after another (files made in one directory queue on its
  // lock in the kernel anyway); directories go side by side.
  const send = (pair: Pair, chunks: ChunkEntry[][], at = 0) => {
    const chunk = chunks[at]
    if (chunk === undefined) return
    pair.holds++
    walk.copy({ src: pair.src, dest: pair.dest, entries: chunk, umask }, (done) => {
      links.push(...done.links)
      for (const name of done.deferred) {
        pair.holds++
        walk.track(
          () => large.run(() => copyFileBetween(pair.src, name, pair.dest, name)),
          () => release(pair),
        )
      }
      send(pair, chunks, at + 1)
      release(pair)
    })
  }
  const expand = (pair: Pair, list: readonly TreeEntry[]) => {
    pair.holds++
    const chunks: ChunkEntry[][] = [[]]
    for (const e of list) {
      if (e.kind === 'dir') {
        pair.holds++
        walk.push(() => {
          try {
            mkdirSync(entryAt(pair.dest, e.name))
            const child: Pair = { src: walk.opened(openChildSync(pair.src, e.name)), dest: walk.opened(openChildSync(pair.dest, e.name)), holds: 0 }
            expand(child, e.children ?? [])
          } finally {
            release(pair)
          }
        })
        continue
      }
      if (e.kind === 'other') throw changed(realOf(pair.src, e.name))
      const last = chunks[chunks.length - 1] as ChunkEntry[]
      ;(last.length < CHUNK ? last : (chunks[chunks.length] = [])).push(
        e.kind === 'link' ? { name: e.name, kind: 'link', text: e.text } : { name: e.name, kind: 'file' },
      )
    }
    if ((chunks[0] as ChunkEntry[]).length > 0) send(pair, chunks)
    release(pair)
  }
  // The top pair belongs to the caller: it is never closed here (one hold is never released).
  walk.push(() => expand({ src, dest, holds: 1 }, entries))
  await walk.run()
  return links
}
