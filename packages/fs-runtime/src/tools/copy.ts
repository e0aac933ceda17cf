import { errno, mkdir, readlink } from '../util/fsio.ts'
import { assertInput, copy as contract, COPY, ToolError, type CopyInput, type CopyResult } from '@hands/contracts'
import { requireLinkInside } from '../confine/link.ts'
import { checkEach } from '../confine/each.ts'
import { resolvePath, type Resolved } from '../confine/resolve.ts'
import { isWithin } from '../confine/roots.ts'
import { destinationExists, intoItself, ioError, named, notADirectory, notCopyable, notFound, samePath } from '../errors/refuse.ts'
import { openChild, openDestParent, pinDir, removeCreatedDirs, type DirHandle } from '../handle/dir.ts'
import { copyFileBetween, copyLinkTo, copyTree, type MadeLink } from '../tree/copy.ts'
import { firstOther, linksOf, listTree, type TreeEntry } from '../tree/list.ts'
import { removeAt, replaceEntry } from '../tree/place.ts'
import { confirmOrRefuse } from '../runtime/confirm.ts'
import type { Context } from '../runtime/context.ts'
import { gateOf, gateWrite, kindOfStats, protectedRefusal, tempName } from '../runtime/guard.ts'

function joinReal(dir: string, rel: string): string {
  return rel === '' ? dir : dir === '/' ? `/${rel}` : `${dir}/${rel}`
}

function dirOfRel(rel: string): string {
  const cut = rel.lastIndexOf('/')
  return cut < 0 ? '' : rel.slice(0, cut)
}

/** What the source is, checked and pinned. */
interface Source {
  r: Resolved
  kind: 'file' | 'dir' | 'link'
  /** The pinned source directory (kind 'dir') or the source's pinned parent (otherwise). */
  handle: DirHandle
  entries: TreeEntry[]
  linkText: string | null
}

/** Gate and pin the resolved source; list a directory source (gates per entry, links read). */
async function checkSource(ctx: Context, r: Resolved, destParent: string): Promise<Source> {
  if (r.stats === null) throw notFound(r)
  if ((await gateOf(ctx, r, 'read', COPY)) === 'hide') throw notFound(r)
  const kind = kindOfStats(r.stats)
  if (kind === 'other') throw notCopyable(r, r.real)
  if (kind === 'dir') {
    const handle = await pinDir(r.real, r, true)
    try {
      const entries = await listTree(handle, { n: r, isReadingLinks: true, gates: ctx.gates, access: 'read', tool: COPY, onHide: 'skip' })
      const other = firstOther(entries)
      if (other !== undefined) throw notCopyable(r, joinReal(r.real, other))
      return { r, kind, handle, entries, linkText: null }
    } catch (cause) {
      await handle.close()
      throw cause
    }
  }
  const handle = await pinDir(r.parent, r, true)
  try {
    let linkText: string | null = null
    if (kind === 'link') {
      try {
        linkText = await readlink(handle.at(r.name))
      } catch (cause) {
        throw ioError(r, cause, { preflight: true })
      }
      await requireLinkInside(ctx.roots, destParent, linkText, r)
    }
    return { r, kind, handle, entries: [], linkText }
  } catch (cause) {
    await handle.close()
    throw cause
  }
}

/**
 * copy: copy a file, a symlink (as a symlink, its text unchanged, only when it resolves inside
 * the roots from where the copy will sit) or a directory tree to `dest`, creating missing
 * parents. An existing dest is refused unless is_overwrite; then, after the host confirms, the
 * copy is made beside it and swapped in, so dest is replaced whole (never merged) and only once
 * the copy is complete.
 */
