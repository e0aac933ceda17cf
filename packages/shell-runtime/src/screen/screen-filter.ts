/**
 * What a person attached to a background shell may receive of its output: only what draws a
 * screen. A program's bytes go to the person's own terminal, so anything else there acts on that
 * terminal for the program: setting the clipboard (OSC 52), the title, colours or hyperlinks
 * (every OSC), device control strings (DCS: DECRQSS, XTGETTCAP), and queries whose answers the
 * person's terminal types back as input to the shell (device attributes, status and cursor
 * reports, window reports such as `CSI 21 t` with the title in it, mode reports, ENQ's answerback).
 *
 * Passed: printable text (UTF-8; C1 code points and invalid bytes become U+FFFD), BEL, BS, HT,
 * LF, VT, FF, CR, SO, SI; escape sequences that move the cursor, pick character sets, set keypad
 * modes and reset; CSI sequences that move, erase, insert, delete, scroll, set tab stops, colours
 * and attributes (SGR), screen modes (SM/RM, DECSET/DECRST: alternate screen, cursor keys, mouse
 * and paste modes, which only shape what the person's own keys and mouse send) and the cursor
 * style. A sequence with a number over 9999 is dropped (a repeat count that large would hang a
 * terminal). Everything else is dropped whole, however it is split across chunks.
 */

// Parser states.
const GROUND = 0
const ESCAPE = 1
const ESCAPE_INTERMEDIATE = 2
const CSI = 3
/** Inside a CSI that will be dropped (too long): skip to its final byte. */
const CSI_IGNORE = 4
/** OSC, DCS, SOS, PM, APC: skipped to BEL or ST. */
const STRING = 5
/** ESC inside a string: `\` ends the string, anything else starts a new sequence. */
const STRING_ESCAPE = 6

/** Final bytes of CSI sequences without a private prefix or intermediate that only draw. */
const CSI_PLAIN = new Set('@ABCDEFGHIJKLMPSTXZ`abdefghlmrsu'.split('').map((c) => c.charCodeAt(0)))
/** With the `?` prefix: DECSET, DECRST, selective erase. */
const CSI_PRIVATE = new Set('hlJK'.split('').map((c) => c.charCodeAt(0)))
/** ESC + final: save/restore cursor, keypad modes, index, next line, tab set, reverse index, reset, shifts. */
const ESC_FINALS = new Set('78=>DEHMcNOno|}~69'.split('').map((c) => c.charCodeAt(0)))
/** ESC + intermediate + final: character set designations. */
const ESC_DESIGNATE = new Set('()*+-./'.split('').map((c) => c.charCodeAt(0)))
const MAX_SEQUENCE = 64
const MAX_NUMBER = 9999
const ESC = 0x1b

/** A stateful filter over one stream of terminal output (sequences may be split across chunks). */
export class ScreenFilter {
  #state = GROUND
  /** The escape or CSI sequence being collected (written whole when it is allowed). */
  #seq: number[] = []
  /** A UTF-8 character being collected, and how many more bytes it needs. */
  #utf8: number[] = []
  #need = 0
  #out: Buffer = Buffer.alloc(0)
  #at = 0

  /** The part of `chunk` a screen may show, given everything pushed before. */
  push(chunk: Uint8Array): Buffer {
    // The output is never longer than 3 bytes per input byte (U+FFFD for one bad byte) plus a held sequence.
    this.#out = Buffer.allocUnsafe(chunk.length * 3 + MAX_SEQUENCE + 8)
    this.#at = 0
    let i = 0
    while (i < chunk.length) {
      if (this.#state === GROUND && this.#need === 0) {
        // Fast path: a run of printable ASCII is copied as it is.
        let j = i
        while (j < chunk.length && (chunk[j] as number) >= 0x20 && (chunk[j] as number) < 0x7f) j++
        if (j > i) {
          this.#out.set(chunk.subarray(i, j), this.#at)
          this.#at += j - i
          i = j
          continue
        }
      }
      this.#byte(chunk[i] as number)
      i++
    }
    return this.#out.subarray(0, this.#at)
  }

