import { writeSync } from 'node:fs'

/** How long queued input waits before it is offered to a full terminal again. */
const RETRY_MS = 10

/**
 * Keystrokes for a terminal, written straight to its master descriptor, which libuv made
 * non-blocking: what the terminal takes now is written at once, the rest waits in a queue of at
 * most `maxBytes` and is offered again every few milliseconds. Input that would pass the bound is
 * refused whole. Closing drops the queue, and nothing is written after it, so input left unread
 * when the terminal goes away is released and can never land on a descriptor number the process
 * has since reused.
 */
export class TerminalInput {
  readonly maxBytes: number
  readonly #fd: number
  #queue: Buffer[] = []
  /** Bytes of the first queued buffer already written. */
  #offset = 0
  #pending = 0
  #timer: NodeJS.Timeout | null = null
  #isClosed = false

  constructor(fd: number, maxBytes: number) {
    this.#fd = fd
    this.maxBytes = maxBytes
  }

  /** Bytes typed that the terminal has not taken yet. */
  get pendingBytes(): number {
    return this.#pending
  }

  /** Write `data` (UTF-8), queueing what the terminal cannot take now; false, with nothing written, when the queue would pass `maxBytes`. A closed input takes nothing and says true. */
  write(data: string | Buffer): boolean {
    if (this.#isClosed) return true
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data)
    if (bytes.length === 0) return true
    if (this.#pending + bytes.length > this.maxBytes) return false
    this.#queue.push(bytes)
    this.#pending += bytes.length
    if (this.#timer === null) this.#pump()
    return true
  }

  #pump(): void {
    this.#timer = null
    while (!this.#isClosed) {
      const head = this.#queue[0]
      if (head === undefined) return
      let n: number
      try {
        n = writeSync(this.#fd, head, this.#offset)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
          this.#timer = setTimeout(() => this.#pump(), RETRY_MS)
          this.#timer.unref()
        } else {
          this.close() // EIO or EBADF: nobody will read it any more
        }
        return
      }
      this.#offset += n
      this.#pending -= n
      if (this.#offset === head.length) {
        this.#queue.shift()
        this.#offset = 0
      }
    }
  }

  /** Drop whatever is queued and write nothing more. Idempotent. */
  close(): void {
    this.#isClosed = true
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#timer = null
    this.#queue = []
    this.#pending = 0
    this.#offset = 0
  }
}
