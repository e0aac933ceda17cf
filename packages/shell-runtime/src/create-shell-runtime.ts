import type {
  ShellBackgroundInput,
  ShellBackgroundResult,
  ShellLogsInput,
  ShellLogsResult,
  ShellRunInput,
  ShellRunResult,
  ShellStopInput,
  ShellStopResult,
  ShellTypeInput,
  ShellTypeResult,
} from '@hands/contracts'
import { shellBackgroundTool } from './tools/shell-background.ts'
import { shellLogsTool } from './tools/shell-logs.ts'
import { shellRunTool, type ShellRunOptions } from './tools/shell-run.ts'
import { shellStopTool } from './tools/shell-stop.ts'
import { shellTypeTool } from './tools/shell-type.ts'
import type { Confinement } from './runtime/describe-confinement.ts'
import type { ScreenView } from './screen/screen.ts'
import { ScreenFilter } from './screen/screen-filter.ts'
import type { ShellWatcher } from './shells/background-shell.ts'
import type { ShellRuntimeOptions } from './runtime/options.ts'
import type { LoginEnvironment } from '@hands/sandbox/parts'
import { Session, type ShellResource } from './runtime/session.ts'

/** Reset the pen, home the cursor, clear the screen: what a redraw starts from. */
const CLEAR = '\x1b[0m\x1b[H\x1b[2J'

/** A person's view of a running shell's terminal, from `attach`. */
export interface ShellAttachment {
  id: string
  /** Terminal size; the shell's terminal keeps it. */
  cols: number
  rows: number
  /** Escape sequences that redraw the screen as it was when attached (clear first, then the screen, cursor and modes). */
  snapshot: string
  /** The same for the screen as it is now. */
  redraw(): string
  /** Send bytes to the terminal, as a person's terminal sends keystrokes. */
  input(data: string | Buffer): void
  /** True while a full-screen program holds the alternate screen. */
  isAlternate(): boolean
  /** Stop watching; the shell goes on. */
  detach(): void
}

/** The five shell tools over one process manager, plus the session's resources and lifecycle. */
export interface ShellRuntime {
  /** Run bash lines in order, each with its own bounded account; `options.signal` cancels the call (see ShellRunOptions). */
  shell_run(input: ShellRunInput, options?: ShellRunOptions): Promise<ShellRunResult>
  /** Start a script under a PTY and return its handle at once. */
  shell_background(input: ShellBackgroundInput): Promise<ShellBackgroundResult>
  /** The last lines of a background shell, now. */
  shell_logs(input: ShellLogsInput): Promise<ShellLogsResult>
  /** Type into a running background shell. */
  shell_type(input: ShellTypeInput): Promise<ShellTypeResult>
  /** Stop a background shell's whole tree and drop it. */
  shell_stop(input: ShellStopInput): Promise<ShellStopResult>
  /** The session's background shells, live and exited. */
  resources(): ShellResource[]
  /** Every line a shell retains (oldest first) without counting as a read; null for an unknown id. */
  retainedLines(id: string): string[] | null
  /** The visible screen of a shell, row by row; null for an unknown id. */
  screen(id: string): ScreenView | null
  /**
   * Watch a running shell's terminal as a person would: the snapshot redraws its screen, then
   * `watcher` gets every byte of output until the shell ends (`end`) or `detach()`. Null for an
   * unknown id or a shell that is not running.
   */
  attach(id: string, watcher: ShellWatcher): ShellAttachment | null
  /** Call `listener` with the new list whenever a shell starts, ends or is dropped; returns the unsubscribe function. */
  onResourcesChanged(listener: (resources: ShellResource[]) => void): () => void
  /** The login environment commands start from, captured once per session. */
  loginEnvironment(): Promise<LoginEnvironment>
  /** Capture the login environment again; later commands use the new one. */
  refreshLoginEnvironment(): Promise<LoginEnvironment>
  /** `cgroup` when each job has its own cgroup v2, `marker` when jobs are found by an environment marker. */
  readonly treeKind: 'cgroup' | 'marker'
  /** The session's spool directory (whole streams, background logs); read-only to commands, removed by close(). */
  readonly spoolDir: string
  /** The session's private temporary directory, every command's TMPDIR; removed by close(). */
  readonly tmpDir: string
  /** How commands are confined here (the mechanism `confine` chose, and what it cannot do). */
  readonly confinement: Confinement
  /**
   * Start now, in the background, what the first command would otherwise start on its way (the
   * login environment, the spawner of piped jobs, the first job's cgroup, the ruleset keeper), so
   * it finds them ready.
   * close() stops them, started or still starting.
   */
  prepare(): void
  /** Stop every shell and foreground job and remove the session's files. Idempotent. */
  close(): Promise<void>
}

/**
 * Create a shell runtime: one session owning every process it starts. Its shells die with it:
 * on close(), on the host's normal exit (synchronously), and, when the host dies any other way
 * (a signal, SIGKILL), through a reaper process that notices the host is gone. Every command is
 * confined by the kernel to the roots (see `confine`) unless nothing can confine it here.
 */
export function createShellRuntime(options: ShellRuntimeOptions): ShellRuntime {
  const session = new Session(options)
  return {
    shell_run: (input, options) => shellRunTool(session, input, options),
    shell_background: (input) => shellBackgroundTool(session, input),
    shell_logs: (input) => shellLogsTool(session, input),
    shell_type: (input) => shellTypeTool(session, input),
    shell_stop: (input) => shellStopTool(session, input),
    resources: () => session.resources(),
    retainedLines: (id) => session.shells.get(id)?.retained() ?? null,
    screen: (id) => session.shells.get(id)?.view() ?? null,
    attach: (id, watcher) => {
      const shell = session.shells.get(id)
      // The person gets what a screen shows, never the program's other bytes (see ScreenFilter).
      const filter = new ScreenFilter()
      const watch = shell?.watch({ data: (bytes) => watcher.data(filter.push(bytes)), end: () => watcher.end() }) ?? null
      if (shell === undefined || watch === null) return null
      const screenOnly = (text: string) => new ScreenFilter().push(Buffer.from(text, 'utf8')).toString('utf8')
      return {
        id,
        ...shell.size,
        snapshot: `${CLEAR}${screenOnly(watch.snapshot)}`,
        redraw: () => `${CLEAR}${screenOnly(shell.snapshot())}`,
        input: (data) => shell.input(data),
        isAlternate: watch.isAlternate,
        detach: watch.unwatch,
      }
    },
    onResourcesChanged: (listener) => session.onResourcesChanged(listener),
    loginEnvironment: () => session.loginEnv(),
    refreshLoginEnvironment: () => session.refreshLoginEnv(),
    treeKind: session.keeper.kind,
    spoolDir: session.spoolDir,
    tmpDir: session.tmpDir,
    confinement: { kind: session.confiner.kind, summary: session.summary() },
    prepare: () => session.prepare(),
    close: () => session.close(),
  }
}
