import { Transform, type TransformCallback } from 'node:stream'

/** Bytes kept from each end of an over-long line, to find its JSON-RPC id. */
const KEEP = 1024

/** What is known of a line that was dropped for its size. */
export interface OverlongLine {
  bytes: number
  /** The JSON-RPC id found at the message's start or end, or null. */
  id: string | number | null
}

const ID = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`
/** `{"jsonrpc":"2.0","id":…` or `{"id":…` at the start of a message. */
const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}`)
/** `…,"id":…}` closing a message (the SDK writes the id last): exactly one brace after it, so a nested `id` does not match. */
const ID_AT_END = new RegExp(String.raw`"id"\s*:\s*${ID}\s*\}\s*$`)

function idOf(head: string, tail: string): string | number | null {
  const m = ID_AT_START.exec(head) ?? ID_AT_END.exec(tail)
  if (m === null) return null
  try {
    const id: unknown = JSON.parse(m[1] as string)
    return typeof id === 'number' || typeof id === 'string' ? id : null
  } catch {
    return null
  }
}

/**
 * Passes newline-delimited messages on one whole line per chunk, and drops a line longer than
 * `limit` bytes as it streams (keeping only its two ends), reporting it to `onOverlong` so the
 * sender can be answered. Memory stays under `limit` plus two small ends, whatever arrives.
 */
export class LineLimit extends Transform {
  readonly #limit: number
  readonly #onOverlong: (line: OverlongLine) => void
  #parts: Buffer[] = []
  #size = 0
  /** Set while dropping an over-long line. */
  #dropping: { bytes: number; head: Buffer; tail: Buffer } | null = null

  constructor(limit: number, onOverlong: (line: OverlongLine) => void) {
    super()
    this.#limit = limit
    this.#onOverlong = onOverlong
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let at = 0
    while (at < chunk.length) {
      const nl = chunk.indexOf(0x0a, at)
      const end = nl < 0 ? chunk.length : nl
      this.#take(chunk.subarray(at, end))
      if (nl < 0) break
      this.#endLine()
      at = nl + 1
    }
    done()
  }

  override _flush(done: TransformCallback): void {
    if (this.#dropping !== null) this.#endLine()
    done()
  }

  #take(piece: Buffer): void {
    if (piece.length === 0) return
    if (this.#dropping === null && this.#size + piece.length <= this.#limit) {
      this.#parts.push(piece)
      this.#size += piece.length
      return
    }
    if (this.#dropping === null) {
      const head = Buffer.concat(this.#parts).subarray(0, KEEP)
      this.#dropping = { bytes: this.#size, head: Buffer.from(head.length > 0 ? head : piece.subarray(0, KEEP)), tail: Buffer.alloc(0) }
      this.#parts = []
      this.#size = 0
    }
    const d = this.#dropping
    d.bytes += piece.length
    d.tail = Buffer.from(Buffer.concat([d.tail, piece.subarray(Math.max(0, piece.length - KEEP))]).subarray(-KEEP))
  }

  #endLine(): void {
    const d = this.#dropping
    if (d !== null) {
      this.#dropping = null
      this.#onOverlong({ bytes: d.bytes, id: idOf(d.head.toString('utf8'), d.tail.toString('utf8')) })
      return
    }
    if (this.#size === 0) return
    const line = Buffer.concat([...this.#parts, Buffer.from('\n')])
    this.#parts = []
    this.#size = 0
    this.push(line)
  }
}
