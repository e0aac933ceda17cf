import { findBash } from '../env/find-bash.ts'
import { findWritableCgroup } from '../tree/find-cgroup.ts'
import { isProcessBoundHeld } from '../tree/bound.ts'
import { probe } from './probe.ts'

/** What this host offers for confining commands, each part with why it is missing and the fix: what `hands doctor` prints. */
export interface HostReport {
  /** One line per part: [name, what it is here]. */
  lines: Array<[string, string]>
}

/**
 * Probe every mechanism here (the helper, Landlock, seccomp, bubblewrap, cgroups), telling a
 * container's seccomp profile from a kernel without the feature, without starting a session.
 */
export function describeHost(env: Record<string, string | undefined> = process.env): HostReport {
  const found = probe({ env, bash: findBash(env), isBwrapWanted: true })
  const fix = (f: string | null) => (f === null ? '' : `; to fix: ${f}`)
  const { host } = found
  const cgroup = findWritableCgroup()
  return {
    lines: [
      ['helper', found.helper ?? `missing: ${found.helperError}`],
      [
        'kernel',
        `${host.kernel === null ? 'unknown' : `Linux ${host.kernel}`}; ${host.filtered === 2 ? "a seccomp filter is already on this process (a container engine's profile?)" : host.filtered === 0 ? 'no seccomp filter on this process' : 'its seccomp mode is unknown'}${host.lsm === null ? '' : `; security modules: ${host.lsm.join(', ')}`}`,
      ],
      ['landlock', found.landlockAbi > 0 ? `ABI ${found.landlockAbi}` : `unavailable: ${found.landlockError}${fix(found.landlockFix)}`],
      [
        'seccomp',
        found.seccomp === 'supervised'
          ? `supervised: each job's relay answers its calls that name other processes, its connects and its metadata changes${found.takeFdsError === null ? '' : `; but ${found.takeFdsError}`}`
          : `${found.seccomp}: ${found.seccompError}${fix(found.seccompFix)}`,
      ],
      ['bubblewrap', found.bwrap === null ? `unavailable: ${found.bwrapError}` : `${found.bwrap} works`],
      [
        'cgroups',
        cgroup === null
          ? `no writable cgroup v2: each job's tree is found by an environment marker${isProcessBoundHeld() ? ', and each job is held to a process bound' : ', and a fork bomb is bounded only by the machine (root is not held to RLIMIT_NPROC)'}`
          : `a writable cgroup v2 (${cgroup.dir}): each job runs in a cgroup of its own`,
      ],
    ],
  }
}
