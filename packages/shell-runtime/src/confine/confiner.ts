import type { HeldCwd } from '../cwd/hold-cwd.ts'
import type { ConfinePolicy } from './policy.ts'

/** The mechanism that confines commands: Linux Landlock, bubblewrap, or none. */
export type ConfineKind = 'landlock' | 'bwrap' | 'off'

/** What the host asks for: `auto` picks the strongest mechanism that works here at the per-call cost target. */
export type ConfineMode = 'auto' | ConfineKind

/** One job to start: bash with its arguments, the tree it joins, the directory it starts in. */
export interface JobSpec {
  bash: string
  /** bash's arguments (`-c script`); argv[0] is always `bash`. */
  bashArgs: string[]
  /** The job's `cgroup.procs`, joined before anything else runs; null when the tree uses the marker. */
  cgroupProcs: string | null
  cwd: HeldCwd
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
  /** A process the session keeps running beside its jobs (Landlock's ruleset keeper), or null. */
  readonly keeper: { file: string; args: string[] } | null
  /** The spawn of one job. */
  launch(job: JobSpec): Launch
}
