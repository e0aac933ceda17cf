import { closeSync, constants, fstatSync, openSync } from 'node:fs'
import { close, copyFile, fstat, lstat, mkdir, open, symlink } from '../util/fsio.ts'
import { fdPath, isPinning, openChild, type DirHandle } from '../handle/dir.ts'
import { TaskGroup, failFast, type Limiter } from '../util/limit.ts'
import type { TreeEntry } from './list.ts'
import { copySparse, isSparse } from './sparse.ts'

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, COPYFILE_EXCL, COPYFILE_FICLONE } = constants

/** Shared state of one tree copy. */
export interface CopyRun {
  /** Bounds file and symlink copies in flight. */
  files: Limiter
  /** Bounds subtrees copied side by side. */
  slots: Limiter
  /** Every symlink created (real path and text), for the check after the copy. */
  links: Array<{ real: string; text: string }>
  /** Set on the first failure; queued work then does nothing. */
  failed: boolean
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
export async function copyFileBetween(src: DirHandle, name: string, dest: DirHandle, destName: string): Promise<void> {
  if (!isPinning()) {
    const st = await lstat(src.at(name))
    if (!st.isFile()) throw changed(src.realOf(name))
    if (!isSparse(st)) {
      await copyFile(src.at(name), dest.at(destName), COPYFILE_EXCL | COPYFILE_FICLONE)
      return
    }
    const fd = await open(src.at(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
    try {
      const now = await fstat(fd)
      if (!now.isFile()) throw changed(src.realOf(name))
      await copySparse(src.at(name), fd, now, dest.at(destName))
    } finally {
      await close(fd)
    }
    return
  }
  // open and fstat are quick local calls: done synchronously they cost less than a trip
  // through the libuv pool, which stays busy with the copies themselves.
  const fd = openSync(src.at(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw changed(src.realOf(name))
    if (isSparse(st)) await copySparse(fdPath(fd), fd, st, dest.at(destName))
    else await copyFile(fdPath(fd), dest.at(destName), COPYFILE_EXCL | COPYFILE_FICLONE)
  } finally {
    closeSync(fd)
  }
}

/** Create the symlink `destName` in `dest` with exactly `text`, and remember it for the check. */
export async function copyLinkTo(text: string, dest: DirHandle, destName: string, run: CopyRun | null): Promise<void> {
  await symlink(text, dest.at(destName))
  run?.links.push({ real: dest.realOf(destName), text })
}

/**
 * Copy listed entries from `src` into `dest` (both pinned): files by content, symlinks as
 * symlinks with their text unchanged, directories recursively (each opened with O_NOFOLLOW
 * through its pinned parent). Every creation is exclusive.
 */
export async function copyEntries(src: DirHandle, dest: DirHandle, entries: readonly TreeEntry[], run: CopyRun): Promise<void> {
  const group = new TaskGroup(run.slots)
  const guard = failFast(run)
  try {
    for (const e of entries) {
      if (run.failed) break
      if (e.kind === 'file') group.push(run.files.run(guard(() => copyFileBetween(src, e.name, dest, e.name))))
      else if (e.kind === 'link') group.push(run.files.run(guard(() => copyLinkTo(e.text ?? '', dest, e.name, run))))
      else if (e.kind === 'dir') {
        await group.add(
          guard(async () => {
            await mkdir(dest.at(e.name))
            const s = await openChild(src, e.name)
            try {
              const d = await openChild(dest, e.name)
              try {
                await copyEntries(s, d, e.children ?? [], run)
              } finally {
                await d.close()
              }
            } finally {
              await s.close()
            }
          }),
        )
      } else throw changed(src.realOf(e.name))
    }
  } catch (cause) {
    run.failed = true
    await group.wait().catch(() => undefined)
    throw cause
  }
  await group.wait()
}
