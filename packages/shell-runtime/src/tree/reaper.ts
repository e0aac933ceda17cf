import { spawn, type ChildProcess } from 'node:child_process'
import { REAPER } from '../process/prelude.ts'

/** A running reaper; `release()` ends it (it finds nothing left to kill and exits). */
export interface Reaper {
  readonly pid: number | undefined
  release(): void
}

/**
 * Start the reaper for a session. It lives in its own session (so a Ctrl-C aimed at the host's
 * process group does not reach it) and waits for its stdin, a pipe only the host holds, to end.
 * `args` are the keeper's reaper arguments, then the directories to remove. When it dies before
 * `release()` (a command killed it), `onLost` runs, so the session can start another.
 */
export function startReaper(bash: string, args: string[], onLost: () => void): Reaper {
  let child: ChildProcess | null = spawn(bash, ['-c', REAPER, 'hands-reaper', ...args], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  })
  child.on('error', () => {})
  child.stdin?.on('error', () => {})
  child.once('exit', () => {
    if (child !== null) {
      child = null
      onLost()
    }
  })
  // The host must not wait for the reaper before it exits.
  child.unref()
  ;(child.stdin as unknown as { unref?: () => void } | null)?.unref?.()
  const pid = child.pid
  return {
    pid,
    release() {
      const c = child
      child = null
      c?.stdin?.end()
    },
  }
}
