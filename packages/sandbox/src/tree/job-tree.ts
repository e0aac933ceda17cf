/** The processes of one job (one shell_run command, one background shell), however they are tracked. */
export interface JobTree {
  /** The job's `cgroup.procs`, which its first process joins before anything else; null when tracked by the marker. */
  readonly cgroupProcs: string | null
  /** Variables the job's processes carry so the tree can find them (the marker), or none. */
  readonly env: Readonly<Record<string, string>>
  /** Pids of every live process in the job. */
  pids(): number[]
  /** Pids of the job's processes that left its cgroup (found by the marker), when a command could leave it; else none. */
  strays(): number[]
  /** Send `signal` to every live process in the job; returns the pids it reached. */
  signalAll(signal: NodeJS.Signals): number[]
  /** SIGKILL every process in the job now. */
  killAll(): void
  /** Release what tracking the job needed (the job must be empty). */
  dispose(): void
  /**
   * The job's first process is hands' own relay (the helper): it carries the job's marker but is
   * not one of the job's processes, so pids() and strays() leave it out.
   */
  setRelay(pid: number): void
}

/** Where a runtime's job trees live: one per session. */
export interface TreeKeeper {
  /** `cgroup` (per-job cgroup v2) or `marker` (per-job environment marker found through /proc). */
  readonly kind: 'cgroup' | 'marker'
  /** A new, empty job tree. */
  create(): JobTree
  /** SIGKILL every process of every job of this keeper, synchronously (used at host exit). */
  killEverythingSync(): void
  /** What the reaper kills if the host dies without cleaning up: the session cgroup (or ''), the marker prefix (or ''). */
  reaperTargets(): { target: string; marker: string }
  /** Remove what the keeper created (every job must be empty). */
  close(): void
}
