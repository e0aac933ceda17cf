import { spawnCwd } from '../cwd/hold-cwd.ts'
import { CGROUP_PROCS_VAR } from '../tree/cgroup-keeper.ts'
import { bwrapConfiner } from './bwrap.ts'
import { CLOSE_FDS_VAR, hasRelay, jobArgs, STATUS_FD, type Confiner, type ConfineMode, type JobSpec, type Launch } from './confiner.ts'
import { landlockConfiner } from './landlock.ts'
import { isUnder, type ConfinePolicy } from './policy.ts'
import { copyHelper, helperPath, packageDir, probe, type Probe } from './probe.ts'

/**
 * Commands run as the user, unconfined. The helper (when built) still starts each job: it joins
 * the job's cgroup (so no command-writable file decides that), raises its OOM score, closes what
 * the host's descriptors would leak, and reaps its orphans. Without it the BASH_ENV prelude joins
 * the cgroup and closes the descriptors.
 */
export function offConfiner(input: { reason: string; helper: string | null; policy: ConfinePolicy }): Confiner {
  const { helper, policy } = input
  return {
    kind: 'off',
    policy,
    summary: [
      `commands run UNCONFINED: ${input.reason}`,
      "they can write anywhere the user can, read every secret store and the server's environment (/proc/PID/environ), signal any of the user's processes and leave their cgroup",
    ].join('\n'),
    unconfinedNote: `Ran unconfined (${input.reason}): it could write outside the roots and read the server's environment.`,
    // Seeing a job's calls takes a seccomp filter: root may install one; anyone else would need
    // no_new_privs, which would stop sudo and every other setuid program of an unconfined command.
    unobservedWhy:
      helper === null
        ? 'not observed: the confinement helper is not built'
        : process.getuid?.() !== 0
          ? 'not observed: commands run unconfined, and seeing their calls would take no_new_privs, which stops sudo'
          : null,
    tmpDir: policy.tmpDir,
    settleMs: 0,
    keeper: null,
    spawnerFile: null,
    canLeaveCgroup: true,
    launch(job: JobSpec): Launch {
      const env: Record<string, string> = { TMPDIR: policy.tmpDir }
      if (helper !== null) {
        const args = [...jobArgs(job), '--argv0', 'bash', '--', job.bash, ...job.bashArgs]
        return { file: helper, args, cwd: spawnCwd(job.cwd), env, statusFd: job.io === 'pipes' ? STATUS_FD : null, hasRelay: hasRelay(job, false) }
      }
      // One cgroup.procs file per line: the job's own cgroup, then the session's limit groups.
      const joins = [...(job.cgroupProcs === null ? [] : [job.cgroupProcs]), ...job.joins]
      if (joins.length > 0) env[CGROUP_PROCS_VAR] = joins.join('\n')
      env[CLOSE_FDS_VAR] = job.keepFds.join(' ')
      return { file: job.bash, args: job.bashArgs, argv0: 'bash', cwd: spawnCwd(job.cwd), env, statusFd: null, hasRelay: false }
    },
  }
}

/** hands' own files under a writable path: a command could change hands for its next start. */
function selfGaps(policy: ConfinePolicy): string[] {
  const self = packageDir()
  const holder = policy.writable.find((w) => isUnder(w, self))
  return holder === undefined
    ? []
    : [`hands itself (${self}) lies under the writable ${holder}: a command can change it before hands next starts (install hands outside the roots)`]
}

/** Copy the helper into the session's spool (read-only to commands), so no command can replace the binary later jobs exec. */
const installHelper = (helper: string, spoolDir: string) => copyHelper(helper, spoolDir)

/**
 * Pick the mechanism for a session. `auto`: Landlock when the kernel has it (about +0.1–0.4 ms per
 * command), bubblewrap when Landlock is missing or cannot enforce `--no-network` (ABI < 4), else
 * unconfined with the reason. An explicit `landlock` or `bwrap` that cannot work here throws
 * (a host configuration error); `off` never probes.
 */
export function chooseConfiner(input: Parameters<typeof pick>[0] & { isChanges: boolean }): Confiner {
  const picked = pick(input)
  // The host may leave the observer out (options.changes false): no job gets the filter then.
  const chosen = input.isChanges ? picked : { ...picked, unobservedWhy: 'not observed: the host switched the account of changes off' }
  const changes =
    chosen.unobservedWhy === null
      ? "changes on disk: each command's, seen by the helper as it makes them, are in its result"
      : `gap: what commands change on disk is not reported (${chosen.unobservedWhy.replace(/^not observed: /, '')})`
  return { ...chosen, summary: `${chosen.summary}\n${changes}` }
}

function pick(input: {
  mode: ConfineMode
  policy: ConfinePolicy
  env: Record<string, string | undefined>
  bash: string
  /** The session's spool, where the helper is copied; null to describe the choice without a session. */
  spoolDir: string | null
  cgroupMount: string | null
}): Confiner {
  const { mode, policy, spoolDir } = input
  // Off probes nothing; the helper, when built, still starts each job (its cgroup, descriptors,
  // OOM score, reaping, and as root the record of what it changes).
  if (mode === 'off') {
    const built = helperPath(input.env)
    const helper = built === null || spoolDir === null ? built : installHelper(built, spoolDir)
    return { ...offConfiner({ reason: 'the host switched confinement off', helper, policy }), spawnerFile: built }
  }
  let found: Probe = probe({ env: input.env, bash: input.bash, isBwrapWanted: mode === 'bwrap' })
  const abi = found.landlockAbi
  const isLandlockEnough = abi > 0 && (policy.isNetwork || abi >= 4)
  if (mode === 'auto' && !isLandlockEnough) found = probe({ env: input.env, bash: input.bash, isBwrapWanted: true })
  const helper = found.helper === null ? null : spoolDir === null ? found.helper : installHelper(found.helper, spoolDir)
  // The server's spawner runs the helper where it is installed, whichever session starts it (see Confiner.spawnerFile).
  const spawnerFile = found.helper
  const gaps = selfGaps(policy)
  const landlock = (): Confiner => ({
    ...landlockConfiner({
      helper: helper as string,
      abi,
      seccomp: found.seccomp,
      seccompError: found.seccompError,
      policy,
      cgroupMount: input.cgroupMount,
      spoolDir,
      gaps,
    }),
    spawnerFile,
  })
  const bwrap = (why: string | null): Confiner => ({
    ...bwrapConfiner({ bwrap: found.bwrap as string, helper: helper as string, policy, spoolDir: spoolDir ?? '', why, gaps, abi, seccomp: found.seccomp }),
    spawnerFile,
  })
  if (mode === 'landlock') {
    if (abi === 0) throw new Error(`confine: "landlock" was asked for, but ${found.landlockError}`)
    return landlock()
  }
  if (mode === 'bwrap') {
    if (found.bwrap === null) throw new Error(`confine: "bwrap" was asked for, but ${found.bwrapError}`)
    return bwrap(null)
  }
  if (isLandlockEnough) return landlock()
  if (found.bwrap !== null) return bwrap(abi === 0 ? `Landlock is unavailable: ${found.landlockError}` : `Landlock ABI ${abi} cannot cut the network`)
  if (abi > 0) return landlock()
  const why = [...new Set([found.landlockError, found.bwrapError])].join('; ')
  return { ...offConfiner({ reason: `no sandbox works here: ${why}`, helper, policy }), spawnerFile }
}
