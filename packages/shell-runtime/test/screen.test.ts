import { CUT_LINE_MARK } from '@hands/contracts'
import fc from 'fast-check'
import { afterEach, describe, expect, it, onTestFinished } from 'vitest'
import { isPlain, useSimdScan } from '../src/screen/plain-tail.ts'
import { Screen, type ScreenOptions } from '../src/screen/screen.ts'
import { everyChunk } from './helpers.ts'

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

  it('counts a long line that wrapped as one dropped line, and marks the line whose start left the history', () => {
    // 40 lines of 450 characters take 3 rows each at 200 columns; 100 + 50 rows keep 49 2/3 lines.
    const s = screen({ scrollback: 100 })
    const line = (i: number) => `${String(i).padStart(3, '0')}${'x'.repeat(447)}`
    s.push(Buffer.from(Array.from({ length: 40 }, (_, i) => `${line(i)}\r\n`).join('')))
    expect(s.read(1000)).toMatchObject({ dropped: 0 })
    s.push(Buffer.from(Array.from({ length: 20 }, (_, i) => `${line(40 + i)}\r\n`).join('')))
    // 181 rows (60 lines and the cursor's row) into 150: rows 0–30 left, lines 0–9 whole and the
    // first row of line 10; lines 0–9 were returned by the first read.
    const r = s.read(1000)
    expect(r.dropped).toBe(0)
    expect(r.lines).toHaveLength(50)
    expect(r.lines[0]).toBe(`${CUT_LINE_MARK}${line(10).slice(200)}`)
    expect(r.lines.slice(1)).toEqual(Array.from({ length: 49 }, (_, i) => line(11 + i)))
    s.push(Buffer.from(Array.from({ length: 100 }, (_, i) => `${line(60 + i)}\r\n`).join('')))
    // 300 more rows: lines 10–109 and a row of 110 left; 10–59 were returned, 60–109 were not.
    const next = s.read(1)
    expect(next).toMatchObject({ dropped: 50, lines: [line(159)] })
    expect(s.read(1000).lines[0]).toBe(`${CUT_LINE_MARK}${line(110).slice(200)}`)
  })

  it('counts a line returned only in part, its start already gone, as returned', () => {
    const s = screen({ scrollback: 10, cols: 80, rows: 5 })
    // One line of 30 rows: the history keeps its last 15 (14 and the cursor's row).
    s.push(Buffer.from(`${'a'.repeat(80 * 30)}\r\n`))
    const r = s.read(10)
    expect(r.lines).toEqual([`${CUT_LINE_MARK}${'a'.repeat(80 * 14)}`])
    expect(r.dropped).toBe(0)
    s.push(Buffer.from('b\r\n'.repeat(20)))
    expect(s.read(1)).toMatchObject({ lines: ['b'], dropped: 6 })
  })

  it('counts lines, not rows, when the program clears the scrollback or resets the terminal', () => {
    for (const clear of ['\x1b[3J', '\x1b[?3J', '\x1bc']) {
      const s = screen({ scrollback: 100, cols: 80, rows: 10 })
      // 20 lines of 3 rows each and the cursor's row, nothing read: ED 3 drops the 51 rows above
      // the screen at once (lines 1–17), a reset all of them.
      s.push(Buffer.from(`${'y'.repeat(200)}\r\n`.repeat(20)))
      s.push(Buffer.from(clear))
      const lost = clear === '\x1bc' ? 20 : 17
      expect(s.read(1000).dropped, JSON.stringify(clear)).toBe(lost)
    }
  })

  it('counts dropped lines and cuts lines exactly as a model of the history says, held back or not', () => {
    // Plain printable lines only: each takes max(1, ceil(length / cols)) rows; the history keeps
    // the last scrollback + rows rows, the cursor's empty row the last of them.
    const cols = 40
    const rows = 8
    let skippedSome = false
    const lineLength = fc.oneof(fc.integer({ min: 0, max: 45 }), fc.integer({ min: 80, max: 400 }))
    const step = fc.oneof(
      { arbitrary: fc.array(lineLength, { minLength: 1, maxLength: 300 }).map((lengths) => ({ lengths })), weight: 4 },
      { arbitrary: fc.integer({ min: 1, max: 80 }).map((n) => ({ n })), weight: 1 },
    )
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), fc.integer({ min: 5, max: 60 }), fc.boolean(), (steps, scrollback, isHoldingBack) => {
        const s = new Screen({ cols, rows, scrollback, isHoldingBack })
        const capacity = scrollback + rows
        const spans: Array<{ start: number; rows: number; text: string }> = []
        let total = 0
        const seen = new Set<number>()
        let counted = 0
        try {
          for (const st of steps) {
            if ('lengths' in st) {
              const texts = st.lengths.map((len) =>
                String(spans.length + 1)
                  .repeat(len)
                  .slice(0, len),
              )
              for (const text of texts) {
                spans.push({ start: total, rows: Math.max(1, Math.ceil(text.length / cols)), text })
                total += Math.max(1, Math.ceil(text.length / cols))
              }
              const bytes = Buffer.from(texts.map((t) => `${t}\r\n`).join(''))
              for (let i = 0; i < bytes.length; i += 501) s.push(bytes.subarray(i, i + 501))
              continue
            }
            const gone = Math.max(0, total + 1 - capacity)
            const kept = spans.map((l, i) => ({ ...l, i })).filter((l) => l.start + l.rows > gone)
            const gone_ = spans.map((l, i) => ({ ...l, i })).filter((l) => l.start + l.rows <= gone)
            const dropped = gone_.filter((l) => !seen.has(l.i)).length - counted
            counted += dropped
            const shown = kept.slice(-st.n)
            for (const l of shown) seen.add(l.i)
            const expected = shown.map((l) => (l.start < gone ? `${CUT_LINE_MARK}${l.text.slice((gone - l.start) * cols)}` : l.text))
            expect(s.read(st.n)).toEqual({ lines: expected, dropped, isAlternate: false })
          }
          skippedSome ||= s.stats.parsed < s.stats.received
        } finally {
          s.dispose()
        }
      }),
      { numRuns: 150 },
    )
    expect(skippedSome).toBe(true)
  })

  it('keeps the colours skipped lines left set, however the output was cut into chunks', () => {
    const bytes = Buffer.from(`first\r\n\x1b[1;31mred\r\n\x1b[44mon blue\r\n${Array.from({ length: 3000 }, (_, i) => `line ${i}\r\n`).join('')}`)
    for (const size of [7, 50, 101, 4096]) {
      const lazy = screen({ scrollback: 100, cols: 80, rows: 24 })
      const eager = screen({ scrollback: 100, cols: 80, rows: 24, isHoldingBack: false })
      for (let i = 0; i < bytes.length; i += size) {
        lazy.push(bytes.subarray(i, i + size))
        eager.push(bytes.subarray(i, i + size))
      }
      expect(lazy.snapshot()).toEqual(eager.snapshot())
      // Red on blue, set only by lines long skipped, still colours the lines after them.
      expect(lazy.snapshot()).toMatch(/^\x1b\[[\d;]*44[\d;]*mline 2\d{3}/)
      expect(lazy.stats.parsed).toBeLessThan(lazy.stats.received / 2)
      lazy.dispose()
      eager.dispose()
    }
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
      // Colours left set for the lines after them (and a reset).
      fc.constantFrom('\x1b[31mred\r\n', '\x1b[1;44mbold on blue\r\n', '\x1b[mplain again\r\n'),
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
      fc.property(stream, fc.integer({ min: 20, max: 120 }), fc.constantFrom(13, 777, 4096), (chunks, scrollback, size) => {
        const opts = { cols: 80, rows: 24, scrollback }
        const lazy = new Screen(opts)
        const eager = new Screen({ ...opts, isHoldingBack: false })
        try {
          for (const [pieces, isRead] of chunks) {
            const bytes = Buffer.from(pieces.join(''))
            for (let i = 0; i < bytes.length; i += size) {
              lazy.push(bytes.subarray(i, i + size))
              eager.push(bytes.subarray(i, i + size))
            }
            if (isRead) expect(lazy.read(60)).toEqual(eager.read(60))
          }
          // The snapshot carries the pen (colours) too: what skipped lines left set must be set.
          expect(lazy.snapshot()).toEqual(eager.snapshot())
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

  it('parses held lines once output pauses with nobody reading, and not while it keeps coming', async () => {
    const s = screen({ quietMs: 100 })
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
    s.push(Buffer.from('first\r\n'))
    // Chunks closer together than quietMs keep the lines held (each push moves the deadline).
    const started = performance.now()
    let pushes = 0
    while (performance.now() - started < 300) {
      await sleep(10)
      s.push(Buffer.from(`line ${pushes++}\r\n`))
    }
    const { received, parsed } = s.stats
    // The last chunk came just now: held, whatever a loaded machine did to the timers before.
    expect(parsed).toBeLessThan(received)
    for (let waited = 0; s.stats.parsed < received && waited < 5000; waited += 20) await sleep(20)
    expect(s.stats.parsed).toBe(received)
    expect(s.view().rows.slice(0, 2)).toEqual(['first', 'line 0'])
  })

  it('answers a program asking where the cursor is', () => {
    const replies: string[] = []
    const s = screen({ onReply: (d) => replies.push(d) })
    s.push(Buffer.from('ab\x1b[6n'))
    expect(replies).toEqual(['\x1b[1;3R'])
  })
})

describe('the plain-bytes check', () => {
  /** The rule byte by byte: BEL BS TAB LF CR and printable bytes; ESC only in a complete SGR; no C1 control. */
  function isPlainByteByByte(b: Uint8Array): boolean {
    for (let i = 0; i < b.length; i++) {
      const c = b[i] as number
      if (c === 0x07 || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0d) continue
      if (c === 0x1b) {
        let j = i + 1
        if (b[j] !== 0x5b) return false
        for (j++; j < b.length && (b[j] as number) >= 0x30 && (b[j] as number) <= 0x3b; j++);
        if (b[j] !== 0x6d) return false
        i = j
      } else if (c === 0xc2) {
        const next = b[i + 1]
        if (next === undefined || (next >= 0x80 && next <= 0x9f)) return false
      } else if (c < 0x20 || c === 0x7f) return false
    }
    return true
  }

  it.each([
    ['with the SIMD fast path', true],
    ['with the JavaScript scan alone', false],
  ])('agrees with the byte-by-byte rule on any bytes at any alignment, %s', (_, isSimd) => {
    useSimdScan(isSimd)
    onTestFinished(() => useSimdScan(true))
    // Mostly printable ASCII, so long plain runs reach the four-bytes-at-a-time path.
    const byte = fc.oneof(
      { arbitrary: fc.integer({ min: 0x20, max: 0x7e }), weight: 30 },
      { arbitrary: fc.constantFrom(0x07, 0x08, 0x09, 0x0a, 0x0d, 0x1b, 0x5b, 0x6d, 0x3b, 0x31, 0xc2, 0x80, 0x9f, 0xa0, 0x7f, 0xff), weight: 3 },
      { arbitrary: fc.integer({ min: 0, max: 255 }), weight: 1 },
    )
    everyChunk(byte, 300, 7, (chunk) => expect(isPlain(chunk)).toBe(isPlainByteByByte(chunk)))
  })

  it('finds one rare byte anywhere in a long printable run', () => {
    for (const rare of [0x00, 0x1b, 0x1f, 0x7f, 0x0b]) {
      for (let at = 0; at < 40; at++) {
        const b = Buffer.alloc(41, 'x')
        b[at] = rare
        expect(isPlain(b.subarray(1)), `byte ${rare} at ${at}`).toBe(at === 0)
      }
    }
    expect(isPlain(Buffer.from(`${'x'.repeat(99)}\r\n`.repeat(40)))).toBe(true)
  })
})
