import { describe, expect, it } from 'vitest'
import { LineRing } from '../src/output/line-ring.ts'
import { renderLine, ScreenLines } from '../src/output/screen-lines.ts'

function linesOf(chunks: Array<string | Buffer>, maxLineChars?: number) {
  const ring = new LineRing(1000)
  const s = new ScreenLines(ring, maxLineChars)
  for (const c of chunks) s.push(typeof c === 'string' ? Buffer.from(c) : c)
  s.end()
  const partial = s.partial()
  const { lines } = s.read(1000)
  return { lines: partial === null ? lines : lines.slice(0, -1), partial }
}

describe('screen lines', () => {
  it('strips colours, cursor and title sequences', () => {
    expect(renderLine('\x1b[1;31merror\x1b[0m: \x1b]0;window title\x07bad\x1b[?25l')).toBe('error: bad')
  })

  it('collapses carriage-return redraws to the final state and normalises CRLF', () => {
    expect(renderLine('10%\r20%\r100% done\r')).toBe('100% done')
    expect(renderLine('\x1b[2K\x1b[1Gstep 1\x1b[2K\x1b[1Gstep 2')).toBe('step 2')
    expect(linesOf(['a\r\nb\r\n']).lines).toEqual(['a', 'b'])
  })

  it('applies backspaces and drops invisible control characters', () => {
    expect(renderLine('spin |\b/\b-\bdone\x07')).toBe('spin done')
  })

  it('keeps a character split across chunks whole', () => {
    const bytes = Buffer.from('héllo wörld\n')
    expect(linesOf([bytes.subarray(0, 2), bytes.subarray(2, 9), bytes.subarray(9)]).lines).toEqual(['héllo wörld'])
  })

  it('keeps an unfinished last line apart, as a person sees it', () => {
    expect(linesOf(['line\n>>> ']).partial).toBe('>>> ')
    expect(linesOf(['\rloading 1\rloading 2']).partial).toBe('loading 2')
    expect(linesOf(['done\n']).partial).toBeNull()
  })

  it('wraps very long lines and keeps an endless redraw bounded', () => {
    const { lines } = linesOf([`${'x'.repeat(25)}\n`], 10)
    expect(lines).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)])
    const ring = new LineRing(10)
    const s = new ScreenLines(ring, 100)
    for (let i = 0; i < 100_000; i++) s.push(Buffer.from(`\rprogress ${i}`))
    expect(s.partial()).toBe('progress 99999')
    expect(ring.total).toBe(0)
  })
})
