import { lstatSync } from 'node:fs'
import { isAbsolute, relative } from 'node:path'
import type { Changes } from '@hands/contracts'
import { NOTHING, type PathState } from './record.ts'

/** Paths of each kind a result names; the rest are counted. */
export const CHANGES_LISTED = 10

/** What stands at `path` now (not following a final symlink). */
export function stateNow(path: string): PathState {
  const st = lstatSync(path, { bigint: true, throwIfNoEntry: false })
  if (st === undefined) return NOTHING
  const type = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'other'
  return {
    exists: true,
    type,
    dev: st.dev,
    ino: st.ino,
    size: st.size,
    mtimeNs: st.mtimeNs,
    ctimeNs: st.ctimeNs,
    perm: Number(st.mode & 0o7777n),
    uid: Number(st.uid),
    gid: Number(st.gid),
  }
}

const isUnder = (dir: string, path: string) => path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`)

/** Kernel file systems: what a job writes there (bubblewrap's uid_map, a /dev/null) is not a change
 * on disk. /dev/shm is a tmpfs where files live like anywhere else. */
const NOT_DISK = ['/dev', '/proc', '/sys']
const isNotDisk = (path: string) => NOT_DISK.some((d) => isUnder(d, path)) && !isUnder('/dev/shm', path)
const identity = (s: PathState) => `${s.dev}:${s.ino}`

/**
 * True when the entry at a path changed between `a` and `b`. A directory counts as changed only
 * when it was made, removed, replaced, or given other permissions or owner: what is added inside
 * it is reported by its own path.
 */
function isChanged(a: PathState, b: PathState): boolean {
  if (a.exists !== b.exists) return true
  if (!a.exists) return false
  if (a.type !== b.type || a.ino !== b.ino || a.dev !== b.dev) return true
  if (a.perm !== b.perm || a.uid !== b.uid || a.gid !== b.gid) return true
  if (a.type === 'dir') return false
  return a.size !== b.size || a.mtimeNs !== b.mtimeNs || a.ctimeNs !== b.ctimeNs
}

/** What a change account knows beside the paths: whether the observer saw everything. */
export interface Observation {
  /** The observer ran and saw the job's calls. */
  isObserved: boolean
  /** Why it did not, when it did not (a sentence), else null. */
  unobservedWhy: string | null
  /** Calls whose paths could not be read. */
  unreadable: number
  /** Calls past the observer's limit on distinct paths. */
  overLimit: number
}

/**
 * The changes between `before` and `now` for the paths they name, as a result reports them: under
 * the roots, by kind (a deleted path whose entry appears at a created or replaced one is a
 * rename), paths relative to the workspace (absolute outside it), directories with a trailing
 * `/`, the first CHANGES_LISTED of each kind named and every one counted; a path created or
 * deleted under a directory created or deleted with it is counted but not named. Changes outside
 * the roots are counted apart (the session's TMPDIR, /dev, /proc and /sys are not changes).
 */
export function changesBetween(input: {
  paths: Iterable<string>
  /** The renames the job asked for ([from, to]): a deleted entry is paired only along these. */
  renames: ReadonlyArray<readonly [string, string]>
  before: (path: string) => PathState
  now: (path: string) => PathState
  roots: readonly string[]
  workspace: string
  tmpDir: string
  observation: Observation
}): Changes {
  const { roots, workspace, tmpDir } = input
  const created: Array<[string, PathState]> = []
  const deleted: Array<[string, PathState]> = []
  const modified: Array<[string, PathState]> = []
  let outside = 0
  for (const path of input.paths) {
    const a = input.before(path)
    const b = input.now(path)
    if (!isChanged(a, b)) continue
    if (!roots.some((r) => isUnder(r, path))) {
      if (!isUnder(tmpDir, path) && !isNotDisk(path) && a.type !== 'other' && b.type !== 'other') outside++
      continue
    }
    if (!a.exists) created.push([path, b])
    else if (!b.exists) deleted.push([path, a])
    else modified.push([path, b])
  }
  // A deleted entry that stands, the same inode, at a name its renames lead to was renamed there
  // (the same inode number alone could be a new file reusing it).
  const next = new Map<string, string[]>()
  for (const [from, to] of input.renames) next.set(from, [...(next.get(from) ?? []), to])
  const arrived = new Map<string, [string, PathState]>()
  for (const entry of [...created, ...modified]) arrived.set(entry[0], entry)
  const renamed: Array<{ from: string; to: string; state: PathState }> = []
  const landed = new Set<string>()
  const deletedLeft = deleted.filter(([from, s]) => {
    const seen = new Set([from])
    let frontier = [from]
    for (let depth = 0; depth < 16 && frontier.length > 0; depth++) {
      const following: string[] = []
      for (const p of frontier) {
        for (const to of next.get(p) ?? []) {
          const hit = arrived.get(to)
          if (hit !== undefined && !landed.has(to) && identity(hit[1]) === identity(s)) {
            landed.add(to)
            renamed.push({ from, to, state: hit[1] })
            return false
          }
          if (!seen.has(to)) seen.add(to), following.push(to)
        }
      }
      frontier = following
    }
    return true
  })
  const createdLeft = created.filter(([p]) => !landed.has(p))
  const modifiedLeft = modified.filter(([p]) => !landed.has(p))

  const show = (path: string, s: PathState) => {
    const rel = relative(workspace, path)
    const shown = rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? path : rel
    return s.type === 'dir' ? `${shown}/` : shown
  }
  /** The first CHANGES_LISTED, leaving out what lies under a directory of the same list. */
  const name = (list: Array<[string, PathState]>) => {
    const dirs = new Set(list.filter(([, s]) => s.type === 'dir').map(([p]) => p))
    const isInside = (path: string) => {
      for (let at = path.lastIndexOf('/'); at > 0; at = path.lastIndexOf('/', at - 1)) if (dirs.has(path.slice(0, at))) return true
      return false
    }
    const out: string[] = []
    for (const [path, s] of list) {
      if (out.length === CHANGES_LISTED) break
      if (!isInside(path)) out.push(show(path, s))
    }
    return out
  }
  const o = input.observation
  const limits: string[] = []
  if (!o.isObserved) limits.push(o.unobservedWhy ?? 'not observed')
  if (o.unreadable > 0) limits.push(`${o.unreadable} change${o.unreadable === 1 ? '' : 's'} by a process that hides its memory could not be named`)
  if (o.overLimit > 0) limits.push(`${o.overLimit} more change${o.overLimit === 1 ? '' : 's'} past the observer's limit on paths were not named or counted`)
  return {
    created: name(createdLeft),
    modified: name(modifiedLeft),
    deleted: name(deletedLeft),
    renamed: renamed.slice(0, CHANGES_LISTED).map((r) => ({ from: show(r.from, r.state), to: show(r.to, r.state) })),
    counts: { created: createdLeft.length, modified: modifiedLeft.length, deleted: deletedLeft.length, renamed: renamed.length },
    outside_roots: outside,
    is_complete: limits.length === 0,
    note: limits.length === 0 ? null : sentence(limits.join('; ')),
  }
}

const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}.`

/** The account of a job that changed nothing (one never started). */
export const NO_CHANGES: Changes = {
  created: [],
  modified: [],
  deleted: [],
  renamed: [],
  counts: { created: 0, modified: 0, deleted: 0, renamed: 0 },
  outside_roots: 0,
  is_complete: true,
  note: null,
}
