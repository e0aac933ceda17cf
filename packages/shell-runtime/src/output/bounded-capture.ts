import { writeFileSync } from 'node:fs'
import { cleanText } from '../screen/clean-text.ts'
import { revealInvisible } from '../screen/reveal.ts'
import { Spool } from './spool.ts'
import type { SpoolAccount, SpoolBudget } from './spool-budget.ts'
import { decodeUtf8, looksBinary, safeEnd, safeStart } from './utf8.ts'

/** What a bounded capture kept of one stream. */
export interface CapturedStream {
  /** Head and tail as text, with one inline marker where the middle was omitted. */
  text: string
  /** Bytes the stream carried. */
  totalBytes: number
  /** Bytes replaced by the marker (0 when the text is the whole stream). */
  omittedBytes: number
  /** The file holding the whole stream, or null when the text is the whole stream and it is not binary. */
  spoolPath: string | null
  /** True when the stream looks like binary data. */
  isBinary: boolean
  /** Why the whole stream could not be kept on disk, or null. */
  spoolError: string | null
  /** True when the text was cleaned for reading (escape sequences, redraws); the raw bytes are then in the spool file. */
  isCleaned: boolean
  /** What the session's spool budget did with the file (capped, removed since, room made), or null without a file. */
  spool: SpoolAccount | null
}

const NEWLINE = 10

function concat(chunks: Buffer[], total: number): Buffer {
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total)
}

/**
 * One output stream kept as a head and a tail in memory while every byte is spooled to a file
 * once the stream outgrows both (SPEC §3, output bounding). Memory stays at most
 * head + tail + one chunk, plus the spool's bounded queue.
 */
export class BoundedCapture {
  readonly #headBytes: number
  readonly #tailBytes: number
  readonly #spoolPath: string
  #total = 0
  /** Every byte, while the stream fits in head + tail. */
  #early: Buffer[] | null = []
  #head: Buffer = Buffer.alloc(0)
  #tail: Buffer[] = []
  #tailLen = 0
  #spool: Spool | null = null
  readonly #isCleaning: boolean
  readonly #budget: SpoolBudget
  #account: SpoolAccount | null = null

  /**
   * `isCleaning`: draw lines with escape sequences as a terminal shows them; false
   * keeps the decoded text as it is. Spool files are admitted by the session's `budget`.
   */
  constructor(headBytes: number, tailBytes: number, spoolPath: string, isCleaning: boolean, budget: SpoolBudget) {
    this.#headBytes = headBytes
    this.#tailBytes = tailBytes
    this.#spoolPath = spoolPath
    this.#isCleaning = isCleaning
    this.#budget = budget
  }

  #clean(text: string): { text: string; isCleaned: boolean } {
    if (!this.#isCleaning) return { text, isCleaned: false }
    const drawn = cleanText(text)
    const shown = revealInvisible(drawn.text)
    return { text: shown.text, isCleaned: drawn.isCleaned || shown.isRevealed }
  }

  /** Bytes seen so far. */
  get totalBytes(): number {
    return this.#total
  }

