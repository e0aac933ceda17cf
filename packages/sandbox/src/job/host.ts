import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { chooseConfiner, type ConfineRefusal } from '../confine/choose.ts'
import { CLOSE_FDS_VAR, type ConfineMode, type Confiner, type Launch } from '../confine/confiner.ts'
import { buildPolicy, defaultPrivateDirs } from '../confine/policy.ts'
import type { HeldCwd } from '../cwd/held-cwd.ts'
import { JobChanges } from '../effects/observer.ts'
import { shellQuote } from '../env/capture-login-env.ts'
import { findBash } from '../env/find-bash.ts'
import { PIPESTATUS_PIPE_FD, PRELUDE } from '../process/prelude.ts'
import { holdSpawner, type Spawner, type SpawnerHold } from '../process/spawner.ts'
import { isProcessBoundHeld, JOB_PROCESS_BOUND, treeSummary } from '../tree/bound.ts'
import { CGROUP_PROCS_VAR, CgroupKeeper } from '../tree/cgroup-keeper.ts'
import { findWritableCgroup, type FoundCgroup } from '../tree/find-cgroup.ts'
import { onHostExit } from '../tree/host-exit.ts'
import type { JobTree, TreeKeeper } from '../tree/job-tree.ts'
import { MarkerKeeper } from '../tree/marker-keeper.ts'
import { registerWithReaper, type ReaperRegistration } from '../tree/reaper.ts'
import { applySessionLimits, removeLimitDirs, type SessionLimitOptions, type SessionLimits } from '../tree/session-limits.ts'

/** Scripts longer than this (in bytes) reach bash through a file, under Linux's 128 KiB limit on one argument. */
const INLINE_SCRIPT_MAX = 64 * 1024
/** How long after the host's first job is launched the ruleset keeper is started, if that job's run has not settled by then. */
const KEEPER_AFTER_MS = 1000
/**
 * How long after prepare() the ruleset keeper is started, unless a run settles first: long enough
 * that a command sent right away does not share the CPU with the keeper's start, short enough that
 * one sent as a model's calls come finds the ruleset built.
 */
const KEEPER_AFTER_PREPARE_MS = 100

/** What a job host confines its jobs to, and how it holds them. */
export interface JobHostOptions extends SessionLimitOptions {
  /** The allowed roots; the first is the workspace (where the account of changes names paths from). */
  roots: string[]
  confine: ConfineMode
  /** How job trees are held: a cgroup each where one is writable (`auto`), or only an environment marker. */
  tree: 'auto' | 'cgroup' | 'marker'
  /** Where the host's spool and its jobs' TMPDIR are made. */
  spoolParent: string
  /** The host's environment (where bash and HOME are looked up). */
  hostEnv: Record<string, string | undefined>
  /** The bash to run; default the first on the host's PATH. */
  bash?: string | undefined
  allowWrite: string[]
  allowSockets: string[]
  denyRead: string[]
  /** Directories hidden from jobs besides the secret stores (the host's own, e.g. attach sockets). */
  privateDirs: string[]
  isNetwork: boolean
  /** Record what each job changes on disk. */
  isChanges: boolean
  /** Start piped jobs through a spawner process shared by the hosts of this process. */
  isSpawner: boolean
}

/** Thrown when no mechanism here can confine jobs and the host did not switch confinement off. */
export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError'
  readonly refusal: ConfineRefusal
  constructor(refusal: ConfineRefusal) {
    super(`no sandbox can confine commands here (${refusal.missing}); ${refusal.fix}`)
    this.refusal = refusal
  }
}

function realOrGiven(path: string): string {
  try {
    return realpathSync.native(path)
  } catch {
    return path
  }
}

/**
 * What every job of one session shares: the chosen mechanism and its policy, the spool (read-only
 * to jobs) and the jobs' TMPDIR, the tree keeper, the session's limits, its registration with the
 * reaper that ends everything if this process dies, and the spawner. Each job is launched through
 * it; close() ends it all.
 */
