/**
 * `@hands/sandbox/parts`: the building blocks a process manager assembles a session from (what
 * `@hands/shell-runtime` uses): the choice of mechanism and its policy, the tree keepers and the
 * reaper, the spawner and the prelude, the record of changes. Most users want the package's main
 * entry instead.
 */
export { chooseConfiner, type ConfineRefusal } from './confine/choose.ts'
export { CLOSE_FDS_VAR, type ConfineKind, type ConfineMode, type Confiner, type Launch } from './confine/confiner.ts'
export { buildPolicy, defaultPrivateDirs, SECRET_STORES } from './confine/policy.ts'
export { guardNote, refusalNote } from './confine/refusal-note.ts'
export { openHeldDir, releaseCwd, spawnCwd, type HeldCwd } from './cwd/held-cwd.ts'
export { NO_CHANGES } from './effects/changes.ts'
export { JobChanges } from './effects/observer.ts'
export { BASE_ALLOWLIST, pickAllowed } from './env/allowlist.ts'
export { loginEnvScript, parseLoginEnv, shellQuote, type LoginEnvironment } from './env/capture-login-env.ts'
export { childEnv, NON_INTERACTIVE, TERMINAL } from './env/child-env.ts'
export { findBash } from './env/find-bash.ts'
export { PIPESTATUS_PIPE_FD, PIPESTATUS_VAR, PRELUDE } from './process/prelude.ts'
export { endingOf, shellSignalHint, signalName, type Ending } from './process/signals.ts'
export { onceClosed, readStatus } from './process/status.ts'
export { holdSpawner, type JobProcess, type Spawner, type SpawnerHold, type SpawnerStdio } from './process/spawner.ts'
export { isProcessBoundHeld, JOB_PROCESS_BOUND, treeSummary } from './tree/bound.ts'
export { CGROUP_PROCS_VAR, CgroupKeeper } from './tree/cgroup-keeper.ts'
export { findWritableCgroup, type FoundCgroup } from './tree/find-cgroup.ts'
export { onHostExit } from './tree/host-exit.ts'
export type { JobTree, TreeKeeper } from './tree/job-tree.ts'
export { MarkerKeeper } from './tree/marker-keeper.ts'
export { readProcFile } from './tree/proc.ts'
export { registerWithReaper, type ReaperRegistration } from './tree/reaper.ts'
export { applySessionLimits, checkSessionLimits, removeLimitDirs, type SessionLimitOptions, type SessionLimits } from './tree/session-limits.ts'
export { stopTree, waitEmpty, type StopReport } from './tree/stop-tree.ts'
export { JobHost, SandboxUnavailableError, type JobHostOptions } from './job/host.ts'