  /** Take a chunk; false when the producer should pause until `drained()` resolves. */
  push(chunk: Buffer): boolean {
    this.#total += chunk.length
    if (this.#early !== null) {
      this.#early.push(chunk)
      if (this.#total <= this.#headBytes + this.#tailBytes) return true
      // The stream outgrew head + tail: start the spool with everything so far.
      const all = concat(this.#early, this.#total)
      this.#early = null
      this.#head = Buffer.from(all.subarray(0, this.#headBytes))
      this.#tail = [all.subarray(this.#headBytes)]
      this.#tailLen = all.length - this.#headBytes
      this.#trimTail()
      this.#account = this.#budget.open(this.#spoolPath)
      return this.#toSpool(all)
    }
    this.#tail.push(chunk)
    this.#tailLen += chunk.length
    this.#trimTail()
    return this.#toSpool(chunk)
  }

  /** Spool what the budget admits of `chunk`; the file is created with its first admitted byte. */
  #toSpool(chunk: Buffer): boolean {
    const n = this.#account === null ? chunk.length : this.#budget.take(this.#account, chunk.length)
    if (n === 0) return true
    this.#spool ??= new Spool(this.#spoolPath)
    return this.#spool.write(n < chunk.length ? chunk.subarray(0, n) : chunk)
  }

  /** Resolve when the spool can take more. */
  drained(): Promise<void> {
    return this.#spool === null ? Promise.resolve() : this.#spool.drained()
  }

  #trimTail(): void {
    for (;;) {
      const first = this.#tail[0]
      if (first === undefined || this.#tailLen - first.length < this.#tailBytes) break
      this.#tail.shift()
      this.#tailLen -= first.length
    }
  }

  /** Finish the stream: flush the spool and render the kept text. */
  async finish(): Promise<CapturedStream> {
    if (this.#early !== null) {
      const all = concat(this.#early, this.#total)
      const decoded = decodeUtf8(all)
      const isBinary = looksBinary(all, decoded)
      const { text, isCleaned } = this.#clean(decoded)
      let spoolPath: string | null = null
      let spoolError: string | null = null
      if (isBinary || isCleaned) {
        // The text shown is not the bytes, so keep the exact bytes where the note can point.
        this.#account = this.#budget.open(this.#spoolPath)
        const n = this.#account === null ? all.length : this.#budget.take(this.#account, all.length)
        try {
          if (n > 0) {
            writeFileSync(this.#spoolPath, all.subarray(0, n), { mode: 0o600 })
            spoolPath = this.#spoolPath
          }
        } catch (err) {
          spoolError = (err as Error).message
        }
        this.#closeAccount()
      }
      return { text, totalBytes: this.#total, omittedBytes: 0, spoolPath, isBinary, spoolError, isCleaned, spool: this.#account }
    }
    const spool = this.#spool
    await spool?.close()
    this.#closeAccount()
    const tailAll = concat(this.#tail, this.#tailLen)
    // The tail window: the last tailBytes of the stream.
    let tailFrom = Math.max(0, tailAll.length - this.#tailBytes)
    tailFrom = safeStart(tailAll, tailFrom)
    const nlTail = tailAll.indexOf(NEWLINE, tailFrom)
    if (nlTail >= 0 && nlTail + 1 < tailAll.length && nlTail - tailFrom < this.#tailBytes / 2) tailFrom = nlTail + 1
    let headTo = safeEnd(this.#head, this.#head.length)
    const nlHead = this.#head.lastIndexOf(NEWLINE, headTo - 1)
    if (nlHead >= 0 && headTo - (nlHead + 1) < this.#headBytes / 2) headTo = nlHead + 1
    const head = this.#head.subarray(0, headTo)
    const tail = tailAll.subarray(tailFrom)
    const omitted = this.#total - head.length - tail.length
    const headRaw = decodeUtf8(head)
    const tailRaw = decodeUtf8(tail)
    const headClean = this.#clean(headRaw)
    const tailClean = this.#clean(tailRaw)
    const headText = headClean.text
    const tailText = tailClean.text
    const marker = `[… ${omitted} bytes omitted …]\n`
    const text = headText + (headText === '' || headText.endsWith('\n') ? '' : '\n') + marker + tailText
    const isBinary = looksBinary(head, headRaw) || looksBinary(tail, tailRaw)
    return {
      text,
      totalBytes: this.#total,
      omittedBytes: omitted,
      spoolPath: spool !== null && spool.error === null ? spool.path : null,
      isBinary,
      spoolError: spool?.error ? spool.error.message : null,
      isCleaned: headClean.isCleaned || tailClean.isCleaned,
      spool: this.#account,
    }
  }

  #closeAccount(): void {
    if (this.#account !== null) this.#budget.close(this.#account)
  }
}
