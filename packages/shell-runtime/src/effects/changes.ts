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
  return { exists: true, type, dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs }
}

const isUnder = (dir: string, path: string) => path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`)
const identity = (s: PathState) => `${s.dev}:${s.ino}`

/** True when the entry at a path changed between `a` and `b` (a directory only when it was made, removed or replaced). */
function isChanged(a: PathState, b: PathState): boolean {
  if (a.exists !== b.exists) return true
  if (!a.exists) return false
  if (a.type !== b.type || a.ino !== b.ino || a.dev !== b.dev) return true
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
 * the roots are counted apart (the session's TMPDIR and device nodes are not changes).
 */
export function changesBetween(input: {
  paths: Iterable<string>
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
      if (!isUnder(tmpDir, path) && !isUnder('/dev', path) && a.type !== 'other' && b.type !== 'other') outside++
      continue
    }
    if (!a.exists) created.push([path, b])
    else if (!b.exists) deleted.push([path, a])
    else modified.push([path, b])
  }
  // A deleted entry that stands at another name now was renamed there.
  const renamed: Array<{ from: string; to: string; state: PathState }> = []
  const byIdentity = new Map<string, number>()
  for (const [i, [, s]] of deleted.entries()) byIdentity.set(identity(s), i)
  const taken = new Set<number>()
  const pairUp = (list: Array<[string, PathState]>) =>
    list.filter(([to, s]) => {
      const i = byIdentity.get(identity(s))
      if (i === undefined || taken.has(i)) return true
      taken.add(i)
      renamed.push({ from: (deleted[i] as [string, PathState])[0], to, state: s })
      return false
    })
  const createdLeft = pairUp(created)
  const modifiedLeft = pairUp(modified)
  const deletedLeft = deleted.filter((_, i) => !taken.has(i))

  const show = (path: string, s: PathState) => {
    const rel = relative(workspace, path)
    const shown = rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? path : rel
    return s.type === 'dir' ? `${shown}/` : shown
  }
  /** The first CHANGES_LISTED, leaving out what lies under a directory listed before it. */
  const name = (list: Array<[string, PathState]>) => {
    const out: string[] = []
    const dirs: string[] = []
    for (const [path, s] of list) {
      if (out.length === CHANGES_LISTED) break
      if (dirs.some((d) => isUnder(d, path))) continue
      out.push(show(path, s))
      if (s.type === 'dir') dirs.push(path)
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
    note: limits.length === 0 ? null : `${limits.join('; ')}.`,
  }
}
