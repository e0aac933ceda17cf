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
  const e = Math.max(0, Math.min(end, bytes.length))
  // The lead byte of the last character before `e`: back over at most three continuation bytes.
  let start = e - 1
  while (start > 0 && e - start < 4 && isContinuation(bytes[start])) start--
  const lead = bytes[start]
  if (start < 0 || lead === undefined || isContinuation(lead)) return e
  return start + sequenceLength(lead) > e ? start : e
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
 * or more than 30% of it is U+FFFD or control characters other than tab, newlines, form feed,
 * backspace and escape (so text with a few invalid bytes, such as Latin-1, stays text).
 */
export function looksBinary(bytes: Uint8Array, text: string): boolean {
  if (bytes.includes(0)) return true
  if (text.length === 0) return false
  let odd = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0xfffd || (c < 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12 && c !== 8 && c !== 27) || c === 127) odd++
  }
  return odd * 10 > text.length * 3
}
