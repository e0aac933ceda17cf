import { Screen } from './screen.ts'

/** A line needs the emulator when it holds a control character (other than tab), a C1 control, or a carriage return before its end. */
const SPECIAL = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/
/** Leave the alternate screen, soft-reset the modes (DECSTR), clear the screen and the history, home the cursor. */
const RESET = '\x1b[?1049l\x1b[!p\x1b[H\x1b[2J\x1b[3J'
/** Erase in display: on a page of output it would wipe what came before, so it is dropped, not drawn. */
const ERASE_DISPLAY = /\x1b\[[0-9;?]*J|\x9b[0-9;?]*J/g
/** A printable one-column character that stands in for a tab while a line goes through the emulator. */
const TAB_STAND_IN = '\ue000'

const TRAILING_SPACES = / +$/

let screen: Screen | null = null

/** What a terminal shows for one line (the line itself or, after cursor movement, several). */
function render(line: string): string {
  screen ??= new Screen({ cols: 200, rows: 50, scrollback: 1000, isHoldingBack: false })
  const keepTabs = line.includes('\t') && !line.includes(TAB_STAND_IN)
  const drawn = line.replace(ERASE_DISPLAY, '')
  screen.push(Buffer.from(RESET + (keepTabs ? drawn.replaceAll('\t', TAB_STAND_IN) : drawn)))
  const shown = screen
    .peek()
    .map((l) => l.replace(TRAILING_SPACES, ''))
    .join('\n')
  return keepTabs ? shown.replaceAll(TAB_STAND_IN, '\t') : shown
}

/**
 * Text as a person reads it on a terminal, for output that went through pipes: each line with
 * escape sequences or control characters is drawn by a headless terminal (colours, titles,
 * clipboard writes, hyperlinks, DCS strings and screen clears vanish; carriage-return and
 * backspace redraws show their final state; trailing blanks are trimmed); plain lines, tabs and
 * trailing blanks of plain lines stay exactly as they were.
 */
export function cleanText(text: string): { text: string; isCleaned: boolean } {
  if (!SPECIAL.test(text.replaceAll('\n', ''))) return { text, isCleaned: false }
  const lines = text.split('\n')
  let isCleaned = false
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i] as string
    const crlf = line.endsWith('\r') && i < lines.length - 1
    if (crlf) line = line.slice(0, -1)
    if (!SPECIAL.test(line)) {
      if (crlf) {
        lines[i] = line
        isCleaned = true
      }
      continue
    }
    lines[i] = render(line)
    isCleaned = true
  }
  return { text: lines.join('\n'), isCleaned }
}