export async function copyPath(ctx: Context, input: CopyInput): Promise<CopyResult> {
  const { src: srcGiven, dest: destGiven, is_overwrite } = assertInput(contract, input)
  const isOverwrite = is_overwrite === true
  // Both paths are resolved first, so a refusal names each one outside the roots.
  const both = [
    { label: 'src', given: srcGiven },
    { label: 'dest', given: destGiven },
  ]
  const [srcAt, dest] = (await checkEach(ctx.roots, both, (n) => resolvePath(ctx.roots, n.given, { final: 'nofollow', label: n.label }))) as [
    Resolved,
    Resolved,
  ]
  const src = await checkSource(ctx, srcAt, dest.parent)
  let destParent: DirHandle | null = null
  const createdParents: string[] = []
  try {
    await gateWrite(ctx, dest, 'write', COPY)
    if (src.kind === 'dir' && isWithin(src.r.real, dest.real)) {
      throw intoItself(
        `${named(dest)} (${dest.real}) is ${dest.real === src.r.real ? '' : 'inside '}${named(src.r)} (${src.r.real}); a directory cannot be copied into itself.`,
      )
    }
    if (dest.real === src.r.real) throw samePath(src.r, dest, dest.real)
    if (dest.stats !== null) {
      const refusal = protectedRefusal(ctx, dest)
      if (refusal !== undefined) throw refusal
      if (!isOverwrite) throw destinationExists(dest)
      if (isWithin(dest.real, src.r.real)) {
        throw intoItself(`${named(src.r)} (${src.r.real}) is inside ${named(dest)} (${dest.real}); replacing dest would remove src.`)
      }
      await gateWrite(ctx, dest, 'delete', COPY)
    }
    if (dest.isDirForced && src.kind !== 'dir') throw notADirectory(dest, 'it ends with a slash, so it names a directory, but src is not one')
    // Each symlink of the tree, judged where it will stand. A dest that is not a directory is
    // replaced, never entered: judge the links under a name that does not exist in its place.
    const treeAt = dest.stats !== null && !dest.stats.isDirectory() ? joinReal(dest.parent, tempName(dest.name, 'judge')) : dest.real
    for (const { rel, text } of linksOf(src.entries)) {
      await requireLinkInside(ctx.roots, joinReal(treeAt, dirOfRel(rel)), text, { label: 'src', given: `${srcGiven.replace(/\/+$/, '')}/${rel}` })
    }
    if (dest.stats !== null) await confirmOrRefuse(ctx, COPY, 'overwrite', [dest], [destGiven])

    // Act: everything below changes the filesystem.
    const made = await openDestParent(dest)
    destParent = made.dir
    createdParents.push(...made.created)
    const target = dest.stats !== null ? tempName(dest.name, 'copy') : dest.name
    let isTargetOurs = false
    try {
      try {
        const links = await writeCopy(
          src,
          destParent,
          target,
          () => {
            isTargetOurs = true
          },
          ctx.helper,
        )
        // A symlink inside a copied tree can resolve differently through other copied
        // symlinks than it could be judged before they existed: check each one as placed.
        const top = joinReal(dest.parent, target)
        for (const link of links) {
          const n = { label: 'src', given: `${srcGiven.replace(/\/+$/, '')}/${link.real.slice(top.length + 1)}` }
          await requireLinkInside(ctx.roots, link.real.slice(0, link.real.lastIndexOf('/')), link.text, n)
        }
      } catch (cause) {
        if (!isTargetOurs && errno(cause) === 'EEXIST') throw destinationExists(dest)
        throw cause
      }
      if (target !== dest.name) await replaceEntry(destParent, target, destParent, dest.name, ctx.helper)
    } catch (cause) {
      if (isTargetOurs) await removeAt(destParent, target, ctx.helper).catch(() => undefined)
      await removeCreatedDirs(createdParents)
      if (cause instanceof ToolError) {
        throw cause.is_preflight && isTargetOurs
          ? new ToolError({ ...cause.toFields(), message: `${cause.message} The partial copy was removed.`, is_preflight: false })
          : cause
      }
      throw ioError(dest, cause, {
        preflight: false,
        state: isTargetOurs ? 'The partial copy was removed; dest is as it was.' : 'Nothing was copied.',
      })
    }
  } finally {
    await src.handle.close()
    await destParent?.close()
  }
  return { src: srcGiven, dest: destGiven }
}

/**
 * Create the copy of `src` as the entry `name` of `dest`, calling `mark` once that entry
 * exists (so a failure knows to remove it). Returns the symlinks made inside a copied tree,
 * which get checked.
 */
async function writeCopy(src: Source, dest: DirHandle, name: string, mark: () => void, helper: string | null): Promise<MadeLink[]> {
  if (src.kind !== 'dir') {
    try {
      if (src.kind === 'file') await copyFileBetween(src.handle.ref, src.r.name, dest.ref, name)
      else await copyLinkTo(src.linkText ?? '', dest.ref, name)
      mark()
      return []
    } catch (cause) {
      // A file copy that failed after creating its destination leaves a partial file.
      if (errno(cause) !== 'EEXIST' && src.kind === 'file') mark()
      throw cause
    }
  }
  await mkdir(dest.at(name))
  mark()
  const top = await openChild(dest, name)
  try {
    return await copyTree(src.handle.ref, top.ref, src.entries, helper)
  } finally {
    await top.close()
  }
}
