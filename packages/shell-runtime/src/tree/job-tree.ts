/** The processes of one job (one shell_run command, one background shell), however they are tracked. */
export interface JobTree {
  /** Variables the job's first process must carry so the tree can find it. */
  readonly env: Readonly<Record<string, string>>
  /** Pids of every live process in the job. */
  pids(): number[]
  /** Send `signal` to every live process in the job; returns the pids it reached. */
  signalAll(signal: NodeJS.Signals): number[]
  /** SIGKILL every process in the job now. */
  killAll(): void
  /** Release what tracking the job needed (the job must be empty). */
  dispose(): void
}

/** Where a runtime's job trees live: one per session. */
export interface TreeKeeper {
  /** `cgroup` (per-job cgroup v2) or `marker` (per-job environment marker found through /proc). */
  readonly kind: 'cgroup' | 'marker'
  /** A new, empty job tree. */
  create(): JobTree
  /** SIGKILL every process of every job of this keeper, synchronously (used at host exit). */
  killEverythingSync(): void
  /** Arguments for the reaper that kills every job if the host dies without cleaning up. */
  reaperArgs(): string[]
  /** Remove what the keeper created (every job must be empty). */
  close(): void
}
