import { setTimeout as sleep } from 'node:timers/promises'
import type { JobTree } from './job-tree.ts'
import { describePid } from './proc.ts'

/** What stopping a job's tree found and did. */
export interface StopReport {
  /** Processes alive when the stop began, described (`sleep 1000` (pid 12)), at most `describeMax`. */
  found: string[]
  /** How many processes were alive when the stop began. */
  foundCount: number
  /** True when some process outlived SIGTERM and the grace, so SIGKILL was sent. */
  forced: boolean
  /** Pids still alive after SIGKILL and the confirmation wait; empty on success. */
  survivors: number[]
}

/** How long to keep confirming after SIGKILL before reporting survivors. */
const CONFIRM_MS = 5000

/** Resolve true once the tree has no live process, false when `ms` passed first. */
export async function waitEmpty(tree: JobTree, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms
  let delay = 1
  for (;;) {
    if (tree.pids().length === 0) return true
    const left = deadline - performance.now()
    if (left <= 0) return false
    await sleep(Math.min(delay, left))
    delay = Math.min(delay * 2, 50)
  }
}

/**
 * Stop every process of a job: SIGTERM (and SIGCONT, so a stopped process sees it), wait up to
 * `graceMs`, SIGKILL whatever is left, then confirm the tree is empty.
 */
export async function stopTree(tree: JobTree, graceMs: number, describeMax = 5): Promise<StopReport> {
  const pids = tree.pids()
  const report: StopReport = {
    found: pids.slice(0, describeMax).map((p) => describePid(p)),
    foundCount: pids.length,
    forced: false,
    survivors: [],
  }
  if (pids.length === 0) return report
  tree.signalAll('SIGTERM')
  tree.signalAll('SIGCONT')
  if (await waitEmpty(tree, graceMs)) return report
  report.forced = true
  tree.killAll()
  if (await waitEmpty(tree, CONFIRM_MS)) return report
  tree.killAll()
  report.survivors = tree.pids()
  return report
}

/** SIGKILL every process of a job at once and confirm it is empty; returns the survivors. */
export async function killTree(tree: JobTree): Promise<number[]> {
  tree.killAll()
  if (await waitEmpty(tree, CONFIRM_MS)) return []
  return tree.pids()
}
