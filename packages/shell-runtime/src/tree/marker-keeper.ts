import { readFileSync } from 'node:fs'
import type { JobTree, TreeKeeper } from './job-tree.ts'
import { allPids, trySignal } from './proc.ts'

/** The variable that marks every process of a job when no cgroup is available. */
export const MARKER_VAR = 'HANDS_JOB'

const self = process.pid

/**
 * Pids whose environment holds an entry starting with `needle` (the entry `HANDS_JOB=<value>`
 * with a NUL or the value's end after it), plus every descendant of such a process, so a child
 * that cleared its environment is still found while its parent lives.
 */
export function scanMarked(needle: Buffer, isPrefix: boolean): number[] {
  const marked = new Set<number>()
  const parents = new Map<number, number>()
  for (const pid of allPids()) {
    if (pid === self) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
      const rest = stat.slice(stat.lastIndexOf(')') + 2)
      if (rest[0] === 'Z') continue
      parents.set(pid, Number(rest.split(' ')[1]))
    } catch {
      continue
    }
    let env: Buffer
    try {
      env = readFileSync(`/proc/${pid}/environ`)
    } catch {
      continue
    }
    let at = env.indexOf(needle)
    while (at >= 0) {
      const startOk = at === 0 || env[at - 1] === 0
      const end = at + needle.length
      const endOk = isPrefix || end === env.length || env[end] === 0
      if (startOk && endOk) {
        marked.add(pid)
        break
      }
      at = env.indexOf(needle, at + 1)
    }
  }
  if (marked.size === 0) return []
  // Follow children of marked processes (a process started with a cleared environment).
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
  return [...marked]
}

class MarkerTree implements JobTree {
  readonly env: Readonly<Record<string, string>>
  readonly #needle: Buffer

  constructor(marker: string) {
    this.env = { [MARKER_VAR]: marker }
    this.#needle = Buffer.from(`${MARKER_VAR}=${marker}`)
  }

  pids(): number[] {
    return scanMarked(this.#needle, false)
  }

  signalAll(signal: NodeJS.Signals): number[] {
    return this.pids().filter((p) => trySignal(p, signal))
  }

  killAll(): void {
    for (const p of this.pids()) trySignal(p, 'SIGKILL')
  }

  dispose(): void {}
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
    const needle = Buffer.from(`${MARKER_VAR}=${this.#session}.`)
    for (let round = 0; round < 5; round++) {
      const pids = scanMarked(needle, true)
      if (pids.length === 0) return
      for (const p of pids) trySignal(p, 'SIGKILL')
    }
  }

  reaperArgs(): string[] {
    return ['marker', `${MARKER_VAR}=${this.#session}.`]
  }

  close(): void {}
}
