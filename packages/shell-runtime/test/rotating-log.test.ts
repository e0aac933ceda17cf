import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { RotatingLog } from '../src/output/rotating-log.ts'
import { tempDir } from './helpers.ts'

describe('the rotating log', () => {
  it('for any chunks and bound, holds the newest output whole in path.1 + path, within the bound, and counts the rest', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ minLength: 0, maxLength: 300 }), { maxLength: 40 }), fc.integer({ min: 2, max: 700 }), async (chunks, max) => {
        const dir = tempDir('rotating')
        const log = new RotatingLog(join(dir, 'shell.log'), max)
        const all = Buffer.concat(chunks.map((c) => Buffer.from(c)))
        for (const c of chunks) log.write(Buffer.from(c))
        await log.close()
        const current = readFileSync(log.path)
        const previous = existsSync(log.previousPath) ? readFileSync(log.previousPath) : Buffer.alloc(0)
        expect(log.previous === null).toBe(!existsSync(log.previousPath))
        expect(current.length).toBeLessThanOrEqual(Math.floor(max / 2))
        expect(previous.length + current.length).toBeLessThanOrEqual(max)
        const kept = Buffer.concat([previous, current])
        expect(kept.equals(all.subarray(all.length - kept.length))).toBe(true)
        expect(log.droppedBytes).toBe(all.length - kept.length)
        // Once it has rotated, it keeps at least half the bound.
        if (log.previous !== null) expect(kept.length).toBeGreaterThanOrEqual(Math.floor(max / 2))
        log.remove()
        expect(existsSync(log.path) || existsSync(log.previousPath)).toBe(false)
      }),
      { numRuns: 200 },
    )
  })

  it('keeps taking output while a rotated file finishes writing; waits when two are still open', async () => {
    const dir = tempDir('rotating')
    const log = new RotatingLog(join(dir, 'shell.log'), 64 * 1024)
    const chunk = (i: number) => Buffer.alloc(4096, 97 + (i % 26))
    const answers: boolean[] = []
    for (let i = 0; i < 8; i++) answers.push(log.write(chunk(i)))
    // The ninth chunk starts a new file; the rotated one is still writing (its close is asynchronous).
    answers.push(log.write(chunk(8)))
    expect(answers).toEqual(Array(9).fill(true))
    expect(log.previous).toBe(log.previousPath)
    for (let i = 9; i < 16; i++) expect(log.write(chunk(i))).toBe(true)
    // A second rotation while the first file is still open: now the producer is asked to wait.
    expect(log.write(chunk(16))).toBe(false)
    await log.drained()
    expect(log.write(chunk(17))).toBe(true)
    await log.close()
    const all = Buffer.concat(Array.from({ length: 18 }, (_, i) => chunk(i)))
    const kept = Buffer.concat([readFileSync(log.previousPath), readFileSync(log.path)])
    expect(kept.equals(all.subarray(all.length - kept.length))).toBe(true)
    expect(log.droppedBytes).toBe(all.length - kept.length)
    log.remove()
  })
})
