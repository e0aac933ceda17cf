import { CUT_LINE_MARK } from '@hands/contracts'
import type { IBuffer, IBufferLine, IModes } from '@xterm/headless'
import { revealInvisible } from './reveal.ts'
import { Emulator, type LineList } from './emulator.ts'
import { PlainTail } from './plain-tail.ts'
import { SeenRows } from './seen-rows.ts'

/** What one read of a screen returns. */
export interface ScreenRead {
  /**
   * The last lines, oldest first: rows that scrolled off plus the screen, wrapped rows joined; on
   * the alternate screen, its rows. Invisible bidi and zero-width characters are written as
   * `<U+XXXX>`. A first line whose first rows already left the history starts with CUT_LINE_MARK.
   */
  lines: string[]
  /** Lines that wholly left the history since the previous read, none of their rows ever returned. */
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
  /** How long the output must pause before held bytes are parsed without a reader; default QUIET_MS. */
  quietMs?: number
  /** Hold plain lines back while nobody reads (default true); false parses every byte as it comes. */
  isHoldingBack?: boolean
}

/**
 * How long output must pause before held lines are parsed with nobody reading. Any read parses
 * them anyway, so this only moves that work ahead of a read; a printer that stalls for a moment
 * (a loaded machine, a build between steps) would otherwise have up to a history's worth of rows
 * parsed at every stall and skipped again right after.
 */
const QUIET_MS = 1000

/**
 * Lines skipped while held back, until they have left the history: they take rows [from, from +
 * existing + virtual), the first `existing` of them rows the terminal already had (moved over,
 * still holding what they held), the other `virtual` never made.
 */
interface Skip {
  from: number
  existing: number
  virtual: number
  lines: number
  /** Rows of the first skipped lines, covering at least `existing` rows. */
  spans: number[]
  /** True once its lines were counted as dropped. */
  isCounted: boolean
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
  #lines: LineList
  #trimSub: { dispose(): void }
  /** History number of the normal buffer's first row (rows are numbered from the first the terminal had). */
  #base = 0
  /** Lines skipped while held back, counted once the history reaches the place they would have been. */
  #skip: Skip | null = null
  /**
   * Whether each row leaving at once ends a line, taken while the rows were still there: the
   * scrollback before the program clears it (ED 3), every row at a reset (null: a blank row after
   * the last one written, no line).
   */
  #clearing: Array<boolean | null> | null = null
  #quiet: NodeJS.Timeout | null = null
  /** When the last held chunk came (performance.now()); the quiet timer re-arms itself until output has paused. */
  #heldAt = 0
  readonly #canSkipNow = () => this.#canSkip()
  #isDisposed = false
  #received = 0
  #parsed = 0

  constructor(options: ScreenOptions) {
    this.#emu = new Emulator(options.cols, options.rows, options.scrollback)
    this.#tail = new PlainTail(options.cols, options.rows, options.scrollback + 2 * options.rows)
    this.#quietMs = options.quietMs ?? QUIET_MS
    this.#isHoldingBack = options.isHoldingBack ?? true
    this.#lines = this.#emu.normalLines()
    this.#trimSub = this.#lines.onTrim((n) => this.#evict(n))
    this.#emu.onBufferChange(() => {
      const lines = this.#emu.normalLines()
      if (lines === this.#lines) return
      // A reset replaced the buffers: every row of the old history is gone (the old rows are still
      // readable); the blank rows after the last one written were no lines.
      this.#trimSub.dispose()
      const old = this.#lines
      let written = old.length
      while (written > 0 && TRAILING_SPACES_ONLY.test(old.get(written - 1)?.translateToString(true) ?? '')) written--
      this.#clearing = lineEnds(old, old.length).map((isEnd, i) => (i < written ? isEnd || i === written - 1 : null))
      this.#evict(old.length)
      this.#lines = lines
      this.#trimSub = lines.onTrim((n) => this.#evict(n))
    })
    this.#emu.onClearScrollback(() => {
      if (!this.#emu.isAlternate) this.#clearing = lineEnds(this.#lines, this.#lines.length - this.#emu.rows)
    })
    const reply = options.onReply
    if (reply !== undefined) this.#emu.terminal.onData((d) => reply(d))
  }

  /** Take terminal output; `now` (performance.now()) is when it came, when the caller has read the clock already. */
  push(bytes: Buffer, now?: number): void {
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
      this.#heldAt = now ?? performance.now()
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
    const held = this.#tail.take(this.#canSkipNow)
    for (const b of held.head) this.#write(b)
    if (held.skippedRows > 0) {
      // The skipped lines start at the cursor's row (the head ended in CR LF) and fill the rows
      // down to the bottom of the screen, then add rows. Move over the rows they would fill,
      // scrolling once when they reach past the bottom, so the next line starts on a new row as it
      // would have; number the rows they would have added. Their pen goes first: a scroll fills
      // the new row with its background.
      if (held.sgr !== '') this.#emu.write(held.sgr)
      const b = this.#emu.normal
      const from = this.#base + b.baseY + b.cursorY
      const existing = Math.min(held.skippedRows, this.#emu.rows - b.cursorY)
      this.#emu.write('\n'.repeat(existing))
      this.#skip = {
        from,
        existing,
        virtual: held.skippedRows - existing,
        lines: held.skippedLines,
        spans: held.skippedSpans,
        isCounted: false,
      }
    }
    for (const b of held.body) this.#write(b)
    const skip = this.#skip
    if (skip !== null && !skip.isCounted) {
      // The parsed lines always push the skipped lines out of the history; count them regardless.
      this.#seen.skipped(skip.from, skip.existing + skip.virtual, skip.lines, skip.spans, skip.existing)
      skip.isCounted = true
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

  /**
   * `count` rows left the top of the history. Whether each ended its line is read from the row
   * after it, now the oldest retained; rows leaving several at once (a reset, ED 3) were looked at
   * before they went. Rows standing for skipped lines are counted as those lines.
   */
  #evict(count: number): void {
    const ends = this.#clearing !== null && this.#clearing.length === count ? this.#clearing : null
    this.#clearing = null
    for (let i = 0; i < count; i++) {
      const row = this.#base
      const skip = this.#skip
      if (skip !== null && row >= skip.from) {
        if (!skip.isCounted) {
          this.#seen.skipped(skip.from, skip.existing + skip.virtual, skip.lines, skip.spans, skip.existing)
          skip.isCounted = true
        }
        this.#base = row + 1
        if (this.#base === skip.from + skip.existing) {
          this.#base += skip.virtual
          this.#skip = null
        }
        continue
      }
      // Several rows at once that nobody looked at before: each counts as a line of its own.
      const isLineEnd = ends !== null ? (ends[i] as boolean | null) : i < count - 1 || !(this.#lines.get(0)?.isWrapped ?? false)
      if (isLineEnd === null) this.#seen.evictedBlank(row)
      else this.#seen.evicted(row, isLineEnd)
      this.#base = row + 1
    }
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
        const text = revealInvisible(parts.length === 1 ? (parts[0] as string) : parts.reverse().join('')).text
        // The oldest row continues a line whose first rows already left the history.
        out.push(!isAlt && line.isWrapped ? `${CUT_LINE_MARK}${text}` : text)
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
const TRAILING_SPACES_ONLY = /^ *$/

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

/** For each of the first `count` rows of `lines`, whether it ends a line (the row after it does not continue it). */
function lineEnds(lines: LineList, count: number): boolean[] {
  const out: boolean[] = []
  for (let i = 0; i < count; i++) out.push(!(lines.get(i + 1)?.isWrapped ?? false))
  return out
}
