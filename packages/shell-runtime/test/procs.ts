import { readdirSync, readFileSync } from 'node:fs'
import { isAlive } from '../../sandbox/src/tree/proc.ts'

/** Pids of live processes whose raw command line (NUL-separated, NUL-terminated) passes `match`. Free of vitest, so host fixtures use it too. */
export function processesWhere(match: (cmdline: string) => boolean): number[] {
  const out: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (match(readFileSync(`/proc/${entry}/cmdline`, 'latin1')) && isAlive(Number(entry))) out.push(Number(entry))
    } catch {
      // gone
    }
  }
  return out
}
