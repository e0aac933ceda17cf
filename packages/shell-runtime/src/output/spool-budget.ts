import { rmSync } from 'node:fs'
import { basename } from 'node:path'
import { bytesText } from '../limits/limits.ts'
import type { GoneFiles } from './gone-files.ts'

/** One spool file the budget admits bytes for. */
export interface SpoolAccount {
  readonly path: string
  /** Bytes admitted (and so written) into the file. */
  bytes: number
  /** True once the file is complete; only complete files are ever removed. */
  isClosed: boolean
  /** True when the budget stopped the file short of its whole stream. */
  isCapped: boolean
  /** True once the file was removed to make room for newer ones. */
  isGone: boolean
  /** Names of older files removed to make room for this one. */
  readonly evicted: string[]
}

/**
 * One session's budget for shell_run spool files. Bytes are admitted in the order they are
 * written; when a file needs room, the oldest complete files are removed first (recorded in
 * `gone`), and when even that is not enough (the stream alone is larger, or the rest is in
 * files still being written) the file keeps what fits and takes no more.
 */
export class SpoolBudget {
  readonly limit: number
  readonly #gone: GoneFiles
  /** Every file on disk, oldest first. */
  readonly #files = new Set<SpoolAccount>()
  #used = 0

  constructor(limit: number, gone: GoneFiles) {
    this.limit = limit
    this.#gone = gone
  }

  /** Why a removed file is gone, completing "removed …". */
  get reason(): string {
    return `to keep this session's spool files under ${bytesText(this.limit)} (the oldest go first)`
  }

  /** Start accounting for a new file at `path`. */
  open(path: string): SpoolAccount {
    const account: SpoolAccount = { path, bytes: 0, isClosed: false, isCapped: false, isGone: false, evicted: [] }
    this.#files.add(account)
    return account
  }

  /** How many of `bytes` more `account` may write: all of them, else what fits (and the file is capped). */
  take(account: SpoolAccount, bytes: number): number {
    if (account.isCapped || account.isGone) return 0
    if (this.#used + bytes > this.limit) this.#free(this.#used + bytes - this.limit, account)
    const n = Math.min(bytes, this.limit - this.#used)
    if (n < bytes) account.isCapped = true
    account.bytes += n
    this.#used += n
    return n
  }

  /** The file is complete; from now on it may be removed to make room. */
  close(account: SpoolAccount): void {
    account.isClosed = true
    if (account.bytes === 0) this.#files.delete(account)
  }

  #free(need: number, forAccount: SpoolAccount): void {
    let freed = 0
    for (const old of this.#files) {
      if (freed >= need) break
      if (!old.isClosed || old === forAccount) continue
      rmSync(old.path, { force: true })
      this.#files.delete(old)
      this.#used -= old.bytes
      freed += old.bytes
      old.isGone = true
      this.#gone.record(old.path, this.reason)
      forAccount.evicted.push(basename(old.path))
    }
  }
}
