import { errno, link, lstat, mkdir, readlink, rename, rmdir, unlink } from '../util/fsio.ts'
import { assertInput, move as contract, MOVE, ToolError, type MoveInput, type MoveResult } from '@hands/contracts'
import { checkEach } from '../confine/each.ts'
import { resolvePath, type Resolved } from '../confine/resolve.ts'
import { isWithin } from '../confine/roots.ts'
import { changedUnderfoot, destinationExists, intoItself, ioError, named, notADirectory, notCopyable, notFound, samePath } from '../errors/refuse.ts'
import { openChild, openDestParent, pinDir, removeCreatedDirs, type DirHandle } from '../handle/dir.ts'
import { copyFileBetween, copyLinkTo, copyTree } from '../tree/copy.ts'
import { firstOther, listTree } from '../tree/list.ts'
import { removeAt, replaceEntry } from '../tree/place.ts'
import { removeTree } from '../tree/remove.ts'
import { confirmOrRefuse } from '../runtime/confirm.ts'
import type { Context } from '../runtime/context.ts'
import { gateOf, gateWrite, kindOfStats, protectedRefusal, refuseSlashedLink, sameObject, tempName } from '../runtime/guard.ts'

/** Hard links are not possible here (filesystem, permissions or link count), though the rest works. */
const NO_HARD_LINK = new Set(['EPERM', 'EMLINK', 'ENOTSUP', 'EOPNOTSUPP', 'EACCES'])

interface Move {
  src: Resolved
  dest: Resolved
  kind: 'file' | 'dir' | 'link' | 'other'
  srcParent: DirHandle
  destParent: DirHandle
  /** The native helper trees are removed through (Context.helper). */
  helper: string | null
}

/**
 * Copy the source to the new entry `name` of the dest parent (another filesystem), then remove
 * the source — only once the copy is complete. A failed copy is removed and the source is left
 * as it was. `isMade` says `name` already exists as an empty directory made for this move.
 */
async function moveAcrossDevices(m: Move, name: string, isMade: boolean): Promise<void> {
  let isOurs = isMade
  try {
    if (m.kind === 'file') {
      isOurs = true
      await copyFileBetween(m.srcParent.ref, m.src.name, m.destParent.ref, name)
    } else if (m.kind === 'link') {
      await copyLinkTo(await readlink(m.srcParent.at(m.src.name)), m.destParent.ref, name)
      isOurs = true
    } else if (m.kind === 'dir') {
      const from = await openChild(m.srcParent, m.src.name)
      try {
        const entries = await listTree(from, { n: m.src, isReadingLinks: true, access: 'read', tool: MOVE, onHide: 'skip' })
        const other = firstOther(entries)
        if (other !== undefined) throw notCopyable(m.src, `${m.src.real}/${other}`)
        if (!isMade) {
          await mkdir(m.destParent.at(name))
          isOurs = true
        }
        const to = await openChild(m.destParent, name)
        try {
          await copyTree(from.ref, to.ref, entries, m.helper)
        } finally {
          await to.close()
        }
      } finally {
        await from.close()
      }
    } else throw notCopyable(m.src, m.src.real)
  } catch (cause) {
    if (isOurs) await removeAt(m.destParent, name, m.helper).catch(() => undefined)
    if (cause instanceof ToolError) throw cause
    throw ioError(m.src, cause, { preflight: false, state: 'Moving across filesystems, the copy failed and was removed; src is as it was.' })
  }
  try {
    if (m.kind === 'dir') await removeTree(m.srcParent.ref, m.src.name, m.helper)
    else await unlink(m.srcParent.at(m.src.name))
  } catch (cause) {
    throw ioError(m.src, cause, { preflight: false, state: `The copy at ${m.dest.real} is complete, but src could not be fully removed.` })
  }
}

/** Put the source at a dest that did not exist, never replacing anything that appears there meanwhile. */
async function moveToNew(m: Move): Promise<void> {
  const from = m.srcParent.at(m.src.name)
  const to = m.destParent.at(m.dest.name)
  if (m.kind !== 'dir') {
    // link() refuses an existing name, so nothing that appeared at dest is replaced.
    try {
      await link(from, to)
    } catch (cause) {
      const code = errno(cause)
      if (code === 'EEXIST') throw destinationExists(m.dest)
      if (code === 'EXDEV') return moveAcrossDevices(m, m.dest.name, false)
      if (code !== undefined && NO_HARD_LINK.has(code)) {
        const there = await lstat(to).then(
          () => true,
          () => false,
        )
        if (there) throw destinationExists(m.dest)
        return rename(from, to)
      }
      throw cause
    }
    await unlink(from)
    return
  }
  // A directory: claim the name with mkdir (which refuses an existing one), then rename onto
  // that empty directory.
  try {
    await mkdir(to)
  } catch (cause) {
    if (errno(cause) === 'EEXIST') throw destinationExists(m.dest)
    throw cause
  }
  try {
    await rename(from, to)
  } catch (cause) {
    if (errno(cause) === 'EXDEV') return moveAcrossDevices(m, m.dest.name, true)
    await rmdir(to).catch(() => undefined)
    throw cause
  }
}