export class JobHost {
  readonly name: string
  /** The allowed roots as real paths. */
  readonly roots: string[]
  readonly spoolDir: string
  /** Every job's TMPDIR, removed at close. */
  readonly tmpDir: string
  readonly preludePath: string
  readonly bash: string
  readonly confiner: Confiner
  readonly keeper: TreeKeeper
  /** Where the host's memory and process limits live; null without limits. */
  readonly limits: SessionLimits | null
  readonly #options: JobHostOptions
  #reaper: ReaperRegistration
  #cancelExitHook: () => void
  #isClosed = false
  #seq = 0
  /** The hold on the spawner of piped jobs, taken with the first one (or by prepare()); undefined until then. */
  #spawner: SpawnerHold | undefined
  /** Armed by prepare() or the first job's launch (see #startKeeper); null once the ruleset keeper was asked for. */
  #keeperTimer: NodeJS.Timeout | null | undefined

  /** Throws SandboxUnavailableError when no mechanism can confine jobs here (and `confine` is not `off`). */
  constructor(options: JobHostOptions) {
    this.#options = options
    this.name = `hands-${process.pid}-${randomBytes(4).toString('hex')}`
    this.roots = options.roots.map(realOrGiven)
    this.bash = options.bash ?? findBash(options.hostEnv)
    this.spoolDir = mkdtempSync(join(options.spoolParent, 'hands-shell-'))
    this.tmpDir = mkdtempSync(join(options.spoolParent, 'hands-tmp-'))
    try {
      this.preludePath = join(this.spoolDir, 'prelude.bash')
      writeFileSync(this.preludePath, PRELUDE, { mode: 0o400 })
      const cgroup = options.tree === 'marker' ? null : findWritableCgroup()
      const homes = [homedir(), options.hostEnv['HOME'] ?? ''].filter((h) => h !== '')
      const policy = buildPolicy({
        roots: this.roots,
        tmpDir: this.tmpDir,
        allowWrite: options.allowWrite,
        allowSockets: options.allowSockets,
        denyRead: options.denyRead,
        privateDirs: [...defaultPrivateDirs(options.hostEnv), ...options.privateDirs],
        homes,
        isNetwork: options.isNetwork,
      })
      const chosen = chooseConfiner({
        mode: options.confine,
        policy,
        env: process.env,
        bash: this.bash,
        spoolDir: this.spoolDir,
        cgroupMount: cgroup?.mount ?? null,
        isChanges: options.isChanges,
      })
      if (chosen.kind === 'unavailable') throw new SandboxUnavailableError(chosen)
      this.confiner = chosen
      this.keeper = this.#makeKeeper(cgroup)
      try {
        this.limits = applySessionLimits(options, this.name, this.keeper instanceof CgroupKeeper ? this.keeper.dir : null)
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

  /** What confines jobs, how their trees are held, and the host's limits: the lines hosts show. */
  summary(): string {
    return [
      this.confiner.summary,
      treeSummary(this.keeper.kind, this.#options.processLimit !== undefined),
      ...(this.limits === null ? [] : [this.limits.summary]),
    ].join('\n')
  }

  #makeKeeper(cgroup: FoundCgroup | null): TreeKeeper {
    const mode = this.#options.tree
    if (mode !== 'marker') {
      const keeper = cgroup === null ? null : CgroupKeeper.create(cgroup.dir, this.name, this.confiner.canLeaveCgroup)
      if (keeper !== null) return keeper
      if (mode === 'cgroup') throw new Error('tree: "cgroup" was asked for, but no writable cgroup v2 hierarchy was found')
    }
    return new MarkerKeeper(this.name)
  }

  /**
   * Remove the spool and the TMPDIR; returns those that are still there. The ruleset keeper may
   * still be writing its stamp in the spool, so a removal that races it is retried; close() hands
   * what still cannot go to the reaper, which removes it once the keeper has exited.
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
    const processBound = this.keeper.kind === 'marker' && this.#options.processLimit === undefined && isProcessBoundHeld() ? JOB_PROCESS_BOUND : null
    const launch = this.confiner.launch({
      bash: this.bash,
      bashArgs: ['-c', arg],
      cgroupProcs: tree.cgroupProcs,
      cwd,
      io,
      keepFds: isPipestatus ? [PIPESTATUS_PIPE_FD] : [],
      joins: this.limits?.join ?? [],
      effectsFile: this.effectsFile(seq),
      eventsFile: this.eventsFile(seq),
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
    if (!this.#options.isSpawner || file === null || launch.statusFd === null || !launch.hasRelay || this.#isClosed) return null
    this.#spawner ??= holdSpawner(file)
    return this.#spawner.spawner
  }

  /**
   * Start now, in the background, what the first job would start on its way: the spawner, the
   * first job's cgroup and the ruleset keeper. close() stops them whether or not they have
   * finished starting.
   */
  prepare(): void {
    if (this.#isClosed) return
    const file = this.confiner.spawnerFile
    if (this.#options.isSpawner && file !== null) this.#spawner ??= holdSpawner(file)
    if (this.keeper instanceof CgroupKeeper) this.keeper.prepare()
    this.#armKeeper(KEEPER_AFTER_PREPARE_MS)
  }

  /** A run has settled: the ruleset keeper, if armed, starts now rather than beside the next one. */
  settled(): void {
    if (this.#keeperTimer) this.#startKeeper()
  }

  /** Start the ruleset keeper `ms` from now, unless it is armed or asked for already (see #startKeeper). */
  #armKeeper(ms: number): void {
    if (this.#keeperTimer !== undefined || this.confiner.keeper === null) return
    this.#keeperTimer = setTimeout(() => this.#startKeeper(), ms)
    this.#keeperTimer.unref()
  }

  /**
   * Have the reaper fork the ruleset keeper: once the first run has settled, or KEEPER_AFTER_MS
   * after the first job was launched if that run is still going, or KEEPER_AFTER_PREPARE_MS after
   * prepare(), whichever comes first. A first job started before then builds its own ruleset, so
   * the keeper's fork, exec and build (~1–2 ms of CPU on a 2-core machine) are kept out of the
   * first command's way, and a host that is neither prepared nor runs a job starts none. Until the
   * keeper has stamped its ruleset, jobs build their own; one that dies on its own is not started
   * again until a new reaper is (the reaper was killed): meanwhile every job builds its own
   * ruleset, slower but never weaker.
   */
  #startKeeper(): void {
    if (this.#keeperTimer === null) return
    clearTimeout(this.#keeperTimer)
    this.#keeperTimer = null
    const keeper = this.confiner.keeper
    if (keeper === null || this.#isClosed) return
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

  /** A fresh number for the spool's file names. */
  nextSeq(): number {
    return ++this.#seq
  }

  get isClosed(): boolean {
    return this.#isClosed
  }

  /** Mark the host closed: no spawner, no ruleset keeper starts from now on (the jobs are the caller's to stop first). */
  closing(): void {
    this.#isClosed = true
    if (this.#keeperTimer) clearTimeout(this.#keeperTimer)
    this.#keeperTimer = null
  }

  /** Once every job is stopped: end the spawner hold, the keeper, the limits and the files. Idempotent. */
  close(): void {
    this.closing()
    if (this.#cancelExitHook === NOOP) return
    this.#spawner?.release()
    this.keeper.close()
    const cgroupsLeft = removeLimitDirs(this.limits?.dirs ?? [])
    this.#cancelExitHook()
    this.#cancelExitHook = NOOP
    // Removed while still registered, so what cannot go yet is the reaper's to remove; once
    // released, a later host death no longer touches the old paths.
    this.#reaper.release(this.#removeFiles(), cgroupsLeft)
  }
}

const NOOP = () => undefined
