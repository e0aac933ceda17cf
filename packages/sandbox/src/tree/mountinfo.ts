import { readFileSync } from 'node:fs'

/** One line of /proc/self/mountinfo. */
export interface Mount {
  /** The filesystem's device (`major:minor`): two mounts with the same one show the same files. */
  dev: string
  /** The directory of that filesystem this mount shows (`/` for its whole tree; a bind mount shows a subtree). */
  root: string
  /** Where it is mounted. */
  mountPoint: string
  /** Per-mount options (`rw`, `ro`, …). */
  options: string[]
  fstype: string
  /** Per-filesystem options (a v1 cgroup hierarchy's controllers are there). */
  superOptions: string[]
}

/** mountinfo writes space, tab, newline and backslash as octal escapes. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)))
}

/** The mounts this process sees, in the order the kernel lists them (a later one over the same place is on top); empty when unreadable. */
export function readMounts(text?: string): Mount[] {
  let mountinfo = text
  if (mountinfo === undefined) {
    try {
      mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')
    } catch {
      return []
    }
  }
  const mounts: Mount[] = []
  for (const line of mountinfo.split('\n')) {
    const sep = line.indexOf(' - ')
    if (sep < 0) continue
    const fields = line.slice(0, sep).split(' ')
    const [fstype, , superOptions] = line.slice(sep + 3).split(' ')
    mounts.push({
      dev: fields[2] ?? '',
      root: unescapeMount(fields[3] ?? ''),
      mountPoint: unescapeMount(fields[4] ?? ''),
      options: (fields[5] ?? '').split(','),
      fstype: fstype ?? '',
      superOptions: (superOptions ?? '').split(','),
    })
  }
  return mounts
}
