import { lstatSync, readdirSync, realpathSync } from 'node:fs'
import { dirname, isAbsolute, relative } from 'node:path'
import type { Changes } from '@hands/contracts'
import { NOTHING, type PathState } from './record.ts'

/** Paths of each kind a result names; the rest are counted. */
export const CHANGES_LISTED = 10

/**
 * Paths here are byte strings: each character one byte of the name (latin1), as the relay records
 * them, so a name that is not UTF-8 is kept exactly. `bytes()` turns a path the host holds into one,
 * `displayName()` one back into text for a result.
 */
export const bytes = (path: string): string => Buffer.from(path, 'utf8').toString('latin1')

/** A byte-string path as text: UTF-8 where it is, each other byte as `\xHH` (never dropped). */
export function displayName(path: string): string {
  const b = Buffer.from(path, 'latin1')
  let out = ''
  let at = 0
  while (at < b.length) {
    const lead = b[at] as number
    const size = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0
    let ok = size > 0 && at + size <= b.length
    for (let k = 1; ok && k < size; k++) ok = ((b[at + k] as number) & 0xc0) === 0x80
    const text = ok ? b.toString('utf8', at, at + size) : ''
    // Overlong and surrogate forms decode to U+FFFD: they are not UTF-8 either.
    if (ok && !text.includes('\ufffd')) {
      out += text
      at += size
    } else {
      out += `\\x${lead.toString(16).padStart(2, '0')}`
      at += 1
    }
  }
  return out
}

/**
 * What stands now at each path of an account, read once per path: NOTHING at a name whose
 * directory is now reached through a symlink (a directory replaced by a link, or a name the job
 * could not make before a link brought its directory in): that name is no entry of its own, and
 * what it leads to is accounted under its real name. Directories are checked once each.
 */
export function nowReader(): (path: string) => PathState {
  const isRealDir = new Map<string, boolean>()
  const real = (dir: string): boolean => {
    let hit = isRealDir.get(dir)
    if (hit === undefined) {
      try {
        hit = realpathSync.native(Buffer.from(dir, 'latin1'), { encoding: 'buffer' }).toString('latin1') === dir
      } catch {
        hit = true // missing: lstat below finds nothing there either
      }
      isRealDir.set(dir, hit)
    }
    return hit
  }
  return (path) => (real(dirname(path)) ? stateNow(path) : NOTHING)
}

/** What stands at `path` (a byte string) now (not following a final symlink). */
export function stateNow(path: string): PathState {
  const st = lstatSync(Buffer.from(path, 'latin1'), { bigint: true, throwIfNoEntry: false })
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
    nlink: Number(st.nlink),
    btimeNs: st.birthtimeNs,
  }
}

