import { existsSync, mkdirSync, readdirSync, rmdir, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { JobTree, TreeKeeper } from './job-tree.ts'
import { killMarkedSync, lastPid, MARKER_VAR, scanMarked } from './marker-keeper.ts'
import { readProcFile, trySignal } from './proc.ts'

/** The variable the bash prelude reads to move the job's first process into its cgroup (when no helper does). */
export const CGROUP_PROCS_VAR = 'HANDS_CGROUP_PROCS'

function readPids(file: string): number[] {
  const content = readProcFile(file)
  if (content === null || content.length === 0) return []
  const out: number[] = []
  for (const line of content.toString('latin1').split('\n')) if (line !== '') out.push(Number(line))
  return out
}

class CgroupTree implements JobTree {
  readonly cgroupProcs: string
  readonly env: Readonly<Record<string, string>>
  readonly #dir: string
  readonly #hasKill: boolean
  /** With a marker, the needle for processes that left the cgroup, and the last pid before the job began. */
  readonly #stray: { needle: Buffer; after: number } | null
  readonly #release: (dir: string, isReusable: boolean) => void
  #isDisposed = false
  /** hands' own relay, outside the cgroup with the marker: never a stray. */
  #relay = 0
  /** Set once `cgroup.kill` was written: such a cgroup is never reused (see `dispose`). */
  #wasKilled = false

  constructor(dir: string, hasKill: boolean, marker: string | null, release: (dir: string, isReusable: boolean) => void) {
    this.#dir = dir
    this.#hasKill = hasKill
    this.#release = release
    this.cgroupProcs = join(dir, 'cgroup.procs')
    this.env = marker === null ? {} : { [MARKER_VAR]: marker }
    this.#stray = marker === null ? null : { needle: Buffer.from(`${MARKER_VAR}=${marker}`), after: lastPid() }
  }

  pids(): number[] {
    return readPids(this.cgroupProcs)
  }

  strays(): number[] {
    if (this.#stray === null) return []
    const inside = new Set(this.pids())
    return scanMarked(this.#stray.needle, false, this.#stray.after).filter((p) => !inside.has(p) && p !== this.#relay)
  }

  setRelay(pid: number): void {
    this.#relay = pid
  }

  signalAll(signal: NodeJS.Signals): number[] {
    return this.pids().filter((p) => trySignal(p, signal))
  }

  killAll(): void {
    if (this.#hasKill) {
      try {
        writeFileSync(join(this.#dir, 'cgroup.kill'), '1')
        this.#wasKilled = true
        return
      } catch {
        // fall through to one signal per process
      }
    }
    for (const p of this.pids()) trySignal(p, 'SIGKILL')
  }

  dispose(): void {
    // An empty cgroup goes back to the keeper for the next job; one still populated (a zombie not
    // yet reaped) stays where it is and is removed at close. One that `cgroup.kill` emptied is
    // removed, never reused: the kernel here (6.18) then kills at birth every child cloned into it
    // (CLONE_INTO_CGROUP, as the helper starts a job), so every later command of the session
    // died by SIGKILL.
    if (this.#isDisposed) return
    this.#isDisposed = true
    if (this.pids().length === 0) this.#release(this.#dir, !this.#wasKilled)
  }
}

/** Empty job cgroups kept for reuse: making and removing one costs ~0.15 ms of a ~2.5 ms command. */
const POOL_MAX = 8

/**
 * Job trees as child cgroups of one session cgroup created under `base`. When commands could
 * write to cgroupfs themselves (confinement off), each job also carries the marker, and a stop
 * kills the marked processes that left the cgroup.
 */
export class CgroupKeeper implements TreeKeeper {
  readonly kind = 'cgroup' as const
  readonly #session: string
  readonly #name: string
  readonly #hasKill: boolean
  readonly #isMarked: boolean
  readonly #free: string[] = []
  /** True when job cgroups have the memory controller: each then dies whole on OOM (memory.oom.group). */
  #isOomGroup: boolean | null = null
  #next = 0

  private constructor(session: string, name: string, hasKill: boolean, isMarked: boolean) {
    this.#session = session
    this.#name = name
    this.#hasKill = hasKill
    this.#isMarked = isMarked
  }

  /** Create the session cgroup `name` under `base`; null when that fails. `isMarked`: jobs also carry the marker. */
  static create(base: string, name: string, isMarked: boolean): CgroupKeeper | null {
    const session = join(base, name)
    try {
      mkdirSync(session)
    } catch {
      return null
    }
    return new CgroupKeeper(session, name, existsSync(join(session, 'cgroup.kill')), isMarked)
  }

  /** The session cgroup directory. */
  get dir(): string {
    return this.#session
  }

  create(): JobTree {
    const n = ++this.#next
    const dir = this.#free.pop() ?? this.#jobCgroup(n)
    return new CgroupTree(dir, this.#hasKill, this.#isMarked ? `${this.#name}.${n}` : null, (d, isReusable) => this.#release(d, isReusable))
  }

  /** Make the first job's cgroup now, empty, in the pool (the session is about to be used); when that fails, the job makes its own. */
  prepare(): void {
    if (this.#next > 0 || this.#free.length > 0) return
    try {
      this.#free.push(this.#jobCgroup(++this.#next))
    } catch {
      // create() tries again, and reports what fails then.
    }
  }

  /** A new, empty job cgroup `j<n>` of the session. */
  #jobCgroup(n: number): string {
    const dir = join(this.#session, `j${n}`)
    mkdirSync(dir)
    this.#isOomGroup ??= existsSync(join(dir, 'memory.oom.group'))
    if (this.#isOomGroup) writeFileSync(join(dir, 'memory.oom.group'), '1')
    return dir
  }

  #release(dir: string, isReusable: boolean): void {
    if (isReusable && this.#free.length < POOL_MAX) this.#free.push(dir)
    else rmdir(dir, () => {})
  }

  killEverythingSync(): void {
    if (this.#isMarked) killMarkedSync(this.#name)
    if (this.#hasKill) {
      try {
        writeFileSync(join(this.#session, 'cgroup.kill'), '1')
        return
      } catch {
        // one signal per process below
      }
    }
    for (const job of this.#jobs()) for (const p of readPids(join(job, 'cgroup.procs'))) trySignal(p, 'SIGKILL')
  }

  reaperTargets(): { target: string; marker: string } {
    return { target: this.#session, marker: this.#isMarked ? `${MARKER_VAR}=${this.#name}.` : '' }
  }

  close(): void {
    this.#free.length = 0
    for (const job of this.#jobs()) {
      try {
        rmdirSync(job)
      } catch {
        // left for the reaper
      }
    }
    try {
      rmdirSync(this.#session)
    } catch {
      // left for the reaper
    }
  }

  #jobs(): string[] {
    try {
      return readdirSync(this.#session, { withFileTypes: true })
        .filter((d) => d.isDirectory() && /^j\d+$/.test(d.name))
        .map((d) => join(this.#session, d.name))
    } catch {
      return []
    }
  }
}
