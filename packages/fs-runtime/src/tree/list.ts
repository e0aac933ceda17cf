import type { Dirent } from 'node:fs'
import { readdirTyped, readlink } from '../util/fsio.ts'
import { accessDenied, changedUnderfoot, ioError, type Named } from '../errors/refuse.ts'
import { consultGates, type PathAccess, type PathGate } from '../confine/gate.ts'
import { openChild, type DirHandle } from '../handle/dir.ts'
import { createLimiter, TaskGroup, type Limiter } from '../util/limit.ts'

/** One entry of a listed tree. */
export interface TreeEntry {
  name: string
  kind: 'file' | 'dir' | 'link' | 'other'
  /** The symlink's text, for links when asked for. */
  text?: string
  /** The entries of a directory. */
  children?: TreeEntry[]
}

export interface ListOptions {
  /** Names the tree's top in messages. */
  n: Named
  /** Read each symlink's text. */
  isReadingLinks: boolean
  gates?: readonly PathGate[] | undefined
  access: PathAccess
  tool: string
  /** What a gate's 'hide' does to an entry inside the tree: leave it out, or refuse the call. */
  onHide: 'skip' | 'refuse'
}

/** Concurrently listed subtrees at most; beyond this a walker lists a subtree itself. */
const DIR_SLOTS = 8

export function kindOf(d: Pick<Dirent, 'isFile' | 'isDirectory' | 'isSymbolicLink'>): TreeEntry['kind'] {
  if (d.isFile()) return 'file'
  if (d.isDirectory()) return 'dir'
  if (d.isSymbolicLink()) return 'link'
  return 'other'
}

/**
 * List everything under a pinned directory, descending without following symlinks (each
 * child directory is opened through its pinned parent with O_NOFOLLOW). With gates, every
 * entry is put to them: 'deny' refuses the call, 'hide' skips or refuses per `onHide`.
 */
export async function listTree(dir: DirHandle, options: ListOptions): Promise<TreeEntry[]> {
  return listUnder(dir, options, createLimiter(DIR_SLOTS))
}

async function listUnder(dir: DirHandle, options: ListOptions, slots: Limiter): Promise<TreeEntry[]> {
  let dirents: Dirent[]
  try {
    dirents = await readdirTyped(dir.self)
  } catch (cause) {
    throw ioError(options.n, cause, { preflight: true })
  }
  const entries: TreeEntry[] = []
  const group = new TaskGroup(slots)
  try {
    for (const d of dirents) {
      const entry: TreeEntry = { name: d.name, kind: kindOf(d) }
      if (options.gates !== undefined && options.gates.length > 0) {
        const verdict = await consultGates(options.gates, dir.realOf(d.name), options.access, options.tool)
        if (verdict === 'deny' || (verdict === 'hide' && options.onHide === 'refuse')) {
          throw accessDenied(options.n, 'it holds a path the host protects')
        }
        if (verdict === 'hide') continue
      }
      entries.push(entry)
      if (entry.kind === 'link' && options.isReadingLinks) {
        group.push(
          readlink(dir.at(d.name)).then((text) => {
            entry.text = text
          }),
        )
      } else if (entry.kind === 'dir') {
        const sub = async () => {
          let child: DirHandle
          try {
            child = await openChild(dir, d.name)
          } catch {
            throw changedUnderfoot(options.n, `${dir.realOf(d.name)} is no longer a directory`, true)
          }
          try {
            entry.children = await listUnder(child, options, slots)
          } finally {
            await child.close()
          }
        }
        await group.add(sub)
      }
    }
  } catch (cause) {
    await group.wait().catch(() => undefined)
    throw cause
  }
  try {
    await group.wait()
  } catch (cause) {
    if (cause instanceof Error && 'is_preflight' in cause) throw cause
    throw ioError(options.n, cause, { preflight: true })
  }
  return entries
}

/** Every symlink in a listed tree with its path relative to the top. */
export function linksOf(entries: readonly TreeEntry[], prefix = ''): Array<{ rel: string; text: string }> {
  const out: Array<{ rel: string; text: string }> = []
  for (const e of entries) {
    const rel = prefix === '' ? e.name : `${prefix}/${e.name}`
    if (e.kind === 'link' && e.text !== undefined) out.push({ rel, text: e.text })
    else if (e.children !== undefined) out.push(...linksOf(e.children, rel))
  }
  return out
}

/** The first entry that is neither file, directory nor symlink, by relative path. */
export function firstOther(entries: readonly TreeEntry[], prefix = ''): string | undefined {
  for (const e of entries) {
    const rel = prefix === '' ? e.name : `${prefix}/${e.name}`
    if (e.kind === 'other') return rel
    if (e.children !== undefined) {
      const found = firstOther(e.children, rel)
      if (found !== undefined) return found
    }
  }
  return undefined
}
