import { StringDecoder } from 'node:string_decoder'
import stripAnsi from 'strip-ansi'
import type { LineRing, RingRead } from './line-ring.ts'

/** Cursor moves that return to the start of the line or erase it: a redraw, like `\r`. */
const REDRAW = /\x1b\[[012]?K|\x1b\[[01]?G/g
/** Control characters a reader never sees (tab, newline and carriage return are handled apart). */
const INVISIBLE = /[\x00-\x07\x0b-\x0c\x0e-\x1f\x7f]/g
const HAS_INVISIBLE = /[\x00-\x07\x0b-\x0c\x0e-\x1f\x7f]/

/** Anything that needs more than dropping a final `\r`: escapes, redraws, backspaces, controls. */
const SPECIAL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x9b]|\r(?!$)/

/** Turn one raw terminal line (no `\n`) into what a person reads on the screen. */
export function renderLine(raw: string): string {
  if (!SPECIAL.test(raw)) return raw.endsWith('\r') ? raw.slice(0, -1) : raw
  let s = raw
  while (s.endsWith('\r')) s = s.slice(0, -1)
  if (s.includes('\x1b') || s.includes('\x9b')) s = stripAnsi(s.replace(REDRAW, '\r'))
  if (s.includes('\r')) {
    // A carriage-return redraw: the line shows its last drawn state.
    const parts = s.split('\r')
    let last = ''
    for (let i = parts.length - 1; i >= 0; i--) {
      if ((parts[i] as string) !== '') {
        last = parts[i] as string
        break
      }
    }
    s = last
  }
  if (s.includes('\b')) {
    let prev
    do {
      prev = s
      s = s.replace(/[^\x08]\x08/, '')
    } while (s !== prev)
    s = s.replaceAll('\x08', '')
  }
  if (HAS_INVISIBLE.test(s)) s = s.replace(INVISIBLE, '')
  return s
}

/**
 * Terminal bytes → readable lines in a ring: UTF-8 decoded across chunk boundaries, `\r\n`
 * normalised, escape sequences stripped, carriage-return redraws collapsed to their final state,
 * very long lines wrapped at `maxLineChars`, and the unfinished last line kept apart so a prompt
 * such as `>>> ` can be shown as the last line. The ring holds lines as they came and each is
 * rendered when read, so the cost of a fast printer does not grow with what nobody reads.
 */
export class ScreenLines {
  readonly #ring: LineRing
  readonly #maxLineChars: number
  readonly #decoder = new StringDecoder('utf8')
  #pending = ''

  constructor(ring: LineRing, maxLineChars = 4096) {
    this.#ring = ring
    this.#maxLineChars = maxLineChars
  }

  push(bytes: Buffer): void {
    this.#text(this.#decoder.write(bytes))
  }

  /** The stream ended: flush a character cut at the end. The unfinished line stays unfinished. */
  end(): void {
    this.#text(this.#decoder.end())
  }

  /** The unfinished last line as a person would see it, or null when there is none. */
  partial(): string | null {
    if (this.#pending === '') return null
    const line = renderLine(this.#pending)
    return line === '' ? null : line.slice(-this.#maxLineChars)
  }

  /**
   * The last `n` lines as a person reads them (the unfinished last line, such as a prompt, counts
   * as the last), and how many lines left the ring unseen since the previous read.
   */
  read(n: number): RingRead {
    const partial = this.partial()
    const { lines, dropped } = this.#ring.read(partial === null ? n : n - 1)
    const out = lines.map(renderLine)
    if (partial !== null) out.push(partial)
    return { lines: out, dropped }
  }

  /** Every retained line plus the unfinished one, without counting as a read. */
  retained(): string[] {
    const out = this.#ring.peek().map(renderLine)
    const partial = this.partial()
    if (partial !== null) out.push(partial)
    return out
  }

  #text(text: string): void {
    let start = 0
    for (;;) {
      const nl = text.indexOf('\n', start)
      if (nl < 0) break
      const raw = this.#pending === '' ? text.slice(start, nl) : this.#pending + text.slice(start, nl)
      this.#pending = ''
      if (raw.length <= this.#maxLineChars) this.#ring.push(raw)
      else this.#wrap(renderLine(raw))
      start = nl + 1
    }
    if (start < text.length) {
      this.#pending += text.slice(start)
      if (this.#pending.length > this.#maxLineChars * 4) this.#compact()
    }
  }

  #wrap(line: string): void {
    if (line.length <= this.#maxLineChars) {
      this.#ring.push(line)
      return
    }
    for (let i = 0; i < line.length; i += this.#maxLineChars) this.#ring.push(line.slice(i, i + this.#maxLineChars))
  }

  /** Keep an unfinished line bounded: drop redrawn states, then wrap what is left. */
  #compact(): void {
    const cr = this.#pending.lastIndexOf('\r', this.#pending.length - 2)
    if (cr > 0) this.#pending = this.#pending.slice(cr)
    if (this.#pending.length > this.#maxLineChars * 4) {
      const line = renderLine(this.#pending)
      this.#pending = ''
      const keep = line.length % this.#maxLineChars
      if (line.length - keep > 0) this.#wrap(line.slice(0, line.length - keep))
      this.#pending = line.slice(line.length - keep)
    }
  }
}
