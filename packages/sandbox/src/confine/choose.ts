import { spawnCwd } from '../cwd/held-cwd.ts'
import { CGROUP_PROCS_VAR } from '../tree/cgroup-keeper.ts'
import { bwrapConfiner } from './bwrap.ts'
import { CLOSE_FDS_VAR, hasRelay, jobArgs, STATUS_FD, type Confiner, type ConfineMode, type JobSpec, type Launch } from './confiner.ts'
import { landlockConfiner } from './landlock.ts'
import { isUnder, type ConfinePolicy } from './policy.ts'
import { copyHelper, packageDir, probe, type Probe, type SeccompSupport } from './probe.ts'

/**
 * Commands run as the user, unconfined, because the host chose it. The helper (when built) still
 * starts each job: it joins the job's cgroup (so no command-writable file decides that), raises its
 * OOM score, closes what the host's descriptors would leak, and reaps its orphans; with the network
 * cut it installs the seccomp filter that refuses every socket but UNIX and netlink. Without it the
 * BASH_ENV prelude joins the cgroup and closes the descriptors.
 */
export function offConfiner(input: {
  reason: string
  helper: string | null
  policy: ConfinePolicy
  seccomp: SeccompSupport
  seccompError: string | null
}): Confiner {
  const { helper, policy } = input
  const isRoot = process.getuid?.() === 0
  // The network is cut by the seccomp filter alone; chooseConfiner refuses `off` without network where it cannot be.
  const netFilter = policy.isNetwork ? [] : ['--seccomp-basic', '--no-network']
  return {
    kind: 'off',
    policy,
    summary: [
      `commands run UNCONFINED: ${input.reason}`,
      "they can write anywhere the user can, read every secret store and the server's environment (/proc/PID/environ), signal any of the user's processes and leave their cgroup",
      `network: ${policy.isNetwork ? 'on' : 'cut by a seccomp filter: no socket but UNIX and netlink can be made; setuid programs such as sudo gain nothing (no_new_privs)'}`,
    ].join('\n'),
    unconfinedNote: `Ran unconfined (${input.reason}): it could write outside the roots and read the server's environment.`,
    // Seeing a job's calls takes a seccomp filter: root may install one; anyone else would need
    // no_new_privs, which would stop sudo and every other setuid program of an unconfined command.
    unobservedWhy:
      helper === null
        ? 'not observed: the confinement helper is not built'
        : input.seccomp === 'none'
          ? `not observed: no seccomp filter can be installed here${input.seccompError === null ? '' : ` (${input.seccompError})`}`
          : input.seccomp === 'refusing'
            ? `not observed: the kernel gives no seccomp supervisor here${input.seccompError === null ? '' : ` (${input.seccompError})`}`
            : !isRoot
              ? 'not observed: commands run unconfined, and seeing their calls would take no_new_privs, which stops sudo'
              : null,
    tmpDir: policy.tmpDir,
    settleMs: 0,
    keeper: null,
    spawnerFile: null,
    canLeaveCgroup: true,
    isGuarded: false,
    launch(job: JobSpec): Launch {
      const env: Record<string, string> = { TMPDIR: policy.tmpDir }
      if (helper !== null) {
        const args = [...jobArgs(job), ...netFilter, '--argv0', 'bash', '--', job.bash, ...job.bashArgs]
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

/**
 * Why no mechanism can confine commands here, as a value the runtime must handle: shell tools refuse
 * every call (`sandbox_unavailable`) while the host has not chosen `off`. Never a fallback that runs
 * commands unconfined.
 */
export interface ConfineRefusal {
  readonly kind: 'unavailable'
  /** What is missing and its likely cause, per mechanism. */
  readonly missing: string
  /** What the host's operator can do about it, in words (the same text serves a library host and `hands serve`). */
  readonly fix: string
  /** Lines for stderr and `hands tools`. */
  readonly summary: string
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
 * Pick the mechanism for a session, or say why none can confine commands here. `auto`: Landlock
 * when the kernel has it (about +0.1–0.4 ms per command), bubblewrap when Landlock is missing or
 * cannot hold what the host asked (the network cut without a seccomp filter, a hidden path inside a
 * writable one), else a ConfineRefusal. An explicit `landlock` or `bwrap` that cannot work here,
 * and a host setting no mechanism here can hold, throw (a host configuration error: `hands serve`
 * refuses to start); `off` runs commands unconfined on purpose, and still cuts the network by a
 * seccomp filter when asked.
 */
export function chooseConfiner(input: Parameters<typeof pick>[0] & { isChanges: boolean }): Confiner | ConfineRefusal {
  const picked = pick(input)
  if (picked.kind === 'unavailable') return picked
  // The host may leave the observer out (options.changes false): no job gets the filter then.
  const chosen = input.isChanges ? picked : { ...picked, unobservedWhy: 'not observed: the host switched the account of changes off' }
  const changes =
    chosen.unobservedWhy === null
      ? "changes on disk: each command's, seen by the helper as it makes them, are in its result; a program that races its own threads against the helper can hide a change (the account guards against accidents, the sandbox against attacks)"
      : `gap: what commands change on disk is not reported (${chosen.unobservedWhy.replace(/^not observed: /, '')})`
  return { ...chosen, summary: `${chosen.summary}\n${changes}` }
}

/** A host setting that no mechanism here can hold: `hands serve` refuses to start with this message. */
function unheld(setting: string, why: string): Error {
  return new Error(`confine: ${setting} cannot be held here: ${why}`)
}

const NETWORK_SETTING = 'cutting the network (network: false, --no-network)'
const DENY_READ_SETTING = 'hiding a path (denyRead, --deny-read)'

function pick(input: {
  mode: ConfineMode
  policy: ConfinePolicy
  env: Record<string, string | undefined>
  bash: string
  /** The session's spool, where the helper is copied; null to describe the choice without a session. */
  spoolDir: string | null
  cgroupMount: string | null
}): Confiner | ConfineRefusal {
  const { mode, policy, spoolDir } = input
  if (mode === 'off') {
    // Nothing hides a path from an unconfined command.
    if (policy.denyRead.length > 0)
      throw unheld(DENY_READ_SETTING, `confinement is off, and nothing hides ${policy.denyRead.join(', ')} from an unconfined command`)
    const found = probe({ env: input.env, bash: input.bash, isBwrapWanted: false })
    if (!policy.isNetwork && (found.helper === null || found.seccomp === 'none'))
      throw unheld(NETWORK_SETTING, `confinement is off, and no seccomp filter can refuse sockets (${found.seccompError ?? found.helperError})`)
    const helper = found.helper === null || spoolDir === null ? found.helper : installHelper(found.helper, spoolDir)
    const off = offConfiner({ reason: 'the host switched confinement off', helper, policy, seccomp: found.seccomp, seccompError: found.seccompError })
    return { ...off, spawnerFile: found.helper }
  }
  let found: Probe = probe({ env: input.env, bash: input.bash, isBwrapWanted: mode === 'bwrap' })
  const abi = found.landlockAbi
  // The network cut holds by the seccomp filter (no socket but UNIX and netlink); Landlock's TCP rules (ABI 4) alone leave UDP open.
  const isNetworkHeld = policy.isNetwork || found.seccomp !== 'none'
  const unhidden = policy.denyRead.filter((h) => policy.writable.some((w) => isUnder(w, h)))
  const isLandlockEnough = abi > 0 && isNetworkHeld && unhidden.length === 0
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
      takeFdsError: found.takeFdsError,
      policy,
      cgroupMount: input.cgroupMount,
      spoolDir,
      gaps,
    }),
    spawnerFile,
  })
  const bwrap = (why: string | null): Confiner => ({
    ...bwrapConfiner({
      bwrap: found.bwrap as string,
      helper: helper as string,
      policy,
      spoolDir: spoolDir ?? '',
      why,
      gaps,
      abi,
      seccomp: found.seccomp,
      takeFdsError: found.takeFdsError,
    }),
    spawnerFile,
  })
  const landlockShort = (): string =>
    !isNetworkHeld
      ? `Landlock cannot cut the network without a seccomp filter (${found.seccompError})`
      : `Landlock cannot hide ${unhidden.join(', ')}: a writable path contains ${unhidden.length === 1 ? 'it' : 'them'}`
  if (mode === 'landlock') {
    if (abi === 0) throw new Error(`confine: "landlock" was asked for, but ${found.landlockError}`)
    if (!isNetworkHeld) throw unheld(NETWORK_SETTING, landlockShort())
    if (unhidden.length > 0) throw unheld(DENY_READ_SETTING, `${landlockShort()} (bubblewrap can: confine bwrap)`)
    return landlock()
  }
  // Without a seccomp filter, vsock (which no network namespace holds) stays open under bubblewrap too.
  const bwrapNetwork = () => `no seccomp filter can refuse the sockets a network namespace does not hold, vsock among them (${found.seccompError})`
  if (mode === 'bwrap') {
    if (found.bwrap === null) throw new Error(`confine: "bwrap" was asked for, but ${found.bwrapError}`)
    if (!isNetworkHeld) throw unheld(NETWORK_SETTING, bwrapNetwork())
    return bwrap(null)
  }
  if (isLandlockEnough) return landlock()
  if (found.bwrap !== null && isNetworkHeld) return bwrap(abi === 0 ? `Landlock is unavailable: ${found.landlockError}` : landlockShort())
  if (!isNetworkHeld && (abi > 0 || found.bwrap !== null)) throw unheld(NETWORK_SETTING, bwrapNetwork())
  if (abi > 0) throw unheld(DENY_READ_SETTING, `${landlockShort()}, and bubblewrap does not work here (${found.bwrapError})`)
  return refusal(found)
}

/** No mechanism works here: what is missing, and what the host's operator can do. */
function refusal(found: Probe): ConfineRefusal {
  const missing = found.helper === null ? (found.helperError as string) : `${found.landlockError}; ${found.bwrapError}`
  const bwrapFix = found.bwrapError === 'bubblewrap (bwrap) is not installed' ? 'install bubblewrap' : null
  const fixes = [...new Set([found.landlockFix, bwrapFix].filter((f): f is string => f !== null))]
  const fix = `${fixes.length > 0 ? `${fixes.join('; or ')}; ` : ''}or switch confinement off on purpose, to run commands unconfined`
  return {
    kind: 'unavailable',
    missing,
    fix,
    summary: [
      `commands cannot run: no sandbox can confine them here (${missing})`,
      'the shell tools refuse every call while that holds, unless the host switches confinement off on purpose; the file tools work',
      `to fix: ${fix}`,
    ].join('\n'),
  }
}
