import { readSync, rmSync } from 'node:fs'
import type { IPty } from 'node-pty'
import { type Launch, endingOf, type JobChanges, type JobTree, stopTree, type StopReport } from '@hands/sandbox/parts'
import { historyRows } from '../limits/limits.ts'
import { RotatingLog } from '../output/rotating-log.ts'
import { Screen, type ScreenRead, type ScreenView } from '../screen/screen.ts'
import { TreeWatch, type TreeFacts } from './liveness.ts'
import { loadPty } from './load-pty.ts'
import { TerminalInput } from './terminal-input.ts'

/** `running` until the script's shell ended and its terminal was read to the end; `stopped` after shell_stop. */
export type ShellStatus = 'running' | 'exited' | 'stopped'

/** Someone watching a shell's terminal: its raw output as it comes, and its end. */
export interface ShellWatcher {
  /** Raw terminal output, every byte after the snapshot the watcher started from. */
  data(bytes: Buffer): void
  /** The shell ended (or was stopped); nothing more comes. */
  end(): void
}

/** How to start one background shell. */
export interface BackgroundSpec {
  id: string
  commands: string[]
  /** The real directory the script starts in (as results report it). */
  cwd: string
  /** The spawn of the script (bash -c SCRIPT through the confinement mechanism). */
  launch: Launch
  /** The script's environment; the tree's and the mechanism's variables go on top. */
  env: Record<string, string>
  /** A file holding the script when it was too long for one argument, removed at stop; else null. */
  scriptFile: string | null
  tree: JobTree
  ringLines: number
  /** Bytes of lines the ring keeps. */
  ringBytes: number
  logPath: string
  /** Bytes the log keeps on disk. */
  logBytes: number
  /** Bytes of typed input that may wait for the program to read it. */
  typeQueueBytes: number
  cols: number
  rows: number
  /** The account of what the shell changes on disk. */
  changes: JobChanges
}

/** How a shell is doing now, as shell_logs reports it. */
export interface ShellLiveness extends TreeFacts {
  /** Milliseconds since the terminal last gave output (since the start when it gave none); null once the shell has ended. */
  silentMs: number | null
}

/** The parts of node-pty's Unix terminal this module reaches into (pinned node-pty 1.1.0). */
interface UnixTerminalInternals {
  _fd: number
  /** The terminal's device path (/dev/pts/N). */
  ptsName?: string
  _socket: NodeJS.ReadableStream & { destroy(...args: unknown[]): unknown; on(event: 'end', fn: () => void): unknown }
}

