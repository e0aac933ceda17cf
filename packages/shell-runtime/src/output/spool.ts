import { close, openSync, writev } from 'node:fs'

/** Pending bytes above which `write` asks the producer to pause. */
export const HIGH_WATER = 8 * 1024 * 1024
/** Small writes wait up to this long to be joined into one system call. */
const COALESCE_MS = 20
/** Queued bytes that are written at once, without waiting to coalesce. */
const COALESCE_BYTES = 1024 * 1024

/**
 * An append-only file fed by a stream: chunks queue in memory and go out in one `writev` per
 * round, so a fast producer costs few system calls; `write` returns false above the high-water
 * mark so the producer can pause and memory stays flat.
 */
export class Spool {
  readonly path: string
  #fd: number
  #queue: Buffer[] = []
  #queued = 0
  #writing = false
  #error: NodeJS.ErrnoException | null = null
  #drainWaiters: Array<() => void> = []
  #idleWaiters: Array<() => void> = []
  #closed = false
  #timer: NodeJS.Timeout | null = null

  constructor(path: string) {
    this.path = path
    this.#fd = openSync(path, 'a', 0o600)
  }

  /** The first write error, or null. */
  get error(): NodeJS.ErrnoException | null {
    return this.#error
  }

  /** Bytes queued and not yet written. */
  get pendingBytes(): number {
    return this.#queued
  }

  /** Queue `chunk`; false when the producer should wait for `drained()`. */
  write(chunk: Buffer): boolean {
    if (this.#error !== null || this.#closed) return true
    this.#queue.push(chunk)
    this.#queued += chunk.length
    if (!this.#writing) {
      if (this.#queued >= COALESCE_BYTES) this.#flush()
      else this.#timer ??= setTimeout(() => this.#flush(), COALESCE_MS)
    }
    return this.#queued < HIGH_WATER
  }

  /** Resolve when the queue is below the high-water mark. */
  drained(): Promise<void> {
    if (this.#queued < HIGH_WATER || this.#error !== null) return Promise.resolve()
    return new Promise((resolve) => this.#drainWaiters.push(resolve))
  }

  /** Resolve once everything queued so far is written. */
  async flushed(): Promise<void> {
    if (!this.#writing && this.#queue.length > 0) this.#flush()
    if (this.#writing || this.#queue.length > 0) await new Promise<void>((resolve) => this.#idleWaiters.push(resolve))
  }

  /** Write everything queued, then close the file. */
  async close(): Promise<void> {
    if (this.#closed) return
    if (!this.#writing && this.#queue.length > 0) this.#flush()
    if (this.#writing || this.#queue.length > 0) await new Promise<void>((resolve) => this.#idleWaiters.push(resolve))
    this.#closed = true
    await new Promise<void>((resolve) => close(this.#fd, () => resolve()))
  }

  #flush(): void {
    if (this.#timer !== null) {
      clearTimeout(this.#timer)
      this.#timer = null
    }
    if (this.#writing || this.#queue.length === 0) return
    const batch = this.#queue
    const bytes = this.#queued
    this.#queue = []
    this.#writing = true
    this.#writeAll(batch, bytes)
  }

  #writeAll(batch: Buffer[], bytes: number): void {
    writev(this.#fd, batch, (err, written) => {
      if (err) {
        this.#error = err
        this.#queue = []
        this.#queued = 0
      } else if (written < bytes) {
        // A short write: send the rest of this batch before anything newer.
        let skip = written
        const rest: Buffer[] = []
        for (const b of batch) {
          if (skip >= b.length) skip -= b.length
          else {
            rest.push(skip > 0 ? b.subarray(skip) : b)
            skip = 0
          }
        }
        this.#queued -= written
        this.#writeAll(rest, bytes - written)
        return
      } else {
        this.#queued -= bytes
      }
      this.#writing = false
      if (this.#queued < HIGH_WATER) for (const w of this.#drainWaiters.splice(0)) w()
      if (this.#queue.length === 0) for (const w of this.#idleWaiters.splice(0)) w()
      else if (this.#queued >= COALESCE_BYTES || this.#idleWaiters.length > 0) this.#flush()
      else this.#timer ??= setTimeout(() => this.#flush(), COALESCE_MS)
    })
  }
}
