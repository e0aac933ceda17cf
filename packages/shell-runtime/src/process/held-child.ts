import { spawn, type ChildProcess } from 'node:child_process'

/** A process that lives while the host holds its stdin; `release()` ends the pipe, and it exits. */
export interface HeldChild {
  readonly pid: number | undefined
  release(): void
}

/**
 * Start `file args` in its own session (a Ctrl-C aimed at the host's process group does not
 * reach it) with stdin on a pipe only the host holds: when the host releases it or dies however
 * it dies, the pipe ends. The host does not wait for it to exit. When it dies before `release()`
 * (something killed it), `onLost` runs with how long it lived, so the owner can start another.
 */
export function startHeld(file: string, args: string[], onLost: (livedMs: number) => void): HeldChild {
  const started = performance.now()
  let child: ChildProcess | null = spawn(file, args, {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  })
  child.on('error', () => {})
  child.stdin?.on('error', () => {})
  child.once('exit', () => {
    if (child !== null) {
      child = null
      onLost(performance.now() - started)
    }
  })
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