const drainBuffer = Buffer.allocUnsafe(64 * 1024)
/** A cursor key as a terminal sends it in normal cursor-key mode. */
const CURSOR_KEY = /\x1b\[([ABCDHF])/g

/**
 * One script running under a real PTY. Every byte goes to an append-only log file, to a Screen
 * (a headless terminal emulator of the same size, with `ringLines` rows of history) and to
 * whoever is watching. The terminal is read to its END before the shell counts as
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
  /** What the shell changes on disk: since the previous read, and since it started. */
  readonly changes: JobChanges
  #status: ShellStatus = 'running'
  #exit: number | null = null
  #signal: string | null = null
  readonly #pty: IPty
  readonly #screen: Screen
  readonly #watchers = new Set<ShellWatcher>()
  readonly #log: RotatingLog
  readonly #input: TerminalInput
  readonly #ended: Promise<void>
  #onEnd: Array<() => void> = []
  #stopping = false
  readonly #scriptFile: string | null
  readonly #watch: TreeWatch
  readonly #pts: string | null
  /** When the terminal last gave output (performance.now()). */
  #lastOutputAt: number

  constructor(spec: BackgroundSpec) {
    this.id = spec.id
    this.commands = [...spec.commands]
    this.cwd = spec.cwd
    this.tree = spec.tree
    this.changes = spec.changes
    this.logPath = spec.logPath
    this.#screen = new Screen({
      cols: spec.cols,
      rows: spec.rows,
      scrollback: historyRows(spec.ringLines, spec.ringBytes, spec.cols),
      // A program's queries (cursor position, device attributes) get the answers a terminal gives.
      onReply: (data) => {
        if (this.#status === 'running') this.#write(data)
      },
    })
    this.#log = new RotatingLog(spec.logPath, spec.logBytes)
    this.#scriptFile = spec.scriptFile
    // Before the spawn: the job's cgroup usage so far is the baseline of its CPU time.
    this.#watch = new TreeWatch(spec.tree, spec.launch.argv0 === undefined)
    this.#pty = loadPty().spawn(spec.launch.file, spec.launch.args, {
      name: 'xterm-256color',
      cols: spec.cols,
      rows: spec.rows,
      cwd: spec.launch.cwd,
      env: { ...spec.env, ...spec.tree.env, ...spec.launch.env },
      encoding: null,
    })
    this.pid = this.#pty.pid
    if (spec.launch.hasRelay) spec.tree.setRelay(this.pid)
    this.startedAt = new Date()
    this.#lastOutputAt = performance.now()
    const internals = this.#pty as unknown as UnixTerminalInternals
    this.#pts = internals.ptsName ?? null
    this.#input = new TerminalInput(internals._fd, spec.typeQueueBytes)
    this.#pty.onData((data) => this.#take(data as unknown as Buffer))
    // libuv may declare end-of-file (a partial read plus a hangup) while the kernel still holds
    // output: read the master directly until it is really empty.
    internals._socket.on('end', () => this.#drain(internals._fd))
    // node-pty destroys the socket 200 ms after exit when another process still holds the
    // terminal; take what is buffered first.
    const destroy = internals._socket.destroy.bind(internals._socket)
    internals._socket.destroy = (...args: unknown[]) => {
      this.#drain(internals._fd)
      this.#input.close()
      return destroy(...args)
    }
    this.#ended = new Promise<void>((resolve) => {
      this.#pty.onExit(({ exitCode, signal }) => {
        this.#input.close()
        this.#screen.flush()
        // The shell counts as ended once its log file holds every byte it printed, too.
        void this.#log.flushed().then(() => {
          const ending = endingOf(exitCode, signal)
          this.#exit = ending.exit
          this.#signal = ending.signal
          this.#status = this.#stopping ? 'stopped' : 'exited'
          resolve()
          for (const w of [...this.#watchers]) w.end()
          this.#watchers.clear()
          for (const fn of this.#onEnd.splice(0)) fn()
        })
      })
    })
  }

  #take(data: Buffer): void {
    if (data.length === 0) return
    const now = performance.now()
    this.#lastOutputAt = now
    if (!this.#log.write(data)) {
      this.#pty.pause()
      void this.#log.drained().then(() => this.#pty.resume())
    }
    this.#screen.push(data, now)
    // Most shells have no watcher: no iterator per chunk for them.
    if (this.#watchers.size > 0) for (const w of this.#watchers) w.data(data)
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

  /** The last `n` lines as a person reads them (the cursor row, such as a prompt, counts as the last), and the rows dropped unseen. */
  logs(n: number): ScreenRead {
    return this.#screen.read(n)
  }

  /** How the shell is doing now: silence, CPU time, processes, whether it waits for input (see TreeWatch). */
  async liveness(): Promise<ShellLiveness> {
    const isRunning = this.#status === 'running'
    const silentMs = isRunning ? Math.max(0, Math.round(performance.now() - this.#lastOutputAt)) : null
    const facts = await this.#watch.facts(isRunning ? { pid: this.pid, pts: this.#pts } : null)
    // The shell may have ended while the facts were gathered: report it as ended throughout.
    return this.#status === 'running' ? { silentMs, ...facts } : { silentMs: null, processes: facts.processes, cpuMs: null, isWaitingForInput: null }
  }

  /** Every retained line, without counting as a shell_logs read. */
  retained(): string[] {
    return this.#screen.peek()
  }

  /** The visible screen, row by row. */
  view(): ScreenView {
    return this.#screen.view()
  }

  /** Terminal size. */
  get size(): { cols: number; rows: number } {
    return this.#screen.size
  }

  /**
   * Keystrokes as a model types them: the cursor keys `ESC [ A`…`ESC [ D`, `ESC [ H` and
   * `ESC [ F` are sent as `ESC O A`… while the program asked for application cursor keys, as a
   * terminal sends them. False, with nothing written, when they would pass the input queue's bound.
   */
  type(text: string): boolean {
    return this.#write(this.#screen.modes.applicationCursorKeysMode ? text.replace(CURSOR_KEY, '\x1bO$1') : text)
  }

  /** Bytes straight to the terminal, as a person's terminal sends them. */
  input(data: string | Buffer): void {
    if (this.#status === 'running') this.#write(data)
  }

  /** Bytes into the terminal's input queue; false, with nothing written, when they would pass its bound. */
  #write(data: string | Buffer): boolean {
    return this.#input.write(data)
  }

  /** Bytes typed that the program has not read yet. */
  get pendingInputBytes(): number {
    return this.#input.pendingBytes
  }

  /** `logPath` + `.1` once the log has rotated, else null. */
  get logPreviousPath(): string | null {
    return this.#log.previous
  }

  /** Bytes of output older than what the log files hold. */
  get logDroppedBytes(): number {
    return this.#log.droppedBytes
  }

  /** Why the log stopped taking output, else null. */
  get logError(): string | null {
    const e = this.#log.error
    return e === null ? null : `${e.code ?? 'error'}: ${e.message}`
  }

  /** Escape sequences that redraw the screen, its cursor and its modes as they are now. */
  snapshot(): string {
    return this.#screen.snapshot()
  }

  /**
   * Watch the terminal: returns the escape sequences that redraw its screen now, and from then on
   * `watcher` gets every byte of output until the shell ends or `unwatch` is called. Null when the
   * shell has ended.
   */
  watch(watcher: ShellWatcher): { snapshot: string; isAlternate: () => boolean; unwatch: () => void } | null {
    if (this.#status !== 'running') return null
    const snapshot = this.#screen.snapshot()
    this.#watchers.add(watcher)
    return {
      snapshot,
      isAlternate: () => this.#screen.view().isAlternate,
      unwatch: () => {
        this.#watchers.delete(watcher)
      },
    }
  }

  /**
   * Stop the whole tree (SIGTERM, grace, SIGKILL, confirm), wait for the terminal to be read to
   * its end, mark the shell stopped and remove its log file.
   */
  async stop(graceMs: number): Promise<StopReport> {
    const wasRunning = this.#status === 'running'
    if (wasRunning) this.#stopping = true
    this.#input.close()
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
    for (const w of [...this.#watchers]) w.end()
    this.#watchers.clear()
    this.#screen.dispose()
    await this.#log.close()
    this.#log.remove()
    if (this.#scriptFile !== null) rmSync(this.#scriptFile, { force: true })
    return report
  }

  /** Kill the whole tree at once (the host is exiting). */
  killNow(): void {
    this.tree.killAll()
  }
}
