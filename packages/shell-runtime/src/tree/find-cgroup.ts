import { accessSync, constants, readFileSync } from 'node:fs'
import { join } from 'node:path'

function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)))
}

/** This process's own cgroup in a writable cgroup v2 hierarchy, and where that hierarchy is mounted. */
export interface FoundCgroup {
  dir: string
  mount: string
}

/**
 * The directory of this process's own cgroup in a writable cgroup v2 hierarchy, found from
 * /proc/self/mountinfo and /proc/self/cgroup; null when there is none (no cgroup2 mount, our
 * cgroup is not visible under it, or we may not create groups or move processes there).
 */
export function findWritableCgroup(): FoundCgroup | null {
  let mountinfo: string
  let ownCgroup: string
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')
    ownCgroup = readFileSync('/proc/self/cgroup', 'utf8')
  } catch {
    return null
  }
  const unified = ownCgroup.split('\n').find((l) => l.startsWith('0::'))
  if (unified === undefined) return null
  const path = unified.slice(3)
  for (const line of mountinfo.split('\n')) {
    const sep = line.indexOf(' - ')
    if (sep < 0) continue
    const [fstype] = line.slice(sep + 3).split(' ')
    if (fstype !== 'cgroup2') continue
    const fields = line.slice(0, sep).split(' ')
    const root = unescapeMount(fields[3] ?? '')
    const mountPoint = unescapeMount(fields[4] ?? '')
    if (!/\brw\b/.test(fields[5] ?? '')) continue
    let rel: string
    if (root === '/') rel = path
    else if (path === root || path.startsWith(`${root}/`)) rel = path.slice(root.length)
    else continue
    const dir = join(mountPoint, rel)
    try {
      // Creating a group needs the directory; moving a process out of our group needs its procs file.
      accessSync(dir, constants.W_OK)
      accessSync(join(dir, 'cgroup.procs'), constants.W_OK)
      return { dir, mount: mountPoint }
    } catch {
      continue
    }
  }
  return null
}
