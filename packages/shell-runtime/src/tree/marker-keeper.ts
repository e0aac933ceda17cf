import { readFileSync } from 'node:fs'
import type { JobTree, TreeKeeper } from './job-tree.ts'
import { allPids, readProcFile, trySignal } from './proc.ts'

/** The variable that marks every process of a job when no cgroup is available. */
export const MARKER_VAR = 'HANDS_JOB'

const self = process.pid

/** The last pid the kernel handed out in our pid namespace, or 0 when unknown. */
export function lastPid(): number {
  try {
    return Number(readFileSync('/proc/sys/kernel/ns_last_pid', 'latin1')) || 0
  } catch {
    return 0
  }
}

function holdsMarker(env: Buffer, needle: Buffer, isPrefix: boolean): boolean {
  let at = env.indexOf(needle)
  while (at >= 0) {
    const startOk = at === 0 || env[at - 1] === 0
    const end = at + needle.length
    if (startOk && (isPrefix || end === env.length || env[end] === 0)) return true
    at = env.indexOf(needle, at + 1)
  }
  return false
}

/** Kernel threads carry this flag in /proc/<pid>/stat. */
const PF_KTHREAD = 0x00200000

/**
 * True when `pid`'s environment read as empty but may not be: the process is inside execve (its
 * new memory has no environment area yet: env_start = env_end = 0 in /proc/<pid>/stat), or it has
 * just exec'd and reads empty for a moment although stat gives it an area (seen on Linux 6.18 right
 * after `setsid cmd &`). A program started with a cleared environment has an empty area at a
 * non-zero address; zombies and kernel threads are never retried.
 */
function isUnreadable(pid: number): boolean {
  const stat = readProcFile(`/proc/${pid}/stat`)?.toString('latin1')
  if (stat === undefined) return false
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // Index 0 here is field 3 (state); 6 is field 9 (flags); 47 and 48 are fields 50 and 51 (env_start, env_end).
  if (fields[0] === 'Z' || (Number(fields[6]) & PF_KTHREAD) !== 0) return false
  const envStart = Number(fields[47])
  const envEnd = Number(fields[48])
  return envEnd > envStart || envEnd === 0
}

/** How many 1 ms pauses a scan waits, at most, for environments that read empty for a moment. */
const EXEC_ROUNDS = 200
const pause = new Int32Array(new SharedArrayBuffer(4))

/**
 * Pids whose environment holds an entry starting with `needle` (the entry `HANDS_JOB=<value>`
 * with a NUL or the value's end after it), plus every descendant of such a process, so a child
 * that cleared its environment is still found while its parent lives. Only pids above `after`
 * are read (a job's processes are newer than the job), unless pids have wrapped around since.
 */
export function scanMarked(needle: Buffer, isPrefix: boolean, after = 0): number[] {
  const marked = new Set<number>()
  const from = after > 0 && lastPid() >= after ? after : 0
  const seen: number[] = []
  let unsure: number[] = []
  for (const pid of allPids()) {
    if (pid === self || pid <= from) continue
    seen.push(pid)
    const env = readProcFile(`/proc/${pid}/environ`)
    if (env === null) continue
    if (env.length === 0) {
      if (isUnreadable(pid)) unsure.push(pid)
      continue
    }
    if (holdsMarker(env, needle, isPrefix)) marked.add(pid)
  }
  // A process that has just exec'd can read with an empty environment for a moment; read it
  // again, so a `setsid cmd &` left behind is not missed.
  for (let round = 0; unsure.length > 0 && round < EXEC_ROUNDS; round++) {
    Atomics.wait(pause, 0, 0, 1)
    unsure = unsure.filter((pid) => {
      const env = readProcFile(`/proc/${pid}/environ`)
      if (env === null) return false
      if (env.length === 0) return isUnreadable(pid)
      if (holdsMarker(env, needle, isPrefix)) marked.add(pid)
      return false
    })
  }
  if (marked.size === 0) return []
  // Follow children of marked processes (a process started with a cleared environment).
  const parents = new Map<number, number>()
  for (const pid of seen) {
    const stat = readProcFile(`/proc/${pid}/stat`)?.toString('latin1')
    if (stat === undefined) continue
    const rest = stat.slice(stat.lastIndexOf(')') + 2)
    if (rest[0] !== 'Z') parents.set(pid, Number(rest.split(' ')[1]))
  }
  let grew = true
  while (grew) {
    grew = false
    for (const [pid, ppid] of parents) {
      if (!marked.has(pid) && marked.has(ppid)) {
        marked.add(pid)
        grew = true
      }
    }
  }
  return [...marked].filter((p) => parents.has(p))
}

class MarkerTree implements JobTree {
  readonly cgroupProcs = null
  readonly env: Readonly<Record<string, string>>
  readonly #needle: Buffer

  constructor(marker: string) {
    this.env = { [MARKER_VAR]: marker }
    this.#needle = Buffer.from(`${MARKER_VAR}=${marker}`)
  }

  pids(): number[] {
    return scanMarked(this.#needle, false)
  }

  strays(): number[] {
    return []
  }

  signalAll(signal: NodeJS.Signals): number[] {
    return this.pids().filter((p) => trySignal(p, signal))
  }

  killAll(): void {
    for (const p of this.pids()) trySignal(p, 'SIGKILL')
  }

  dispose(): void {}
}

/** Kill every process marked with a job of `session`, a few rounds, synchronously. */
export function killMarkedSync(session: string): void {
  const needle = Buffer.from(`${MARKER_VAR}=${session}.`)
  for (let round = 0; round < 5; round++) {
    const pids = scanMarked(needle, true)
    if (pids.length === 0) return
    for (const p of pids) trySignal(p, 'SIGKILL')
  }
}

/** Job trees found by a per-job environment marker, scanned through /proc. */
export class MarkerKeeper implements TreeKeeper {
  readonly kind = 'marker' as const
  readonly #session: string
  #next = 0

  constructor(session: string) {
    this.#session = session
  }

  create(): JobTree {
    return new MarkerTree(`${this.#session}.${++this.#next}`)
  }

  killEverythingSync(): void {
    killMarkedSync(this.#session)
  }

  reaperTargets(): { target: string; marker: string } {
    return { target: '', marker: `${MARKER_VAR}=${this.#session}.` }
  }

  close(): void {}
}