  #emit(b: number): void {
    this.#out[this.#at++] = b
  }

  #emitAll(bytes: readonly number[]): void {
    for (const b of bytes) this.#out[this.#at++] = b
  }

  #replacement(): void {
    this.#emitAll([0xef, 0xbf, 0xbd])
  }

  #byte(b: number): void {
    if (this.#need > 0) {
      if ((b & 0xc0) === 0x80) {
        this.#utf8.push(b)
        if (--this.#need === 0) this.#character()
        return
      }
      // A broken character: say so, then read this byte afresh.
      this.#need = 0
      this.#utf8 = []
      this.#replacement()
    }
    switch (this.#state) {
      case GROUND:
        this.#ground(b)
        return
      case ESCAPE:
        this.#escape(b)
        return
      case ESCAPE_INTERMEDIATE:
        this.#escapeIntermediate(b)
        return
      case CSI:
      case CSI_IGNORE:
        this.#csi(b)
        return
      case STRING:
        if (b === 0x07 || b === 0x18 || b === 0x1a) this.#state = GROUND
        else if (b === ESC) this.#state = STRING_ESCAPE
        return
      default:
        // STRING_ESCAPE: `\` ends the string; anything else is a new escape sequence.
        this.#state = GROUND
        if (b === 0x5c) return
        this.#ground(ESC)
        this.#byte(b)
    }
  }

  #ground(b: number): void {
    if (b === ESC) {
      this.#state = ESCAPE
      this.#seq = [ESC]
      return
    }
    if (b < 0x20) {
      // BEL, BS, HT, LF, VT, FF, CR, SO, SI; not NUL, ENQ (it asks for the answerback) and the rest.
      if (b === 0x07 || (b >= 0x08 && b <= 0x0f)) this.#emit(b)
      return
    }
    if (b < 0x7f) {
      this.#emit(b)
      return
    }
    if (b === 0x7f) return
    // UTF-8: a lead byte, then the continuation bytes it needs.
    const need = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : 0
    if (need === 0) {
      this.#replacement()
      return
    }
    this.#utf8 = [b]
    this.#need = need
  }

  #character(): void {
    const text = Buffer.from(this.#utf8).toString('utf8')
    this.#utf8 = []
    const code = text.codePointAt(0) ?? 0xfffd
    // C1 controls written as UTF-8 (U+0080–U+009F) are CSI, OSC, DCS… to some terminals.
    if (code >= 0x80 && code <= 0x9f) this.#replacement()
    else this.#emitAll([...Buffer.from(text, 'utf8')])
  }

  /** A C0 control inside a sequence: CAN and SUB cancel it, ESC starts another, the rest act at once. */
  #controlInSequence(b: number): boolean {
    if (b >= 0x20) return false
    if (b === 0x18 || b === 0x1a) this.#state = GROUND
    else this.#ground(b)
    return true
  }

  #escape(b: number): void {
    if (this.#controlInSequence(b)) return
    if (b === 0x5b /* [ */) {
      this.#state = CSI
      this.#seq.push(b)
      return
    }
    // OSC ], DCS P, SOS X, PM ^, APC _: strings, dropped whole.
    if (b === 0x5d || b === 0x50 || b === 0x58 || b === 0x5e || b === 0x5f) {
      this.#state = STRING
      return
    }
    if (b >= 0x20 && b <= 0x2f) {
      this.#state = ESCAPE_INTERMEDIATE
      this.#seq.push(b)
      return
    }
    this.#state = GROUND
    // ESC Z (it asks for the terminal's identity) and any other final are dropped; a byte past
    // 0x7e ends the sequence and is read as text.
    if (b <= 0x7e && ESC_FINALS.has(b)) this.#emitAll([ESC, b])
    else if (b > 0x7e) this.#ground(b)
  }

  #escapeIntermediate(b: number): void {
    if (this.#controlInSequence(b)) return
    if (b >= 0x20 && b <= 0x2f) {
      this.#seq.push(b)
      if (this.#seq.length > MAX_SEQUENCE) this.#state = CSI_IGNORE
      return
    }
    this.#state = GROUND
    if (b < 0x30 || b > 0x7e) {
      this.#ground(b)
      return
    }
    const seq = this.#seq
    const first = seq[1] as number
    const isDesignate = seq.length === 2 && ESC_DESIGNATE.has(first)
    // DECDHL, DECSWL, DECDWL, DECALN.
    const isLineSize = seq.length === 2 && first === 0x23 /* # */ && b >= 0x33 && b <= 0x38
    if (isDesignate || isLineSize) this.#emitAll([...seq, b])
  }

  #csi(b: number): void {
    if (this.#controlInSequence(b)) return
    if (b >= 0x20 && b <= 0x3f) {
      if (this.#state === CSI) this.#seq.push(b)
      if (this.#seq.length > MAX_SEQUENCE) this.#state = CSI_IGNORE
      return
    }
    const isIgnored = this.#state === CSI_IGNORE
    this.#state = GROUND
    if (b > 0x7e) {
      this.#ground(b)
      return
    }
    if (!isIgnored && csiAllowed(this.#seq, b)) this.#emitAll([...this.#seq, b])
  }
}

/** True when the CSI sequence `seq` (ESC [ params intermediates) ending in `final` only draws. */
function csiAllowed(seq: number[], final: number): boolean {
  const body = seq.slice(2)
  const prefix = body.length > 0 && body[0] !== undefined && body[0] >= 0x3c && body[0] <= 0x3f ? body[0] : null
  const params = prefix === null ? body : body.slice(1)
  const firstIntermediate = params.findIndex((c) => c >= 0x20 && c <= 0x2f)
  const numbers = firstIntermediate < 0 ? params : params.slice(0, firstIntermediate)
  const intermediates = firstIntermediate < 0 ? [] : params.slice(firstIntermediate)
  // Parameters are digits, `;` and `:` only, and intermediates come last.
  if (numbers.some((c) => !((c >= 0x30 && c <= 0x39) || c === 0x3b || c === 0x3a))) return false
  if (intermediates.some((c) => c > 0x2f)) return false
  for (const n of String.fromCharCode(...numbers).split(/[;:]/)) if (n !== '' && Number(n) > MAX_NUMBER) return false
  if (intermediates.length === 0) {
    if (prefix === null) return CSI_PLAIN.has(final)
    return prefix === 0x3f /* ? */ && CSI_PRIVATE.has(final)
  }
  // DECSCUSR (cursor style), SL / SR (scroll left / right): one space, no prefix.
  return prefix === null && intermediates.length === 1 && intermediates[0] === 0x20 && (final === 0x71 || final === 0x40 || final === 0x41)
}
