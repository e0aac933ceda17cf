import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { ToolError } from '@hands/contracts'
import { chooseConfiner } from '../confine/choose.ts'
import { sandboxUnavailable } from '../confine/refusal.ts'
import { CLOSE_FDS_VAR, type Confiner, type Launch } from '../confine/confiner.ts'
import { buildPolicy, defaultPrivateDirs } from '../confine/policy.ts'
import { holdCwd, releaseCwd, type HeldCwd } from '../cwd/hold-cwd.ts'
import { JobChanges } from '../effects/observer.ts'
import { pickAllowed } from '../env/allowlist.ts'
import { loginEnvScript, parseLoginEnv, shellQuote, type LoginEnvironment } from '../env/capture-login-env.ts'
import { PIPESTATUS_PIPE_FD, PRELUDE } from '../process/prelude.ts'
import { runPiped, type PipedRun } from '../process/run-piped.ts'
import { holdSpawner, type Spawner, type SpawnerHold } from '../process/spawner.ts'
import { GoneFiles } from '../output/gone-files.ts'
import { SpoolBudget } from '../output/spool-budget.ts'
import type { BackgroundShell } from '../shells/background-shell.ts'
import { CGROUP_PROCS_VAR, CgroupKeeper } from '../tree/cgroup-keeper.ts'
import { findWritableCgroup, type FoundCgroup } from '../tree/find-cgroup.ts'
import { onHostExit } from '../tree/host-exit.ts'
import type { JobTree, TreeKeeper } from '../tree/job-tree.ts'
import { MarkerKeeper } from '../tree/marker-keeper.ts'
import { registerWithReaper, type ReaperRegistration } from '../tree/reaper.ts'
import { applySessionLimits, removeLimitDirs, type SessionLimits } from '../tree/session-limits.ts'
import { isProcessBoundHeld, JOB_PROCESS_BOUND, treeSummary } from '../tree/bound.ts'
import { findBash } from '../env/find-bash.ts'
import { resolveOptions, type ResolvedOptions, type ShellRuntimeOptions } from './options.ts'

/** Scripts longer than this (in bytes) reach bash through a file, under Linux's 128 KiB limit on one argument. */
const INLINE_SCRIPT_MAX = 64 * 1024
/** How long after the session's first job is launched the ruleset keeper is started, if that job's run has not settled by then. */
const KEEPER_AFTER_MS = 1000
/**
 * How long after prepare() the ruleset keeper is started, unless a foreground run settles first:
 * long enough that a command sent right away does not share the CPU with the keeper's start,
 * short enough that one sent as a model's calls come finds the ruleset built.
 */
const KEEPER_AFTER_PREPARE_MS = 100

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

function realOrGiven(path: string): string {
  try {
    return realpathSync.native(path)
  } catch {
    return path
  }
}

/**
 * The state every shell tool shares: options, the spool directory, the tree keeper and its
 * reaper, the login environment, the background shells and the foreground jobs in flight.
 */
export class Session {
  readonly options: ResolvedOptions
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
  #reaper: ReaperRegistration
  #cancelExitHook: () => void
  #listeners = new Set<(resources: ShellResource[]) => void>()
  #closed: Promise<void> | null = null
  #seq = 0
  /** The session's hold on the spawner of piped jobs, taken with the first one (or by prepare()); undefined until then. */
  #spawner: SpawnerHold | undefined
  /** Armed by prepare() or the first job's launch (see #startKeeper); null once the ruleset keeper was asked for. */
  #keeperTimer: NodeJS.Timeout | null | undefined

