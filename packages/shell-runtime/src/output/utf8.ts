const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true })

/** Decode UTF-8; every invalid byte sequence becomes U+FFFD. */
export function decodeUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes)
}

function isContinuation(b: number | undefined): boolean {
  return b !== undefined && (b & 0xc0) === 0x80
}

function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1
  if ((lead & 0xe0) === 0xc0) return 2
  if ((lead & 0xf0) === 0xe0) return 3
  if ((lead & 0xf8) === 0xf0) return 4
  return 1
}

/**
 * The largest end ≤ `end` that does not cut a UTF-8 character of `bytes` in two (an invalid
 * sequence is never held back, it decodes to U+FFFD either way).
 */
export function safeEnd(bytes: Uint8Array, end: number): number {
  if (end >= bytes.length || end <= 0) return Math.max(0, Math.min(end, bytes.length))
  let start = end
  // Walk back over at most three continuation bytes to the character's lead byte.
  while (start > 0 && end - start < 3 && isContinuation(bytes[start])) start--
  if (start === end) return end
  const lead = bytes[start]
  if (lead === undefined || isContinuation(lead)) return end
  return start + sequenceLength(lead) > end ? start : end
}

/** The smallest start ≥ `start` that does not begin inside a UTF-8 character of `bytes`. */
export function safeStart(bytes: Uint8Array, start: number): number {
  let s = Math.max(0, start)
  const limit = Math.min(bytes.length, s + 3)
  while (s < limit && isContinuation(bytes[s])) s++
  return s
}

/**
 * True when `text` (decoded from bytes) looks like binary data rather than text: it holds a NUL,
 * or more than a tenth of it is U+FFFD or control characters other than tab, newlines, form feed,
 * backspace and escape.
 */
export function looksBinary(bytes: Uint8Array, text: string): boolean {
  if (bytes.includes(0)) return true
  if (text.length === 0) return false
  let odd = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0xfffd || (c < 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12 && c !== 8 && c !== 27) || c === 127) odd++
  }
  return odd * 10 > text.length
}
