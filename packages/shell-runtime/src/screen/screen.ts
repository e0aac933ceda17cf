import type { IBuffer, IBufferLine, IModes } from '@xterm/headless'
import { revealInvisible } from '../output/reveal.ts'
import { Emulator } from './emulator.ts'
import { PlainTail } from './plain-tail.ts'
import { SeenRows } from './seen-rows.ts'

/** What one read of a screen returns. */
export interface ScreenRead {
  /** The last lines, oldest first: rows that scrolled off plus the screen, wrapped rows joined; on the alternate screen, its rows. Invisible bidi and zero-width characters are written as `<U+XXXX>`. */
  lines: string[]
  /** Rows that left the history since the previous read without being returned. */
  dropped: number
  /** True while a full-screen program holds the alternate screen. */
  isAlternate: boolean
}

/** The visible screen, row by row. */
export interface ScreenView {
  /** Every row of the screen, top to bottom, trailing blanks trimmed. */
  rows: string[]
  cursor: { x: number; y: number }
  isAlternate: boolean
}

export interface ScreenOptions {
  cols: number
  rows: number
  /** Rows kept above the screen. */
  scrollback: number
  /** Answers the emulator gives to a program's queries (cursor position, device attributes). */
  onReply?: (data: string) => void
  /** How long the output must pause before held bytes are parsed without a reader; default 50 ms. */
  quietMs?: number
  /** Hold plain lines back while nobody reads (default true); false parses every byte as it comes. */
  isHoldingBack?: boolean
}

interface Lines {
  readonly length: number
  onTrim(fn: (amount: number) => void): { dispose(): void }
}

/**
 * A terminal's screen and history as a person sees them: every byte of a terminal's output goes
 * through a headless xterm of the same size. Plain lines arriving faster than anyone reads are
 * held back and, past what the history can show, skipped (see PlainTail); everything else is
 * parsed as it arrives, so reading costs what is read, never the history.
 */
export class Screen {
  readonly #emu: Emulator
  readonly #seen = new SeenRows()
  readonly #tail: PlainTail
  readonly #quietMs: number
  readonly #isHoldingBack: boolean
  #lines: Lines
  #trimSub: { dispose(): void }
  /** History number of the normal buffer's first row (rows are numbered from the first the terminal had). */
  #base = 0
  /** Rows skipped by the held-back lines, counted once the history reaches the place they would have been. */
  #skip: { at: number; rows: number } | null = null
  #quiet: NodeJS.Timeout | null = null
  /** When the last held chunk came (performance.now()); the quiet timer re-arms itself until output has paused. */
  #heldAt = 0
  readonly #canSkipNow = () => this.#canSkip()
  #isDisposed = false
  #received = 0
  #parsed = 0

