import { readFileSync, readdirSync, readlinkSync } from 'node:fs'

/** True while `pid` is a live (non-zombie) process. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

/** Live processes whose working directory or command line mentions `marker` (a unique temp path). */
export function processesMentioning(marker: string): Array<{ pid: number; cmd: string }> {
  const found: Array<{ pid: number; cmd: string }> = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const pid = Number(entry)
    if (pid === process.pid) continue
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim()
      let cwd = ''
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`)
      } catch {
        // A process of another user or one that just exited.
      }
      if ((cmd.includes(marker) || cwd.startsWith(marker)) && isAlive(pid)) found.push({ pid, cmd })
    } catch {
      // Exited while we looked.
    }
  }
  return found
}

/** Poll `predicate` every 50 ms for up to `ms`; true as soon as it holds. */
export async function eventually(predicate: () => boolean | Promise<boolean>, ms = 60_000): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await predicate()) return true
    await new Promise((r) => setTimeout(r, 50))
  }
  return predicate()
}
