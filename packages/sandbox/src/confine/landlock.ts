import { join } from 'node:path'
import { spawnCwd } from '../cwd/held-cwd.ts'
import { hasRelay, jobArgs, STATUS_FD, type Confiner, type JobSpec, type Launch } from './confiner.ts'
import { isUnder, OPEN_DEVICES, READ_DEVICES, hiddenCounts, hiddenPaths, raceGap, socketGuard, type ConfinePolicy } from './policy.ts'
import type { SeccompSupport } from './probe.ts'

/** The helper's Landlock arguments for a policy; the same for every job of a session. */
function landlockArgs(policy: ConfinePolicy, abi: number): string[] {
  const args = ['--landlock', '--scope', '--abi-max', String(abi)]
  if (!policy.isNetwork) args.push('--no-network')
  for (const w of policy.writable) args.push('--write', w)
  for (const d of OPEN_DEVICES) args.push('--rw', d)
  for (const d of READ_DEVICES) args.push('--read', d)
  // Terminals are listable; a background shell's job may open its own (--own-tty), no other.
  args.push('--list', '/dev', '--list', '/dev/pts', '--hide', '/dev')
  for (const h of hiddenPaths(policy)) args.push('--hide', h)
  return args
}

/** Hidden paths that a writable path contains: Landlock grants a whole hierarchy, so it cannot hide them. */
function unhideable(policy: ConfinePolicy): string[] {
  return hiddenPaths(policy).filter((h) => policy.writable.some((w) => isUnder(w, h)))
}

/** What Landlock at this ABI, with this seccomp filter, leaves out of the policy, one sentence each (`spoolDir`: the session's spool, or null). */
function landlockGaps(policy: ConfinePolicy, abi: number, seccomp: SeccompSupport, seccompError: string | null, spoolDir: string | null): string[] {
  const gaps: string[] = []
  const why = seccompError === null ? '' : `: ${seccompError}`
  if (abi < 2) gaps.push('renames and hard links between directories fail even inside the roots (Landlock ABI < 2)')
  if (abi < 3) gaps.push('truncate(2) of a file outside the roots is not refused (Landlock ABI < 3)')
  if (abi < 6 && seccomp !== 'supervised')
    gaps.push(
      `a command can signal processes outside its tree, the server included; the reaper is started again if killed (Landlock ABI < 6, no seccomp supervisor${why})`,
    )
  if (seccomp === 'none')
    gaps.push(
      `a command can change the limits, priority and CPUs of the user's other processes, the server included, and open pidfds of them (no seccomp filter${why})`,
    )
  if (seccomp !== 'supervised')
    gaps.push(
      `a command can connect to any UNIX socket it can name (docker.sock, an ssh-agent, D-Bus) and change the mode, owner, times and extended attributes of files outside the roots (no seccomp supervisor${why})`,
    )
  if (seccomp === 'refusing')
    gaps.push(`a command cannot change the limits or priority of its own processes by pid either: such calls are refused (no seccomp supervisor${why})`)
  for (const h of unhideable(policy)) gaps.push(`${h} is not hidden: a writable path contains it (bubblewrap can hide it: confine bwrap)`)
  const spoolIn = spoolDir === null ? undefined : policy.writable.find((w) => isUnder(w, spoolDir))
  if (spoolIn !== undefined) gaps.push(`the spool ${spoolDir} lies under the writable ${spoolIn}: commands can change its files (set spoolDir elsewhere)`)
  return gaps
}

/**
 * Confinement by Landlock through the hands-confine helper: one exec of a tiny static binary per
 * job. With a spool, a keeper builds the ruleset once and each job takes it (after checking that
 * nothing it depends on changed), so a job skips building it.
 */
