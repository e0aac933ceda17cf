import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { readMounts } from './mountinfo.ts'

/** Host limits on everything one session's commands hold at once; absent means unlimited. */
export interface SessionLimitOptions {
  /** Bytes of memory the session's commands may use together (the kernel's OOM killer acts inside them past it). */
  memoryLimit?: number
  /** Processes (and threads) the session's commands may have at once. */
  processLimit?: number
}

/** Where a session's limits live. */
export interface SessionLimits {
  /** `cgroup.procs` files every job's first process joins (cgroup v1); empty when the session cgroup holds the limits (v2). */
  join: string[]
  /** Cgroup directories made for the limits, removed when the session ends (v1). */
  dirs: string[]
  /** One line for the summary. */
  summary: string
}

const CONTROLLERS = { memoryLimit: 'memory', processLimit: 'pids' } as const

/** This process's cgroup directory in the v1 hierarchy of `controller`, when this process may make groups there; else null. */
function v1Dir(controller: string): string | null {
  let own: string
  try {
    own = readFileSync('/proc/self/cgroup', 'utf8')
  } catch {
    return null
  }
  const line = own.split('\n').find((l) => (l.split(':')[1] ?? '').split(',').includes(controller))
  if (line === undefined) return null
  const path = line.slice(line.indexOf(':', line.indexOf(':') + 1) + 1)
  for (const { fstype, root, mountPoint, superOptions } of readMounts()) {
    if (fstype !== 'cgroup' || !superOptions.includes(controller)) continue
    const rel = root === '/' ? path : path === root || path.startsWith(`${root}/`) ? path.slice(root.length) : null
    if (rel === null) continue
    const dir = join(mountPoint, rel)
    try {
      accessSync(dir, constants.W_OK)
      return dir
    } catch {
      // not ours to write: look on
    }
  }
  return null
}

function readList(file: string): string[] {
  try {
    return readFileSync(file, 'latin1').trim().split(/\s+/)
  } catch {
    return []
  }
}

const human = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024} MiB` : `${bytes} bytes`)

/** The limits the host asked for. */
function askedLimits(options: SessionLimitOptions): Array<keyof typeof CONTROLLERS> {
  return (Object.keys(CONTROLLERS) as Array<keyof typeof CONTROLLERS>).filter((k) => options[k] !== undefined)
}

function unholdable(key: keyof typeof CONTROLLERS, session: string | null): Error {
  const controller = CONTROLLERS[key]
  return new Error(
    `${key}: no cgroup can hold it here. hands needs cgroup v2 with the ${controller} controller delegated to its cgroup (listed in ${session === null ? 'cgroup.subtree_control' : join(dirname(session), 'cgroup.subtree_control')}), or a writable cgroup v1 ${controller} hierarchy`,
  )
}

/**
 * Throw as applySessionLimits would, without making anything: `ownCgroup` is this process's
 * writable cgroup v2 directory, under which a session's cgroup would be made (null for none).
 */
export function checkSessionLimits(options: SessionLimitOptions, ownCgroup: string | null): void {
  const asked = askedLimits(options)
  const delegated = ownCgroup === null ? [] : readList(join(ownCgroup, 'cgroup.subtree_control'))
  if (ownCgroup !== null && asked.every((k) => delegated.includes(CONTROLLERS[k]))) return
  for (const key of asked) if (v1Dir(CONTROLLERS[key]) === null) throw unholdable(key, ownCgroup === null ? null : join(ownCgroup, 'session'))
}

/**
 * Put a session's limits in place. With cgroup v2 (`session` is the session's cgroup) the limits
 * go on it when its parent delegates the controllers to it (they are listed in the parent's
 * `cgroup.subtree_control`); otherwise on cgroup v1 memory / pids hierarchies this process may
 * write (root), in a group named `name` that every job joins. Throws, naming what was looked for,
 * when neither can hold them. Null when no limit is asked.
 */
export function applySessionLimits(options: SessionLimitOptions, name: string, session: string | null): SessionLimits | null {
  const asked = askedLimits(options)
  if (asked.length === 0) return null
  const words = [
    ...(options.memoryLimit === undefined ? [] : [`memory ${human(options.memoryLimit)}`]),
    ...(options.processLimit === undefined ? [] : [`${options.processLimit} processes`]),
  ].join(', ')
  const delegated = session === null ? [] : readList(join(dirname(session), 'cgroup.subtree_control'))
  if (session !== null && asked.every((k) => delegated.includes(CONTROLLERS[k]))) {
    if (options.memoryLimit !== undefined) writeFileSync(join(session, 'memory.max'), String(options.memoryLimit))
    if (options.processLimit !== undefined) writeFileSync(join(session, 'pids.max'), String(options.processLimit))
    return { join: [], dirs: [], summary: `limits: ${words} for all of the session's commands together (cgroup v2)` }
  }
  const made: string[] = []
  try {
    for (const key of asked) {
      const controller = CONTROLLERS[key]
      const parent = v1Dir(controller)
      if (parent === null) throw unholdable(key, session)
      const dir = join(parent, name)
      mkdirSync(dir)
      made.push(dir)
      if (key === 'memoryLimit') {
        const bytes = String(options.memoryLimit)
        writeFileSync(join(dir, 'memory.limit_in_bytes'), bytes)
        // With swap accounting, memory and swap together: a job cannot get past the limit by swapping.
        if (existsSync(join(dir, 'memory.memsw.limit_in_bytes'))) writeFileSync(join(dir, 'memory.memsw.limit_in_bytes'), bytes)
      } else {
        writeFileSync(join(dir, 'pids.max'), String(options.processLimit))
      }
    }
  } catch (err) {
    removeLimitDirs(made)
    throw err
  }
  return { join: made.map((d) => join(d, 'cgroup.procs')), dirs: made, summary: `limits: ${words} for all of the session's commands together (cgroup v1)` }
}

/** Remove the v1 groups of a session's limits (every process in them must be gone); returns those still there. */
export function removeLimitDirs(dirs: readonly string[]): string[] {
  const left: string[] = []
  for (const dir of dirs) {
    try {
      rmdirSync(dir)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') left.push(dir)
    }
  }
  return left
}
