import type { PathGate } from '@hands/fs-runtime'
import { resolveLimits, type ShellLimits } from '../limits/limits.ts'
import type { ConfineMode, SessionLimitOptions, LoginEnvironment } from '@hands/sandbox/parts'

/** Options of `createShellRuntime`. Every bound is a host setting, never a tool parameter. */
export interface ShellRuntimeOptions extends ShellLimits, SessionLimitOptions {
  /** Allowed roots; the first is the workspace root and the default `cwd`. */
  roots: string[]
  /** Host access gates consulted (with access `cwd`) for every `cwd`. */
  gates?: PathGate[]
  /** Extra variable names passed from the login environment to commands (`NAME`, or a prefix `NAME_*`). */
  envAllow?: string[]
  /** Bound on one shell_run call, in ms; default 120000. */
  runBoundMs?: number
  /** Bytes kept from the start of each shell_run stream; default 16384. */
  headBytes?: number
  /** Bytes kept from the end of each shell_run stream; default 16384. */
  tailBytes?: number
  /** Lines each background shell keeps for shell_logs; default 10000. */
  ringLines?: number
  /** Grace between SIGTERM and SIGKILL when a tree is stopped, in ms; default 2000. */
  stopGraceMs?: number
  /** Directory under which the session's spool directory is made (removed on close); default `os.tmpdir()`. */
  spoolDir?: string
  /** How process trees are tracked: `auto` (a cgroup v2 when writable, else the marker), `cgroup` or `marker`. */
  tree?: 'auto' | 'cgroup' | 'marker'
  /** The environment the login shell starts from, before the allowlist; default `process.env`. */
  hostEnv?: Record<string, string | undefined>
  /** The bash to run; default the first `bash` on the host PATH, else `/bin/bash`. */
  bash?: string
  /** Background terminal size; default 200 columns × 50 rows. */
  terminal?: { cols: number; rows: number }
  /** Bound on the one-time login-environment capture, in ms; default 15000. */
  loginEnvBoundMs?: number
  /**
   * How commands are confined to the roots: `auto` (default; Landlock, else bubblewrap, else
   * unconfined with a note on every result), `landlock`, `bwrap` (either throws when it cannot
   * work here) or `off`.
   */
  confine?: ConfineMode
  /** Extra directories commands may write under (a package manager's cache, say). */
  allowWrite?: string[]
  /**
   * Socket files (or directories of them) commands may connect to, beside those under the roots and
   * their TMPDIR: an ssh-agent, a database's socket. Every other host socket (docker.sock, D-Bus)
   * is refused.
   */
  allowSockets?: string[]
  /** Extra paths hidden from commands, beside the usual secret stores. */
  denyRead?: string[]
  /**
   * hands' own directories of the host's (a custom attach directory), hidden from commands like the
   * secret stores; the default attach directories are hidden whatever this says.
   */
  privateDirs?: string[]
  /**
   * Report what each command changes on disk (default true; see docs/effects.md). `false` leaves
   * the observer out of every job, and each result says its changes were not observed.
   */
  changes?: boolean
  /**
   * Start piped jobs through the session's spawner (default true; see docs/shell-runtime.md), a
   * small helper process that forks them so the server does not; `false` starts each with Node's
   * spawn. Without the built helper, jobs start with Node's spawn whatever this says.
   */
  spawner?: boolean
  /** TCP for commands; `false` refuses TCP bind and connect (Landlock) or gives each command no network (bubblewrap). Default true. */
  network?: boolean
  /**
   * The login environment, supplied by the host instead of captured by this runtime: one capture
   * (`captureLoginEnvironment`) shared by many runtimes, so `bash -l` runs once per process.
   * Called once, on the first command; this runtime's allowlist still applies to what it returns.
   */
  loginEnv?: () => Promise<LoginEnvironment>
}