/** Replace an existing dest (the host confirmed) with the source. */
async function moveOver(m: Move): Promise<void> {
  try {
    await replaceEntry(m.srcParent, m.src.name, m.destParent, m.dest.name, m.helper)
  } catch (cause) {
    if (errno(cause) !== 'EXDEV') throw cause
    const aside = tempName(m.dest.name, 'move')
    await moveAcrossDevices(m, aside, false)
    await replaceEntry(m.destParent, aside, m.destParent, m.dest.name, m.helper)
  }
}

/**
 * move: rename `src` to `dest`, creating missing parents; across filesystems, copy then remove
 * the source once the copy is complete. A final symlink is moved itself. An existing dest
 * (checked with lstat, never left to rename) is refused unless is_overwrite, then replaced
 * whole after the host confirms.
 */
export async function movePath(ctx: Context, input: MoveInput): Promise<MoveResult> {
  const { src: srcGiven, dest: destGiven, is_overwrite } = assertInput(contract, input)
  const isOverwrite = is_overwrite === true
  // Both paths are resolved first, so a refusal names each one outside the roots.
  const both = [
    { label: 'src', given: srcGiven },
    { label: 'dest', given: destGiven },
  ]
  const [src, dest] = (await checkEach(ctx.roots, both, async (n) => {
    if (n.label === 'src') await refuseSlashedLink(ctx, n, MOVE)
    return resolvePath(ctx.roots, n.given, { final: 'nofollow', label: n.label })
  })) as [Resolved, Resolved]
  if (src.stats === null) throw notFound(src)
  const srcProtected = protectedRefusal(ctx, src)
  if (srcProtected !== undefined) throw srcProtected
  if ((await gateOf(ctx, src, 'delete', MOVE)) === 'hide') throw notFound(src)
  const kind = kindOfStats(src.stats)
  await gateWrite(ctx, dest, 'write', MOVE)
  if (kind === 'dir' && isWithin(src.real, dest.real)) {
    throw intoItself(
      `${named(dest)} (${dest.real}) is ${dest.real === src.real ? '' : 'inside '}${named(src)} (${src.real}); a directory cannot be moved into itself.`,
    )
  }
  if (dest.real === src.real) throw samePath(src, dest, dest.real)
  if (dest.stats !== null) {
    const refusal = protectedRefusal(ctx, dest)
    if (refusal !== undefined) throw refusal
    if (!isOverwrite) throw destinationExists(dest)
    if (isWithin(dest.real, src.real)) {
      throw intoItself(`${named(src)} (${src.real}) is inside ${named(dest)} (${dest.real}); replacing dest would remove src.`)
    }
    await gateWrite(ctx, dest, 'delete', MOVE)
  }
  if (dest.isDirForced && kind !== 'dir') throw notADirectory(dest, 'it ends with a slash, so it names a directory, but src is not one')
  if (kind === 'dir' && ctx.gates !== undefined && ctx.gates.length > 0) {
    // Everything inside moves along, so every entry must pass the gates too.
    const top = await pinDir(src.real, src, true)
    try {
      await listTree(top, { n: src, isReadingLinks: false, gates: ctx.gates, access: 'delete', tool: MOVE, onHide: 'refuse' })
    } finally {
      await top.close()
    }
  }
  if (dest.stats !== null) await confirmOrRefuse(ctx, MOVE, 'overwrite', [dest], [destGiven])

  // Act.
  const srcParent = await pinDir(src.parent, src, true)
  let destParent: DirHandle | null = null
  const createdParents: string[] = []
  try {
    const now = await lstat(srcParent.at(src.name)).catch(() => null)
    if (now === null || !sameObject(now, src.stats)) throw changedUnderfoot(src, `${src.real} was removed or replaced`, true)
    const made = await openDestParent(dest)
    destParent = made.dir
    createdParents.push(...made.created)
    const m: Move = { src, dest, kind, srcParent, destParent, helper: ctx.helper }
    try {
      if (dest.stats === null) await moveToNew(m)
      else await moveOver(m)
    } catch (cause) {
      await removeCreatedDirs(createdParents)
      if (cause instanceof ToolError) throw cause
      throw ioError(src, cause, { preflight: false, state: `Check both ${src.real} and ${dest.real} before retrying.` })
    }
  } finally {
    await srcParent.close()
    await destParent?.close()
  }
  return { src: srcGiven, dest: destGiven }
}
