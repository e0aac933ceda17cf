import { readSync, rmSync } from 'node:fs'
import type { IPty } from 'node-pty'
import { LineRing } from '../output/line-ring.ts'
import { ScreenLines } from '../output/screen-lines.ts'
import { Spool } from '../output/spool.ts'
import { endingOf } from '../process/signals.ts'
import type { JobTree } from '../tree/job-tree.ts'
import { stopTree, type StopReport } from '../tree/stop-tree.ts'
import { loadPty } from './load-pty.ts'

/** `running` until the script's shell ended and its terminal was read to the end; `stopped` after shell_stop. */
export type ShellStatus = 'running' | 'exited' | 'stopped'

/** How to start one background shell. */
export interface BackgroundSpec {
  id: string
  commands: string[]
  cwd: string
  bash: string
  env: Record<string, string>
  tree: JobTree
  ringLines: number
  logPath: string
  cols: number
  rows: number
}

/** The parts of node-pty's Unix terminal this module reaches into (pinned node-pty 1.1.0). */
interface UnixTerminalInternals {
  _fd: number
  _socket: NodeJS.ReadableStream & { destroy(...args: unknown[]): unknown; on(event: 'end', fn: () => void): unknown }
}

const drainBuffer = Buffer.allocUnsafe(64 * 1024)

/**
 * One script running under a real PTY. Every byte goes to an append-only log file and through
 * ScreenLines into a bounded ring. The terminal is read to its END before the shell counts as
 * exited: node-pty (through libuv) can report end-of-file while the kernel still holds the last
 * output, so at that moment the master is drained synchronously until it reports EIO.
 */
export class BackgroundShell {
  readonly id: string
  readonly commands: readonly string[]
  readonly cwd: string
  readonly pid: number
  readonly startedAt: Date
  readonly logPath: string
  readonly tree: JobTree
  #status: ShellStatus = 'running'
  #exit: number | null = null
  #signal: string | null = null
  readonly #pty: IPty
  readonly #ring: LineRing
  readonly #lines: ScreenLines
  readonly #log: Spool
  readonly #ended: Promise<void>
  #onEnd: Array<() => void> = []
  #stopping = false

  constructor(spec: BackgroundSpec) {
    this.id = spec.id
    this.commands = [...spec.commands]
    this.cwd = spec.cwd
    this.tree = spec.tree
    this.logPath = spec.logPath
    this.#ring = new LineRing(spec.ringLines)
    this.#lines = new ScreenLines(this.#ring)
    this.#log = new Spool(spec.logPath)
    this.#pty = loadPty().spawn(spec.bash, ['-c', spec.commands.join('\n')], {
      name: 'xterm-256color',
      cols: spec.cols,
      rows: spec.rows,
      cwd: spec.cwd,
      env: { ...spec.env, ...spec.tree.env },
      encoding: null,
    })
    this.pid = this.#pty.pid
    this.startedAt = new Date()
    const internals = this.#pty as unknown as UnixTerminalInternals
    this.#pty.onData((data) => this.#take(data as unknown as Buffer))
    // libuv may declare end-of-file (a partial read plus a hangup) while the kernel still holds
    // output: read the master directly until it is really empty.
    internals._socket.on('end', () => this.#drain(internals._fd))
    // node-pty destroys the socket 200 ms after exit when another process still holds the
    // terminal; take what is buffered first.
    const destroy = internals._socket.destroy.bind(internals._socket)
    internals._socket.destroy = (...args: unknown[]) => {
      this.#drain(internals._fd)
      return destroy(...args)
    }
    this.#ended = new Promise<void>((resolve) => {
      this.#pty.onExit(({ exitCode, signal }) => {
        this.#lines.end()
        // The shell counts as ended once its log file holds every byte it printed, too.
        void this.#log.flushed().then(() => {
          const ending = endingOf(exitCode, signal)
          this.#exit = ending.exit
          this.#signal = ending.signal
          this.#status = this.#stopping ? 'stopped' : 'exited'
          resolve()
          for (const fn of this.#onEnd.splice(0)) fn()
        })
      })
    })
  }

  #take(data: Buffer): void {
    if (data.length === 0) return
    if (!this.#log.write(data)) {
      this.#pty.pause()
      void this.#log.drained().then(() => this.#pty.resume())
    }
    this.#lines.push(data)
  }

  #drain(fd: number): void {
    for (;;) {
      let n: number
      try {
        n = readSync(fd, drainBuffer, 0, drainBuffer.length, null)
      } catch {
        return // EIO: every writer is gone and nothing is left; EAGAIN: nothing more now
      }
      if (n <= 0) return
      this.#take(Buffer.from(drainBuffer.subarray(0, n)))
    }
  }

  get status(): ShellStatus {
    return this.#status
  }

  /** Exit code (128+N after signal N); null while running. */
  get exit(): number | null {
    return this.#exit
  }

  /** The signal's name when the shell died by a signal. */
  get signal(): string | null {
    return this.#signal
  }

  /** Resolves once the shell has exited and its terminal was read to the end. */
  get ended(): Promise<void> {
    return this.#ended
  }

  /** Run `fn` once when the shell ends. */
  onEnd(fn: () => void): void {
    if (this.#status === 'running') this.#onEnd.push(fn)
    else fn()
  }

  /** The last `n` lines (the unfinished last line, such as a prompt, counts as the last), and the lines dropped unseen. */
  logs(n: number): { lines: string[]; dropped: number } {
    return this.#lines.read(n)
  }

  /** Every retained line, without counting as a shell_logs read. */
  retained(): string[] {
    return this.#lines.retained()
  }

  /** Write keystrokes to the terminal. */
  type(text: string): void {
    this.#pty.write(text)
  }

  /**
   * Stop the whole tree (SIGTERM, grace, SIGKILL, confirm), wait for the terminal to be read to
   * its end, mark the shell stopped and remove its log file.
   */
  async stop(graceMs: number): Promise<StopReport> {
    const wasRunning = this.#status === 'running'
    if (wasRunning) this.#stopping = true
    const report = await stopTree(this.tree, graceMs, { pid: this.pid, isExited: () => this.#status !== 'running' })
    if (wasRunning) {
      const ended = await Promise.race([this.#ended.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 5000))])
      if (!ended) {
        try {
          this.#pty.kill('SIGKILL')
        } catch {
          // gone
        }
      }
      this.#status = 'stopped'
    }
    this.tree.dispose()
    await this.#log.close()
    rmSync(this.logPath, { force: true })
    return report
  }

  /** Kill the whole tree at once (the host is exiting). */
  killNow(): void {
    this.tree.killAll()
  }
}
