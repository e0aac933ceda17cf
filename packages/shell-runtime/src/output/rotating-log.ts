import { renameSync, rmSync } from 'node:fs'
import { HIGH_WATER, Spool } from './spool.ts'

/** Rotated spools that may still be writing before the producer is asked to wait (each holds a descriptor). */
const MAX_CLOSING = 2

/**
 * An append-only log that keeps the newest output within `maxBytes` on disk. When `path` holds
 * half of it, `path` becomes `path.1` (replacing the one before, whose bytes are dropped and
 * counted) and a fresh `path` starts; so `path.1` followed by `path` is always the newest output,
 * whole. A spool that was rotated away finishes its writes into `path.1` (the rename keeps its
 * descriptor) while the producer goes on; the producer is asked to wait only when the bytes queued
 * over all spools pass one spool's high-water mark, or when MAX_CLOSING rotated spools are still
 * open, so memory stays at one spool's queue.
 */
export class RotatingLog {
  readonly path: string
  readonly previousPath: string
  readonly #half: number
  #current: Spool
  #currentBytes = 0
  #previousBytes = 0
  #isRotated = false
  #dropped = 0
  #isClosed = false
  #error: NodeJS.ErrnoException | null = null
  /** Rotated spools still writing their queue, and the promises of their close. */
  readonly #closing = new Set<Promise<void>>()
  readonly #closingSpools = new Set<Spool>()

  constructor(path: string, maxBytes: number) {
    this.path = path
    this.previousPath = `${path}.1`
    this.#half = Math.max(1, Math.floor(maxBytes / 2))
    this.#current = new Spool(path)
  }

  /** Why the log stopped: a failed rotation, or the first write error of the current file; null while it takes output. */
  get error(): NodeJS.ErrnoException | null {
    return this.#error ?? this.#current.error
  }

  /** Bytes of output no longer on disk: they were older than what the two files hold. */
  get droppedBytes(): number {
    return this.#dropped
  }

  /** `path.1` once the log has rotated, else null. */
  get previous(): string | null {
    return this.#isRotated ? this.previousPath : null
  }

  /** Queue `chunk`; false when the producer should wait for `drained()`. */
  write(chunk: Buffer): boolean {
    if (this.#isClosed) return true
    if (this.#currentBytes + chunk.length <= this.#half) {
      // The usual case: the chunk fits the current file whole (no views to cut).
      this.#currentBytes += chunk.length
      return this.#current.write(chunk) && this.#mayGoOn()
    }
    let ok = true
    let rest = chunk
    while (rest.length > 0 && !this.#isClosed) {
      if (this.#currentBytes >= this.#half) this.#rotate()
      const part = rest.subarray(0, this.#half - this.#currentBytes)
      ok = this.#current.write(part)
      this.#currentBytes += part.length
      rest = rest.subarray(part.length)
    }
    return ok && this.#mayGoOn()
  }

  /** True while the bytes queued over all spools are below the high-water mark and few rotated spools are still open. */
  #mayGoOn(): boolean {
    if (this.#closingSpools.size === 0) return true
    if (this.#closingSpools.size >= MAX_CLOSING) return false
    let n = this.#current.pendingBytes
    for (const s of this.#closingSpools) n += s.pendingBytes
    return n < HIGH_WATER
  }

  #rotate(): void {
    const old = this.#current
    let next: Spool
    try {
      // Renaming over an existing file makes ext4 (auto_da_alloc) write the renamed file's data
      // out before the call returns; with the old file removed first, the rename is only a rename.
      rmSync(this.previousPath, { force: true })
      renameSync(this.path, this.previousPath)
      next = new Spool(this.path)
    } catch (err) {
      // The spool directory is gone or full: keep what is on disk and take no more.
      this.#error = err as NodeJS.ErrnoException
      this.#isClosed = true
      return
    }
    if (this.#isRotated) this.#dropped += this.#previousBytes
    this.#isRotated = true
    this.#previousBytes = this.#currentBytes
    this.#closingSpools.add(old)
    const closing: Promise<void> = old.close().finally(() => {
      this.#closing.delete(closing)
      this.#closingSpools.delete(old)
    })
    this.#closing.add(closing)
    this.#current = next
    this.#currentBytes = 0
  }

  /** Resolve when the producer may go on: the bytes queued over all spools are below the high-water mark. */
  async drained(): Promise<void> {
    while (!this.#mayGoOn()) await Promise.race([...this.#closing])
    await this.#current.drained()
  }

  /** Resolve once everything queued so far is written. */
  async flushed(): Promise<void> {
    await Promise.all([...this.#closing])
    await this.#current.flushed()
  }

  /** Write everything queued, then close the file. */
  async close(): Promise<void> {
    this.#isClosed = true
    await Promise.all([...this.#closing])
    await this.#current.close()
  }

  /** Remove both files. */
  remove(): void {
    rmSync(this.path, { force: true })
    rmSync(this.previousPath, { force: true })
  }
}
