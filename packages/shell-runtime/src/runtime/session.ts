import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ToolError } from '@hands/contracts'
import {
  JobHost,
  SandboxUnavailableError,
  type Confiner,
  type HeldCwd,
  type JobChanges,
  type JobTree,
  type Launch,
  type LoginEnvironment,
  loginEnvScript,
  parseLoginEnv,
  pickAllowed,
  releaseCwd,
  type SessionLimits,
  type Spawner,
  type TreeKeeper,
} from '@hands/sandbox/parts'
import { holdCwd } from '../cwd/hold-cwd.ts'
import { GoneFiles } from '../output/gone-files.ts'
import { SpoolBudget } from '../output/spool-budget.ts'
import { runPiped, type PipedRun } from '../process/run-piped.ts'
import type { BackgroundShell } from '../shells/background-shell.ts'
import { resolveOptions, type ResolvedOptions, type ShellRuntimeOptions } from './options.ts'
import { sandboxUnavailable } from './sandbox-unavailable.ts'

/** One background shell as the session lists it. */
export interface ShellResource {
  id: string
  commands: string[]
  cwd: string
  pid: number
  status: 'running' | 'exited' | 'stopped'
  /** Exit code (128+N after signal N); null while running. */
  exit: number | null
  /** ISO 8601 start time. */
  started_at: string
  /** The append-only file holding the newest bytes the shell printed (up to half of `logBytes`). */
  log_path: string
  /** The bytes printed before those of `log_path` (`log_path` + `.1`, up to half of `logBytes`) once the log has rotated, else null. */
  log_previous_path: string | null
  /** Bytes printed before those two files, no longer on disk (0 until the log passed `logBytes`). */
  log_dropped_bytes: number
  /** Why the log stopped taking output (its folder gone or the disk full), else null; the terminal and shell_logs go on. */
  log_error: string | null
}

/**
 * The state every shell tool shares: options, the spool directory, the tree keeper and its
 * reaper, the login environment, the background shells and the foreground jobs in flight.
 */
export class Session {
  readonly options: ResolvedOptions
  /** What every job of the session shares: the mechanism, the spool, the tree keeper, the limits (see @hands/sandbox). */
  readonly host: JobHost
  readonly name: string
  /** The allowed roots as real paths. */
  readonly roots: string[]
  readonly spoolDir: string
  /** The session's private temporary directory: every command's TMPDIR, removed at close. */
  readonly tmpDir: string
  readonly preludePath: string
  readonly keeper: TreeKeeper
  readonly confiner: Confiner
  /** Where the host's memory and process limits for the session live; null without limits. */
  readonly limits: SessionLimits | null
  readonly bash: string
  readonly shells = new Map<string, BackgroundShell>()
  /** Spool files hands removed, so a later command naming one is told. */
  readonly gone: GoneFiles
  /** The session's budget for shell_run spool files. */
  readonly spoolBudget: SpoolBudget
  /** Foreground commands running now, each with the controller that stops it. */
  readonly #activeRuns = new Set<AbortController>()
  readonly #runsSettled = new Set<Promise<unknown>>()
  #loginEnv: Promise<LoginEnvironment> | null = null
  #listeners = new Set<(resources: ShellResource[]) => void>()
  #closed: Promise<void> | null = null

  constructor(input: ShellRuntimeOptions) {
    this.options = resolveOptions(input, tmpdir())
    try {
      this.host = new JobHost(this.options)
    } catch (err) {
      if (err instanceof SandboxUnavailableError) throw sandboxUnavailable(err.refusal)
      throw err
    }
    const { host } = this
    this.name = host.name
    this.roots = host.roots
    this.spoolDir = host.spoolDir
    this.tmpDir = host.tmpDir
    this.preludePath = host.preludePath
    this.keeper = host.keeper
    this.confiner = host.confiner
    this.limits = host.limits
    this.bash = host.bash
    this.gone = new GoneFiles(this.spoolDir)
    this.spoolBudget = new SpoolBudget(this.options.spoolBytes, this.gone)
  }

  /** What confines commands, how their trees are held, and the host's limits: the lines hosts show. */
  summary(): string {
    return this.host.summary()
  }

  /** How to spawn one job of `tree` (see JobHost.launch). */
  launch(
    tree: JobTree,
    script: string,
    cwd: HeldCwd,
    seq: number,
    io: 'pipes' | 'terminal',
    isPipestatus = false,
  ): { launch: Launch; scriptFile: string | null } {
    return this.host.launch(tree, script, cwd, seq, io, isPipestatus)
  }

  /** The spawner for a job started by `launch` (see JobHost.spawner). */
  spawner(launch: Launch): Spawner | null {
    return this.host.spawner(launch)
  }

