/** Control characters, format characters (bidi overrides, zero-width) and line separators, plus the quote and the escape itself. */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}"\\]/gu

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '"': '\\"', '\\': '\\\\' }

function escapeOne(c: string): string {
  const named = NAMED[c]
  if (named !== undefined) return named
  const code = c.codePointAt(0) as number
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`
}

/**
 * A path as a person should see it: in double quotes, on one line, with every character that
 * could move the cursor, clear or recolour the screen, reorder text or hide itself written as an
 * escape (`\n`, `\x1b`, `\u{202e}`), so a file name cannot forge or hide the text around it.
 */
export function visiblePath(path: string): string {
  return `"${path.replace(HIDDEN, escapeOne)}"`
}

/**
 * Text from outside hands (a command, a shell id) as a person should see it on one line: every
 * character that could move the cursor, clear or recolour the screen, reorder text or hide itself
 * written as an escape, as visiblePath does, without the quotes.
 */
export function visibleText(text: string): string {
  return text.replace(HIDDEN_TEXT, escapeOne)
}

/** HIDDEN without the quote. */
const HIDDEN_TEXT = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\\]/gu

/** Bytes as a person reads them: exact, with a binary unit beside from 1 KiB on. */
export function sizeText(bytes: number): string {
  const exact = `${bytes} byte${bytes === 1 ? '' : 's'}`
  if (bytes < 1024) return exact
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${exact} (${value.toFixed(1)} ${units[unit]})`
}
