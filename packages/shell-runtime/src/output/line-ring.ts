/** What one read of the ring returns. */
export interface RingRead {
  /** The last lines, oldest first. */
  lines: string[]
  /** Lines evicted since the previous read without ever being returned. */
  dropped: number
}

/**
 * A bounded ring of lines, numbered in order, that knows exactly which evicted lines were never
 * returned by a read: each read records the range it returned, and an eviction counts as
 * dropped unless its line lies in a returned range. It holds at most `capacity` lines and, beyond
 * the newest line, at most `maxBytes` of them (2 bytes per UTF-16 unit, what a string may take).
 */
export class LineRing {
  readonly capacity: number
  readonly maxBytes: number
  readonly #buf: string[]
  #bytes = 0
  /** Number of the oldest retained line. */
  #start = 0
  /** Number the next line will get. */
  #end = 0
  /** Returned ranges [from, to) at or above #start, sorted and disjoint. */
  #returned: Array<[number, number]> = []
  #dropped = 0

  constructor(capacity: number, maxBytes = Number.POSITIVE_INFINITY) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('ring capacity must be a positive integer')
    this.capacity = capacity
    this.maxBytes = maxBytes
    this.#buf = new Array<string>(capacity)
  }

  /** Lines pushed since the start. */
  get total(): number {
    return this.#end
  }

  /** Lines retained now. */
  get size(): number {
    return this.#end - this.#start
  }

  push(line: string): void {
    if (this.#end - this.#start === this.capacity) this.#evict()
    this.#buf[this.#end % this.capacity] = line
    this.#end++
    this.#bytes += 2 * line.length
    while (this.#bytes > this.maxBytes && this.#end - this.#start > 1) this.#evict()
  }

  #evict(): void {
    const seq = this.#start++
    const slot = seq % this.capacity
    this.#bytes -= 2 * (this.#buf[slot] as string).length
    this.#buf[slot] = ''
    const ranges = this.#returned
    while (ranges.length > 0 && (ranges[0] as [number, number])[1] <= seq) ranges.shift()
    const first = ranges[0]
    if (first === undefined || first[0] > seq) this.#dropped++
  }

  /** The last `n` lines (fewer when the ring holds fewer), recorded as returned; resets the drop count. */
  read(n: number): RingRead {
    const from = Math.max(this.#start, this.#end - Math.max(0, n))
    const lines: string[] = []
    for (let s = from; s < this.#end; s++) lines.push(this.#buf[s % this.capacity] as string)
    if (from < this.#end) this.#markReturned(from, this.#end)
    const dropped = this.#dropped
    this.#dropped = 0
    return { lines, dropped }
  }

  /** Every retained line, oldest first, without counting as a read (the drop count is unaffected). */
  peek(): string[] {
    const lines: string[] = []
    for (let s = this.#start; s < this.#end; s++) lines.push(this.#buf[s % this.capacity] as string)
    return lines
  }

  #markReturned(from: number, to: number): void {
    const ranges = this.#returned
    // Every earlier range ends at or before `to`; those starting at or after `from` are inside.
    while (ranges.length > 0 && (ranges[ranges.length - 1] as [number, number])[0] >= from) ranges.pop()
    const last = ranges[ranges.length - 1]
    if (last !== undefined && last[1] >= from) last[1] = to
    else ranges.push([from, to])
  }
}
