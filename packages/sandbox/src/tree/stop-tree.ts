import { setTimeout as sleep } from 'node:timers/promises'
import type { JobTree } from './job-tree.ts'
import { describePid, isAlive, trySignal } from './proc.ts'

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

/**
 * The process hands spawned for the job: the job's first process before it has joined its tree (a
 * stop can come in the moment after spawn), or the helper that started the job inside its cgroup
 * and relays to it. It is our own unreaped child until `isExited()`, so its pid is safe to signal;
 * it counts as one of the job's processes only while the tree shows none, so a relay is signalled
 * (it passes the signal on) but never reported as something the job left running.
 */
export interface RootProcess {
  readonly pid: number | undefined
  isExited(): boolean
}

function livePids(tree: JobTree, root: RootProcess | undefined, strays: readonly number[] = []): number[] {
  const pids = tree.pids()
  if (pids.length === 0 && root?.pid !== undefined && !root.isExited()) pids.push(root.pid)
  for (const p of strays) if (!pids.includes(p) && isAlive(p)) pids.push(p)
  return pids
}

/**
 * Signal every process of the job once. The root is signalled only when the tree reached none
 * (the rule `livePids` counts it by): a relay passes what it gets on to the job's first process,
 * which the tree has already signalled, so a `trap cleanup TERM` would run twice. SIGKILL, which
 * runs no handler, reaches the root as well, so a relay that outlived its job ends with it.
 */
function signalEvery(tree: JobTree, root: RootProcess | undefined, signal: NodeJS.Signals, strays: readonly number[] = []): void {
  const reached = tree.signalAll(signal)
  const isRootToo = reached.length === 0 || signal === 'SIGKILL'
  if (isRootToo && root?.pid !== undefined && !root.isExited()) trySignal(root.pid, signal)
  for (const p of strays) trySignal(p, signal)
}

/** How long to keep confirming after SIGKILL before reporting survivors. */
const CONFIRM_MS = 5000

/** Resolve true once the tree has no live process, false when `ms` passed first. */
export async function waitEmpty(tree: JobTree, ms: number, root?: RootProcess, strays: readonly number[] = []): Promise<boolean> {
  const deadline = performance.now() + ms
  let delay = 1
  for (;;) {
    if (livePids(tree, root, strays).length === 0) return true
    const left = deadline - performance.now()
    if (left <= 0) return false
    await sleep(Math.min(delay, left))
    delay = Math.min(delay * 2, 50)
  }
}

/**
 * Stop every process of a job: SIGTERM (and SIGCONT, so a stopped process sees it), wait up to
 * `graceMs`, SIGKILL whatever is left, then confirm the tree is empty. Processes of the job that
 * left its cgroup (found by the marker, where a command could leave it) are stopped with it.
 */
export async function stopTree(tree: JobTree, graceMs: number, root?: RootProcess, describeMax = 5): Promise<StopReport> {
  const strays = tree.strays()
  const pids = livePids(tree, root, strays)
  const report: StopReport = {
    found: pids.slice(0, describeMax).map((p) => describePid(p)),
    foundCount: pids.length,
    forced: false,
    survivors: [],
  }
  if (pids.length === 0) return report
  signalEvery(tree, root, 'SIGTERM', strays)
  signalEvery(tree, root, 'SIGCONT', strays)
  if (await waitEmpty(tree, graceMs, root, strays)) return report
  report.forced = true
  tree.killAll()
  signalEvery(tree, root, 'SIGKILL', strays)
  if (await waitEmpty(tree, CONFIRM_MS, root, strays)) return report
  tree.killAll()
  report.survivors = livePids(tree, root, strays)
  return report
}
