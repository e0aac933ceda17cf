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
 */
export function startReaper(bash: string, args: string[], spoolDir: string): Reaper {
  let child: ChildProcess | null = spawn(bash, ['-c', REAPER, 'hands-reaper', ...args, spoolDir], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  })
  child.on('error', () => {})
  child.stdin?.on('error', () => {})
  // The host must not wait for the reaper before it exits.
  child.unref()
  ;(child.stdin as unknown as { unref?: () => void } | null)?.unref?.()
  return {
    pid: child.pid,
    release() {
      child?.stdin?.end()
      child = null
    },
  }
}
