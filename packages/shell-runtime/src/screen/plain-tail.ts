import { type SimdScanner, simdScanner, TAB_BIT } from './simd-scan.ts'

/**
 * Bytes that do nothing but print lines are held back from the emulator while nobody looks, so a
 * fast printer costs little more than reading its terminal. When more is held than the emulator's
 * history could show, the oldest held lines are skipped (never parsed) and only counted (lines,
 * their rows, and the rows of the first few, which may land on rows the terminal already had);
 * what the emulator then shows is what it would have shown had it parsed them.
 *
 * That holds because a skipped line is restricted to what cannot change the terminal's state
 * beyond its own row: printable text, SGR colour sequences, carriage return, backspace, tab and
 * bell, ending in CR LF, and either no wider than the terminal (one row) or plain printable ASCII
 * (one row per `cols` characters). The first held line (the head) is always parsed, so skipped
 * lines start at column 0 of a fresh row; at least `keepRows` rows of lines after them are parsed
 * too, which pushes everything the skip displaced out of the history. The owner checks the
 * terminal's side (normal buffer, full scroll region, autowrap on) through `canSkip`.
 */

/** Bytes worth a closer look: controls other than BEL, BS, TAB, LF, CR; ESC; DEL; the lead byte of U+0080–U+00BF. */
const RARE = new Uint8Array(256)
for (const c of [0, 1, 2, 3, 4, 5, 6, 0x0b, 0x0c, 0x7f, 0xc2]) RARE[c] = 1
for (let c = 0x0e; c <= 0x1f; c++) RARE[c] = 1
/** An SGR that starts from the default rendition (no parameter, or a first parameter of 0). */
const SGR_RESET = /^\x1b\[(?:0*(?:[;:]|m))/
/** SGR sequences remembered across a skip (the pen they leave is re-applied). */
const MAX_SGR = 64
const CR = 0x0d
/** Lines the per-line arrays start with room for. */
const INITIAL_LINES = 1024

/**
 * True when `bytes` hold no control but BEL, BS, TAB, LF and CR, no escape but complete SGR
 * sequences (`ESC [` digits `;` `:` `m`), and no C1 control (UTF-8 `C2 80`–`C2 9F`). A chunk
 * ending inside an escape sequence or after a C2 lead byte is not known to be plain.
 */
export function isPlain(bytes: Buffer): boolean {
  return scanPlain(bytes) >= 0
}

/** Where the JavaScript scan writes the offsets of the line feeds it finds (grown as needed, reused). */
let ownFeeds = new Int32Array(1024)
/** Where the last `scanPlain` left the offsets of its line feeds: `ownFeeds`, or the SIMD scanner's memory. */
let lineFeeds: Int32Array = ownFeeds
/** The SIMD fast path (null where unavailable), compiled on the first scan. */
let simd: SimdScanner | null | undefined
/** Whether the last `scanPlain` saw a tab. */
let sawTab = false
/** Where the last `scanPlain` saw its last escape (an SGR's ESC), or -1. */
let lastEsc = -1

/** Use the SIMD fast path where available (the default), or the JavaScript scan alone (a benchmark's baseline). */
export function useSimdScan(isOn: boolean): void {
  simd = isOn ? simdScanner() : null
}

/**
 * `isPlain`, and on the way the line feeds: returns -1 when `bytes` are not plain, else how many
 * line feeds they hold, their offsets in `lineFeeds[0..count)`. Every byte of a fast printer's
 * output passes here: a chunk with no byte that needs a closer look (see RARE) is answered by the
 * SIMD scan, 16 bytes at a time; any other goes to the scan in JavaScript.
 */
function scanPlain(bytes: Buffer): number {
  if (simd === undefined) simd = simdScanner()
  if (simd !== null) {
    const found = simd.scan(bytes)
    if (found >= 0) {
      lineFeeds = simd.feeds
      sawTab = (found & TAB_BIT) !== 0
      lastEsc = -1
      return found & ~TAB_BIT
    }
  }
  lineFeeds = ownFeeds
  return scanPlainJs(bytes)
}

/**
 * The plain-bytes check in JavaScript, for chunks holding escapes or 0xC2 (or anything, without
 * SIMD): aligned runs of printable ASCII are passed over four bytes at a time; only a word
 * holding a byte below 0x20 or above 0x7E (line ends, escapes, UTF-8) is looked at byte by byte.
 */
function scanPlainJs(bytes: Buffer): number {
  const n = bytes.length
  const lead = (4 - (bytes.byteOffset & 3)) & 3
  const words = n - lead >= 4 ? new Int32Array(bytes.buffer, bytes.byteOffset + lead, (n - lead) >>> 2) : NO_WORDS
  const last = words.length
  let feeds = lineFeeds
  let count = 0
  let tab = false
  let esc = -1
  for (let i = 0; i < n; i++) {
    if (i >= lead && ((i - lead) & 3) === 0) {
      let w = (i - lead) >>> 2
      while (w < last && !hasRareByte(words[w] as number)) w++
      i = lead + 4 * w
      if (i >= n) break
    }
    const c = bytes[i] as number
    if (RARE[c] === 0) {
      if (c === 0x0a) {
        if (count === feeds.length) {
          const more = new Int32Array(2 * count)
          more.set(feeds)
          ownFeeds = more
          lineFeeds = more
          feeds = more
        }
        feeds[count++] = i
      } else if (c === 0x09) tab = true
      continue
    }
    if (c === 0x1b) {
      if (bytes[i + 1] !== 0x5b) return -1
      let j = i + 2
      for (; j < n; j++) {
        const d = bytes[j] as number
        if (!((d >= 0x30 && d <= 0x3b) || d === 0x3a)) break
      }
      if (bytes[j] !== 0x6d) return -1
      esc = i
      i = j
    } else if (c === 0xc2) {
      const next = bytes[i + 1]
      if (next === undefined || (next >= 0x80 && next <= 0x9f)) return -1
    } else return -1
  }
  sawTab = tab
  lastEsc = esc
  return count
}
const NO_WORDS = new Int32Array(0)

/** True when one of the four bytes of `x` is below 0x20 or above 0x7E (exact for the word as a whole; see "Bit Twiddling Hacks", hasless / hasmore). */
function hasRareByte(x: number): boolean {
  return ((((x - 0x20202020) & ~x) | x | (x + 0x01010101)) & 0x80808080) !== 0
}

/** What `take` hands back for the emulator, in this order. */
export interface HeldBytes {
  /** Parse first: the first held line (possibly the rest of a line already on the screen). */
  head: Buffer[]
  /** Rows of the lines skipped after the head (0 when none were). */
  skippedRows: number
  /** How many lines were skipped. */
  skippedLines: number
  /** Rows of each of the first skipped lines, oldest first, until they cover the screen's height (or every skipped line). */
  skippedSpans: number[]
  /** The SGR sequences of the skipped lines that still set the pen, to parse after the head. */
  sgr: string
  /** Parse last: the held lines after the skipped ones. */
  body: Buffer[]
}

/** What `offer` did with a chunk. */
export type Offer = 'held' | 'not-plain' | 'full'

export class PlainTail {
  readonly #cols: number
  readonly #keepRows: number
  readonly #screenRows: number
  readonly #maxBytes: number
  #head: Buffer[] = []
  #headBytes = 0
  #headDone = false
  #headEndsCrLf = false
  #body: Buffer[] = []
  #bodyBytes = 0
  /** Offset of #body[0][0] in the stream of bytes after the head. */
  #bodyOffset = 0
  /** Stream offset of the last ESC held in the body, or -1: dropped bytes before none need no look for SGRs. */
  #lastEscAt = -1
  /** Complete body lines not yet skipped: end offsets (after the LF) and rows (-1: cannot be skipped). */
  #lineEnds = new Float64Array(INITIAL_LINES)
  #lineRows = new Int32Array(INITIAL_LINES)
  /** Lines [#front, #back) of the two arrays are held; the arrays are reused, so a fast printer leaves no garbage per line. */
  #front = 0
  #back = 0
  #rows = 0
  /** Offset where the unfinished body line starts, and tabs seen in it. */
  #lineStart = 0
  #lineTabs = 0
  #lastByte = -1
  #skippedRows = 0
  #skippedLines = 0
  #spans: number[] = []
  #spanRows = 0
  #sgr: string[] = []

  /** `cols` × `screenRows`: the terminal's size; `keepRows`: rows of lines parsed after any skipped ones. */
  constructor(cols: number, screenRows: number, keepRows: number, maxBytes = 8 * 1024 * 1024) {
    this.#cols = cols
    this.#screenRows = screenRows
    this.#keepRows = keepRows
    this.#maxBytes = maxBytes
  }

  get isEmpty(): boolean {
    return this.#headBytes === 0
  }

  /**
   * Hold `chunk` when it is plain: `held`, or `full` when the held bytes could not be brought
   * back within bounds (the owner must parse everything now). `not-plain`: nothing was held.
   */
  offer(chunk: Buffer, canSkip: () => boolean): Offer {
    const feeds = scanPlain(chunk)
    if (feeds < 0) return 'not-plain'
    let rest = 0
    let first = 0
    if (!this.#headDone) {
      const lf = feeds > 0 ? (lineFeeds[0] as number) : -1
      const head = lf < 0 ? chunk : chunk.subarray(0, lf + 1)
      const before = lf > 0 ? chunk[lf - 1] : this.#lastHeadByte()
      this.#head.push(head)
      this.#headBytes += head.length
      if (lf < 0) return this.#headBytes > this.#maxBytes ? 'full' : 'held'
      this.#headDone = true
      this.#headEndsCrLf = before === CR
      rest = lf + 1
      first = 1
      if (rest === chunk.length) return 'held'
    }
    this.#addBody(rest === 0 ? chunk : chunk.subarray(rest), rest, first, feeds)
    if (this.#rows > 2 * this.#keepRows || this.#bodyBytes > this.#maxBytes) {
      if (!this.#trim(canSkip)) return 'full'
    }
    return 'held'
  }

  /**
   * Everything held, in parse order; the tail is empty afterwards. The oldest body lines are first
   * skipped down to `keepRows` rows when `canSkip` allows, so what is parsed is what the history
   * shows, not up to twice that.
   */
  take(canSkip: () => boolean): HeldBytes {
    if (this.#rows > this.#keepRows) this.#trim(canSkip)
    const held: HeldBytes = {
      head: this.#head,
      skippedRows: this.#skippedRows,
      skippedLines: this.#skippedLines,
      skippedSpans: this.#spans,
      sgr: this.#sgr.join(''),
      body: this.#body,
    }
    this.#head = []
    this.#headBytes = 0
    this.#headDone = false
    this.#headEndsCrLf = false
    this.#body = []
    this.#bodyBytes = 0
    this.#bodyOffset = 0
    this.#lastEscAt = -1
    this.#front = 0
    this.#back = 0
    if (this.#lineEnds.length > INITIAL_LINES) {
      // An idle screen keeps small arrays; a fast printer grows them again in a few doublings.
      this.#lineEnds = new Float64Array(INITIAL_LINES)
      this.#lineRows = new Int32Array(INITIAL_LINES)
    }
    this.#rows = 0
    this.#lineStart = 0
    this.#lineTabs = 0
    this.#lastByte = -1
    this.#skippedRows = 0
    this.#skippedLines = 0
    this.#spans = []
    this.#spanRows = 0
    this.#sgr = []
    return held
  }

  #lastHeadByte(): number | undefined {
    const last = this.#head[this.#head.length - 1]
    return last === undefined ? undefined : last[last.length - 1]
  }

  /** Hold `buf`, the chunk from offset `shift` on, whose line feeds are `lineFeeds[first..feeds)` (chunk offsets). */
  #addBody(buf: Buffer, shift: number, first: number, feeds: number): void {
    const base = this.#bodyOffset + this.#bodyBytes
    this.#body.push(buf)
    this.#bodyBytes += buf.length
    if (lastEsc >= shift) this.#lastEscAt = base + lastEsc - shift
    const hasTab = sawTab
    const at = lineFeeds
    const cols = this.#cols
    // Every line of a printer's output passes here: the fields live in locals through the loop.
    let ends = this.#lineEnds
    let lineRows = this.#lineRows
    let back = this.#back
    let held = this.#rows
    let start = this.#lineStart
    let tabs = this.#lineTabs
    let pos = 0
    for (let k = first; k <= feeds; k++) {
      const lf = k < feeds ? (at[k] as number) - shift : -1
      const end = lf < 0 ? buf.length : lf
      if (hasTab) for (let t = buf.indexOf(0x09, pos); t >= 0 && t < end; t = buf.indexOf(0x09, t + 1)) tabs++
      if (lf < 0) break
      const before = lf > 0 ? buf[lf - 1] : this.#lastByte
      const stop = base + lf
      // Each character is at most as wide as its UTF-8 bytes; a tab at most 8 columns.
      const rows = before !== CR ? -1 : stop - 1 - start + 7 * tabs <= cols ? 1 : this.#rowsOf(start, stop - 1, tabs)
      if (back === ends.length) {
        this.#back = back
        this.#makeRoom()
        ends = this.#lineEnds
        lineRows = this.#lineRows
        back = this.#back
      }
      ends[back] = stop + 1
      lineRows[back] = rows
      back++
      held += rows < 0 ? 1 : rows
      start = stop + 1
      tabs = 0
      pos = lf + 1
    }
    this.#back = back
    this.#rows = held
    this.#lineStart = start
    this.#lineTabs = tabs
    this.#lastByte = buf[buf.length - 1] as number
  }

  /** Room for one more line at #back: move the held lines to the front, or double the arrays when they are more than half full. */
  #makeRoom(): void {
    const held = this.#back - this.#front
    if (held * 2 <= this.#lineEnds.length) {
      this.#lineEnds.copyWithin(0, this.#front, this.#back)
      this.#lineRows.copyWithin(0, this.#front, this.#back)
    } else {
      const ends = new Float64Array(2 * this.#lineEnds.length)
      const rows = new Int32Array(2 * this.#lineRows.length)
      ends.set(this.#lineEnds.subarray(this.#front, this.#back))
      rows.set(this.#lineRows.subarray(this.#front, this.#back))
      this.#lineEnds = ends
      this.#lineRows = rows
    }
    this.#front = 0
    this.#back = held
  }

  /** Rows a line of body bytes [from, to) (without its CR LF) takes from column 0, or -1 when that is not certain without parsing it. */
  #rowsOf(from: number, to: number, tabs: number): number {
    const len = to - from
    if (len + 7 * tabs <= this.#cols) return 1
    if (tabs > 0 || !this.#isPrintableAscii(from, to)) return -1
    return Math.ceil(len / this.#cols)
  }

  /** True when body bytes [from, to) are printable ASCII. The line asked about is the newest, so the chunks are walked from the end. */
  #isPrintableAscii(from: number, to: number): boolean {
    let end = this.#bodyOffset + this.#bodyBytes
    for (let k = this.#body.length - 1; k >= 0 && end > from; k--) {
      const b = this.#body[k] as Buffer
      const start = end - b.length
      if (start < to) {
        const i1 = Math.min(b.length, to - start)
        for (let i = Math.max(0, from - start); i < i1; i++) {
          const c = b[i] as number
          if (c < 0x20 || c > 0x7e) return false
        }
      }
      end = start
    }
    return true
  }

  /** Skip the oldest body lines down to `keepRows` rows; false when that is not allowed or not enough. */
  #trim(canSkip: () => boolean): boolean {
    if (!this.#headEndsCrLf || !canSkip()) return false
    const ends = this.#lineEnds
    const lineRows = this.#lineRows
    const keep = this.#keepRows
    const back = this.#back
    let front = this.#front
    let held = this.#rows
    let skipped = 0
    let lines = 0
    let cut = -1
    while (front < back) {
      const rows = lineRows[front] as number
      if (held - Math.max(rows, 1) < keep) break
      if (rows < 0) break
      held -= rows
      skipped += rows
      lines++
      if (this.#spanRows < this.#screenRows) {
        this.#spans.push(rows)
        this.#spanRows += rows
      }
      cut = ends[front] as number
      front++
    }
    this.#front = front
    this.#rows = held
    this.#skippedRows += skipped
    this.#skippedLines += lines
    if (cut >= 0) this.#dropBody(cut)
    return this.#rows <= 2 * this.#keepRows && this.#bodyBytes <= this.#maxBytes
  }

  /** Drop body bytes before stream offset `cut` (a line end), remembering their SGR sequences. */
  #dropBody(cut: number): void {
    // Whole chunks go in one splice: a printer's small chunks number in the tens of thousands,
    // and removing them one by one from the front of the array would move the rest each time.
    let whole = 0
    let offset = this.#bodyOffset
    while (whole < this.#body.length && offset + (this.#body[whole] as Buffer).length <= cut) offset += (this.#body[whole++] as Buffer).length
    const gone = this.#body.splice(0, whole)
    const first = this.#body[0]
    if (first !== undefined && cut > offset) {
      gone.push(first.subarray(0, cut - offset))
      this.#body[0] = first.subarray(cut - offset)
      offset = cut
    }
    if (this.#lastEscAt >= this.#bodyOffset) this.#keepSgr(gone)
    this.#bodyBytes -= offset - this.#bodyOffset
    this.#bodyOffset = offset
  }

  /** Remember the SGR sequences of dropped bytes (`gone`, oldest first) that still set the pen: those from the last reset on. */
  #keepSgr(gone: Buffer[]): void {
    const found: string[] = []
    let isReset = false
    // Newest first; no chunk ends inside a sequence (such a chunk is not plain).
    for (let k = gone.length - 1; k >= 0 && !isReset && found.length < MAX_SGR; k--) {
      const b = gone[k] as Buffer
      for (let at = b.length; at > 0 && found.length < MAX_SGR; ) {
        at = b.lastIndexOf(0x1b, at - 1)
        if (at < 0) break
        let end = at + 2
        while (end < b.length && (b[end] as number) >= 0x30 && (b[end] as number) <= 0x3b) end++
        const seq = b.toString('latin1', at, end + 1)
        found.push(seq)
        if (SGR_RESET.test(seq)) {
          isReset = true
          break
        }
      }
    }
    found.reverse()
    this.#sgr = isReset ? found : [...this.#sgr, ...found].slice(-MAX_SGR)
  }
}