  constructor(options: ScreenOptions) {
    this.#emu = new Emulator(options.cols, options.rows, options.scrollback)
    this.#tail = new PlainTail(options.cols, options.scrollback + 2 * options.rows)
    this.#quietMs = options.quietMs ?? 50
    this.#isHoldingBack = options.isHoldingBack ?? true
    this.#lines = this.#emu.normalLines()
    this.#trimSub = this.#lines.onTrim((n) => this.#evict(n))
    this.#emu.onBufferChange(() => {
      const lines = this.#emu.normalLines()
      if (lines === this.#lines) return
      // A reset replaced the buffers: every row of the old history is gone.
      this.#trimSub.dispose()
      this.#evict(this.#lines.length)
      this.#lines = lines
      this.#trimSub = lines.onTrim((n) => this.#evict(n))
    })
    const reply = options.onReply
    if (reply !== undefined) this.#emu.terminal.onData((d) => reply(d))
  }

  /** Take terminal output. */
  push(bytes: Buffer): void {
    if (bytes.length === 0 || this.#isDisposed) return
    this.#received += bytes.length
    if (!this.#isHoldingBack) {
      this.#write(bytes)
      return
    }
    // Bytes that continue a sequence the parser is inside of are never plain, whatever they look like.
    const offer = this.#tail.isEmpty && !this.#emu.isGround ? 'not-plain' : this.#tail.offer(bytes, this.#canSkipNow)
    if (offer === 'held') {
      // Reading the clock costs less than moving a timer on every chunk of a fast printer.
      this.#heldAt = performance.now()
      if (this.#quiet === null) this.#armQuiet(this.#quietMs)
      return
    }
    this.flush()
    if (offer === 'not-plain') this.#write(bytes)
  }

  #write(data: Buffer | string): void {
    this.#parsed += data.length
    this.#emu.write(data)
  }

  /** Bytes taken, and bytes the emulator parsed (fewer when held-back lines were skipped). */
  get stats(): { received: number; parsed: number } {
    return { received: this.#received, parsed: this.#parsed }
  }

  /** Parse everything held back. */
  flush(): void {
    if (this.#quiet !== null) {
      clearTimeout(this.#quiet)
      this.#quiet = null
    }
    if (this.#tail.isEmpty || this.#isDisposed) return
    const held = this.#tail.take()
    for (const b of held.head) this.#write(b)
    if (held.skippedRows > 0) {
      // The skipped rows first move the cursor down over the rows already below it, then add
      // rows: move over those here, and number the rows that would have been added.
      const b = this.#emu.normal
      const below = Math.min(this.#emu.rows - 1 - b.cursorY, held.skippedRows)
      if (below > 0) this.#emu.write('\n'.repeat(below))
      if (held.skippedRows > below) this.#skip = { at: this.#base + b.length, rows: held.skippedRows - below }
      if (held.sgr !== '') this.#emu.write(held.sgr)
    }
    for (const b of held.body) this.#write(b)
    if (this.#skip !== null) {
      // The parsed lines always push the skip's place out of the history; count it regardless.
      this.#seen.skipped(this.#skip.rows)
      this.#skip = null
    }
  }

  /** The last `n` lines and the rows dropped unseen since the previous read; marks what it returns as seen. */
  read(n: number): ScreenRead {
    this.flush()
    const { lines, from, to } = this.#collect(n)
    if (!this.#emu.isAlternate) this.#seen.returned(this.#base + from, this.#base + to)
    return { lines, dropped: this.#seen.takeDropped(), isAlternate: this.#emu.isAlternate }
  }

  /** Every line `read` could return, without counting as a read. */
  peek(): string[] {
    this.flush()
    return this.#collect(Number.POSITIVE_INFINITY).lines
  }

  /** The visible screen. */
  view(): ScreenView {
    this.flush()
    const b = this.#emu.active
    const rows: string[] = []
    for (let y = 0; y < this.#emu.rows; y++) rows.push(trimmed(b.getLine(b.baseY + y)))
    return { rows, cursor: { x: b.cursorX, y: b.cursorY }, isAlternate: this.#emu.isAlternate }
  }

  /** Escape sequences that redraw the screen, its cursor and its modes on a terminal of the same size. */
  snapshot(): string {
    this.flush()
    return this.#emu.serialize()
  }

  /** The terminal's modes (cursor-key mode, bracketed paste, …). */
  get modes(): IModes {
    this.flush()
    return this.#emu.modes
  }

  get size(): { cols: number; rows: number } {
    return { cols: this.#emu.cols, rows: this.#emu.rows }
  }

  dispose(): void {
    if (this.#quiet !== null) clearTimeout(this.#quiet)
    this.#quiet = null
    if (this.#isDisposed) return
    this.#isDisposed = true
    this.#emu.dispose()
  }

  /** Parse what is held once output has paused for quietMs, nobody having read it. */
  #armQuiet(ms: number): void {
    this.#quiet = setTimeout(() => {
      const left = this.#heldAt + this.#quietMs - performance.now()
      if (left > 1) this.#armQuiet(left)
      else this.flush()
    }, ms)
    this.#quiet.unref()
  }

  #canSkip(): boolean {
    return !this.#emu.isAlternate && this.#emu.isFullScrollRegion && this.#emu.modes.wraparoundMode
  }

  #evict(count: number): void {
    let from = this.#base
    const skip = this.#skip
    if (skip !== null && from + count > skip.at) {
      const before = Math.max(0, skip.at - from)
      this.#seen.evicted(from, before)
      this.#seen.skipped(skip.rows)
      from = skip.at + skip.rows
      this.#seen.evicted(from, count - before)
      this.#base = from + count - before
      this.#skip = null
      return
    }
    this.#seen.evicted(from, count)
    this.#base = from + count
  }

  /** Up to `n` lines ending at the last row worth reading, and the buffer rows [from, to) they cover. */
  #collect(n: number): { lines: string[]; from: number; to: number } {
    const b = this.#emu.active
    const isAlt = this.#emu.isAlternate
    const cursorRow = b.baseY + b.cursorY
    const to = contentEnd(b, cursorRow)
    const out: string[] = []
    const parts: string[] = []
    let y = to - 1
    let from = to
    for (; y >= 0 && out.length < n; y--) {
      const line = b.getLine(y) as IBufferLine
      parts.push(parts.length === 0 ? lastRowText(line, y === cursorRow ? b.cursorX : 0) : line.translateToString(false))
      if (isAlt || !line.isWrapped || y === 0) {
        out.push(revealInvisible(parts.length === 1 ? (parts[0] as string) : parts.reverse().join('')).text)
        parts.length = 0
        from = y
      }
    }
    return { lines: out.reverse(), from, to }
  }
}

/** A row's text without the blanks at its end (written spaces included). */
function trimmed(line: IBufferLine | undefined): string {
  return line === undefined ? '' : line.translateToString(true).replace(TRAILING_SPACES, '')
}
const TRAILING_SPACES = / +$/

function isBlank(line: IBufferLine | undefined): boolean {
  return trimmed(line) === ''
}

/** The index after the last row worth returning: rows above the cursor, the cursor row when it holds anything, and written rows below it. */
function contentEnd(b: IBuffer, cursorRow: number): number {
  for (let y = b.length - 1; y > cursorRow; y--) if (!isBlank(b.getLine(y))) return y + 1
  return b.cursorX > 0 || !isBlank(b.getLine(cursorRow)) ? cursorRow + 1 : cursorRow
}

/** A row's text, trailing blanks trimmed, except blanks before the cursor on the cursor row (a prompt such as `>>> `). */
function lastRowText(line: IBufferLine, cursorX: number): string {
  const text = trimmed(line)
  if (cursorX === 0) return text
  const upto = line.translateToString(false, 0, cursorX)
  return upto.length > text.length ? upto : text
}
