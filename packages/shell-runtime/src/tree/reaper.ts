import { startHeld, type HeldChild } from '../process/held-child.ts'
import { REAPER } from '../process/prelude.ts'

/** A running reaper; `release()` ends it (it finds nothing left to kill and exits). */
export type Reaper = HeldChild

/**
 * Start the reaper for a session: a bash process that waits for its stdin, a pipe only the host
 * holds, to end, then kills every job of the session. `args` are the keeper's reaper arguments,
 * then the directories to remove. When a command kills it, `onLost` runs, so the session can
 * start another.
 */
export function startReaper(bash: string, args: string[], onLost: (livedMs: number) => void): Reaper {
  return startHeld(bash, ['-c', REAPER, 'hands-reaper', ...args], onLost)
}