  /**
   * Start now, in the background, what the session's first command would start on its way: the
   * login environment (when the host gave none), the spawner of piped jobs, the first job's
   * cgroup and the ruleset keeper. A host calls it once it knows the session will be used (an MCP
   * session once its roots are known), so the first command finds them ready or already starting.
   * close() stops them as it stops them after a command, whether or not they have finished starting.
   */
  prepare(): void {
    if (this.#closed !== null) return
    // A failed capture is the first command's to report (it awaits the same promise).
    this.loginEnv().catch(() => undefined)
    this.host.prepare()
  }

  /** Where job `seq`'s relay records what it changes on disk; null when jobs are not observed here. */
  effectsFile(seq: number): string | null {
    return this.host.effectsFile(seq)
  }

  /** Where job `seq`'s relay records the sockets and metadata changes its guard refused; null when nothing guards them here. */
  eventsFile(seq: number): string | null {
    return this.host.eventsFile(seq)
  }

  /** The account of what job `seq` changes on disk (read from its relay's record). */
  jobChanges(seq: number): JobChanges {
    return this.host.jobChanges(seq)
  }

  /** A fresh number for spool and log file names. */
  nextSeq(): number {
    return this.host.nextSeq()
  }

  get isClosed(): boolean {
    return this.#closed !== null
  }

  /** Refuse a call once the session is closed. */
  assertOpen(): void {
    if (this.#closed !== null) {
      throw new ToolError({
        code: 'internal',
        message: 'This shell session is closed.',
        hint: 'The host closed the shell runtime; it takes no more calls.',
        is_preflight: true,
      })
    }
  }

  /** The login environment: the host's (`options.loginEnv`), else captured once from `bash -l` (see `refreshLoginEnv`). */
  loginEnv(): Promise<LoginEnvironment> {
    this.#loginEnv ??= this.options.loginEnv === undefined ? this.#captureLoginEnv() : this.#hostLoginEnv(this.options.loginEnv)
    return this.#loginEnv
  }

  async #hostLoginEnv(supply: () => Promise<LoginEnvironment>): Promise<LoginEnvironment> {
    const given = await supply()
    return { ...given, env: pickAllowed(given.env, this.options.envAllow) }
  }

  /** Capture the login environment again (after the profile changed); later commands use it. */
  refreshLoginEnv(): Promise<LoginEnvironment> {
    this.#loginEnv = this.#captureLoginEnv()
    return this.#loginEnv
  }

  async #captureLoginEnv(): Promise<LoginEnvironment> {
    const { hostEnv, envAllow } = this.options
    const host = pickAllowed(hostEnv, envAllow)
    let error: string
    try {
      const cwd = await holdCwd(this.roots, undefined, [], 'login environment')
      let run: PipedRun
      try {
        // A session closed while its working directory was being checked starts no job: close()
        // has already stopped its runs and is removing the spool the job would write into.
        if (this.#closed !== null) throw new Error('the session closed before the login environment was captured')
        const tree = this.keeper.create()
        const { launch } = this.launch(tree, loginEnvScript(this.bash), cwd, this.nextSeq(), 'pipes')
        run = await this.track((signal) =>
          runPiped({
            launch,
            env: host,
            tree,
            headBytes: 8 * 1024 * 1024,
            tailBytes: 1024 * 1024,
            spoolBase: join(this.spoolDir, 'login-env'),
            budget: this.spoolBudget,
            deadline: performance.now() + this.options.loginEnvBoundMs,
            graceMs: this.options.stopGraceMs,
            settleMs: this.confiner.settleMs,
            isPipestatus: false,
            isCleaning: false,
            signal,
            spawner: this.spawner(launch),
          }),
        )
      } finally {
        releaseCwd(cwd)
      }
      const parsed = parseLoginEnv(run.stdout.text)
      if (parsed !== null && run.stdout.omittedBytes === 0) {
        const env = pickAllowed(parsed, envAllow)
        if (env['PATH'] === undefined && host['PATH'] !== undefined) env['PATH'] = host['PATH']
        return { env, source: 'login', error: null }
      }
      error = run.timedOut
        ? `the login shell did not finish within ${this.options.loginEnvBoundMs} ms`
        : `the login shell printed no environment (exit ${run.ending?.exit ?? 'none'}): ${run.stderr.text.trim().slice(0, 200)}`
    } catch (err) {
      error = (err as Error).message
    }
    return { env: host, source: 'host', error }
  }

  /**
   * Start a foreground command through `start`, listed as in flight (close() stops it and waits)
   * until it settles. The signal `start` gets aborts on close() and when `cancel` aborts.
   */
  track<T>(start: (signal: AbortSignal) => Promise<T>, cancel?: AbortSignal): Promise<T> {
    const controller = new AbortController()
    this.#activeRuns.add(controller)
    const onCancel = () => controller.abort()
    if (cancel?.aborted) onCancel()
    else cancel?.addEventListener('abort', onCancel, { once: true })
    const settled = start(controller.signal).finally(() => {
      cancel?.removeEventListener('abort', onCancel)
      this.#activeRuns.delete(controller)
      this.#runsSettled.delete(settled)
      this.host.settled()
    })
    this.#runsSettled.add(settled)
    return settled
  }

  /** Background shells as resources. */
  resources(): ShellResource[] {
    return [...this.shells.values()].map((s) => ({
      id: s.id,
      commands: [...s.commands],
      cwd: s.cwd,
      pid: s.pid,
      status: s.status,
      exit: s.exit,
      started_at: s.startedAt.toISOString(),
      log_path: s.logPath,
      log_previous_path: s.logPreviousPath,
      log_dropped_bytes: s.logDroppedBytes,
      log_error: s.logError,
    }))
  }

  /** Listen for changes of the resource list; returns the function that stops listening. */
  onResourcesChanged(listener: (resources: ShellResource[]) => void): () => void {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** Tell listeners the resource list changed. */
  changed(): void {
    if (this.#listeners.size === 0) return
    const list = this.resources()
    for (const l of this.#listeners) {
      try {
        l(list)
      } catch {
        // a listener's failure is its own
      }
    }
  }

  /** Stop every shell and every foreground job, then remove the session's files. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= this.#close()
    return this.#closed
  }

  async #close(): Promise<void> {
    this.host.closing()
    const grace = this.options.stopGraceMs
    const shells = [...this.shells.values()]
    this.shells.clear()
    for (const run of this.#activeRuns) run.abort()
    await Promise.all(shells.map((s) => s.stop(grace).catch(() => undefined)))
    await Promise.allSettled([...this.#runsSettled])
    if (shells.length > 0) this.changed()
    this.host.close()
    this.#listeners.clear()
  }
}
