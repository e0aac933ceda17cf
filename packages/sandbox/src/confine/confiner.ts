import type { HeldCwd } from '../cwd/held-cwd.ts'
import type { ConfinePolicy } from './policy.ts'

/** The mechanism that confines commands: Linux Landlock, bubblewrap, or none. */
export type ConfineKind = 'landlock' | 'bwrap' | 'off'

/** What the host asks for: `auto` picks the strongest mechanism that works here at the per-call cost target. */
export type ConfineMode = 'auto' | ConfineKind

/** The descriptor on which the helper's relay reports how a piped job ended (`exit N` / `signal N`). */
export const STATUS_FD = 4

/**
 * Without the helper, the variable telling the BASH_ENV prelude to close every inherited
 * descriptor but 0–2 and the ones it lists (space-separated).
 */
export const CLOSE_FDS_VAR = 'HANDS_CLOSE_FDS'

/** The OOM score adjustment every job starts with: under memory pressure a job dies before the server. */
export const JOB_OOM_SCORE_ADJ = 500

/** One job to start: bash with its arguments, the tree it joins, the directory it starts in. */
export interface JobSpec {
  bash: string
  /** bash's arguments (`-c script`); argv[0] is always `bash`. */
  bashArgs: string[]
  /** The job's `cgroup.procs`, joined before anything else runs; null when the tree uses the marker. */
  cgroupProcs: string | null
  cwd: HeldCwd
  /**
   * `pipes` (shell_run): no terminal; the relay reports the job's end on STATUS_FD at once and
   * stays to reap what the job left until the host has stopped it. `terminal` (a background
   * shell): the terminal on stdin is the only one under /dev/pts the job may open.
   */
  io: 'pipes' | 'terminal'
  /** Descriptors beyond 0–2 the job keeps (the pipestatus pipe); every other one is closed. */
  keepFds: number[]
  /** More `cgroup.procs` files the job's first process joins (the session's cgroup v1 limits); usually none. */
  joins: string[]
  /** Where the relay records what the job changes on disk (see effects/), or null when it is not observed. */
  effectsFile: string | null
  /** Where the relay's guard records the sockets and metadata changes it refused (see refusals/), or null. */
  eventsFile: string | null
  /** Processes and threads the job may start beyond those the machine runs (RLIMIT_NPROC), or null when a cgroup holds its tree. */
  processBound: number | null
}

/** How to spawn a job: the program, its arguments, spawn's `cwd`, and variables the mechanism sets. */
export interface Launch {
  file: string
  args: string[]
  /** argv[0] when `file` is bash itself (the helper sets bash's argv[0] otherwise). */
  argv0?: string
  /** spawn's `cwd`: the held directory through /proc/self/fd. */
  cwd: string
  env: Record<string, string>
  /** STATUS_FD when the job's end is reported there (the helper's relay runs it), else null. */
  statusFd: number | null
  /** True when the spawned process is the helper's relay, not the job itself (see JobTree.setRelay). */
  hasRelay: boolean
}

/**
 * The helper's arguments for what every job gets, however it is confined: its OOM score, the
 * cgroup it is born in, the descriptors it keeps (every other one is closed), and for piped jobs
 * the descriptor its end is reported on.
 */
/** True when the helper, given jobArgs(job) (and a seccomp filter or not), keeps a relay beside the job (see native/main.c). */
export function hasRelay(job: JobSpec, isSeccomp: boolean): boolean {
  return job.cgroupProcs !== null || job.io === 'pipes' || isSeccomp || job.effectsFile !== null
}

export function jobArgs(job: JobSpec): string[] {
  const args = ['--oom-score-adj', String(JOB_OOM_SCORE_ADJ)]
  if (job.cgroupProcs !== null) args.push('--cgroup', job.cgroupProcs)
  for (const file of job.joins) args.push('--join', file)
  if (job.io === 'pipes') args.push('--status-fd', String(STATUS_FD))
  if (job.effectsFile !== null) args.push('--effects', job.effectsFile)
  if (job.processBound !== null) args.push('--nproc-beyond', String(job.processBound))
  if (job.eventsFile !== null) args.push('--events', job.eventsFile)
  for (const fd of job.keepFds) args.push('--keep-fd', String(fd))
  return args
}

/**
 * A confinement mechanism, as the process manager uses it. Landlock and bubblewrap implement it
 * on Linux; a macOS Seatbelt profile (`sandbox-exec -p …`) would be a third implementation of
 * the same interface.
 */
export interface Confiner {
  readonly kind: ConfineKind
  readonly policy: ConfinePolicy
  /** One paragraph for stderr and `hands tools`: what confines commands here and what it cannot do. */
  readonly summary: string
  /** The sentence every shell result carries when commands run unconfined; null when confined. */
  readonly unconfinedNote: string | null
  /** The command's TMPDIR as the command sees it. */
  readonly tmpDir: string
  /** How long the mechanism's own processes may outlive the command (bubblewrap's pid 1), in ms; 0 for none. */
  readonly settleMs: number
  /** True when a command may write to cgroupfs (confinement off, or a writable path covers it), so it could leave its cgroup. */
  readonly canLeaveCgroup: boolean
  /** True when the helper's relay guards each job's sockets (and, under Landlock, metadata outside the writable paths), recording what it refused. */
  readonly isGuarded: boolean
  /** Why what a job changes on disk cannot be observed under this mechanism (a sentence), or null when it can. */
  readonly unobservedWhy: string | null
  /** A process the session keeps running beside its jobs (Landlock's ruleset keeper), or null. */
  readonly keeper: { file: string; args: string[] } | null
  /**
   * The helper as installed, which the server's spawner runs (see holdSpawner): a session's copy
   * would be gone while later sessions still use the spawner. Null when jobs start without it.
   */
  readonly spawnerFile: string | null
  /** The spawn of one job. */
  launch(job: JobSpec): Launch
}
