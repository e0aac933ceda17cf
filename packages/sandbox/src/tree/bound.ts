import { readFileSync } from 'node:fs'

/**
 * Processes and threads a job may start beyond those the machine runs when it starts, where no
 * cgroup holds its tree (the helper's `--nproc-beyond`: RLIMIT_NPROC). A fork bomb stops there, so
 * stopping it converges and the session's next command runs at once. Generous for builds (a `make
 * -j` or a test runner's workers), small enough that the bomb's processes fit in memory.
 */
export const JOB_PROCESS_BOUND = 2048

/**
 * True when the kernel holds this process's user to RLIMIT_NPROC: every user but root of the
 * initial user namespace (which the kernel exempts). Root in a rootless container maps to another
 * user outside, so its uid_map is not the identity.
 */
export function isProcessBoundHeld(): boolean {
  if (process.getuid?.() !== 0) return true
  try {
    const map = readFileSync('/proc/self/uid_map', 'latin1').trim().split(/\s+/)
    return !(map[0] === '0' && map[1] === '0' && map[2] === '4294967295')
  } catch {
    return false
  }
}

/**
 * The summary line for how a session's process trees are held: a cgroup per job, or an
 * environment marker with the per-job process bound (a gap where the kernel cannot hold root to it).
 */
export function treeSummary(kind: 'cgroup' | 'marker', hasProcessLimit: boolean): string {
  if (kind === 'cgroup') return 'process trees: each job runs in a cgroup of its own and is stopped whole'
  const marker = 'process trees: found by an environment marker and the helper that reaps them (no cgroup holds them)'
  if (hasProcessLimit) return marker
  if (isProcessBoundHeld())
    return `${marker}; each job may start at most ${JOB_PROCESS_BOUND} processes and threads beyond those running, so a fork bomb stops there`
  return `${marker}\ngap: a fork bomb is bounded only by the machine's limits (a container's pids limit, kernel.threads-max): no cgroup holds a job's tree, and the kernel does not hold root to a process limit`
}