const isUnder = (dir: string, path: string) => path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`)

/** Kernel file systems: what a job writes there (bubblewrap's uid_map, a /dev/null) is not a change
 * on disk. /dev/shm is a tmpfs where files live like anywhere else. */
const NOT_DISK = ['/dev', '/proc', '/sys']
const isNotDisk = (path: string) => NOT_DISK.some((d) => isUnder(d, path)) && !isUnder('/dev/shm', path)
/** One entry under two names, or at two times: the same inode, type and birth time (a new entry that reuses a freed inode number differs in the last two). */
const isSameEntry = (a: PathState, b: PathState) =>
  a.dev === b.dev && a.ino === b.ino && a.type === b.type && (a.btimeNs === 0n || b.btimeNs === 0n || a.btimeNs === b.btimeNs)

/**
 * True when the entry at a path changed between `a` and `b`. A directory counts as changed only
 * when it was made, removed, replaced, or given other permissions or owner: what is added inside
 * it is reported by its own path.
 */
function isChanged(a: PathState, b: PathState, isMoved: boolean): boolean {
  if (a.exists !== b.exists) return true
  if (!a.exists) return false
  if (!isSameEntry(a, b)) return true
  if (a.perm !== b.perm || a.uid !== b.uid || a.gid !== b.gid) return true
  if (a.type === 'dir') return false
  // A rename moves the change time alone: an entry renamed away and back, the same as before, is unchanged.
  return a.size !== b.size || a.mtimeNs !== b.mtimeNs || (a.ctimeNs !== b.ctimeNs && !isMoved)
}

/** Entries a walk of the roots looks at, at most, for the other names of a multiply-linked file. */
const LINK_WALK_LIMIT = 50_000

/**
 * Every name, under `dirs`, of the files `inodes` (`dev:ino`); `isCut` when the walk stopped at
 * LINK_WALK_LIMIT entries before it was done. Paths are byte strings.
 */
function namesOf(inodes: ReadonlySet<string>, dirs: readonly string[]): { names: Map<string, string[]>; isCut: boolean } {
  const names = new Map<string, string[]>()
  let seen = 0
  const stack = [...dirs]
  while (stack.length > 0) {
    const dir = stack.pop() as string
    let entries
    try {
      entries = readdirSync(Buffer.from(dir, 'latin1'), { withFileTypes: true, encoding: 'buffer' })
    } catch {
      continue
    }
    for (const e of entries) {
      if (++seen > LINK_WALK_LIMIT) return { names, isCut: true }
      const path = `${dir === '/' ? '' : dir}/${e.name.toString('latin1')}`
      if (e.isDirectory()) stack.push(path)
      else if (e.isFile()) {
        const st = lstatSync(Buffer.from(path, 'latin1'), { bigint: true, throwIfNoEntry: false })
        const id = st === undefined ? '' : `${st.dev}:${st.ino}`
        if (inodes.has(id)) names.set(id, [...(names.get(id) ?? []), path])
      }
    }
  }
  return { names, isCut: false }
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
  /** Calls whose path (or working directory) was too long to name. */
  tooLong: number
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
  /**
   * Files the job wrote whose change can show under names the record does not hold (`dev:ino`,
   * each with its state before): every name of each is looked for.
   */
  written?: ReadonlyMap<string, PathState>
  before: (path: string) => PathState
  now: (path: string) => PathState
  roots: readonly string[]
  workspace: string
  tmpDir: string
  observation: Observation
}): Changes {
  const roots = input.roots.map(bytes)
  const workspace = bytes(input.workspace)
  const tmpDir = bytes(input.tmpDir)
  const created: Array<[string, PathState]> = []
  const deleted: Array<[string, PathState]> = []
  const modified: Array<[string, PathState]> = []
  const moved = new Set(input.renames.flat())
  let outside = 0
  for (const path of input.paths) {
    const a = input.before(path)
    const b = input.now(path)
    if (!isChanged(a, b, moved.has(path))) continue
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
          if (hit !== undefined && !landed.has(to) && isSameEntry(hit[1], s)) {
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
  // A file with several names the job wrote, or wrote through a descriptor whose name is gone (the
  // relay notes each: `written`), changed under every name it has: each under the roots is
  // modified too, names elsewhere are counted outside (TMPDIR's are the job's own scratch). One
  // walk of the roots finds them, for every such file.
  let isLinkWalkCut = false
  const prior = input.written ?? new Map<string, PathState>()
  if (prior.size > 0) {
    const found = namesOf(new Set(prior.keys()), [...roots, tmpDir])
    isLinkWalkCut = found.isCut
    const named = new Set([...modifiedLeft, ...createdLeft].map(([p]) => p))
    for (const r of renamed) named.add(r.to)
    for (const [id, was] of prior) {
      const paths = found.names.get(id)
      // No name under the roots or TMPDIR: every name it has is elsewhere.
      if (paths === undefined) {
        if (!isLinkWalkCut) outside += was.nlink
        continue
      }
      const now = input.now(paths[0] as string)
      // A new file that took the inode number of one the job wrote and then removed is not it.
      if (!isSameEntry(was, now) || !isChanged(was, { ...now, ctimeNs: was.ctimeNs }, false)) continue
      for (const p of paths) if (!named.has(p) && roots.some((r) => isUnder(r, p))) named.add(p), modifiedLeft.push([p, now])
      outside += Math.max(0, now.nlink - paths.length)
    }
  }

  const show = (path: string, s: PathState) => {
    const rel = relative(workspace, path)
    const shown = displayName(rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? path : rel)
    return s.type === 'dir' ? `${shown}/` : shown
  }
  /**
   * The first CHANGES_LISTED; for what was made or removed, leaving out what lies under a directory
   * of the same list (its count holds it). A modified directory (other permissions, or replaced by
   * another) hides nothing: what changed in it is named.
   */
  const name = (list: Array<[string, PathState]>, isNested = true) => {
    const dirs = new Set(isNested ? list.filter(([, s]) => s.type === 'dir').map(([p]) => p) : [])
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
  if (o.tooLong > 0) limits.push(`${o.tooLong} change${o.tooLong === 1 ? '' : 's'} under a path longer than 4,096 bytes could not be named`)
  if (isLinkWalkCut)
    limits.push(`the other names of a file with several were looked for among the first ${LINK_WALK_LIMIT.toLocaleString('en-US')} entries of the roots only`)
  return {
    created: name(createdLeft),
    modified: name(modifiedLeft, false),
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
