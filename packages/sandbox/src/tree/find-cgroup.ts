import { accessSync, constants, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { readMounts } from './mountinfo.ts'

/** This process's own cgroup in a writable cgroup v2 hierarchy, and where that hierarchy is mounted. */
export interface FoundCgroup {
  dir: string
  mount: string
}

/** The last hierarchy found, and the own cgroup (/proc/self/cgroup) it was found for. */
let last: { ownCgroup: string; found: FoundCgroup } | null = null

/** True when this process may create groups in `dir` and move processes out of it. */
function isWritable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK)
    accessSync(join(dir, 'cgroup.procs'), constants.W_OK)
    return true
  } catch {
    return false
  }
}

/**
 * The directory of this process's own cgroup in a writable cgroup v2 hierarchy, found from
 * /proc/self/mountinfo and /proc/self/cgroup; null when there is none (no cgroup2 mount, our
 * cgroup is not visible under it, or we may not create groups or move processes there). Every
 * session asks: while this process stays in the same cgroup, the directory found last is checked
 * again (still writable) instead of parsing the mount table again.
 */
export function findWritableCgroup(): FoundCgroup | null {
  let ownCgroup: string
  try {
    ownCgroup = readFileSync('/proc/self/cgroup', 'utf8')
  } catch {
    return null
  }
  if (last !== null && last.ownCgroup === ownCgroup && isWritable(last.found.dir)) return last.found
  const found = search(ownCgroup)
  last = found === null ? null : { ownCgroup, found }
  return found
}

function search(ownCgroup: string): FoundCgroup | null {
  const unified = ownCgroup.split('\n').find((l) => l.startsWith('0::'))
  if (unified === undefined) return null
  const path = unified.slice(3)
  for (const { fstype, root, mountPoint, options } of readMounts()) {
    if (fstype !== 'cgroup2' || !options.includes('rw')) continue
    let rel: string
    if (root === '/') rel = path
    else if (path === root || path.startsWith(`${root}/`)) rel = path.slice(root.length)
    else continue
    const dir = join(mountPoint, rel)
    // Creating a group needs the directory; moving a process out of our group needs its procs file.
    if (isWritable(dir)) return { dir, mount: mountPoint }
  }
  return null
}