/** Options with every default applied. */
export interface ResolvedOptions extends Required<ShellLimits>, SessionLimitOptions {
  roots: string[]
  gates: PathGate[]
  envAllow: string[]
  runBoundMs: number
  headBytes: number
  tailBytes: number
  ringLines: number
  stopGraceMs: number
  spoolParent: string
  tree: 'auto' | 'cgroup' | 'marker'
  hostEnv: Record<string, string | undefined>
  bash: string | undefined
  cols: number
  rows: number
  loginEnvBoundMs: number
  confine: ConfineMode
  allowWrite: string[]
  allowSockets: string[]
  denyRead: string[]
  privateDirs: string[]
  isNetwork: boolean
  isChanges: boolean
  isSpawner: boolean
  loginEnv: (() => Promise<LoginEnvironment>) | undefined
}

const CONFINE_MODES: readonly ConfineMode[] = ['auto', 'landlock', 'bwrap', 'off']

function paths(name: string, value: string[] | undefined): string[] {
  if (value === undefined) return []
  if (!Array.isArray(value) || value.some((p) => typeof p !== 'string' || p === '' || p.includes('\0'))) {
    throw new TypeError(`${name} must list non-empty paths`)
  }
  return [...value]
}

function positiveInt(name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < min) throw new RangeError(`${name} must be an integer ≥ ${min} (got ${value})`)
  return value
}

function flag(name: string, value: boolean | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback
  if (typeof value !== 'boolean') throw new TypeError(`${name} must be true or false (got ${String(value)})`)
  return value
}

function confineMode(value: ConfineMode | undefined): ConfineMode {
  if (value === undefined) return 'auto'
  if (!CONFINE_MODES.includes(value)) throw new RangeError(`confine must be one of ${CONFINE_MODES.join(', ')} (got ${String(value)})`)
  return value
}

/** Apply defaults and check the host's options (a bad option is a host bug: it throws). */
export function resolveOptions(options: ShellRuntimeOptions, tmp: string): ResolvedOptions {
  if (!Array.isArray(options.roots) || options.roots.length === 0) throw new TypeError('roots must list at least one directory')
  return {
    roots: [...options.roots],
    gates: [...(options.gates ?? [])],
    envAllow: [...(options.envAllow ?? [])],
    runBoundMs: positiveInt('runBoundMs', options.runBoundMs, 120_000),
    headBytes: positiveInt('headBytes', options.headBytes, 16 * 1024),
    tailBytes: positiveInt('tailBytes', options.tailBytes, 16 * 1024),
    ringLines: positiveInt('ringLines', options.ringLines, 10_000),
    stopGraceMs: positiveInt('stopGraceMs', options.stopGraceMs, 2000, 0),
    spoolParent: options.spoolDir ?? tmp,
    tree: options.tree ?? 'auto',
    hostEnv: options.hostEnv ?? process.env,
    bash: options.bash,
    cols: positiveInt('terminal.cols', options.terminal?.cols, 200),
    rows: positiveInt('terminal.rows', options.terminal?.rows, 50),
    loginEnvBoundMs: positiveInt('loginEnvBoundMs', options.loginEnvBoundMs, 15_000),
    ...resolveLimits(options),
    confine: confineMode(options.confine),
    allowWrite: paths('allowWrite', options.allowWrite),
    allowSockets: paths('allowSockets', options.allowSockets),
    denyRead: paths('denyRead', options.denyRead),
    privateDirs: paths('privateDirs', options.privateDirs),
    isNetwork: options.network ?? true,
    isChanges: flag('changes', options.changes, true),
    isSpawner: flag('spawner', options.spawner, true),
    loginEnv: options.loginEnv,
    ...(options.memoryLimit === undefined ? {} : { memoryLimit: positiveInt('memoryLimit', options.memoryLimit, 0) }),
    ...(options.processLimit === undefined ? {} : { processLimit: positiveInt('processLimit', options.processLimit, 0) }),
  }
}
