import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { Screen, type ScreenOptions } from '../src/screen/screen.ts'

const made: Screen[] = []
afterEach(() => {
  for (const s of made.splice(0)) s.dispose()
})

function screen(options: Partial<ScreenOptions> = {}): Screen {
  const s = new Screen({ cols: 200, rows: 50, scrollback: 1000, ...options })
  made.push(s)
  return s
}

function fed(text: string | Buffer, options: Partial<ScreenOptions> = {}): Screen {
  const s = screen(options)
  s.push(typeof text === 'string' ? Buffer.from(text) : text)
  return s
}

describe('screen', () => {
  it('moves the cursor like a terminal: printf "abc\\e[2Dxy" reads axy', () => {
    expect(fed('abc\x1b[2Dxy').read(10).lines).toEqual(['axy'])
  })

  it('reads a full-screen program as its screen rows, and says so', () => {
    const s = fed('before\r\n\x1b[?1049h\x1b[2J\x1b[5;10HHELLO\x1b[6;10HWORLD')
    const r = s.read(200)
    expect(r.isAlternate).toBe(true)
    expect(r.lines).toEqual(['', '', '', '', '         HELLO', '         WORLD'])
    s.push(Buffer.from('\x1b[?1049l'))
    expect(s.read(200)).toMatchObject({ lines: ['before'], isAlternate: false })
  })

  it('shows a two-line progress redrawn with cursor-up as its final state', () => {
    expect(fed('a 1\r\nb 1\r\n\x1b[2A\x1b[Ka 2\r\n\x1b[Kb 2\r\n').read(10).lines).toEqual(['a 2', 'b 2'])
  })

  it('strips escapes, collapses carriage-return redraws, keeps a prompt up to the cursor', () => {
    const s = fed('\x1b[1;31merror\x1b[0m: \x1b]0;title\x07bad\r\n10%\r20%\r100% done\r\n>>> ')
    expect(s.read(10).lines).toEqual(['error: bad', '100% done', '>>> '])
  })

  it('joins a long line that wrapped into one line', () => {
    const long = 'x'.repeat(450)
    expect(fed(`${long}\r\nnext\r\n`).read(10).lines).toEqual([long, 'next'])
  })

  it('returns the last n lines, and rows that scrolled out of the history unseen as dropped', () => {
    const s = screen({ scrollback: 100 })
    s.push(Buffer.from(Array.from({ length: 300 }, (_, i) => `${i + 1}\r\n`).join('')))
    // 300 rows plus the cursor's empty one into 100 + 50: rows 1–151 are gone.
    const first = s.read(3)
    expect(first).toMatchObject({ lines: ['298', '299', '300'], dropped: 151 })
    s.push(Buffer.from(Array.from({ length: 10 }, (_, i) => `${i + 301}\r\n`).join('')))
    // 152–161 evicted, none of them returned.
    expect(s.read(1)).toMatchObject({ lines: ['310'], dropped: 10 })
    expect(s.read(1).dropped).toBe(0)
  })

  it('skips plain lines nobody read and counts them exactly as dropped', () => {
    const s = screen({ scrollback: 100 })
    const lines = 100_000
    for (let i = 0; i < lines; i += 1000) {
      s.push(Buffer.from(Array.from({ length: 1000 }, (_, j) => `line ${i + j + 1}\r\n`).join('')))
    }
    // 100 rows of history and the screen hold 150 rows, the last the cursor's empty one.
    const r = s.read(1000)
    expect(r.lines).toHaveLength(149)
    expect(r.lines[0]).toBe('line 99852')
    expect(r.lines.at(-1)).toBe('line 100000')
    expect(r.dropped).toBe(lines + 1 - 150)
    expect(s.stats.parsed).toBeLessThan(s.stats.received / 10)
  })

  it('never holds back bytes that finish an escape sequence split across chunks', () => {
    const s = screen({ scrollback: 20, cols: 80, rows: 24 })
    s.push(Buffer.from('\x1b[?10'))
    s.push(Buffer.from(`49h${Array.from({ length: 500 }, (_, i) => `alt ${i}\r\n`).join('')}`))
    const r = s.read(5)
    expect(r).toMatchObject({ isAlternate: true, dropped: 0 })
    expect(r.lines.at(-1)).toBe('alt 499')
  })

  it('reads the same screen, lines and drops whether plain lines were held back or parsed at once', () => {
    const plain = fc.oneof(
      fc.constantFrom('short line\r\n', '\r\n', '\x1b[32mgreen\x1b[0m ok\r\n', 'tab\there\r\n', 'spin |\b/\b-\r\n', 'über ✓\r\n', '10%\r20%\r\n'),
      fc.integer({ min: 150, max: 700 }).map((n) => `${'y'.repeat(n)}\r\n`),
      fc.integer({ min: 1, max: 40 }).map((n) => `${'z'.repeat(n)}`),
    )
    const other = fc.constantFrom(
      '\x1b[1m',
      '\x1b[2A\x1b[K',
      'bare\n',
      '\x1b[?1049h',
      '\x1b[?1049l',
      '\x1b[3;20r',
      '\x1b[r',
      '\x1bc',
      '\x1b[?7l',
      '\x1b[?7h',
      '\x1b[6n',
    )
    const piece = fc.oneof({ arbitrary: plain, weight: 200 }, { arbitrary: other, weight: 1 })
    let skippedSome = false
    const stream = fc.array(
      fc.tuple(
        fc.oneof(fc.array(plain, { minLength: 1, maxLength: 400, size: 'max' }), fc.array(piece, { minLength: 1, maxLength: 400, size: 'max' })),
        fc.boolean(),
      ),
      { minLength: 1, maxLength: 8 },
    )
    fc.assert(
      fc.property(stream, fc.integer({ min: 20, max: 120 }), (chunks, scrollback) => {
        const opts = { cols: 80, rows: 24, scrollback }
        const lazy = new Screen(opts)
        const eager = new Screen({ ...opts, isHoldingBack: false })
        try {
          for (const [pieces, isRead] of chunks) {
            const bytes = Buffer.from(pieces.join(''))
            for (let i = 0; i < bytes.length; i += 777) {
              lazy.push(bytes.subarray(i, i + 777))
              eager.push(bytes.subarray(i, i + 777))
            }
            if (isRead) expect(lazy.read(60)).toEqual(eager.read(60))
          }
          expect(lazy.view()).toEqual(eager.view())
          expect(lazy.peek()).toEqual(eager.peek())
          expect(lazy.read(1000)).toEqual(eager.read(1000))
          skippedSome ||= lazy.stats.parsed < lazy.stats.received
        } finally {
          lazy.dispose()
          eager.dispose()
        }
      }),
      { numRuns: 60 },
    )
    expect(skippedSome).toBe(true)
  })

  it('answers a program asking where the cursor is', () => {
    const replies: string[] = []
    const s = screen({ onReply: (d) => replies.push(d) })
    s.push(Buffer.from('ab\x1b[6n'))
    expect(replies).toEqual(['\x1b[1;3R'])
  })
})
