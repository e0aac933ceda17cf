import { unlinkSync } from 'node:fs'
import type { Changes } from '@hands/contracts'
import { changesBetween, NO_CHANGES, nowReader } from './changes.ts'
import { EffectsRecord, type PathState } from './record.ts'

/** Where a session's jobs are observed, and what the account compares against. */
export interface ObserverScope {
  roots: readonly string[]
  /** The workspace root: paths under it are shown relative to it. */
  workspace: string
  /** The session's TMPDIR: its changes are the job's own scratch, not changes. */
  tmpDir: string
  /** Why jobs cannot be observed here (a sentence), or null when they are. */
  unobservedWhy: string | null
}

/**
 * What one job changed on disk, from its relay's record (see EffectsRecord): `since()` says what
 * changed since the previous call (a background shell's shell_logs), `total()` since the job
 * started (a shell_run line, shell_stop).
 */
export class JobChanges {
  readonly #record: EffectsRecord | null
  readonly #scope: ObserverScope
  /** What stood at each path when it was last reported. */
  readonly #reported = new Map<string, PathState>()
  /** Unreadable calls already reported. */
  #reportedUnreadable = 0

  constructor(file: string | null, scope: ObserverScope) {
    this.#record = file === null ? null : new EffectsRecord(file)
    this.#scope = scope
  }

  /**
   * The changes since the previous since() (or since the start), and from now on they count as
   * reported. `isRunning`: the job may not have reached its relay yet, which opens the record before
   * the job's first call can change anything, so a record not there yet means nothing changed yet.
   */
  since(isRunning = false): Changes {
    return this.#account((p, first) => this.#reported.get(p) ?? first, this.#reportedUnreadable, isRunning)
  }

  /** The changes since the job started. */
  total(): Changes {
    return this.#account((_, first) => first, 0, false)
  }

  /** Remove the record (once the job is over and accounted for). */
  dispose(): void {
    if (this.#record === null) return
    // unlink, not rmSync: this runs after every command, and rmSync costs about 60 µs more.
    try {
      unlinkSync(this.#record.file)
    } catch {
      // never made (the job did not start)
    }
  }

  #account(before: (path: string, first: PathState) => PathState, unreadableBefore: number, isRunning: boolean): Changes {
    const record = this.#record
    record?.read()
    if (isRunning && record !== null && !record.isPresent && this.#scope.unobservedWhy === null) return NO_CHANGES
    let now = new Map<string, PathState>()
    let stateNow = nowReader()
    // A running job goes on changing things while they are looked at. The relay writes a rename to
    // the record before it happens, so a record that did not grow while every path was looked at
    // holds every rename those looks could have seen: both ends are then reported in one account.
    for (let pass = 0; isRunning && record !== null && pass < 4; pass++) {
      const at = record.bytesRead
      for (const p of record.paths.keys()) now.set(p, stateNow(p))
      record.read()
      if (record.bytesRead === at) break
      now = new Map()
      stateNow = nowReader()
    }
    const paths = record === null ? [] : [...record.paths.keys()]
    const nowOf = (p: string) => {
      let s = now.get(p)
      if (s === undefined) now.set(p, (s = stateNow(p)))
      return s
    }
    const why =
      this.#scope.unobservedWhy ??
      (record === null || !record.isPresent
        ? 'not observed: the record of its calls is missing'
        : record.isUnobserved
          ? 'not observed: the kernel gave no seccomp supervisor to see its calls'
          : null)
    const changes = changesBetween({
      paths,
      renames: record?.renames ?? [],
      written: record?.written ?? new Map(),
      before: (p) => before(p, record?.paths.get(p) as PathState),
      now: nowOf,
      roots: this.#scope.roots,
      workspace: this.#scope.workspace,
      tmpDir: this.#scope.tmpDir,
      observation: {
        isObserved: why === null,
        unobservedWhy: why,
        unreadable: (record?.unreadable ?? 0) - unreadableBefore,
        overLimit: record?.overLimit ?? 0,
        tooLong: record?.tooLong ?? 0,
      },
    })
    for (const p of paths) this.#reported.set(p, nowOf(p))
    this.#reportedUnreadable = record?.unreadable ?? 0
    return changes
  }
}
