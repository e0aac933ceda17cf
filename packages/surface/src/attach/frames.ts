/**
 * The attach protocol's frames over a UNIX socket: one type byte, a 4-byte big-endian length,
 * the payload. Control frames carry JSON; `input` and `output` carry terminal bytes.
 */
export const FRAME = {
  /** client → server, first: the server's key (the contents of `<pid>.key` beside the socket). */
  key: 0x4b,
  /** client → server: list the shells (no payload). */
  list: 0x4c,
  /** client → server: attach, JSON `{ id, session, isReadOnly }`. */
  attach: 0x41,
  /** client → server: keystrokes. */
  input: 0x49,
  /** client → server: detach (no payload). */
  detach: 0x44,
  /** server → client: JSON `AttachListing`. */
  listing: 0x6c,
  /** server → client: attached, JSON `{ id, session, cols, rows }`; output follows. */
  started: 0x53,
  /** server → client: terminal output (the first one redraws the screen). */
  output: 0x4f,
  /** server → client: the attachment ended, JSON `AttachEnd`. */
  end: 0x58,
  /** server → client: a refusal, JSON `{ message }`. */
  error: 0x45,
} as const

/** The largest frame either side accepts. */
const MAX_FRAME = 16 * 1024 * 1024

export interface AttachListing {
  pid: number
  roots: string[]
  sessions: Array<{ session: string; shells: Array<{ id: string; status: string; commands: string[]; cwd: string }> }>
}

export interface AttachEnd {
  reason: 'exited' | 'detached' | 'closed'
  /** True when the terminal was on the alternate screen, so the client leaves it too. */
  isAlternate: boolean
}

/** One frame as bytes. */
export function frame(type: number, payload: Buffer | string | object = Buffer.alloc(0)): Buffer {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload))
  const head = Buffer.allocUnsafe(5)
  head[0] = type
  head.writeUInt32BE(body.length, 1)
  return Buffer.concat([head, body])
}

/** Splits a byte stream into frames; throws on a frame over the limit. */
export class FrameReader {
  #buf: Buffer = Buffer.alloc(0)

  /** The frames completed by `chunk`. */
  push(chunk: Buffer): Array<{ type: number; payload: Buffer }> {
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk])
    const out: Array<{ type: number; payload: Buffer }> = []
    while (this.#buf.length >= 5) {
      const len = this.#buf.readUInt32BE(1)
      if (len > MAX_FRAME) throw new Error(`attach frame of ${len} bytes is over the ${MAX_FRAME}-byte limit`)
      if (this.#buf.length < 5 + len) break
      out.push({ type: this.#buf[0] as number, payload: this.#buf.subarray(5, 5 + len) })
      this.#buf = this.#buf.subarray(5 + len)
    }
    return out
  }
}

/** The JSON payload of a control frame. */
export function json<T>(payload: Buffer): T {
  return JSON.parse(payload.toString('utf8')) as T
}