export function landlockConfiner(input: {
  helper: string
  abi: number
  seccomp: SeccompSupport
  seccompError: string | null
  /** Why the relay cannot copy a job's descriptors (see Probe.takeFdsError), or null. */
  takeFdsError: string | null
  policy: ConfinePolicy
  cgroupMount: string | null
  spoolDir: string | null
  gaps: string[]
}): Confiner {
  const { helper, abi, policy } = input
  const policyArgs = landlockArgs(policy, abi)
  const stamp = input.spoolDir === null ? null : join(input.spoolDir, 'ruleset')
  const fixed = stamp === null ? policyArgs : [...policyArgs, '--ruleset-from', stamp]
  const gaps = [...landlockGaps(policy, abi, input.seccomp, input.seccompError, input.spoolDir), ...input.gaps]
  const isSupervised = input.seccomp === 'supervised'
  const filter = input.seccomp === 'none' ? [] : isSupervised ? ['--seccomp'] : ['--seccomp', '--no-supervisor']
  // What Landlock leaves open below ABI 9, the relay guards: sockets by where they are, metadata outside the writable paths.
  const guard = isSupervised ? ['--guard-metadata', ...socketGuard(policy), ...(input.takeFdsError === null ? [] : ['--guard-no-getfd'])] : []
  if (isSupervised && input.takeFdsError !== null) gaps.push(raceGap(input.takeFdsError))
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`
  const summary = [
    `commands are confined by Landlock (ABI ${abi})`,
    `writes: only under the roots, the session's TMPDIR (${policy.tmpDir})${policy.allowWrite.length > 0 ? ` and ${n(policy.allowWrite.length, '--allow-write path')}` : ''}`,
    `hidden from reads: ${hiddenCounts(policy)}, hands' attach directories and every device node but the terminal, /dev/null and the random devices (names stay listable)`,
    `processes: a command cannot ${[
      ...(abi >= 6 || isSupervised ? ['signal'] : []),
      'trace',
      ...(input.seccomp === 'none' ? [] : ['re-limit, renice, re-pin']),
      'or read the environment of anything outside its own tree',
    ].join(', ')}; it keeps only its own descriptors, and dies first under memory pressure`,
    // chooseConfiner never picks Landlock to cut the network without a seccomp filter.
    ...(isSupervised
      ? [
          `sockets: a command connects only to UNIX sockets under the roots and its TMPDIR${policy.allowSockets.length > 0 ? ` and ${n(policy.allowSockets.length, '--allow-socket path')}` : ''}, and to abstract ones of its own tree; it makes no datagram UNIX socket`,
          'metadata: mode, owner, times and extended attributes change only under the writable paths',
        ]
      : []),
    `network: ${policy.isNetwork ? 'on' : `cut: no socket but UNIX and netlink can be made (the seccomp filter)${abi >= 4 ? ', and Landlock refuses TCP bind and connect' : ''}`}`,
    ...gaps.map((g) => `gap: ${g}`),
  ]
  return {
    kind: 'landlock',
    policy,
    summary: summary.join('\n'),
    unconfinedNote: null,
    unobservedWhy: isSupervised
      ? null
      : `not observed: the kernel gives no seccomp supervisor here${input.seccompError === null ? '' : ` (${input.seccompError})`}`,
    tmpDir: policy.tmpDir,
    settleMs: 0,
    keeper: stamp === null ? null : { file: helper, args: ['--keep', stamp, ...policyArgs] },
    spawnerFile: null,
    isGuarded: isSupervised,
    canLeaveCgroup: input.cgroupMount !== null && policy.writable.some((w) => isUnder(w, input.cgroupMount as string)),
    launch(job: JobSpec): Launch {
      const tty = job.io === 'terminal' ? ['--own-tty'] : []
      return {
        file: helper,
        args: [...jobArgs(job), ...filter, ...guard, ...fixed, ...tty, '--argv0', 'bash', '--', job.bash, ...job.bashArgs],
        cwd: spawnCwd(job.cwd),
        env: { TMPDIR: policy.tmpDir },
        statusFd: job.io === 'pipes' ? STATUS_FD : null,
        hasRelay: hasRelay(job, filter.length > 0),
      }
    },
  }
}
