import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { JobTree, TreeKeeper } from './job-tree.ts'
import { trySignal } from './proc.ts'

/** The variable the bash prelude reads to move the job's first process into its cgroup. */
export const CGROUP_PROCS_VAR = 'HANDS_CGROUP_PROCS'

function readPids(file: string): number[] {
  let text: string
  try {
    text = readFileSync(file, 'latin1')
  } catch {
    return []
  }
  const out: number[] = []
  for (const line of text.split('\n')) if (line !== '') out.push(Number(line))
  return out
}

class CgroupTree implements JobTree {
  readonly env: Readonly<Record<string, string>>
  readonly #dir: string
  readonly #hasKill: boolean

  constructor(dir: string, hasKill: boolean) {
    this.#dir = dir
    this.#hasKill = hasKill
    this.env = { [CGROUP_PROCS_VAR]: join(dir, 'cgroup.procs') }
  }

  pids(): number[] {
    return readPids(join(this.#dir, 'cgroup.procs'))
  }

  signalAll(signal: NodeJS.Signals): number[] {
    return this.pids().filter((p) => trySignal(p, signal))
  }

  killAll(): void {
    if (this.#hasKill) {
      try {
        writeFileSync(join(this.#dir, 'cgroup.kill'), '1')
        return
      } catch {
        // fall through to one signal per process
      }
    }
    for (const p of this.pids()) trySignal(p, 'SIGKILL')
  }

  dispose(): void {
    try {
      rmdirSync(this.#dir)
    } catch {
      // still populated (a zombie not yet reaped) or already gone; the keeper retries at close
    }
  }
}

/** Job trees as child cgroups of one session cgroup created under `base`. */
export class CgroupKeeper implements TreeKeeper {
  readonly kind = 'cgroup' as const
  readonly #session: string
  readonly #hasKill: boolean
  #next = 0

  private constructor(session: string, hasKill: boolean) {
    this.#session = session
    this.#hasKill = hasKill
  }

  /** Create the session cgroup under `base`; null when that fails. */
  static create(base: string, name: string): CgroupKeeper | null {
    const session = join(base, name)
    try {
      mkdirSync(session)
    } catch {
      return null
    }
    return new CgroupKeeper(session, existsSync(join(session, 'cgroup.kill')))
  }

  /** The session cgroup directory. */
  get dir(): string {
    return this.#session
  }

  create(): JobTree {
    const dir = join(this.#session, `j${++this.#next}`)
    mkdirSync(dir)
    return new CgroupTree(dir, this.#hasKill)
  }

  killEverythingSync(): void {
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

  reaperArgs(): string[] {
    return ['cgroup', this.#session]
  }

  close(): void {
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
