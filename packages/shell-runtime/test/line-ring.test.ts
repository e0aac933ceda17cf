import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LineRing } from '../src/output/line-ring.ts'

/** The rule spelled out with every line kept: dropped = evicted since the previous read and never returned. */
class Model {
  lines: string[] = []
  returned = new Set<number>()
  evictedBefore = 0
  constructor(readonly capacity: number) {}
  push(line: string) {
    this.lines.push(line)
  }
  read(n: number) {
    const start = Math.max(0, this.lines.length - this.capacity)
    let dropped = 0
    for (let s = this.evictedBefore; s < start; s++) if (!this.returned.has(s)) dropped++
    this.evictedBefore = start
    const from = Math.max(start, this.lines.length - n)
    for (let s = from; s < this.lines.length; s++) this.returned.add(s)
    return { lines: this.lines.slice(from), dropped }
  }
}

describe('the line ring', () => {
  it('counts dropped lines exactly as the rule says, for any mix of writes and reads', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.oneof(fc.record({ push: fc.integer({ min: 0, max: 80 }) }), fc.record({ read: fc.integer({ min: 0, max: 40 }) })), { maxLength: 60 }),
        (capacity, ops) => {
          const ring = new LineRing(capacity)
          const model = new Model(capacity)
          let k = 0
          for (const op of ops) {
            if ('push' in op) {
              for (let i = 0; i < op.push; i++) {
                ring.push(`l${k}`)
                model.push(`l${k++}`)
              }
            } else {
              expect(ring.read(op.read)).toEqual(model.read(op.read))
            }
          }
        },
      ),
      { numRuns: 500 },
    )
  })

  it('reads the last lines in constant time however long the history', () => {
    const ring = new LineRing(10_000)
    for (let i = 0; i < 1_000_000; i++) ring.push(`line ${i}`)
    expect(ring.size).toBe(10_000)
    expect(ring.total).toBe(1_000_000)
    const { lines, dropped } = ring.read(3)
    expect(lines).toEqual(['line 999997', 'line 999998', 'line 999999'])
    expect(dropped).toBe(990_000)
  })
})
