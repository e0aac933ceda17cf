import { basename } from 'node:path'

/** Names of the files hands writes into a spool directory: shell_run streams and background logs. */
const SPOOL_NAME = /[\w.-]+\.(?:stdout|stderr|log(?:\.1)?)(?![\w.-])/g

/** How many removed names are remembered (the oldest are forgotten first). */
const REMEMBERED = 10_000

/**
 * The session's spool files that hands removed, and why, so that a later command naming one
 * (`cat …/run-3.stdout`) can be told it is gone rather than only failing.
 */
export class GoneFiles {
  readonly #dir: string
  readonly #why = new Map<string, string>()

  /** `dir` is the spool directory; a name counts only where its directory is named too. */
  constructor(dir: string) {
    this.#dir = basename(dir)
  }

  /** Remember that `path` was removed; `why` completes "removed …". */
  record(path: string, why: string): void {
    const name = basename(path)
    this.#why.delete(name)
    this.#why.set(name, why)
    if (this.#why.size > REMEMBERED) this.#why.delete(this.#why.keys().next().value as string)
  }

  /** Remember that a background shell's log files went when the shell was stopped. */
  recordLog(logPath: string, id: string): void {
    const why = `when shell \`${id}\` was stopped`
    this.record(logPath, why)
    this.record(`${logPath}.1`, why)
  }

  /** The note for text (a command line) that names removed files, or null when it names none. */
  noteFor(text: string): string | null {
    if (this.#why.size === 0 || !text.includes(this.#dir)) return null
    const named = new Map<string, string>()
    for (const [name] of text.matchAll(SPOOL_NAME)) {
      const why = this.#why.get(name)
      if (why !== undefined) named.set(name, why)
    }
    if (named.size === 0) return null
    return [...named].map(([name, why]) => `${name} no longer exists: it was removed ${why}.`).join(' ')
  }
}
