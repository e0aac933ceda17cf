import { readFileSync } from 'node:fs'
import type { JobTree, TreeKeeper } from './job-tree.ts'
import { allPids, readProcFile, statFields, trySignal } from './proc.ts'

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

/** The start of any job's marker entry: a process that shows one has its environment set up. */
const ANY_MARKER = Buffer.from(`${MARKER_VAR}=`)

/** True when `env` holds a whole `HANDS_JOB=...` entry (NUL-terminated), whichever job's. */
function holdsAnyMarker(env: Buffer): boolean {
  let at = env.indexOf(ANY_MARKER)
  while (at >= 0) {
    if ((at === 0 || env[at - 1] === 0) && env.indexOf(0, at) > 0) return true
    at = env.indexOf(ANY_MARKER, at + 1)
  }
  return false
}

/** Kernel threads carry this flag in /proc/<pid>/stat. */
const PF_KTHREAD = 0x00200000

/** Pauses of 1 ms a scan spends, at most, on a process inside execve, and on one merely running. */
const IN_EXEC_ROUNDS = 200
const RUNNING_ROUNDS = 3
const pause = new Int32Array(new SharedArrayBuffer(4))

/**
 * How many more times to read the environment of `pid`, which did not show the marker: a process
 * inside or just out of execve reads wrong for a moment (seen on Linux 6.18 in about 1 of 100
 * reads of a process that keeps exec-ing). Its new memory has no environment area yet
 * (env_start = env_end = 0 in /proc/<pid>/stat), or the area reads empty although stat gives it
 * one: read again until it shows. While the process runs, the area can also be half set up
 * (empty, or without the marker): read it a few times more. Zombies, kernel threads and sleeping
 * processes are read once; a program started with a cleared environment has an empty area at a
 * non-zero address.
 */
function doubt(fields: string[] | null, isEmpty: boolean): number {
  if (fields === null || fields[0] === 'Z' || (Number(fields[6]) & PF_KTHREAD) !== 0) return 0
  const envStart = Number(fields[47])
  const envEnd = Number(fields[48])
  if (isEmpty && (envEnd === 0 || envEnd > envStart)) return IN_EXEC_ROUNDS
  return fields[0] === 'R' ? RUNNING_ROUNDS : 0
}

/**
 * Pids whose environment holds an entry starting with `needle` (the entry `HANDS_JOB=<value>`
 * with a NUL or the value's end after it), plus every descendant of such a process, so a child
 * that cleared its environment is still found while its parent lives. Only pids above `after`
 * are read (a job's processes are newer than the job), unless pids have wrapped around since;
 * with `after`, a running process among them that shows no marker is read a few times more,
 * unless it shows another job's marker (its environment is set up, and not ours). Each pid's
 * /proc/<pid>/stat is read once per round: the parent walk takes the last read.
 */
export function scanMarked(needle: Buffer, isPrefix: boolean, after = 0): number[] {
  const marked = new Set<number>()
  const from = after > 0 && lastPid() >= after ? after : 0
  /** The last /proc/<pid>/stat fields read this scan. */
  const stats = new Map<number, string[] | null>()
  const stat = (pid: number): string[] | null => {
    const fields = statFields(pid)
    stats.set(pid, fields)
    return fields
  }
  /** Read `pid`'s environment: true when it shows the marker, else how many more reads it is worth (at most `left`). */
  const look = (pid: number, left: number): true | number => {
    const env = readProcFile(`/proc/${pid}/environ`)
    if (env === null) return 0
    if (env.length > 0 && holdsMarker(env, needle, isPrefix)) return true
    if (env.length > 0 && (from === 0 || holdsAnyMarker(env))) return 0
    return Math.min(left, doubt(stat(pid), env.length === 0))
  }
  const seen: number[] = []
  let unsure: Array<{ pid: number; left: number }> = []
  for (const pid of allPids()) {
    if (pid === self || pid <= from) continue
    seen.push(pid)
    const got = look(pid, IN_EXEC_ROUNDS)
    if (got === true) marked.add(pid)
    else if (got > 0) unsure.push({ pid, left: got })
  }
  // Read the doubtful ones again, 1 ms apart, until each shows the marker or stops being in doubt.
  while (unsure.length > 0) {
    Atomics.wait(pause, 0, 0, 1)
    unsure = unsure.filter((u) => {
      const got = look(u.pid, u.left - 1)
      if (got === true) marked.add(u.pid)
      else u.left = got
      return got !== true && got > 0
    })
  }
  if (marked.size === 0) return []
  // Follow children of marked processes (a process started with a cleared environment).
  const parents = new Map<number, number>()
  for (const pid of seen) {
    const fields = stats.has(pid) ? (stats.get(pid) ?? null) : statFields(pid)
    if (fields !== null && fields[0] !== 'Z') parents.set(pid, Number(fields[1]))
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
  /** The last pid handed out before the job began: every process of the job is newer. */
  readonly #after = lastPid()
  #relay = 0

  constructor(marker: string) {
    this.env = { [MARKER_VAR]: marker }
    this.#needle = Buffer.from(`${MARKER_VAR}=${marker}`)
  }

  pids(): number[] {
    return scanMarked(this.#needle, false, this.#after).filter((p) => p !== this.#relay)
  }

  strays(): number[] {
    return []
  }

  setRelay(pid: number): void {
    this.#relay = pid
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