  constructor(input: ShellRuntimeOptions) {
    this.options = resolveOptions(input, tmpdir())
    this.name = `hands-${process.pid}-${randomBytes(4).toString('hex')}`
    this.roots = this.options.roots.map(realOrGiven)
    this.bash = this.options.bash ?? findBash(this.options.hostEnv)
    this.spoolDir = mkdtempSync(join(this.options.spoolParent, 'hands-shell-'))
    this.tmpDir = mkdtempSync(join(this.options.spoolParent, 'hands-tmp-'))
    try {
      this.preludePath = join(this.spoolDir, 'prelude.bash')
      this.gone = new GoneFiles(this.spoolDir)
      this.spoolBudget = new SpoolBudget(this.options.spoolBytes, this.gone)
      writeFileSync(this.preludePath, PRELUDE, { mode: 0o400 })
      const cgroup = this.options.tree === 'marker' ? null : findWritableCgroup()
      const homes = [homedir(), this.options.hostEnv['HOME'] ?? ''].filter((h) => h !== '')
      const policy = buildPolicy({
        roots: this.roots,
        tmpDir: this.tmpDir,
        allowWrite: this.options.allowWrite,
        allowSockets: this.options.allowSockets,
        denyRead: this.options.denyRead,
        privateDirs: [...defaultPrivateDirs(this.options.hostEnv), ...this.options.privateDirs],
        homes,
        isNetwork: this.options.isNetwork,
      })
      const chosen = chooseConfiner({
        mode: this.options.confine,
        policy,
        env: process.env,
        bash: this.bash,
        spoolDir: this.spoolDir,
        cgroupMount: cgroup?.mount ?? null,
        isChanges: this.options.isChanges,
      })
      if (chosen.kind === 'unavailable') throw sandboxUnavailable(chosen)
      this.confiner = chosen
      this.keeper = this.#makeKeeper(cgroup)
      try {
        this.limits = applySessionLimits(this.options, this.name, this.keeper instanceof CgroupKeeper ? this.keeper.dir : null)
      } catch (err) {
        this.keeper.close()
        throw err
      }
    } catch (err) {
      this.#removeFiles()
      throw err
    }
    this.#reaper = registerWithReaper(this.bash, this.name, {
      ...this.keeper.reaperTargets(),
      dirs: [this.spoolDir, this.tmpDir],
      cgroups: this.limits?.dirs ?? [],
    })
    this.#cancelExitHook = onHostExit(() => {
      this.#spawner?.spawner.close()
      this.keeper.killEverythingSync()
      this.#removeFiles()
    })
  }

  /** What confines commands, how their trees are held, and the host's limits: the lines hosts show. */
  summary(): string {
    return [
      this.confiner.summary,
      treeSummary(this.keeper.kind, this.options.processLimit !== undefined),
      ...(this.limits === null ? [] : [this.limits.summary]),
    ].join('\n')
  }

  #makeKeeper(cgroup: FoundCgroup | null): TreeKeeper {
    const mode = this.options.tree
    if (mode !== 'marker') {
      const keeper = cgroup === null ? null : CgroupKeeper.create(cgroup.dir, this.name, this.confiner.canLeaveCgroup)
      if (keeper !== null) return keeper
      if (mode === 'cgroup') throw new Error('tree: "cgroup" was asked for, but no writable cgroup v2 hierarchy was found')
    }
    return new MarkerKeeper(this.name)
  }

  /**
   * Remove the spool and the session's TMPDIR; returns those that are still there. The ruleset
   * keeper may still be writing its stamp in the spool, so a removal that races it is retried;
   * close() hands what still cannot go to the reaper, which removes it once the keeper has
   * exited, and never fails for it.
   */
  #removeFiles(): string[] {
    const left: string[] = []
    for (const dir of [this.spoolDir, this.tmpDir]) {
      try {
        rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 })
      } catch {
        left.push(dir)
      }
    }
    return left
  }

  /**
   * How to spawn one job of `tree`: bash running `script` in `cwd`, through the confinement
   * mechanism. A script too long for one argument is written to a read-only file in the spool
   * and evaluated from there, so bash runs it the same way. The BASH_ENV prelude is set only when
   * it has work: joining the cgroup without the helper, or reporting the pipeline's statuses.
   */
  launch(
    tree: JobTree,
    script: string,
    cwd: HeldCwd,
    seq: number,
    io: 'pipes' | 'terminal',
    isPipestatus = false,
  ): { launch: Launch; scriptFile: string | null } {
    let scriptFile: string | null = null
    let arg = script
    if (Buffer.byteLength(script) > INLINE_SCRIPT_MAX) {
      scriptFile = join(this.spoolDir, `script-${seq}.bash`)
      writeFileSync(scriptFile, script, { mode: 0o400 })
      arg = `eval "$(< ${shellQuote(scriptFile)})"`
    }
    const keepFds = isPipestatus ? [PIPESTATUS_PIPE_FD] : []
    const joins = this.limits?.join ?? []
    const effectsFile = this.effectsFile(seq)
    const eventsFile = this.eventsFile(seq)
    const processBound = this.keeper.kind === 'marker' && this.options.processLimit === undefined && isProcessBoundHeld() ? JOB_PROCESS_BOUND : null
    const launch = this.confiner.launch({
      bash: this.bash,
      bashArgs: ['-c', arg],
      cgroupProcs: tree.cgroupProcs,
      cwd,
      io,
      keepFds,
      joins,
      effectsFile,
      eventsFile,
      processBound,
    })
    this.#armKeeper(KEEPER_AFTER_MS)
    if (isPipestatus || launch.env[CGROUP_PROCS_VAR] !== undefined || launch.env[CLOSE_FDS_VAR] !== undefined) launch.env['BASH_ENV'] = this.preludePath
    return { launch, scriptFile }
  }

  /**
   * The spawner for a job started by `launch`, started on first use; null when the host switched
   * it off, or when the job has no relay reporting its end (the spawner is the helper itself).
   */
  spawner(launch: Launch): Spawner | null {
    const file = this.confiner.spawnerFile
    if (!this.options.isSpawner || file === null || launch.statusFd === null || !launch.hasRelay || this.#closed !== null) return null
    this.#spawner ??= holdSpawner(file)
    return this.#spawner.spawner
  }

  /**
   * Start now, in the background, what the session's first command would start on its way: the
   * login environment (when the host gave none), the spawner of piped jobs, the first job's
   * cgroup and the ruleset keeper. A host calls it once it knows the session will be used (an MCP session once its
   * roots are known), so the first command finds them ready or already starting. close() stops
   * them as it stops them after a command, whether or not they have finished starting.
   */
  prepare(): void {
    if (this.#closed !== null) return
    // A failed capture is the first command's to report (it awaits the same promise).
    this.loginEnv().catch(() => undefined)
    const file = this.confiner.spawnerFile
    if (this.options.isSpawner && file !== null) this.#spawner ??= holdSpawner(file)
    if (this.keeper instanceof CgroupKeeper) this.keeper.prepare()
    this.#armKeeper(KEEPER_AFTER_PREPARE_MS)
  }

  /** Start the ruleset keeper `ms` from now, unless it is armed or asked for already (see #startKeeper). */
  #armKeeper(ms: number): void {
    if (this.#keeperTimer !== undefined || this.confiner.keeper === null) return
    this.#keeperTimer = setTimeout(() => this.#startKeeper(), ms)
    this.#keeperTimer.unref()
  }

  /**
   * Have the reaper fork the ruleset keeper: once the session's first foreground run has settled,
   * or KEEPER_AFTER_MS after its first job was launched if that run is still going, or
   * KEEPER_AFTER_PREPARE_MS after prepare(), whichever comes first. A first job started before
   * then builds its own ruleset, so the keeper's fork, exec and build (~1–2 ms of CPU on a 2-core
   * machine) are kept out of the first command's way, and a session that is neither prepared nor
   * runs a command starts none. Until the keeper has stamped its ruleset, jobs build their own;
   * one that dies on its own is not started again until a new reaper is (the reaper was killed):
   * meanwhile every job builds its own ruleset, slower but never weaker.
   */
  #startKeeper(): void {
    if (this.#keeperTimer === null) return
    clearTimeout(this.#keeperTimer)
    this.#keeperTimer = null
    const keeper = this.confiner.keeper
    if (keeper === null || this.#closed !== null) return
    this.#reaper.keep({ ...keeper, argsFile: join(this.spoolDir, 'keeper.args') })
  }

  /** Where job `seq`'s relay records what it changes on disk; null when jobs are not observed here. */
  effectsFile(seq: number): string | null {
    return this.confiner.unobservedWhy === null ? join(this.spoolDir, `effects-${seq}`) : null
  }

  /** Where job `seq`'s relay records the sockets and metadata changes its guard refused; null when nothing guards them here. */
  eventsFile(seq: number): string | null {
    return this.confiner.isGuarded ? join(this.spoolDir, `refused-${seq}`) : null
  }

  /** The account of what job `seq` changes on disk (read from its relay's record). */
  jobChanges(seq: number): JobChanges {
    return new JobChanges(this.effectsFile(seq), {
      roots: this.roots,
      workspace: this.roots[0] as string,
      tmpDir: this.tmpDir,
      unobservedWhy: this.confiner.unobservedWhy,
    })
  }

  /** A fresh number for spool and log file names. */
  nextSeq(): number {
    return ++this.#seq
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
      if (this.#keeperTimer) this.#startKeeper()
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
    if (this.#keeperTimer) clearTimeout(this.#keeperTimer)
    this.#keeperTimer = null
    const grace = this.options.stopGraceMs
    const shells = [...this.shells.values()]
    this.shells.clear()
    for (const run of this.#activeRuns) run.abort()
    await Promise.all(shells.map((s) => s.stop(grace).catch(() => undefined)))
    await Promise.allSettled([...this.#runsSettled])
    this.#spawner?.release()
    if (shells.length > 0) this.changed()
    this.keeper.close()
    const cgroupsLeft = removeLimitDirs(this.limits?.dirs ?? [])
    this.#cancelExitHook()
    // Removed while still registered, so what cannot go yet is the reaper's to remove; once
    // released, a later host death no longer touches the old paths.
    this.#reaper.release(this.#removeFiles(), cgroupsLeft)
    this.#listeners.clear()
  }
}
