import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { ToolError } from '@hands/contracts'
import { pickAllowed } from '../env/allowlist.ts'
import { loginEnvScript, parseLoginEnv } from '../env/capture-login-env.ts'
import { PRELUDE } from '../process/prelude.ts'
import { runPiped } from '../process/run-piped.ts'
import type { BackgroundShell } from '../shells/background-shell.ts'
import { CgroupKeeper } from '../tree/cgroup-keeper.ts'
import { findWritableCgroup } from '../tree/find-cgroup.ts'
import { onHostExit } from '../tree/host-exit.ts'
import type { TreeKeeper } from '../tree/job-tree.ts'
import { MarkerKeeper } from '../tree/marker-keeper.ts'
import { startReaper, type Reaper } from '../tree/reaper.ts'
import { resolveOptions, type ResolvedOptions, type ShellRuntimeOptions } from './options.ts'

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
  /** The append-only file holding every byte the shell printed. */
  log_path: string
}

/** Where the login environment came from, for hosts that want to show it. */
export interface LoginEnvironment {
  /** The allowed variables commands start from (before the mode's own settings). */
  env: Record<string, string>
  /** `login` when captured from `bash -l`, `host` when the capture failed and the host's allowed variables were used. */
  source: 'login' | 'host'
  /** Why the capture failed, or null. */
  error: string | null
}

function findBash(env: Record<string, string | undefined>): string {
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue
    const candidate = join(dir, 'bash')
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // next
    }
  }
  return '/bin/bash'
}

/**
 * The state every shell tool shares: options, the spool directory, the tree keeper and its
 * reaper, the login environment, the background shells and the foreground jobs in flight.
 */
export class Session {
  readonly options: ResolvedOptions
  readonly name: string
  readonly spoolDir: string
  readonly preludePath: string
  readonly keeper: TreeKeeper
  readonly bash: string
  readonly shells = new Map<string, BackgroundShell>()
  /** Foreground commands running now, each with the controller that stops it. */
  readonly #activeRuns = new Set<AbortController>()
  readonly #runsSettled = new Set<Promise<unknown>>()
  #loginEnv: Promise<LoginEnvironment> | null = null
  #reaper: Reaper
  #cancelExitHook: () => void
  #listeners = new Set<(resources: ShellResource[]) => void>()
  #closed: Promise<void> | null = null
  #seq = 0

  constructor(input: ShellRuntimeOptions) {
    this.options = resolveOptions(input, tmpdir())
    this.name = `hands-${process.pid}-${randomBytes(4).toString('hex')}`
    this.bash = this.options.bash ?? findBash(this.options.hostEnv)
    this.spoolDir = mkdtempSync(join(this.options.spoolParent, 'hands-shell-'))
    this.preludePath = join(this.spoolDir, 'prelude.bash')
    writeFileSync(this.preludePath, PRELUDE, { mode: 0o600 })
    this.keeper = this.#makeKeeper()
    this.#reaper = startReaper(this.bash, this.keeper.reaperArgs(), this.spoolDir)
    this.#cancelExitHook = onHostExit(() => {
      this.keeper.killEverythingSync()
      rmSync(this.spoolDir, { recursive: true, force: true })
    })
  }

  #makeKeeper(): TreeKeeper {
    const mode = this.options.tree
    if (mode !== 'marker') {
      const base = findWritableCgroup()
      const keeper = base === null ? null : CgroupKeeper.create(base, this.name)
      if (keeper !== null) return keeper
      if (mode === 'cgroup') {
        rmSync(this.spoolDir, { recursive: true, force: true })
        throw new Error('tree: "cgroup" was asked for, but no writable cgroup v2 hierarchy was found')
      }
    }
    return new MarkerKeeper(this.name)
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
    const tree = this.keeper.create()
    let error: string
    try {
      const run = await this.track((signal) =>
        runPiped({
          bash: this.bash,
          script: loginEnvScript(this.bash),
          cwd: this.options.roots[0] as string,
          env: { ...host, BASH_ENV: this.preludePath },
          tree,
          headBytes: 8 * 1024 * 1024,
          tailBytes: 1024 * 1024,
          spoolBase: join(this.spoolDir, 'login-env'),
          deadline: performance.now() + this.options.loginEnvBoundMs,
          graceMs: this.options.stopGraceMs,
          isPipestatus: false,
          signal,
        }),
      )
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

  /** Start a foreground command through `start`, listed as in flight (close() stops it and waits) until it settles. */
  track<T>(start: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController()
    this.#activeRuns.add(controller)
    const settled = start(controller.signal).finally(() => {
      this.#activeRuns.delete(controller)
      this.#runsSettled.delete(settled)
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
    const grace = this.options.stopGraceMs
    const shells = [...this.shells.values()]
    this.shells.clear()
    for (const run of this.#activeRuns) run.abort()
    await Promise.all(shells.map((s) => s.stop(grace).catch(() => undefined)))
    await Promise.allSettled([...this.#runsSettled])
    if (shells.length > 0) this.changed()
    this.keeper.close()
    this.#cancelExitHook()
    this.#reaper.release()
    rmSync(this.spoolDir, { recursive: true, force: true })
    this.#listeners.clear()
  }
}
